// Lazy nodes: interning (structural CSE), the primitive builders with their
// shape rules, the derived broadcast builders, and the weak registry of live
// tensor handles that step() scans.
#include "frontends/lazy/Node.h"
#include "frontends/lazy/CallSites.h"
#include "frontends/lazy/DeviceMemory.h"
#include "frontends/lazy/Eager.h"

#include "absl/base/casts.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <numeric>
#include <string>

namespace kiln::lazy {

const char *opName(Op op) {
  // clang-format off
  static const char *const kNames[kNumOps] = {
      "data", "constant", "iota", "neg", "abs", "sign", "exp", "log", "tanh",
      "sqrt", "rsqrt", "logistic", "not", "add", "sub", "mul", "div", "max",
      "min", "pow", "and", "or", "compare", "select", "convert",
      "broadcast_in_dim", "reshape", "transpose", "slice", "concatenate",
      "pad", "reduce_sum", "reduce_max", "dot_general", "gather",
      "scatter_add", "rng_uniform", "rng_advance", "detach",
      "fused_attention", "fused_attention_grad",
      "fused_linear_cross_entropy", "fused_linear_cross_entropy_grad",
      "gradient_seed", "all_reduce"};
  // clang-format on
  return kNames[static_cast<int>(op)];
}

int64_t Node::numel() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

std::string shapeString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

uint64_t nextNodeId = 1;

/// Interning table: a node's structural hash → the node. A step records
/// thousands of nodes on the host while the device waits (GPT-2 124M: 6000
/// a step), so a lookup hashes the fields in place and compares them with
/// the node found, building no key (a string key per node had been most
/// of the recording's time). Two live nodes whose hashes collide keep only
/// the later one in the table: the earlier is merely no longer shared. A
/// node leaves the table as it dies (~Node), so dead graphs never
/// accumulate (weak handles had kept each dead node's memory until a sweep
/// of the whole table).
struct InternTable {
  absl::flat_hash_map<size_t, const Node *> map;
  /// Counts forgetInternedNodes() calls: a node made before the last one
  /// has no entry to remove.
  uint32_t generation = 0;
};

/// Never destroyed: a node that outlives main still leaves it.
InternTable &internTable() {
  static InternTable *table = new InternTable;
  return *table;
}

/// Whether `n` has exactly these fields (operands by identity; the scalar
/// by its bits, so -0.0 and 0.0 stay apart and a NaN equals itself).
bool hasFields(const Node &n, Op op, DType dtype, const Shape &shape,
               const NodeList &srcs, const IntList &ints, double scalar) {
  if (n.op != op || n.dtype != dtype || n.shape != shape || n.ints != ints ||
      absl::bit_cast<uint64_t>(n.scalar) != absl::bit_cast<uint64_t>(scalar) ||
      n.srcs.size() != srcs.size())
    return false;
  for (size_t i = 0; i < srcs.size(); ++i)
    if (n.srcs[i] != srcs[i])
      return false;
  return true;
}

/// The one constructor of non-data nodes: returns the existing node when an
/// equal one (same op, type, attributes and operand nodes) is alive. A sum
/// over the processes is never shared: each call is one exchange, and
/// processes whose graphs differ (one sums a tensor twice where another
/// sums two equal ones) must still make the same exchanges.
/// Takes the shape by reference: a node found is returned with no copy made.
NodePtr intern(Op op, DType dtype, const Shape &shape, NodeList srcs,
               IntList ints = {}, double scalar = 0) {
  size_t key = absl::HashOf(static_cast<int>(op), static_cast<int>(dtype),
                            shape, ints, absl::bit_cast<uint64_t>(scalar));
  for (const NodePtr &src : srcs)
    key = absl::HashOf(key, src->id);

  InternTable &table = internTable();
  auto it = op == Op::AllReduce ? table.map.end() : table.map.find(key);
  if (it != table.map.end() &&
      hasFields(*it->second, op, dtype, shape, srcs, ints, scalar))
    return eager::run(it->second->shared_from_this());
  auto node = std::make_shared<Node>();
  node->op = op;
  node->dtype = dtype;
  node->shape = shape;
  node->srcs = std::move(srcs);
  node->ints = std::move(ints);
  node->scalar = scalar;
  node->id = nextNodeId++;
  node->site = sites::current(); // 0 unless KILN_CHECK_NUMERICS
  if (op == Op::AllReduce) {
    if (!eager::enabled())
      pendingCollectives().push_back(node);
  } else {
    node->internKey = key;
    node->internGeneration = table.generation;
    node->interned = true;
    if (it != table.map.end())
      it->second = node.get(); // a collision: the later node is shared
    else
      table.map.emplace(key, node.get());
  }
  return eager::run(node); // in eager mode, computed now
}

} // namespace

