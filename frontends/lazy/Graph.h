// A lazy graph cut for one step(): its nodes in post-order, the device-data
// leaves that become the program's inputs (in canonical order, with their
// donation flags) and the outputs. Also the graph's canonical form, whose
// hash keys the graph cache, and the summary that explains recompilations.
#ifndef KILN_FRONTENDS_LAZY_GRAPH_H
#define KILN_FRONTENDS_LAZY_GRAPH_H

#include "frontends/lazy/Node.h"

#include <array>
#include <string>
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

/// The graph as text with nodes numbered by position: no pointers, node ids
/// or tensor ids, so the same program builds the same text run after run.
std::string canonicalForm(const Graph &graph);

/// FNV-1a, 64 bits: stable across runs and platforms.
uint64_t fingerprint(const std::string &text);

/// What a recompilation reason compares: the parts of a graph that differ.
struct GraphSummary {
  int64_t numOps = 0;
  std::vector<std::string> inputTypes;
  std::vector<std::string> outputTypes;
  std::string donations;
  std::array<int64_t, kNumOps> opCounts{};
  /// Hash of the canonical form with constant values blanked.
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
