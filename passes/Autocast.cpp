// kiln-autocast: mixed precision for matrix products. Every f32 × f32 → f32
// dot_general reads its operands rounded to a 16-bit type (bf16, or f16)
// and multiplies them exactly with f32 sums, as PyTorch's autocast and
// XLA's bf16 mode do. Its result is rounded to that type too (autocast's
// form: half the bytes to store,
// and the form a saved activation takes) and widened back to f32 for its
// readers, so every op outside the products still computes in f32; with
// f32-results the product keeps an f32 result instead (the dialect lets
// 16-bit operands produce f32). Each rounded value gets one convert, right
// after its definition, so every product that reads it shares it; a value
// that is itself a widened 16-bit value (the result of another product) is
// read in the 16-bit type directly. A product that reads a kiln.optimization_barrier's
// result (a chunk of the lowered loss or attention reading the weight or
// the keys) reads a rounded copy carried through that barrier: rounded
// once before it, for every chunk, and still ordered by it. With f32-sums
// a product whose only reader adds it to another stored f32 value keeps
// its f32 result: rounding a term of an f32 sum to 16 bits saves no stored
// bytes once kiln-fuse-gemm-epilogue folds the add into the GEMM, and
// loses precision (the loss's lm_head weight gradient, summed over its
// chunks; attention's key and value gradients, summed over chunks of
// queries, each padded to every key).
#include "passes/Passes.h"

#include "passes/FusionUtils.h"

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

namespace kiln {
#define GEN_PASS_DEF_AUTOCASTPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

bool hasElement(Value v, bool (Type::*is)() const) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && (type.getElementType().*is)();
}

bool hasElementType(Value v, Type element) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType() == element;
}

/// For each barrier result a product reads directly, the barrier gains the
/// rounded operand as one more operand (rounded before the barrier, once
/// for all the chunks that read it), and `rounded` maps the result to the
/// new result that carries it. The barrier is rebuilt with its old results
/// first, so every other reader is unchanged.
void carryRoundedThroughBarriers(
    func::FuncOp function, ArrayRef<DotGeneralOp> products,
    const std::function<Value(Value)> &roundOnce,
    llvm::DenseMap<Value, Value> &rounded) {
  llvm::DenseSet<Value> readByProducts;
  for (DotGeneralOp dot : products) {
    readByProducts.insert(dot.getLhs());
    readByProducts.insert(dot.getRhs());
  }
  SmallVector<OptimizationBarrierOp> barriers;
  function.walk([&](OptimizationBarrierOp b) { barriers.push_back(b); });
  for (OptimizationBarrierOp barrier : barriers) {
    SmallVector<unsigned> carried;
    for (OpResult result : barrier->getResults())
      if (readByProducts.contains(result) &&
          hasElement(result, &Type::isF32))
        carried.push_back(result.getResultNumber());
    if (carried.empty())
      continue;
    SmallVector<Value> operands(barrier.getOperands());
    for (unsigned i : carried)
      operands.push_back(roundOnce(barrier.getOperand(i)));
    OpBuilder builder(barrier);
    auto widened = OptimizationBarrierOp::create(
        builder, barrier.getLoc(), ValueRange(operands),
        barrier.getGradientSeed());
    unsigned n = barrier->getNumResults();
    for (unsigned i = 0; i < n; ++i)
      barrier->getResult(i).replaceAllUsesWith(widened->getResult(i));
    for (auto [k, i] : llvm::enumerate(carried))
      rounded[widened->getResult(i)] = widened->getResult(n + k);
    barrier->erase();
  }
}

