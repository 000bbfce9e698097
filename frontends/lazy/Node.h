// The lazy graph's one node type and its builders (internal to
// frontends/lazy). A node is an immutable primitive of the kiln dialect (or a
// device-data leaf) over same-shaped, already-checked operands; builders
// intern nodes so that structurally equal computations are one node
// (structural CSE, as tinygrad's UOps). Shape and dtype checks that users can
// fail live in Ops.cpp, before any builder runs; builders only assert.
#ifndef KILN_FRONTENDS_LAZY_NODE_H
#define KILN_FRONTENDS_LAZY_NODE_H

#include "frontends/lazy/Tensor.h"

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

namespace kiln::lazy {

/// One op enum for every node. Elementwise ops take same-shaped operands.
enum class Op : uint8_t {
  // Leaves.
  Data,     // device data: an input of the graph
  Constant, // `scalar` splatted to the shape
  Iota,     // ints = {dimension}
  // Elementwise unary.
  Neg,
  Abs,
  Sign,
  Exp,
  Log,
  Tanh,
  Sqrt,
  Rsqrt,
  Logistic,
  Not,
  // Elementwise binary (Compare: ints = {direction as in kiln.compare}).
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Pow,
  And,
  Or,
  Compare,
  Select,  // srcs = {pred, onTrue, onFalse}
  Convert, // to the node's dtype
  // Shape.
  Broadcast,   // ints = broadcast_dimensions
  Reshape,     //
  Transpose,   // ints = permutation
  Slice,       // ints = start ++ limit ++ strides
  Concatenate, // ints = {dimension}
  Pad,         // ints = low ++ high; scalar = padding value
  // Reductions and contractions.
  ReduceSum,
  ReduceMax,  // ints = dimensions (dropped)
  DotGeneral, // ints = {nBatch, nContract, lb..., rb..., lc..., rc...}
  Gather,     // srcs = {operand, indices}; ints = {axis}
  ScatterAdd, // srcs = {operand, indices, updates}; ints = {axis}
  // Random numbers: values from a Philox state, and the advanced state.
  RngUniform, // srcs = {state}
  RngAdvance, // srcs = {state}; ints = {number of values drawn}
  // Identity that stops gradients; ints = {tag}: a nonzero tag makes the
  // node unique (a parameter's identity); tags never reach hash or IR.
  Detach,
  // Fused composites (kiln.fused_attention): srcs = {q, k, v[, rng state]},
  // ints = {causal, bits of the double scale, window, bits of the double
  // softcap}, scalar = dropout.
  Attention,
  // One gradient of kiln.fused_attention_grad: srcs = {q, k, v, result
  // grad[, rng state]}, ints = {causal, scale bits, window, which: 0 q, 1
  // k, 2 v, softcap bits}.
  // The three lower to one op (CSE merges them).
  AttentionGrad,
  // kiln.fused_linear_cross_entropy: srcs = {hidden [N, C], weight [V, C],
  // labels [N]}, ints = {ignore_index}, scalar = softcap (0: none);
  // per-row losses [N].
  LinearCrossEntropy,
  // One gradient of kiln.fused_linear_cross_entropy_grad: srcs = {hidden,
  // weight, labels, loss grad}, ints = {ignore_index, which: 0 hidden, 1
  // weight}, scalar = softcap. The two lower to one op (CSE merges them).
  LinearCrossEntropyGrad,
  // The gradient a backward pass starts from: srcs = {seed, the value
  // differentiated}; the value of srcs[0]. Lowers to a
  // kiln.optimization_barrier marked gradient_seed, which tells the
  // compiler where the backward pass begins.
  GradientSeed,
  // kiln.all_reduce: srcs[0] summed over the processes of a data-parallel
  // run (support/Collectives.h).
  AllReduce,
};
inline constexpr int kNumOps = static_cast<int>(Op::AllReduce) + 1;

/// "add", "reduce_sum", ...
const char *opName(Op op);

/// kiln.compare directions, in the dialect's numbering.
enum class Cmp : int64_t { EQ = 0, NE, LT, LE, GT, GE };

struct Node;
using NodePtr = std::shared_ptr<const Node>;
/// A node's operands and integer attributes. Most nodes have one or two of
/// each, which stay inside the node: a heap block for each had been a
/// third of the allocations of recording a step.
using NodeList = absl::InlinedVector<NodePtr, 2>;
using IntList = absl::InlinedVector<int64_t, 4>;

struct Node : std::enable_shared_from_this<Node> {
  Op op;
  DType dtype;
  /// Eager mode's saved tensors (PyTorch's rule): an op node run eagerly
  /// keeps its buffer only while a tensor handle holds it (`held`) or a
  /// gradient rule reads it (`savedForBackward`); otherwise the buffer is
  /// released once its consumer has run (eager::run), or when its handle
  /// dies. A released value that is needed after all is recomputed from its
  /// operands. (Both sit in padding: no memory.)
  mutable bool held = false;
  mutable bool savedForBackward = false;
  /// Where user code built the node (CallSites.h), or 0: recorded only under
  /// KILN_CHECK_NUMERICS. Never part of the interning key, the hash or the
  /// cache key: structurally equal nodes are one node, and the first
  /// creator's site is the one kept. (Sits in padding: costs no memory.)
  uint32_t site = 0;
  /// Scratch of walks over a graph, which the single-threaded frontend
  /// runs one at a time, each writing what it reads: the node's number in
  /// a walk (postOrder's, or graphKey's own) and in the graph's inputs,
  /// and the last postOrder walk that visited it. Hash maps keyed by node
  /// had been most of the cost of cutting and keying a step's graph and of
  /// backward(). Never part of a node's identity.
  mutable uint32_t position = 0;
  mutable uint32_t inputIndex = 0;
  mutable uint64_t visitedBy = 0;
  Shape shape;
  NodeList srcs;
  IntList ints;
  double scalar = 0;
  /// Process-unique, for interning keys only: never hashed or lowered.
  uint64_t id = 0;
  /// The node's entry in the intern table (interned: made by a builder),
  /// which its destructor removes unless the table was cleared since
  /// (internGeneration: forgetInternedNodes).
  size_t internKey = 0;
  uint32_t internGeneration = 0;
  bool interned = false;
  /// The device buffer of a data node, or (eager mode) of an op node already
  /// run; mutable: donation takes it, eager execution sets it.
  mutable std::shared_ptr<HostTensor> data;