Node::~Node() {
  InternTable &table = internTable();
  if (interned && internGeneration == table.generation)
    if (auto it = table.map.find(internKey);
        it != table.map.end() && it->second == this)
      table.map.erase(it);
  releaseOperands();
}

void Node::releaseOperands() {
  // Dropping the last handle of an operand destroys it, which drops its
  // operands in turn: one nested destructor per node of a chain, and a
  // chain a million ops deep (a loop recording without step()) overflowed
  // the stack. So the outermost destructor takes its operands' handles
  // into a list and drops them one at a time, and a destructor that runs
  // meanwhile hands its own to that list: a loop, not a recursion (as
  // PyTorch's autograd frees its graph). Every handle goes to the list,
  // not only a last one: an operand held twice (x · x) dies at its second.
  thread_local std::vector<NodePtr> *dying = nullptr;
  if (srcs.empty())
    return;
  if (dying) {
    for (NodePtr &src : srcs)
      dying->push_back(std::move(src));
    srcs.clear();
    return;
  }
  std::vector<NodePtr> list(std::make_move_iterator(srcs.begin()),
                            std::make_move_iterator(srcs.end()));
  srcs.clear();
  dying = &list;
  while (!list.empty()) {
    NodePtr last = std::move(list.back());
    list.pop_back();
    last.reset(); // a destructor it runs appends that node's operands
  }
  dying = nullptr;
}

std::vector<NodePtr> &pendingCollectives() {
  static std::vector<NodePtr> collectives;
  return collectives;
}

NodePtr dataNode(std::shared_ptr<HostTensor> value, uint32_t site) {
  auto node = std::make_shared<Node>();
  node->op = Op::Data;
  node->site = site;
  node->dtype = value->dtype();
  node->shape = value->shape();
  node->id = nextNodeId++;
  node->data = trackDeviceBuffer(std::move(value));
  return node;
}

NodePtr constant(double value, DType dtype, Shape shape) {
  // Canonical value: the constant is stored rounded to its dtype, so 0.1 in
  // f16 and the value it rounds to intern as one node.
  if (isFloat(dtype))
    value = roundToDType(value, dtype);
  else if (dtype == DType::i1)
    value = value != 0;
  return intern(Op::Constant, dtype, shape, {}, {}, value);
}

NodePtr iota(DType dtype, Shape shape, int64_t dim) {
  return intern(Op::Iota, dtype, shape, {}, {dim});
}

NodePtr unary(Op op, const NodePtr &x) {
  return intern(op, x->dtype, x->shape, {x});
}

NodePtr binary(Op op, const NodePtr &a, const NodePtr &b) {
  assert(a->shape == b->shape && a->dtype == b->dtype && "binary operands");
  return intern(op, a->dtype, a->shape, {a, b});
}

NodePtr compare(Cmp direction, const NodePtr &a, const NodePtr &b) {
  assert(a->shape == b->shape && a->dtype == b->dtype && "compare operands");
  return intern(Op::Compare, DType::i1, a->shape, {a, b},
                {static_cast<int64_t>(direction)});
}

NodePtr select(const NodePtr &pred, const NodePtr &a, const NodePtr &b) {
  assert(pred->shape == a->shape && a->shape == b->shape && "select operands");
  return intern(Op::Select, a->dtype, a->shape, {pred, a, b});
}

NodePtr convert(const NodePtr &x, DType dtype) {
  if (x->dtype == dtype)
    return x;
  return intern(Op::Convert, dtype, x->shape, {x});
}

NodePtr broadcastInDim(const NodePtr &x, Shape shape,
                       std::vector<int64_t> dims) {
  assert(dims.size() == x->shape.size() && "one target dim per operand dim");
  if (shape == x->shape)
    return x;
  return intern(Op::Broadcast, x->dtype, shape, {x},
                IntList(dims.begin(), dims.end()));
}

NodePtr reshape(const NodePtr &x, Shape shape) {
  if (shape == x->shape)
    return x;
  return intern(Op::Reshape, x->dtype, shape, {x});
}

