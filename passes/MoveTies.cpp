// kiln-move-ties: a tie is an operand of a kiln.optimization_barrier whose
// result nothing reads. It only orders: what reads the barrier's other
// results waits for the tied value (kiln-partition ties a recomputation to
// the backward value it must not run before; the attention and loss
// lowerings tie each chunk to the previous one). A backend gives every
// barrier operand a buffer, so a tie makes its value stored even when the
// value's only other readers are fused kernels that would never store it.
//
// Two cases cost a GPT-2 step in bf16 real traffic, both from kiln-autocast
// running after the ties were made:
//   - a tie on a product's widened result (16-bit GEMM result → f32): the
//     widening was a kernel writing an f32 copy, instead of fusing into its
//     readers;
//   - a tie on an f32 backward value that fusion keeps inside a kernel (the
//     gradient a bf16 GEMM operand is rounded from): the kernel wrote it
//     out in f32 only to be waited for.
// This pass moves such ties onto values that are buffers anyway:
//   1. a tie on a convert moves to the convert's operand when the convert
//      widens (its operand is the smaller buffer, and ready as early) or
//      only ties read it;
//   2. a tie on a fusion result nothing else reads moves to a result of the
//      same fusion that is read: the same kernel, so the same order;
//   3. a tie on a backward value computed elementwise (kiln-partition ties
//      an optimizer's decayed weight and decayed second moment to the
//      update and the squared gradient) climbs through the latest backward
//      operand of each elementwise op to a value that is a buffer anyway (a
//      product) or small (a clipping coefficient): what waits still runs in
//      the backward pass, after the gradient, and the update fuses into one
//      kernel instead of storing its steps;
// then drops what nothing reads any more (converts, fusion results and the
// body ops only they needed). The pipeline runs it before fusion (cases 1
// and 3, so the widening and the update fuse into their readers) and after
// it (case 2).
#include "passes/Passes.h"

#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace kiln {
#define GEN_PASS_DEF_MOVETIESPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Whether only ties read `value` (and something does).
bool onlyTiesRead(Value value) {
  return !value.use_empty() && llvm::all_of(value.getUses(), isTie);
}

int64_t elementBits(Value value) {
  return cast<RankedTensorType>(value.getType())
      .getElementType()
      .getIntOrFloatBitWidth();
}

/// Whether fusion may keep `op`'s result inside a kernel (it is not a
/// buffer by itself, as a product, a reduction or a barrier's are).
bool mayStayInKernel(Operation *op) {
  return isElementwiseLike(op) && !op->hasTrait<mlir::OpTrait::ConstantLike>();
}

/// A tie on a value this small costs nothing to speak of, stored or not.
constexpr int64_t kSmallTieBytes = 64 * 1024;

/// Case 3: for a backward value `value` computed elementwise, the backward
/// value it waits for that is a buffer anyway (the gradient a product
/// made) or small (a clipping coefficient), climbing through the latest
/// backward operand of each elementwise op; null when there is none.
Value storedBackwardSource(Value value,
                           const llvm::DenseSet<Operation *> &backward) {
  Operation *def = value.getDefiningOp();
  if (!def || !backward.contains(def) || !mayStayInKernel(def))
    return Value();
  while (mayStayInKernel(def)) {
    Value latest;
    for (Value operand : def->getOperands()) {
      Operation *source = operand.getDefiningOp();
      if (source && backward.contains(source) &&
          (!latest || latest.getDefiningOp()->isBeforeInBlock(source)))
        latest = operand;
    }
    if (!latest)
      return Value();
    value = latest;
    def = latest.getDefiningOp();
    if (byteSizeOf(value.getType()) <= kSmallTieBytes)
      return value;
  }
  // Pads, slices, concatenations, draws and reductions fuse too: a tie
  // there would still be a stored value of its own.
  if (isa<PadOp, SliceOp, ConcatenateOp, RngUniformOp, ReduceOp>(def))
    return Value();
  return value;
}