/// Whether `dot`'s one reader that computes adds it to another f32 value
/// of its type that is stored anyway (not a broadcast, a widening or a
/// constant, which the add's loop reads from fewer bytes), into a sum
/// stored anyway: the sum kiln-fuse-gemm-epilogue folds into a GEMM,
/// directly or padded along its rows (productPaddedAlongRows). Barriers
/// may also read the product (the first chunk's term, tied so the next
/// chunk waits for it).
bool isAddedToStoredSum(DotGeneralOp dot) {
  Value term = dot.getResult();
  Operation *reader = nullptr;
  for (OpOperand &use : term.getUses()) {
    if (isa<OptimizationBarrierOp>(use.getOwner()))
      continue;
    if (reader)
      return false;
    reader = use.getOwner();
  }
  // A product padded along its rows is added into blocks of the sum's.
  if (auto pad = dyn_cast_or_null<PadOp>(reader);
      pad && pad->hasOneUse() && productPaddedAlongRows(pad.getResult())) {
    term = pad.getResult();
    reader = *pad->getUsers().begin();
  }
  auto add = dyn_cast_or_null<AddOp>(reader);
  return add && gemmAccumulatorOf(add, term);
}

/// Ops that only move or regroup elements, so a convert commutes with them:
/// views, and a barrier's slot (not a gradient seed's, whose slots say
/// where a backward pass starts).
bool isView(Operation *op) {
  if (auto barrier = dyn_cast<OptimizationBarrierOp>(op))
    return !barrier.getGradientSeed();
  return isa<SliceOp, ReshapeOp, TransposeOp>(op);
}

/// The value `use` makes of its operand: a view's result (a barrier's in
/// the operand's slot).
Value viewResult(OpOperand &use) {
  Operation *op = use.getOwner();
  if (isa<OptimizationBarrierOp>(op))
    return op->getResult(use.getOperandNumber());
  return op->getResult(0);
}

/// Whether every reader of `v` rounds it to `half`, directly or through
/// views (a product's operand: a chunk's slice of the keys, carried through
/// the barriers that order the chunks); `throughView` is set when one
/// reader is a view.
bool isRoundedThroughViews(Value v, Type half, bool &throughView) {
  for (OpOperand &use : v.getUses()) {
    Operation *op = use.getOwner();
    if (auto convert = dyn_cast<ConvertOp>(op)) {
      if (!hasElementType(convert.getResult(), half))
        return false;
      continue;
    }
    if (!isView(op) || !isRoundedThroughViews(viewResult(use), half,
                                             throughView))
      return false;
    throughView = true;
  }
  return true;
}

/// Replaces `v` (f32, every reader of which rounds it to `half` through
/// views) by its rounded value `rounded`: each view then moves 16-bit
/// elements (its result retyped in place), each convert to `half` goes.
/// `rounded`'s own convert, when it reads `v`, stays.
void narrowReaders(Value v, Value rounded) {
  auto half = cast<RankedTensorType>(rounded.getType()).getElementType();
  for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
    Operation *op = use.getOwner();
    if (op == rounded.getDefiningOp())
      continue;
    if (auto convert = dyn_cast<ConvertOp>(op)) {
      convert.getResult().replaceAllUsesWith(rounded);
      convert->erase();
      continue;
    }
    use.set(rounded);
    Value result = viewResult(use);
    result.setType(cast<RankedTensorType>(result.getType()).clone(half));
    narrowReaders(result, result);
  }
}

/// Rounding moved to the source: an f32 value that every reader rounds to
/// `half`, some through views (slices, reshapes, transposes, barrier
/// slots), is rounded once where it is made and the views carry 16-bit
/// elements. Exact (a convert commutes with moving elements), and the
/// value is stored, kept for the backward pass and sliced in half the
/// bytes: attention's query, keys and values, which each chunk slices
/// through the barriers that order the chunks, were written in f32 and
/// every chunk rounded its own slice.
void roundAtTheSource(func::FuncOp function, Type half,
                      const std::function<Value(Value)> &roundOnce,
                      Pass::Statistic &counter) {
  SmallVector<Value> sources;
  function.walk([&](Operation *op) {
    if (isView(op))
      return;
    for (Value result : op->getResults()) {
      bool throughView = false;
      if (hasElement(result, &Type::isF32) &&
          isRoundedThroughViews(result, half, throughView) && throughView)
        sources.push_back(result);
    }
  });
  for (Value source : sources) {
    narrowReaders(source, roundOnce(source));
    // A widened 16-bit value's readers now read the 16-bit original.
    if (auto widened = source.getDefiningOp<ConvertOp>();
        widened && source.use_empty())
      widened->erase();
    ++counter;
  }
}

