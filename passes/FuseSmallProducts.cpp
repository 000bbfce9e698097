// kiln-fuse-small-products: a matrix product over a few contracted elements
// (LoRA's rank) whose result outweighs its operands becomes a loop fusion,
// which kiln-fuse-elementwise then merges into the product's readers (see
// Passes.td). As a GEMM, [4096, 8] x [8, 1024] reads 80 KiB and writes 8
// MiB, and the kernel that reads it (the heads' transpose of LoRA's v)
// reads the 8 MiB back; as a loop inside that kernel it is 8 multiply-adds
// a point on operands that stay in cache.
//
// Each point of the result is sum_k lhs[.., k, ..] * rhs[.., k, ..]: for
// every k, the two operands' slices at k, widened to f32, broadcast to the
// result's shape and multiplied; the K products added in order of k and
// rounded once to the result type, as a GEMM accumulates in f32 and rounds
// its result (the sum's order is the only difference, as between two GEMM
// algorithms).
#include "passes/Passes.h"

#include "passes/FusionUtils.h"
#include "passes/TensorBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_FUSESMALLPRODUCTSPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

bool isFloatTensor(Value v) {
  return isa<FloatType>(TensorBuilder::elementOf(v));
}

/// The contracted length of `dot` when it is a product this pass writes as
/// a loop: no batch dims, one contracted dim of at most `maxContraction`
/// elements (none: an empty sum, left to the GEMM), float operands and
/// result, and a result of at least as many elements as both operands (so
/// the GEMM's cost is writing it) and of at least `minResultBytes` (below,
/// the GEMM and the kernel that reads its result cost their launches more
/// than their bytes).
std::optional<int64_t> smallContraction(DotGeneralOp dot,
                                        int64_t maxContraction,
                                        int64_t minResultBytes) {
  if (!dot.getLhsBatchingDimensions().empty() ||
      dot.getLhsContractingDimensions().size() != 1 ||
      !isFloatTensor(dot.getLhs()) || !isFloatTensor(dot.getRhs()) ||
      !isFloatTensor(dot.getResult()))
    return std::nullopt;
  int64_t contracted = TensorBuilder::shapeOf(
      dot.getLhs())[dot.getLhsContractingDimensions()[0]];
  int64_t operands = numElementsOf(dot.getLhs().getType()) +
                     numElementsOf(dot.getRhs().getType());
  if (contracted < 1 || contracted > maxContraction ||
      numElementsOf(dot.getResult().getType()) < operands ||
      byteSizeOf(dot.getResult().getType()) < minResultBytes)
    return std::nullopt;
  return contracted;
}

/// Whether `op` takes a loop producer into its kernel (else it reads the
/// loop's stored result).
bool fusesLoops(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  return isElementwiseLike(op) || isa<SliceOp, PadOp, ConcatenateOp>(op) ||
         (fusion && fusion.getKind() == FusionKind::loop);
}

/// Whether a loop fused into `dot`'s readers would compute each point of
/// the product once: its value (past its ties) flows through ops that fuse
/// like elementwise ones, each read by one op, to readers that fuse no
/// loop (GEMMs, attention, barriers, the return: the loop stores the value
/// once for all of them). A point costs ~25 instructions (8 multiply-adds,
/// widening B's 8 values), about what an H100 issues in the time it reads 3
/// bytes, so a product fused where it is computed twice costs more than the
/// GEMM and the read it saves:
///   - a value two fusing ops read: Llama's q, rotated by halves (its
///     rotary kernel, 252 -> 758 PTX instructions, computes each point's
///     product and its partner's);
///   - a reduction: a row kernel computes its fused values in each of its
///     passes (the RMSNorm's backward, already bound by issuing its two
///     dropout masks' draws, would compute both LoRA input gradients
///     twice: 1244 -> 1926 instructions, 70 -> 150 registers).
/// Such a product stays a GEMM. Gives up (false) after kMostVisited ops.
bool isComputedOncePerPoint(DotGeneralOp dot) {
  constexpr int kMostVisited = 64;
  Value value = dot.getResult();
  for (int visited = 0; visited < kMostVisited; ++visited) {
    SmallVector<Operation *> readers;
    for (OpOperand &use : value.getUses())
      if (!isTie(use))
        readers.push_back(use.getOwner());
    if (llvm::none_of(readers, fusesLoops))
      return !llvm::any_of(
          readers, [](Operation *op) { return isa<ReduceOp, FusionOp>(op); });
    if (readers.size() != 1 || readers.front()->getNumResults() != 1)
      return false;
    value = readers.front()->getResult(0);
  }
  return false;
}