/// The value a tie on `value` moves to, or null to leave it.
Value movedTieTarget(Value value,
                     const llvm::DenseSet<Operation *> &backward) {
  if (Value source = storedBackwardSource(value, backward))
    return source;
  if (auto convert = value.getDefiningOp<ConvertOp>()) {
    Value operand = convert.getOperand();
    if (elementBits(operand) < elementBits(value) || onlyTiesRead(value))
      return operand;
    return Value();
  }
  auto fusion = value.getDefiningOp<FusionOp>();
  if (!fusion || !onlyTiesRead(value))
    return Value();
  for (Value result : fusion.getResults())
    if (!result.use_empty() && !onlyTiesRead(result))
      return result;
  return Value();
}

/// `barrier` with `operands` in place of its own, less those at the
/// indices `dropped` holds; read results keep their readers.
void rebuildBarrier(OptimizationBarrierOp barrier, ArrayRef<Value> operands,
                    const llvm::SmallBitVector &dropped) {
  SmallVector<Value> kept;
  for (auto [i, operand] : llvm::enumerate(operands))
    if (!dropped.test(i))
      kept.push_back(operand);
  OpBuilder builder(barrier);
  auto rebuilt = OptimizationBarrierOp::create(
      builder, barrier.getLoc(), ValueRange(kept), /*gradient_seed=*/false);
  unsigned next = 0;
  for (auto [i, oldResult] : llvm::enumerate(barrier.getResults()))
    if (!dropped.test(i))
      oldResult.replaceAllUsesWith(rebuilt.getResult(next++));
  barrier.erase();
}

/// `fusion` without the results nothing reads, and without the body ops
/// only they needed.
void dropUnreadResults(FusionOp fusion) {
  if (llvm::all_of(fusion.getResults(),
                   [](Value result) { return !result.use_empty(); }))
    return;
  FusionOp shrunk =
      outlineFusion({fusion.getOperation()}, {}, fusion.getKind());
  // Readers before the values they read, from a list taken first: a
  // reverse iterator over the block refers to an op through the op after
  // it, so erasing that op would leave the next step reading freed memory.
  SmallVector<Operation *> ops;
  for (Operation &op : shrunk.getBody().front().without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

struct MoveTiesPass : impl::MoveTiesPassBase<MoveTiesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Block &block = getOperation().getBody().front();
    SmallVector<OptimizationBarrierOp> barriers(
        block.getOps<OptimizationBarrierOp>());
    // The backward pass: the ops that depend on a gradient seed.
    llvm::DenseSet<Operation *> backward;
    for (Operation &op : block.without_terminator()) {
      auto seed = dyn_cast<OptimizationBarrierOp>(&op);
      if ((seed && seed.getGradientSeed()) ||
          llvm::any_of(op.getOperands(), [&](Value operand) {
            Operation *def = operand.getDefiningOp();
            return def && backward.contains(def);
          }))
        backward.insert(&op);
    }
    // The ops whose values lost a tie: dropped below if nothing reads them.
    llvm::SetVector<Operation *> untied;
    for (OptimizationBarrierOp barrier : barriers) {
      if (barrier.getGradientSeed())
        continue;
      SmallVector<Value> operands(barrier.getOperands());
      llvm::SmallBitVector dropped(operands.size());
      bool changed = false;
      for (auto [i, operand] : llvm::enumerate(operands)) {
        if (!barrier->getResult(i).use_empty())
          continue;
        Value target = movedTieTarget(operand, backward);
        if (!target)
          continue;
        untied.insert(operand.getDefiningOp());
        // One operand per value: each result aliases its operand's buffer,
        // and the value is waited for already.
        if (llvm::is_contained(operands, target))
          dropped.set(i);
        operand = target;
        changed = true;
        ++numMoved;
      }
      if (changed)
        rebuildBarrier(barrier, operands, dropped);
    }
    for (Operation *op : untied) {
      if (auto fusion = dyn_cast<FusionOp>(op)) {
        dropUnreadResults(fusion);
      } else if (op->use_empty()) {
        op->erase();
        ++numErased;
      }
    }
  }
};

} // namespace
} // namespace kiln
