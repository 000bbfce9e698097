// Cutting a step's graph out of the lazy nodes, its canonical form (the cache
// key), and the summaries that say why a graph missed the cache.
#include "frontends/lazy/Graph.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace kiln::lazy {

Graph buildGraph(
    const std::vector<NodePtr> &outputs,
    const std::unordered_map<const Node *, const Node *> &donatable,
    const std::vector<NodePtr> &collectives) {
  // Post-order from the outputs in order: the input order follows the
  // program's structure, not addresses or creation ids. Sums over the
  // processes come in the order the program asked for them (creation
  // order, each after those it depends on), read or not: processes whose
  // graphs differ elsewhere must still make the same exchanges in the same
  // order. The recorded ones come first, in creation order.
  Graph graph;
  std::vector<NodePtr> roots = collectives;
  roots.insert(roots.end(), outputs.begin(), outputs.end());
  graph.nodes = postOrder(roots);
  std::vector<NodePtr> sums;
  for (const NodePtr &node : graph.nodes)
    if (node->op == Op::AllReduce)
      sums.push_back(node);
  auto byId = [](const NodePtr &a, const NodePtr &b) { return a->id < b->id; };
  // Walked again only when the first walk met them out of order (a sum
  // recorded before an earlier step failed, say): the step builds its
  // graph every time.
  if (!std::is_sorted(sums.begin(), sums.end(), byId)) {
    std::sort(sums.begin(), sums.end(), byId);
    sums.insert(sums.end(), outputs.begin(), outputs.end());
    graph.nodes = postOrder(sums);
  }
  for (const NodePtr &node : graph.nodes)
    if (node->isData()) {
      graph.inputs.push_back(node);
      graph.donated.push_back(donatable.count(node.get()) > 0);
    }
  std::unordered_map<const Node *, int64_t> outputIndex;
  for (const NodePtr &o : outputs)
    if (outputIndex.emplace(o.get(), graph.outputs.size()).second)
      graph.outputs.push_back(o);
  for (const NodePtr &input : graph.inputs) {
    auto replaced = donatable.find(input.get());
    auto index = replaced == donatable.end()
                     ? outputIndex.end()
                     : outputIndex.find(replaced->second);
    // Only a replacement of the input's type: a reshaped assign_ is no
    // in-place update.
    bool alias = index != outputIndex.end() &&
                 replaced->second->dtype == input->dtype &&
                 replaced->second->shape == input->shape;
    graph.outputAlias.push_back(alias ? index->second : -1);
  }
  return graph;
}

/// Appends one node's op, type, attributes (and, with `withConstants`,
/// its scalar's bits) to `text`.
static void describeNode(std::string &text, const Node &node,
                         bool withConstants) {
  absl::StrAppend(&text, opName(node.op), " ");
  text += dtypeName(node.dtype);
  text += '[';
  for (size_t i = 0; i < node.shape.size(); ++i)
    absl::StrAppend(&text, i ? ", " : "", node.shape[i]);
  text += ']';
  if (node.op != Op::Detach) // a detach tag is identity, not structure
    for (int64_t i : node.ints)
      absl::StrAppend(&text, " ", i);
  if ((node.op == Op::Constant || node.op == Op::Pad) && withConstants) {
    uint64_t bits;
    std::memcpy(&bits, &node.scalar, sizeof bits);
    absl::StrAppend(&text, " =", bits);
  }
}

