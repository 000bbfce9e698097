// kiln-join-sums: a scalar sum of many full reductions becomes one
// reduction of their pieces joined end to end (see Passes.td). Gradient
// clipping's global norm adds one sum of squares per parameter; after
// kiln-split-reductions each of those is a tree of its own (a wide first
// stage, then one-warp stages down to a scalar), and the scalars are added
// one by one. Here every tree keeps its first stage only; the stages'
// results are concatenated and summed once (and split again by the next
// kiln-split-reductions), as PyTorch's foreach norm sums all parameters in
// a couple of multi-tensor kernels.
//
// Steps:
//   1. a sum tree: the scalar float kiln.adds under a root add, each inner
//      add read only by the add above it; its leaves are scalars;
//   2. a leaf is joined when it is a kiln.reduce sum over every dimension
//      (optionally behind one float convert), read only by the tree. Its
//      piece is the value that sum reads, moved down through the stages of
//      a split tree (sums read once, reshapes between) while the value a
//      stage reads is at most kMaxPieceElements: the smallest value whose
//      elements add up to the leaf that is not a whole gradient;
//   3. with at least kMinJoinedLeaves such leaves: per element type, the
//      pieces flattened, concatenated and summed, converted to the tree's
//      type; the leaves not joined are added to that. The old tree, and
//      the stages below the pieces, are erased.
#include "passes/Passes.h"

#include "passes/FusionUtils.h"
#include "passes/TensorBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

#include <optional>

namespace kiln {
#define GEN_PASS_DEF_JOINSUMSPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// The most elements a piece may have: a split tree's first stage (its
/// partial sums, tens of thousands), not the gradient it reads (a 768x768
/// matrix is 589,824), which the concatenation would copy whole.
constexpr int64_t kMaxPieceElements = 1 << 18;

/// Fewer leaves than this are left as they are: two sums and an add are
/// no more kernels than a concatenation and a sum.
constexpr unsigned kMinJoinedLeaves = 3;

bool isScalarFloat(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getRank() == 0 && isa<FloatType>(type.getElementType());
}

bool isSumOfAll(ReduceOp op) {
  return op.getKind() == ReduceKind::sum &&
         static_cast<int64_t>(op.getDimensions().size()) ==
             cast<RankedTensorType>(op.getOperand().getType()).getRank();
}

/// `v` without the reshapes that only it reads.
Value throughReshapes(Value v) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>()) {
    if (!v.hasOneUse())
      break;
    v = reshape.getOperand();
  }
  return v;
}

/// The piece of a joined leaf `sum` (step 2): what it reads, moved down
/// through the stages of a split tree.
Value pieceOf(ReduceOp sum) {
  Value piece = sum.getOperand();
  for (;;) {
    Value inner = throughReshapes(piece);
    auto stage = inner.getDefiningOp<ReduceOp>();
    if (!stage || stage.getKind() != ReduceKind::sum || !inner.hasOneUse() ||
        stage->getBlock() != sum->getBlock() ||
        numElementsOf(stage.getOperand().getType()) > kMaxPieceElements)
      return inner;
    piece = stage.getOperand();
  }
}

/// A leaf that joins: the sum of all elements it is, and its piece.
struct Joined {
  ReduceOp sum;
  Value piece;
};

/// `leaf` as a Joined, when it may be joined. The piece is found here,
/// before the rewrite gives it another reader.
std::optional<Joined> joinableLeaf(Value leaf) {
  if (!leaf.hasOneUse())
    return std::nullopt;
  Value v = leaf;
  if (auto convert = v.getDefiningOp<ConvertOp>()) {
    if (!isa<FloatType>(TensorBuilder::elementOf(convert.getOperand())) ||
        !convert.getOperand().hasOneUse())
      return std::nullopt;
    v = convert.getOperand();
  }
  auto sum = v.getDefiningOp<ReduceOp>();
  if (!sum || !isSumOfAll(sum) ||
      !isa<FloatType>(TensorBuilder::elementOf(sum.getOperand())))
    return std::nullopt;
  Value piece = pieceOf(sum);
  if (numElementsOf(piece.getType()) > kMaxPieceElements)
    return std::nullopt;
  return Joined{sum, piece};
}

