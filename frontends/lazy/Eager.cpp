// Eager mode: running each node at once as a single-op program. A node's
// kernel is the node alone over one input per operand slot (x * x takes two
// inputs fed the same buffer), so its signature, not the node's identity or
// its graph, keys the eager kernel cache: the same op on the same types
// compiles once per process. Composite ops (softmax, layer_norm, gelu,
// cross_entropy, AdamW's update) therefore run as their primitives, one
// kernel each, including the broadcasts and reshapes between them: the
// honest baseline without the compiler. (PyTorch eager has hand-fused
// kernels for several composites and free views for reshapes, so it does
// less work per composite than this baseline.)
#include "frontends/lazy/Eager.h"

#include "frontends/lazy/DeviceMemory.h"
#include "frontends/lazy/Graph.h"
#include "frontends/lazy/Lower.h"
#include "frontends/lazy/Numerics.h"
#include "frontends/lazy/Step.h"

#include <chrono>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace kiln {

namespace lazy::eager {

namespace {

/// Kernel signature → its program. A std::string key holds the op, its
/// attributes (constant values included: they are baked into the kernel)
/// and every operand's and the result's type, plus the backend.
std::unordered_map<std::string, std::unique_ptr<runtime::Program>> &
kernelCache() {
  static std::unordered_map<std::string, std::unique_ptr<runtime::Program>>
      cache;
  return cache;
}

std::string typeKey(const Node &node) {
  return std::string(dtypeName(node.dtype)) + shapeString(node.shape);
}

std::string kernelKey(const Node &node) {
  std::string key = std::string(backendName(options().backend)) + " ";
  if (options().productType != DType::f32)
    key += std::string(dtypeName(options().productType)) + " ";
  key += std::string(opName(node.op)) + " " + typeKey(node);
  for (int64_t i : node.ints)
    key += " " + std::to_string(i);
  // A constant's or a pad's value; an attention's dropout, a loss's cap.
  if (node.op == Op::Constant || node.op == Op::Pad || node.scalar != 0) {
    uint64_t bits;
    std::memcpy(&bits, &node.scalar, sizeof bits);
    key += " =" + std::to_string(bits);
  }
  key += " (";
  for (const NodePtr &src : node.srcs)
    key += " " + typeKey(*src);
  return key + " )";
}


/// The node alone as a graph: one data input per operand slot, the node
/// (with those inputs as operands) as the only output.
Graph singleOpGraph(const Node &node) {
  Graph graph;
  std::vector<NodePtr> inputs;
  for (const NodePtr &src : node.srcs) {
    auto input = std::make_shared<Node>();
    input->op = Op::Data;
    input->dtype = src->dtype;
    input->shape = src->shape;
    inputs.push_back(input);
  }
  auto op = std::make_shared<Node>(node);
  op->srcs.assign(inputs.begin(), inputs.end());
  op->data.reset();
  graph.nodes = inputs;
  graph.nodes.push_back(op);
  graph.inputs = inputs;
  graph.donated.assign(inputs.size(), false);
  graph.outputAlias.assign(inputs.size(), -1);
  graph.outputs = {op};
  return graph;
}

runtime::Program &kernelFor(const Node &node) {
  metrics::Counters &counters = mutableCounters();
  std::string key = kernelKey(node);
  auto &cache = kernelCache();
  if (auto it = cache.find(key); it != cache.end()) {
    ++counters.eagerCacheHits;
    return *it->second;
  }
  // Eager kernels are neither dumped (the dump feeds kilnc precompile with
  // step graphs) nor stored in the persistent cache.
  GraphCompileRequest request;
  request.backend = compilerBackend(options().backend);
  request.cudaArch = options().cudaArch;
  request.tf32 = options().tf32;
  request.productType = options().productType;
  auto start = std::chrono::steady_clock::now();
  auto compiled = compileGraph(singleOpGraph(node), request);
  double ms = millisecondsSince(start);
  if (!compiled.ok())
    throw Error(std::string("eager: compiling ") + opName(node.op) + " " +
                typeKey(node) +
                " failed: " + std::string(compiled.status().message()));
  ++counters.eagerKernelsCompiled;
  counters.compileMilliseconds += ms;
  return *(cache[key] = std::move(compiled->program));
}

/// Runs one node whose operands all have values; attaches its value.
void execute(const Node &node) {
  // Detach is the identity: the value is the operand's buffer, shared.
  if (node.op == Op::Detach) {
    node.data = node.srcs[0]->data;
    return;
  }
  runtime::Program &kernel = kernelFor(node);
  metrics::Counters &counters = mutableCounters();
  // Operands are lent, not copied: their nodes keep them alive, and one
  // buffer may feed several operand slots (x * x).
  std::vector<runtime::ProgramInput> inputs;
  inputs.reserve(node.srcs.size());
  for (const NodePtr &src : node.srcs) {
    counters.bytesIn += static_cast<int64_t>(src->data->byteSize());
    inputs.push_back(runtime::ProgramInput::borrow(*src->data));
  }
  auto results = runCounted(kernel, std::move(inputs));
  ++counters.eagerExecutions;
  if (!results.ok() || results->size() != 1)
    throw Error(std::string("eager: running ") + opName(node.op) + " " +
                typeKey(node) + " failed: " +
                (results.ok() ? std::to_string(results->size()) + " results"
                              : std::string(results.status().message())));
  counters.bytesOut += static_cast<int64_t>((*results)[0].byteSize());
  node.data =
      trackDeviceBuffer(std::make_shared<HostTensor>(std::move((*results)[0])));
  // KILN_CHECK_NUMERICS: the kernel's result is the op's own, so no search
  // is needed; the error surfaces at the op's call, as PyTorch's would.
  if (options().checkNumerics)
    if (std::string error = checkEagerNumerics(node); !error.empty())
      throw Error(error);
}

/// PyTorch's saved tensors, after `node` ran: the values its gradient rule
/// reads are kept (marked savedForBackward); an operand that no handle
/// holds and no rule reads is released (recomputed if it is asked for
/// again).
void keepOnlySaved(const Node &node) {
  SavedValues saved = savedByGradient(node.op);
  if (saved.result)
    node.savedForBackward = true;
  for (size_t i = 0; i < node.srcs.size(); ++i) {
    const Node &src = *node.srcs[i];
    if (i < 32 && ((saved.operands >> i) & 1))
      src.savedForBackward = true;
    else if (!src.isData() && !src.held && !src.savedForBackward)
      src.data.reset();
  }
}

/// Computes `root` and every operand below it that has no value yet
/// (nodes built in graph mode and reached after a switch, or released
/// values asked for again), operands first.
void materialize(const NodePtr &root) {
  std::vector<NodePtr> order;
  std::unordered_set<const Node *> visited{root.get()};
  std::vector<std::pair<NodePtr, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto &[node, next] = stack.back();
    if (next < node->srcs.size()) {
      const NodePtr &src = node->srcs[next++];
      if (src->isData() && !src->data)
        throw Error(std::string("eager: an operand of ") + opName(root->op) +
                    " was donated to an earlier step");
      if (!src->isMaterialized() && visited.insert(src.get()).second)
        stack.push_back({src, 0});
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  // A node below the root ran before and was released (or, after a switch
  // from graph mode, never ran).
  mutableCounters().eagerRecomputes += static_cast<int64_t>(order.size()) - 1;
  for (const NodePtr &node : order)
    execute(*node);
  // Only after all ran: a node of `order` may read an operand that an
  // earlier one released.
  for (const NodePtr &node : order)
    keepOnlySaved(*node);
}

} // namespace

bool enabled() { return options().mode == Mode::eager; }

Mode parseMode(std::string_view name) {
  if (name == "graph")
    return Mode::graph;
  if (name == "eager")
    return Mode::eager;
  throw Error("KILN_MODE: unknown mode '" + std::string(name) +
              "'; expected graph or eager");
}

const NodePtr &run(const NodePtr &node) {
  if (enabled() && !node->isMaterialized())
    materialize(node);
  return node;
}

NodePtr settle(NodePtr node, bool keepHistory) {
  if (!enabled() || node->isData())
    return node;
  if (keepHistory) {
    node->held = true;
    return node;
  }
  run(node);
  return dataNode(node->data, node->site);
}

void commit() {
  for (const auto &impl : liveTensors()) {
    impl->assignedFrom = nullptr;
    impl->node = settle(impl->node, false);
  }
}

void clearKernelCache() { kernelCache().clear(); }

PinScope::PinScope(const std::vector<NodePtr> &nodes) {
  if (!enabled())
    return;
  for (const NodePtr &node : nodes)
    if (node && !node->isData() && !node->held) {
      node->held = true;
      pinned_.push_back(node);
    }
}

PinScope::~PinScope() {
  for (const NodePtr &node : pinned_) {
    node->held = false;
    if (!node->savedForBackward)
      node->data.reset();
  }
}

void releaseSavedValues(const std::vector<NodePtr> &history) {
  for (const NodePtr &node : history)
    if (node->savedForBackward && !node->isData()) {
      node->savedForBackward = false;
      if (!node->held)
        node->data.reset();
    }
}

} // namespace lazy::eager

//===--- Mode -------------------------------------------------------------===//

void set_mode(Mode mode) {
  Options next = options();
  next.mode = mode;
  set_options(next);
}

Mode mode() { return options().mode; }

} // namespace kiln