NodePtr transpose(const NodePtr &x, std::vector<int64_t> perm) {
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity)
    return x;
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x->shape[p]);
  return intern(Op::Transpose, x->dtype, shape, {x},
                IntList(perm.begin(), perm.end()));
}

NodePtr slice(const NodePtr &x, std::vector<int64_t> start,
              std::vector<int64_t> limit, std::vector<int64_t> strides) {
  Shape shape;
  for (size_t d = 0; d < start.size(); ++d)
    shape.push_back(std::max<int64_t>(
        0, (limit[d] - start[d] + strides[d] - 1) / strides[d]));
  if (shape == x->shape)
    return x;
  IntList ints(start.begin(), start.end());
  ints.insert(ints.end(), limit.begin(), limit.end());
  ints.insert(ints.end(), strides.begin(), strides.end());
  return intern(Op::Slice, x->dtype, shape, {x}, std::move(ints));
}

NodePtr concatenate(const std::vector<NodePtr> &xs, int64_t dim) {
  if (xs.size() == 1)
    return xs[0];
  Shape shape = xs[0]->shape;
  shape[dim] = 0;
  for (const NodePtr &x : xs)
    shape[dim] += x->shape[dim];
  return intern(Op::Concatenate, xs[0]->dtype, shape,
                NodeList(xs.begin(), xs.end()), {dim});
}

NodePtr pad(const NodePtr &x, std::vector<int64_t> low,
            std::vector<int64_t> high, double value) {
  Shape shape = x->shape;
  bool any = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    shape[d] += low[d] + high[d];
    any |= low[d] || high[d];
  }
  if (!any)
    return x;
  IntList ints(low.begin(), low.end());
  ints.insert(ints.end(), high.begin(), high.end());
  return intern(Op::Pad, x->dtype, shape, {x}, std::move(ints), value);
}

NodePtr reduce(Op kind, const NodePtr &x, std::vector<int64_t> dims) {
  if (dims.empty())
    return x;
  std::sort(dims.begin(), dims.end());
  Shape shape;
  for (int64_t d = 0; d < static_cast<int64_t>(x->shape.size()); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d))
      shape.push_back(x->shape[d]);
  return intern(kind, x->dtype, shape, {x}, IntList(dims.begin(), dims.end()));
}