// Appended into one reserved string: it runs on every step (the cache
// key). For GPT-2 124M's 5794 nodes it took 2.0-2.1 ms a step with a
// temporary string per piece, 1.3-1.5 ms this way (AMD EPYC, 2 cores).
static std::string canonical(const Graph &graph, bool withConstants) {
  absl::flat_hash_map<const Node *, size_t> index;
  index.reserve(graph.nodes.size());
  absl::flat_hash_map<const Node *, size_t> inputIndex;
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    inputIndex[graph.inputs[i].get()] = i;
  std::string text;
  text.reserve(48 * graph.nodes.size());
  for (const NodePtr &node : graph.nodes) {
    size_t i = index.size();
    index[node.get()] = i;
    absl::StrAppend(&text, i, ": ");
    describeNode(text, *node, withConstants);
    if (node->isData()) {
      size_t k = inputIndex[node.get()];
      absl::StrAppend(&text, " input ", k, graph.donated[k] ? " donated" : "");
      if (graph.outputAlias[k] >= 0)
        absl::StrAppend(&text, " updated by output ", graph.outputAlias[k]);
    }
    for (const NodePtr &src : node->srcs)
      absl::StrAppend(&text, " %", index.at(src.get()));
    text += '\n';
  }
  text += "outputs";
  for (const NodePtr &o : graph.outputs)
    absl::StrAppend(&text, " %", index.at(o.get()));
  text += '\n';
  return text;
}

std::string canonicalForm(const Graph &graph) { return canonical(graph, true); }

uint64_t fingerprint(const std::string &text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

static std::string typeString(const Node &node) {
  return shapeString(node.shape) + " " + std::string(dtypeName(node.dtype));
}

GraphSummary summarize(const Graph &graph, const std::string &backend) {
  GraphSummary s;
  for (const NodePtr &node : graph.nodes) {
    if (!node->isData())
      ++s.numOps;
    ++s.opCounts[static_cast<int>(node->op)];
  }
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    s.inputTypes.push_back(typeString(*graph.inputs[i]));
    s.donations += graph.donated[i] ? 'd' : '-';
  }
  for (const NodePtr &o : graph.outputs)
    s.outputTypes.push_back(typeString(*o));
  s.structureHash = fingerprint(canonical(graph, false));
  s.backend = backend;
  return s;
}

/// "input 2: [4, 8] f32 vs [2, 8] f32" for the first differing element.
static std::string firstDifference(const char *what,
                                   const std::vector<std::string> &now,
                                   const std::vector<std::string> &cached) {
  if (now.size() != cached.size())
    return std::to_string(now.size()) + " " + what + "s vs " +
           std::to_string(cached.size());
  for (size_t i = 0; i < now.size(); ++i)
    if (now[i] != cached[i])
      return std::string(what) + " " + std::to_string(i) + ": " + now[i] +
             " vs " + cached[i];
  return "";
}

std::string describeDifference(const GraphSummary &now,
                               const GraphSummary &cached, int64_t &distance) {
  std::vector<std::string> parts;
  if (now.backend != cached.backend)
    parts.push_back("different backend (" + now.backend + " vs " +
                    cached.backend + ")");
  if (std::string d =
          firstDifference("input", now.inputTypes, cached.inputTypes);
      !d.empty())
    parts.push_back("different input shapes (" + d + ")");
  if (std::string d =
          firstDifference("output", now.outputTypes, cached.outputTypes);
      !d.empty())
    parts.push_back("different outputs (" + d + ")");
  if (now.donations != cached.donations && now.inputTypes == cached.inputTypes)
    parts.push_back("different donated inputs");
  if (now.numOps != cached.numOps)
    parts.push_back("different op count (" + std::to_string(now.numOps) +
                    " vs " + std::to_string(cached.numOps) + ")");
  std::string mix;
  for (int op = 0; op < kNumOps; ++op) {
    int64_t delta = now.opCounts[op] - cached.opCounts[op];
    if (delta != 0 && op != static_cast<int>(Op::Data))
      mix += std::string(mix.empty() ? "" : ", ") + (delta > 0 ? "+" : "") +
             std::to_string(delta) + " " + opName(static_cast<Op>(op));
  }
  if (!mix.empty())
    parts.push_back("different ops (" + mix + ")");
  if (parts.empty())
    parts.push_back(now.structureHash == cached.structureHash
                        ? "different constant values"
                        : "different structure with the same ops");
  distance = static_cast<int64_t>(parts.size());
  std::string reason;
  for (const std::string &p : parts)
    reason += (reason.empty() ? "" : "; ") + p;
  return reason;
}

} // namespace kiln::lazy