  Node() = default;
  /// A copy (eager mode's kernel graphs) is never the table's entry: the
  /// destructor removes an entry only when it names this very node.
  Node(const Node &other) = default;
  Node &operator=(const Node &) = delete;
  ~Node();

  int64_t numel() const;
  bool isData() const { return op == Op::Data; }
  /// The value is device data: a data leaf, or an op node eager mode ran.
  bool isMaterialized() const { return isData() || data != nullptr; }

private:
  /// The destructor's second half: drops the operands without recursing
  /// into their destructors.
  void releaseOperands();
};

//===--- Builders (interned; operands already checked) --------------------===//

/// `site`: where the value came from (from_host's caller, or the op whose
/// eager result this is), 0 when unknown.
NodePtr dataNode(std::shared_ptr<HostTensor> value, uint32_t site = 0);
NodePtr constant(double value, DType dtype, Shape shape);
NodePtr iota(DType dtype, Shape shape, int64_t dim);
NodePtr unary(Op op, const NodePtr &x);
NodePtr binary(Op op, const NodePtr &a, const NodePtr &b);
NodePtr compare(Cmp direction, const NodePtr &a, const NodePtr &b);
NodePtr select(const NodePtr &pred, const NodePtr &a, const NodePtr &b);
NodePtr convert(const NodePtr &x, DType dtype);
NodePtr broadcastInDim(const NodePtr &x, Shape shape,
                       std::vector<int64_t> dims);
NodePtr reshape(const NodePtr &x, Shape shape);
NodePtr transpose(const NodePtr &x, std::vector<int64_t> perm);
NodePtr slice(const NodePtr &x, std::vector<int64_t> start,
              std::vector<int64_t> limit, std::vector<int64_t> strides);
NodePtr concatenate(const std::vector<NodePtr> &xs, int64_t dim);
NodePtr pad(const NodePtr &x, std::vector<int64_t> low,
            std::vector<int64_t> high, double value);
NodePtr reduce(Op kind, const NodePtr &x, std::vector<int64_t> dims);
NodePtr dotGeneral(const NodePtr &a, const NodePtr &b, std::vector<int64_t> lb,
                   std::vector<int64_t> rb, std::vector<int64_t> lc,
                   std::vector<int64_t> rc);
NodePtr gather(const NodePtr &x, const NodePtr &indices, int64_t axis);
NodePtr scatterAdd(const NodePtr &x, const NodePtr &indices,
                   const NodePtr &updates, int64_t axis);
NodePtr rngUniform(const NodePtr &state, DType dtype, Shape shape);
NodePtr rngAdvance(const NodePtr &state, int64_t count);
NodePtr detach(const NodePtr &x, uint64_t tag = 0);
/// Attention settings as a node keeps them.
struct AttentionAttrs {
  double scale = 1;
  bool causal = false;
  double dropout = 0;
  /// Causal only: query i sees keys (i - window, i]; 0: all keys up to i.
  int64_t window = 0;
  /// Scores capped at softcap · tanh(s / softcap) before the masks (Gemma
  /// 2's); 0: none.
  double softcap = 0;
};
/// q [B,H,T,D], k, v [B,Hkv,S,D] (state: the rng state when dropout > 0).
NodePtr attention(const NodePtr &q, const NodePtr &k, const NodePtr &v,
                  const NodePtr &state, const AttentionAttrs &attrs);
/// Gradient `which` (0 q, 1 k, 2 v) of attention(q, k, v, state) for the
/// result gradient `g`.
NodePtr attentionGrad(const NodePtr &q, const NodePtr &k, const NodePtr &v,
                      const NodePtr &g, const NodePtr &state,
                      const AttentionAttrs &attrs, int64_t which);
/// Per-row cross-entropy of hidden [N, C] · weight [V, C]ᵀ against labels
/// [N] (0 where a label is ignoreIndex): [N]; softcap > 0 caps the logits
/// at softcap · tanh(z / softcap).
NodePtr linearCrossEntropy(const NodePtr &hidden, const NodePtr &weight,
                           const NodePtr &labels, int64_t ignoreIndex,
                           double softcap = 0);
/// Gradient `which` (0 hidden, 1 weight) of linearCrossEntropy for the loss
/// gradient `g` [N].
NodePtr linearCrossEntropyGrad(const NodePtr &hidden, const NodePtr &weight,
                               const NodePtr &labels, const NodePtr &g,
                               int64_t ignoreIndex, int64_t which,
                               double softcap = 0);
/// `seed` as the gradient of `root` that a backward pass starts from.
NodePtr gradientSeed(const NodePtr &seed, const NodePtr &root);
/// The attributes an Attention or AttentionGrad node keeps.
AttentionAttrs attentionAttrsOf(const Node &node);
/// A fresh nonzero tag for detach().
uint64_t freshTag();
/// How many nodes were created so far (tests check that frozen parameters
/// cost no gradient nodes).
uint64_t nodesCreated();
/// How many nodes the intern table holds: the live interned ones (tests
/// check that dead nodes leave it).
size_t internedNodeCount();
/// Empties the intern table: the nodes stay valid and are merely no longer
/// shared with nodes made later. step() calls it once its outputs are
/// device data, when no live tensor holds an interned node, so that its
/// graph's thousands of nodes die without each looking itself up.
void forgetInternedNodes();

//===--- Derived builders -------------------------------------------------===//

/// NumPy broadcast of `x` to `shape` (trailing alignment): a reshape that
/// drops size-1 dims then one broadcast_in_dim; `x` itself when equal.
NodePtr broadcastTo(const NodePtr &x, const Shape &shape);
/// Sums `x` (of a broadcast shape) down to `shape`: the adjoint of broadcastTo.
NodePtr sumTo(const NodePtr &x, const Shape &shape);
/// value splatted like `like` (same dtype and shape).
NodePtr constantLike(const NodePtr &like, double value);
/// The sums over the processes (Op::AllReduce nodes) recorded since the
/// last step, in creation order. step() runs every one of them, read or
/// not, as torch.distributed runs every call: a process that drops a sum's
/// result (ZeRO's gradient of a parameter another process owns) must still
/// make the exchange the others make. Empty in eager mode, where each runs
/// when it is recorded.
std::vector<NodePtr> &pendingCollectives();
/// Every node reachable from `roots`, operands before users (iterative, so
/// deep graphs cannot overflow the stack). Numbers them as it goes: a node
/// it returned has visitedBy == lastPostOrderWalk() and its index in the
/// result as position, until the next walk.
std::vector<NodePtr> postOrder(const std::vector<NodePtr> &roots);
/// The id of the last postOrder walk.
uint64_t lastPostOrderWalk();
/// The inverse of a permutation.
std::vector<int64_t> invertPermutation(absl::Span<const int64_t> perm);

} // namespace kiln::lazy