NodePtr dotGeneral(const NodePtr &a, const NodePtr &b, std::vector<int64_t> lb,
                   std::vector<int64_t> rb, std::vector<int64_t> lc,
                   std::vector<int64_t> rc) {
  auto isIn = [](const std::vector<int64_t> &v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  Shape shape;
  for (int64_t d : lb)
    shape.push_back(a->shape[d]);
  for (int64_t d = 0; d < static_cast<int64_t>(a->shape.size()); ++d)
    if (!isIn(lb, d) && !isIn(lc, d))
      shape.push_back(a->shape[d]);
  for (int64_t d = 0; d < static_cast<int64_t>(b->shape.size()); ++d)
    if (!isIn(rb, d) && !isIn(rc, d))
      shape.push_back(b->shape[d]);
  IntList ints = {static_cast<int64_t>(lb.size()),
                  static_cast<int64_t>(lc.size())};
  for (const auto *v : {&lb, &rb, &lc, &rc})
    ints.insert(ints.end(), v->begin(), v->end());
  return intern(Op::DotGeneral, a->dtype, shape, {a, b}, std::move(ints));
}

NodePtr gather(const NodePtr &x, const NodePtr &indices, int64_t axis) {
  Shape shape(x->shape.begin(), x->shape.begin() + axis);
  shape.insert(shape.end(), indices->shape.begin(), indices->shape.end());
  shape.insert(shape.end(), x->shape.begin() + axis + 1, x->shape.end());
  return intern(Op::Gather, x->dtype, shape, {x, indices}, {axis});
}

NodePtr scatterAdd(const NodePtr &x, const NodePtr &indices,
                   const NodePtr &updates, int64_t axis) {
  return intern(Op::ScatterAdd, x->dtype, x->shape, {x, indices, updates},
                {axis});
}

NodePtr rngUniform(const NodePtr &state, DType dtype, Shape shape) {
  return intern(Op::RngUniform, dtype, shape, {state});
}

NodePtr rngAdvance(const NodePtr &state, int64_t count) {
  return intern(Op::RngAdvance, DType::i64, state->shape, {state}, {count});
}

NodePtr detach(const NodePtr &x, uint64_t tag) {
  return intern(Op::Detach, x->dtype, x->shape, {x},
                {static_cast<int64_t>(tag)});
}

namespace {

int64_t doubleBits(double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

NodeList attentionSources(NodeList srcs, const NodePtr &state) {
  if (state)
    srcs.push_back(state);
  return srcs;
}

} // namespace

NodePtr attention(const NodePtr &q, const NodePtr &k, const NodePtr &v,
                  const NodePtr &state, const AttentionAttrs &attrs) {
  assert((attrs.dropout > 0) == static_cast<bool>(state));
  return intern(Op::Attention, q->dtype, q->shape,
                attentionSources({q, k, v}, state),
                {attrs.causal, doubleBits(attrs.scale), attrs.window,
                 doubleBits(attrs.softcap)},
                attrs.dropout);
}

NodePtr attentionGrad(const NodePtr &q, const NodePtr &k, const NodePtr &v,
                      const NodePtr &g, const NodePtr &state,
                      const AttentionAttrs &attrs, int64_t which) {
  assert((attrs.dropout > 0) == static_cast<bool>(state));
  const NodePtr &like = which == 0 ? q : which == 1 ? k : v;
  return intern(Op::AttentionGrad, like->dtype, like->shape,
                attentionSources({q, k, v, g}, state),
                {attrs.causal, doubleBits(attrs.scale), attrs.window, which,
                 doubleBits(attrs.softcap)},
                attrs.dropout);
}

NodePtr linearCrossEntropy(const NodePtr &hidden, const NodePtr &weight,
                           const NodePtr &labels, int64_t ignoreIndex,
                           double softcap) {
  return intern(Op::LinearCrossEntropy, hidden->dtype, {hidden->shape[0]},
                {hidden, weight, labels}, {ignoreIndex}, softcap);
}

NodePtr linearCrossEntropyGrad(const NodePtr &hidden, const NodePtr &weight,
                               const NodePtr &labels, const NodePtr &g,
                               int64_t ignoreIndex, int64_t which,
                               double softcap) {
  const NodePtr &like = which == 0 ? hidden : weight;
  return intern(Op::LinearCrossEntropyGrad, like->dtype, like->shape,
                {hidden, weight, labels, g}, {ignoreIndex, which}, softcap);
}

NodePtr gradientSeed(const NodePtr &seed, const NodePtr &root) {
  return intern(Op::GradientSeed, seed->dtype, seed->shape, {seed, root});
}

AttentionAttrs attentionAttrsOf(const Node &node) {
  assert(node.op == Op::Attention || node.op == Op::AttentionGrad);
  AttentionAttrs attrs;
  attrs.causal = node.ints[0] != 0;
  std::memcpy(&attrs.scale, &node.ints[1], sizeof attrs.scale);
  attrs.window = node.ints[2];
  std::memcpy(&attrs.softcap, &node.ints[node.op == Op::Attention ? 3 : 4],
              sizeof attrs.softcap);
  attrs.dropout = node.scalar;
  return attrs;
}

uint64_t nodesCreated() { return nextNodeId - 1; }

size_t internedNodeCount() { return internTable().map.size(); }

void forgetInternedNodes() {
  InternTable &table = internTable();
  table.map.clear();
  ++table.generation;
}

uint64_t freshTag() {
  static uint64_t next = 1;
  return next++;
}

NodePtr broadcastTo(const NodePtr &x, const Shape &shape) {
  if (x->shape == shape)
    return x;
  // Align trailing dimensions; size-1 dims that grow are dropped by a
  // reshape so broadcast_in_dim only maps kept dims.
  int64_t offset = static_cast<int64_t>(shape.size() - x->shape.size());
  Shape kept;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    if (x->shape[d] == 1 && shape[offset + d] != 1)
      continue;
    kept.push_back(x->shape[d]);
    dims.push_back(offset + static_cast<int64_t>(d));
  }
  return broadcastInDim(reshape(x, kept), shape, dims);
}

NodePtr sumTo(const NodePtr &x, const Shape &shape) {
  if (x->shape == shape)
    return x;
  int64_t offset = static_cast<int64_t>(x->shape.size() - shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(x->shape.size()); ++d)
    if (d < offset || (shape[d - offset] == 1 && x->shape[d] != 1))
      dims.push_back(d);
  return reshape(reduce(Op::ReduceSum, x, dims), shape);
}

NodePtr constantLike(const NodePtr &like, double value) {
  return constant(value, like->dtype, like->shape);
}

namespace {
uint64_t walks = 0;
} // namespace

std::vector<NodePtr> postOrder(const std::vector<NodePtr> &roots) {
  const uint64_t walk = ++walks;
  // Marks the node visited by this walk; false when it already was.
  auto firstVisit = [walk](const Node &node) {
    if (node.visitedBy == walk)
      return false;
    node.visitedBy = walk;
    return true;
  };
  std::vector<NodePtr> order;
  std::vector<std::pair<const Node *, size_t>> stack;
  for (const NodePtr &root : roots) {
    if (!firstVisit(*root))
      continue;
    // The stack holds raw pointers: each node is kept alive by its user
    // (or `roots`), and `order` copies the handle when it is finished.
    stack.push_back({root.get(), 0});
    while (!stack.empty()) {
      auto &[node, next] = stack.back();
      if (next < node->srcs.size()) {
        const NodePtr &src = node->srcs[next++];
        if (firstVisit(*src))
          stack.push_back({src.get(), 0});
        continue;
      }
      node->position = static_cast<uint32_t>(order.size());
      stack.pop_back();
      // The handle of a finished node: its user's operand slot, or the root.
      order.push_back(stack.empty()
                          ? root
                          : stack.back().first->srcs[stack.back().second - 1]);
    }
  }
  return order;
}

uint64_t lastPostOrderWalk() { return walks; }

std::vector<int64_t> invertPermutation(absl::Span<const int64_t> perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

//===--- Registry ---------------------------------------------------------===//

namespace {
/// The live tensors, oldest first: an intrusive list (TensorImpl's
/// previousLive / nextLive) that makeTensor appends to and ~TensorImpl
/// unlinks from. The frontend is single-threaded, as the intern table.
struct Registry {
  detail::TensorImpl *oldest = nullptr;
  detail::TensorImpl *newest = nullptr;
  size_t live = 0;
  uint64_t nextSerial = 1;
};
/// Never destroyed: a tensor that outlives main (a static in user code)
/// still unlinks itself.
Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}
} // namespace

} // namespace kiln::lazy

