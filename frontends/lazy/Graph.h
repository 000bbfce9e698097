// A lazy graph cut for one step(): its nodes in post-order, the device-data
// leaves that become the program's inputs (in canonical order, with their
// donation flags) and the outputs. Also the graph's canonical form, whose
// hash keys the graph cache, and the summary that explains recompilations.
#ifndef KILN_FRONTENDS_LAZY_GRAPH_H
#define KILN_FRONTENDS_LAZY_GRAPH_H

#include "frontends/lazy/Node.h"

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::lazy {

struct Graph {
  /// Every node reachable from the outputs and the sums over the processes,
  /// operands first.
  std::vector<NodePtr> nodes;
  /// The data nodes among them, in order of first use: the program inputs.
  std::vector<NodePtr> inputs;
  /// Per input: its buffer is given to the program (kiln.donate).
  std::vector<bool> donated;
  /// Distinct output nodes, in the order they were asked for.
  std::vector<NodePtr> outputs;
  /// Per input: the output that is its new value (a tensor assign_ed in
  /// this step, whose old buffer is donated), or -1 (kiln.output_alias).
  std::vector<int64_t> outputAlias;
};

/// output nodes + the data nodes that may be donated (each mapped to the
/// node that replaces it, or null) + the sums over the processes to run
/// whether or not an output reads them (pendingCollectives()) → the graph.
Graph buildGraph(
    const std::vector<NodePtr> &outputs,
    const std::unordered_map<const Node *, const Node *> &donatable,
    const std::vector<NodePtr> &collectives = {});

/// The graph cache's key: the graph's canonical form, each node's op, type,
/// attributes and operands numbered by position (no pointers, node ids or
/// tensor ids, so the same program builds the same key run after run), as
/// words rather than text: step() builds it for every step while the device
/// waits, and GPT-2's 6000 nodes took 2.5 ms a step as text.
struct GraphKey {
  std::vector<uint64_t> words;
  /// xxh3 of the words: stable across runs (dumps are named by it).
  uint64_t hash = 0;
  bool operator==(const GraphKey &other) const {
    return hash == other.hash && words == other.words;
  }
};

/// The key of `graph` compiled with `options` (compileOptionsText: the
/// backend and what else changes the program).
GraphKey graphKey(const Graph &graph, std::string_view options);

/// What a recompilation reason compares: the parts of a graph that differ.
struct GraphSummary {
  int64_t numOps = 0;
  std::vector<std::string> inputTypes;
  std::vector<std::string> outputTypes;
  std::string donations;
  std::array<int64_t, kNumOps> opCounts{};
  /// Hash of the canonical form with constant values left out.
  uint64_t structureHash = 0;
  std::string backend;
};

GraphSummary summarize(const Graph &graph, const std::string &backend);

/// The differences of `now` from `cached`, most telling first, e.g.
/// "different input shapes (input 2: [4, 8] f32 vs [2, 8] f32)"; the count
/// of differing parts goes to `distance` (to pick the nearest cached graph).
std::string describeDifference(const GraphSummary &now,
                               const GraphSummary &cached, int64_t &distance);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_GRAPH_H
