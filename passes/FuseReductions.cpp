// kiln-fuse-reductions: groups each kiln.reduce with its elementwise
// producers, its elementwise epilogues and the other reduces of the same
// signature (operand shape and reduced dimensions) it is connected to, and
// outlines the group as one kiln.fusion reduction. A kernel for the group
// walks the kept dimensions in parallel and each reduced row serially, so
// its members live in three shapes: the full operand shape, the reduced
// shape, and the reduced shape with the reduced dimensions kept as 1.
//
// Steps, per reduce not yet grouped (in block order):
//   1. start a group holding the reduce and take its signature;
//   2. scan the group's neighbours (producers of its operands, users of its
//      results) in block order; join the first one decideJoin() accepts and
//      rescan; stop when none joins and count the remaining refusals;
//   3. drop index remappings (broadcasts, ...) that only outside ops read;
//   4. outline the group (members with outside users become results),
//      unless it holds the reduce alone.
#include "passes/Passes.h"

#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEREDUCTIONSPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

enum class Refusal { NotFusible, Signature, Shape, Cycle, Operands };

StringRef describe(Refusal refusal) {
  switch (refusal) {
  case Refusal::NotFusible:
    return "the op never fuses into a reduction";
  case Refusal::Signature:
    return "the reduce has another operand shape or dimensions";
  case Refusal::Shape:
    return "a result is outside the group's full and reduced shapes";
  case Refusal::Cycle:
    return "fusing would create a cycle";
  case Refusal::Operands:
    return "the fusion would exceed max-operands inputs or kMaxFusionOps ops";
  }
  llvm_unreachable("unknown refusal");
}

/// The shapes a reduction group's members may produce.
struct Signature {
  SmallVector<int64_t> full, dims, reduced, kept;

  explicit Signature(ReduceOp reduce) {
    full = llvm::to_vector(reduce.getOperand().getType().getShape());
    dims = llvm::to_vector(reduce.getDimensions());
    llvm::sort(dims);
    for (auto [d, size] : llvm::enumerate(full)) {
      bool isReduced = llvm::is_contained(dims, int64_t(d));
      if (!isReduced)
        reduced.push_back(size);
      kept.push_back(isReduced ? 1 : size);
    }
  }

  bool operator==(const Signature &other) const {
    return full == other.full && dims == other.dims;
  }

  bool admits(Type type) const {
    auto tensor = cast<RankedTensorType>(type);
    ArrayRef<int64_t> shape = tensor.getShape();
    // An rng_uniform state travels with its draw as an extra result.
    if (tensor.getElementType().isInteger(64) && shape == ArrayRef<int64_t>{2})
      return true;
    return shape == ArrayRef(full) || shape == ArrayRef(reduced) ||
           shape == ArrayRef(kept);
  }
};

bool isJoinable(Operation *op) {
  if (auto fusion = dyn_cast<FusionOp>(op))
    return fusion.getKind() == FusionKind::loop;
  return isElementwiseLike(op) || isa<RngUniformOp, ReduceOp>(op);
}

/// Whether `candidate` may join `group` (signature `signature`).
std::optional<Refusal> decideJoin(Operation *candidate,
                                  ArrayRef<Operation *> group,
                                  const Signature &signature,
                                  unsigned maxOperands) {
  if (!isJoinable(candidate))
    return Refusal::NotFusible;
  if (auto reduce = dyn_cast<ReduceOp>(candidate);
      reduce && !(Signature(reduce) == signature))
    return Refusal::Signature;
  for (Value result : candidate->getResults())
    if (!signature.admits(result.getType()))
      return Refusal::Shape;
  SmallVector<Operation *> joined(group.begin(), group.end());
  joined.push_back(candidate);
  if (collectFusionInputs(joined).size() > maxOperands ||
      fusedBodyOps(joined) > kMaxFusionOps)
    return Refusal::Operands;
  if (wouldCreateCycle(joined))
    return Refusal::Cycle;
  return std::nullopt;
}