namespace kiln::detail {

TensorImpl::~TensorImpl() {
  lazy::Registry &r = lazy::registry();
  (previousLive ? previousLive->nextLive : r.oldest) = nextLive;
  (nextLive ? nextLive->previousLive : r.newest) = previousLive;
  --r.live;
  // Only eager mode runs op nodes into buffers (graph mode's values are
  // data nodes), so this is eager's rule alone.
  if (node && node->held && !node->isData() && !node->savedForBackward)
    node->data.reset();
}

} // namespace kiln::detail

namespace kiln::lazy {

Tensor makeTensor(NodePtr node, bool requiresGrad, bool isLeaf) {
  Registry &r = registry();
  auto impl = std::make_shared<detail::TensorImpl>();
  impl->node = eager::settle(std::move(node), requiresGrad && !isLeaf);
  impl->requiresGrad = requiresGrad;
  impl->isLeaf = isLeaf;
  impl->serial = r.nextSerial++;
  impl->previousLive = r.newest;
  (r.newest ? r.newest->nextLive : r.oldest) = impl.get();
  r.newest = impl.get();
  ++r.live;
  return Tensor(std::move(impl));
}

std::vector<std::shared_ptr<detail::TensorImpl>> liveTensors() {
  const Registry &r = registry();
  std::vector<std::shared_ptr<detail::TensorImpl>> live;
  live.reserve(r.live);
  // List order is creation order, so no sort is needed. A tensor whose
  // last handle is going away right now (its destructor has not unlinked
  // it yet) cannot be met: nothing runs between the two.
  for (detail::TensorImpl *impl = r.oldest; impl; impl = impl->nextLive)
    live.push_back(impl->shared_from_this());
  return live;
}

Tensor opResult(NodePtr node, std::initializer_list<const Tensor *> inputs) {
  // Integer and i1 results are never differentiable.
  bool requiresGrad = false;
  if (is_grad_enabled() && isFloat(node->dtype))
    for (const Tensor *t : inputs)
      requiresGrad |= t->requires_grad();
  return makeTensor(std::move(node), requiresGrad, !requiresGrad);
}

} // namespace kiln::lazy