/// Records the ops a builder creates: the members of the loop fusion.
struct CreatedOps : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
};

/// `operand` (a product's lhs or rhs) at index k of its contracted dim
/// `contractDim`, widened to f32 and broadcast to the result's `shape`,
/// where its other dims are the result dims from `firstResultDim` on.
Value operandAt(TensorBuilder &tb, Value operand, int64_t contractDim,
                int64_t k, ArrayRef<int64_t> shape, int64_t firstResultDim) {
  SmallVector<int64_t> kept(TensorBuilder::shapeOf(operand));
  kept.erase(kept.begin() + contractDim);
  Value slice = tb.reshape(tb.sliceDim(operand, contractDim, k, k + 1), kept);
  Value wide = tb.convert(slice, tb.builder().getF32Type());
  SmallVector<int64_t> dims(kept.size());
  std::iota(dims.begin(), dims.end(), firstResultDim);
  return tb.broadcast(wide, shape, dims);
}

/// Moves the ties on `dot` (barrier operands that only order: kiln-partition
/// makes a dropout mask's recomputation wait for the gradient it masks) to
/// its operand made last. A product written as a loop is no buffer of its
/// own: a tie on it would make its readers' kernel leave it out, and the
/// loop, like the GEMM, can run as soon as its operands are ready.
void moveTiesToOperands(DotGeneralOp dot) {
  Value latest = dot.getLhs();
  Operation *rhsDef = dot.getRhs().getDefiningOp();
  Operation *lhsDef = latest.getDefiningOp();
  if (rhsDef && (!lhsDef || lhsDef->isBeforeInBlock(rhsDef)))
    latest = dot.getRhs();
  for (OpOperand &use : llvm::make_early_inc_range(dot->getUses()))
    if (isTie(use)) {
      // The barrier's matching result, unread, takes the new operand's type.
      use.getOwner()
          ->getResult(use.getOperandNumber())
          .setType(latest.getType());
      use.set(latest);
    }
}

/// The product written as a sum of K broadcast products (top-level ops
/// before `dot`), then outlined into one loop fusion that replaces it.
void writeAsLoop(DotGeneralOp dot, int64_t contracted) {
  moveTiesToOperands(dot);
  OpBuilder builder(dot);
  CreatedOps created;
  builder.setListener(&created);
  TensorBuilder tb(builder, dot.getLoc());
  auto resultType = cast<RankedTensorType>(dot.getType());
  int64_t lhsDim = dot.getLhsContractingDimensions()[0];
  int64_t rhsDim = dot.getRhsContractingDimensions()[0];
  // Result dims: the lhs's free dims, then the rhs's.
  int64_t lhsFree = TensorBuilder::shapeOf(dot.getLhs()).size() - 1;
  Value sum;
  for (int64_t k = 0; k < contracted; ++k) {
    // Apart, so that the lhs's ops come first (argument order is
    // unspecified).
    Value lhs =
        operandAt(tb, dot.getLhs(), lhsDim, k, resultType.getShape(), 0);
    Value rhs =
        operandAt(tb, dot.getRhs(), rhsDim, k, resultType.getShape(), lhsFree);
    Value term = tb.mul(lhs, rhs);
    sum = sum ? tb.add(sum, term) : term;
  }
  sum = tb.convert(sum, resultType.getElementType());
  dot.getResult().replaceAllUsesWith(sum);
  dot.erase();
  outlineFusion(created.ops, {}, FusionKind::loop);
}

struct FuseSmallProductsPass
    : impl::FuseSmallProductsPassBase<FuseSmallProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    SmallVector<std::pair<DotGeneralOp, int64_t>> products;
    for (auto dot : getOperation().getBody().front().getOps<DotGeneralOp>())
      if (std::optional<int64_t> k =
              smallContraction(dot, maxContraction, minResultBytes);
          k && isComputedOncePerPoint(dot))
        products.push_back({dot, *k});
    for (auto [dot, contracted] : products) {
      writeAsLoop(dot, contracted);
      ++numRewritten;
    }
  }
};

} // namespace
} // namespace kiln