namespace kiln::detail {

/// What a kiln::Tensor handle points to. `node` changes when the tensor is
/// assigned or when step() replaces its pending node by device data.
struct TensorImpl : std::enable_shared_from_this<TensorImpl> {
  lazy::NodePtr node;
  bool requiresGrad = false;
  bool isLeaf = true;
  Tensor grad;
  /// The device-data node an assign_ replaced since the last step(): the
  /// buffer step() may donate.
  lazy::NodePtr assignedFrom;
  /// Creation order: step() orders its outputs by it, so graphs built by
  /// the same program hash the same run after run.
  uint64_t serial = 0;
  /// The registry of live tensors (makeTensor): a list in creation order
  /// that each tensor leaves as it dies, so a scan meets live tensors only
  /// (a list of weak handles had held every dead tensor's memory, and made
  /// each scan lock it, until a periodic sweep).
  TensorImpl *previousLive = nullptr;
  TensorImpl *nextLive = nullptr;
  /// Eager mode: a history node's buffer goes with its last handle unless
  /// a gradient rule saved it (Node::held). Leaves the registry.
  ~TensorImpl();
};

} // namespace kiln::detail

namespace kiln::lazy {

/// node → a registered tensor handle (the registry step() scans).
Tensor makeTensor(NodePtr node, bool requiresGrad = false, bool isLeaf = true);
/// The live tensors, in creation order.
std::vector<std::shared_ptr<detail::TensorImpl>> liveTensors();
/// The result of an op on `inputs`: requires grad when grad mode is on, the
/// result is a float and some input requires grad.
Tensor opResult(NodePtr node, std::initializer_list<const Tensor *> inputs);
inline const NodePtr &nodeOf(const Tensor &t) { return t.impl()->node; }
/// PyTorch's IndexError at the call that indexes: integer `indices` that
/// the host already holds (a batch from a data loader, a value eager mode
/// computed) must lie in [0, size), or equal `allowed` (cross-entropy's
/// ignore_index) when given; otherwise throws kiln::Error naming `op`, the
/// first bad index and its position. The device would clamp (a gather) or
/// ignore (a loss's pick) such an index silently (docs/IR.md, kiln.gather).
/// Ids still pending, or held by a device, are not read: that would wait
/// for the device.
void checkHostIndices(const char *op, const Tensor &indices, int64_t size,
                      const char *what,
                      std::optional<int64_t> allowed = std::nullopt);
/// Makes `node` the tensor's next value, remembering the device data it
/// replaces (the buffer step() may donate).
void assignNode(detail::TensorImpl &impl, NodePtr node);

/// "[2, 3]".
std::string shapeString(const Shape &shape);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_NODE_H