struct AutocastPass : impl::AutocastPassBase<AutocastPass> {
  using AutocastPassBase::AutocastPassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    OpBuilder builder(function.getContext());
    Type half;
    if (halfType == "bf16")
      half = builder.getBF16Type();
    else if (halfType == "f16")
      half = builder.getF16Type();
    else {
      function.emitError("kiln-autocast: type must be bf16 or f16, got '")
          << halfType << "'";
      return signalPassFailure();
    }
    auto convert = [&](Value v, Type element) {
      auto type = cast<RankedTensorType>(v.getType());
      return ConvertOp::create(builder, v.getLoc(), type.clone(element), v);
    };
    llvm::DenseMap<Value, Value> rounded;
    auto roundOnce = [&](Value v) -> Value {
      // A widened 16-bit value is exact in that type: read the original.
      if (auto widened = v.getDefiningOp<ConvertOp>();
          widened && hasElementType(widened.getOperand(), half))
        return widened.getOperand();
      Value &copy = rounded[v];
      if (!copy) {
        builder.setInsertionPointAfterValue(v);
        copy = convert(v, half);
        ++numRounded;
      }
      return copy;
    };
    SmallVector<DotGeneralOp> products;
    function.walk([&](DotGeneralOp dot) {
      if (hasElement(dot.getLhs(), &Type::isF32) &&
          hasElement(dot.getRhs(), &Type::isF32) &&
          hasElement(dot.getResult(), &Type::isF32))
        products.push_back(dot);
    });
    carryRoundedThroughBarriers(function, products, roundOnce, rounded);
    // Each whole attention op an attention kernel can run reads its tensor
    // operands rounded (the rng state stays) and makes 16-bit results,
    // widened back to f32 for their readers: its products are the scores
    // and the weighted values, which the kernel forms from 16-bit tiles
    // with f32 sums, its softmax staying in f32 inside the kernel.
    SmallVector<Operation *> attentionOps;
    if (attention)
      function.walk([&](Operation *op) {
        if (fitsAttentionKernel(op, /*sixteenBit=*/false))
          attentionOps.push_back(op);
      });
    // The row statistics (log-sum-exps), the forward's result and the
    // gradient's operand, stay f32, as the kernel keeps them.
    for (Operation *op : attentionOps) {
      auto grad = dyn_cast<FusedAttentionGradOp>(op);
      for (OpOperand &operand : op->getOpOperands())
        if (hasElement(operand.get(), &Type::isF32) &&
            !(grad && operand.get() == grad.getRowStats()))
          operand.set(roundOnce(operand.get()));
      builder.setInsertionPointAfter(op);
      for (OpResult result : op->getResults()) {
        if (auto fwd = dyn_cast<FusedAttentionOp>(op);
            fwd && result == fwd.getRowStats())
          continue;
        result.setType(cast<RankedTensorType>(result.getType()).clone(half));
        ConvertOp widened = convert(result, builder.getF32Type());
        result.replaceAllUsesExcept(widened.getResult(), widened);
      }
      ++numAttention;
    }
    // In program order, so a product's widened result exists before a
    // later product reads it.
    for (DotGeneralOp dot : products) {
      Value lhs = roundOnce(dot.getLhs()), rhs = roundOnce(dot.getRhs());
      // The operands change in place; the dimension numbers stay.
      dot.getLhsMutable().assign(lhs);
      dot.getRhsMutable().assign(rhs);
      ++numProducts;
      if (f32Results)
        continue;
      if (f32Sums && isAddedToStoredSum(dot)) {
        ++numAccumulated;
        continue;
      }
      Value result = dot.getResult();
      result.setType(cast<RankedTensorType>(result.getType()).clone(half));
      builder.setInsertionPointAfter(dot);
      ConvertOp widened = convert(result, builder.getF32Type());
      result.replaceAllUsesExcept(widened.getResult(), widened);
    }
    roundAtTheSource(function, half, roundOnce, numRoundedAtSource);
  }
};

} // namespace
} // namespace kiln