/// Top-level ops next to the group: producers of its operands and users of
/// its results, constants and the terminator excepted, in block order.
SmallVector<Operation *> neighboursOf(const SetVector<Operation *> &group) {
  SetVector<Operation *> found;
  for (Operation *op : group) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !group.contains(def) &&
          !def->hasTrait<mlir::OpTrait::ConstantLike>())
        found.insert(def);
    for (Operation *user : op->getUsers())
      if (!group.contains(user) &&
          !user->hasTrait<mlir::OpTrait::IsTerminator>())
        found.insert(user);
  }
  SmallVector<Operation *> sorted = found.takeVector();
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return sorted;
}

struct FuseReductionsPass : impl::FuseReductionsPassBase<FuseReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Block &block = getOperation().getBody().front();
    SmallVector<ReduceOp> reduces;
    for (Operation &op : block.without_terminator())
      if (auto reduce = dyn_cast<ReduceOp>(&op))
        reduces.push_back(reduce);
    llvm::SmallPtrSet<Operation *, 16> grouped;
    for (ReduceOp reduce : reduces) {
      if (grouped.contains(reduce))
        continue;
      SetVector<Operation *> group = growGroup(reduce);
      for (Operation *op : group)
        grouped.insert(op);
      if (group.size() == 1 && !isLaneableRow(reduce))
        continue; // a lone reduce is a kernel already
      numFused += group.size();
      ++numFusions;
      outlineFusion(group.getArrayRef(), {}, FusionKind::reduction);
    }
  }

  /// lone-rows-from: whether a lone `reduce` still becomes a fusion.
  bool isLaneableRow(ReduceOp reduce) {
    if (loneRowsFrom <= 0)
      return false;
    ArrayRef<int64_t> shape = reduce.getOperand().getType().getShape();
    int64_t row = 1;
    for (int64_t d : reduce.getDimensions())
      row *= shape[d];
    return row >= loneRowsFrom &&
           reducesInnermost(shape, reduce.getDimensions());
  }

  SetVector<Operation *> growGroup(ReduceOp reduce) {
    Signature signature(reduce);
    SetVector<Operation *> group;
    group.insert(reduce);
    while (true) {
      SmallVector<std::pair<Operation *, Refusal>> refusals;
      Operation *joining = nullptr;
      for (Operation *candidate : neighboursOf(group)) {
        std::optional<Refusal> refusal =
            decideJoin(candidate, group.getArrayRef(), signature, maxOperands);
        if (!refusal) {
          joining = candidate;
          break;
        }
        refusals.push_back({candidate, *refusal});
      }
      if (!joining) {
        count(refusals);
        return pruneDanglingRemaps(std::move(group));
      }
      group.insert(joining);
    }
  }

  /// Drops broadcasts, reshapes, transposes and iotas that only outside ops
  /// read: as results they would write a larger tensor than they read. One
  /// the function returns stays (it is written either way).
  static SetVector<Operation *>
  pruneDanglingRemaps(SetVector<Operation *> group) {
    bool pruned = true;
    while (pruned) {
      pruned = false;
      for (Operation *op : group) {
        bool remap = isa<BroadcastInDimOp, ReshapeOp, TransposeOp, IotaOp>(op);
        if (remap && llvm::none_of(op->getUsers(), [&](Operation *user) {
              return group.contains(user) ||
                     user->hasTrait<mlir::OpTrait::IsTerminator>();
            })) {
          group.remove(op);
          pruned = true;
          break;
        }
      }
    }
    return group;
  }

  void count(ArrayRef<std::pair<Operation *, Refusal>> refusals) {
    for (auto [candidate, refusal] : refusals) {
      if (emitRemarks)
        candidate->emitRemark()
            << "not fused into a reduction: " << describe(refusal);
      switch (refusal) {
      case Refusal::NotFusible:
        ++numRefusedNotFusible;
        break;
      case Refusal::Signature:
        ++numRefusedSignature;
        break;
      case Refusal::Shape:
        ++numRefusedShape;
        break;
      case Refusal::Cycle:
        ++numRefusedCycle;
        break;
      case Refusal::Operands:
        ++numRefusedOperands;
        break;
      }
    }
  }
};

} // namespace
} // namespace kiln
