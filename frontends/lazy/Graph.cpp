// Cutting a step's graph out of the lazy nodes, its canonical form (the cache
// key), and the summaries that say why a graph missed the cache.
#include "frontends/lazy/Graph.h"

#include "absl/base/casts.h"
#include "llvm/Support/xxhash.h"

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

namespace {

/// Appends the canonical form of `graph` to `words`: per node its op,
/// type and kind, its rank, operand and attribute counts, its dims,
/// attributes, its scalar's bits (a constant's or a pad's value only
/// `withConstants`; an attention's dropout or a loss's soft cap always,
/// when nonzero: they are attributes), an input's index,
/// donation and alias, and its operands' positions; then the outputs'
/// positions. The counts keep the encoding unambiguous.
void appendCanonical(std::vector<uint64_t> &words, const Graph &graph,
                     bool withConstants) {
  // Numbers nodes in the node itself (Node::position): a hash map from
  // node to number was a third of the key's time.
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    graph.nodes[i]->position = static_cast<uint32_t>(i);
  for (size_t k = 0; k < graph.inputs.size(); ++k)
    graph.inputs[k]->inputIndex = static_cast<uint32_t>(k);
  words.reserve(words.size() + 14 * graph.nodes.size());
  for (const NodePtr &node : graph.nodes) {
    // A detach's tag is its identity, not structure.
    const bool ints = node->op != Op::Detach;
    const bool constantValue = node->op == Op::Constant || node->op == Op::Pad;
    const bool scalar = constantValue ? withConstants : node->scalar != 0;
    words.push_back(static_cast<uint64_t>(node->op) |
                    static_cast<uint64_t>(node->dtype) << 8 |
                    static_cast<uint64_t>(scalar) << 16 |
                    static_cast<uint64_t>(node->isData()) << 17);
    words.push_back(node->shape.size());
    words.push_back(node->srcs.size());
    words.push_back(ints ? node->ints.size() : 0);
    for (int64_t dim : node->shape)
      words.push_back(static_cast<uint64_t>(dim));
    if (ints)
      for (int64_t i : node->ints)
        words.push_back(static_cast<uint64_t>(i));
    if (scalar)
      words.push_back(absl::bit_cast<uint64_t>(node->scalar));
    if (node->isData()) {
      uint32_t k = node->inputIndex;
      words.push_back(uint64_t{k} | uint64_t{graph.donated[k]} << 32);
      words.push_back(static_cast<uint64_t>(graph.outputAlias[k]));
    }
    for (const NodePtr &src : node->srcs)
      words.push_back(src->position);
  }
  words.push_back(graph.outputs.size());
  for (const NodePtr &o : graph.outputs)
    words.push_back(o->position);
}

uint64_t hashWords(const std::vector<uint64_t> &words) {
  return llvm::xxh3_64bits(
      llvm::ArrayRef(reinterpret_cast<const uint8_t *>(words.data()),
                     words.size() * sizeof(uint64_t)));
}

} // namespace

GraphKey graphKey(const Graph &graph, std::string_view options) {
  GraphKey key;
  // The options' bytes, eight a word, after their length.
  key.words.push_back(options.size());
  for (size_t i = 0; i < options.size(); i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, options.data() + i,
                std::min<size_t>(8, options.size() - i));
    key.words.push_back(word);
  }
  appendCanonical(key.words, graph, /*withConstants=*/true);
  key.hash = hashWords(key.words);
  return key;
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
  std::vector<uint64_t> structure;
  appendCanonical(structure, graph, /*withConstants=*/false);
  s.structureHash = hashWords(structure);
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