/// The tree under `add` (step 1): its adds, root first, and its leaves
/// from left to right.
void collectTree(AddOp add, SmallVectorImpl<AddOp> &adds,
                 SmallVectorImpl<Value> &leaves) {
  adds.push_back(add);
  for (Value operand : {add.getLhs(), add.getRhs()}) {
    auto inner = operand.getDefiningOp<AddOp>();
    if (inner && operand.hasOneUse() && inner->getBlock() == add->getBlock())
      collectTree(inner, adds, leaves);
    else
      leaves.push_back(operand);
  }
}

/// True when `add` is the top of a sum tree: no scalar add reads it as
/// collectTree would descend into it.
bool isRoot(AddOp add) {
  if (!isScalarFloat(add.getResult()))
    return false;
  Value result = add.getResult();
  return !(result.hasOneUse() && isa<AddOp>(*result.getUsers().begin()) &&
           (*result.getUsers().begin())->getBlock() == add->getBlock());
}

/// Joins the tree under `root`; false when it has too few joinable leaves.
bool joinTree(AddOp root, Pass::Statistic &numLeaves) {
  SmallVector<AddOp> adds;
  SmallVector<Value> leaves;
  collectTree(root, adds, leaves);
  // Pieces by element type, in the order the tree meets them.
  llvm::MapVector<Type, SmallVector<Value>> pieces;
  SmallVector<Value> kept;
  SmallVector<Joined> joined;
  for (Value leaf : leaves) {
    if (std::optional<Joined> j = joinableLeaf(leaf)) {
      pieces[TensorBuilder::elementOf(j->piece)].push_back(j->piece);
      joined.push_back(*j);
    } else {
      kept.push_back(leaf);
    }
  }
  if (joined.size() < kMinJoinedLeaves)
    return false;

  OpBuilder builder(root);
  TensorBuilder tb(builder, root.getLoc());
  Type type = TensorBuilder::elementOf(root.getResult());
  Value total;
  auto addToTotal = [&](Value v) { total = total ? tb.add(total, v) : v; };
  for (auto &[element, values] : pieces) {
    SmallVector<Value> flat;
    for (Value piece : values) {
      int64_t n = numElementsOf(piece.getType());
      flat.push_back(TensorBuilder::shapeOf(piece).size() == 1
                         ? piece
                         : tb.reshape(piece, {n}));
    }
    Value all = flat.size() == 1 ? flat.front() : tb.concatenate(flat, 0);
    Value sum = tb.reduce(ReduceKind::sum, all, {0});
    addToTotal(element == type ? sum : tb.convert(sum, type));
  }
  for (Value leaf : kept)
    addToTotal(leaf);
  root.getResult().replaceAllUsesWith(total);

  // The old tree, then every op from a joined leaf down to its piece, each
  // once nothing reads it.
  SmallVector<Operation *> dead(adds.begin(), adds.end());
  for (auto [sum, piece] : joined) {
    for (Operation *user : sum->getUsers())
      if (isa<ConvertOp>(user))
        dead.push_back(user);
    for (Operation *op = sum; op; ) {
      dead.push_back(op);
      Value operand = op->getOperand(0);
      op = operand == piece ? nullptr : operand.getDefiningOp();
    }
  }
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *&op : dead)
      if (op && op->use_empty()) {
        op->erase();
        op = nullptr;
        erased = true;
      }
  }
  numLeaves += joined.size();
  return true;
}

struct JoinSumsPass : impl::JoinSumsPassBase<JoinSumsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Block &block = getOperation().getBody().front();
    SmallVector<AddOp> roots;
    for (auto add : block.getOps<AddOp>())
      if (isRoot(add))
        roots.push_back(add);
    for (AddOp root : roots)
      if (joinTree(root, numLeaves))
        ++numJoined;
  }
};

} // namespace
} // namespace kiln
