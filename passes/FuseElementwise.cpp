// kiln-fuse-elementwise: producer→consumer fusion into kiln.fusion loop.
// decideFusion() keeps legality apart from the transform and returns why a
// producer is refused (XLA's FusionDecision); a statistic (and, with
// emit-remarks, a remark) counts each reason once per consumer, for the
// producers still refused when the consumer stops growing.
//
// Steps, per function:
//   1. the roots: elementwise ops, index remappings and loop fusions, from
//      the last to the first (consumers before their producers), then the
//      pads and concatenations no root has taken in;
//   2. for each root still alive, scan its operands' producers; fuse the
//      first one decideFusion() accepts (moving it in, or copying it in
//      when it is cheap and has other users) and scan the grown fusion
//      again;
//   3. when no producer is accepted, count the refusals of the last scan.
#include "passes/Passes.h"

#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Values at most this large may stay as extra results of a fusion (the
/// rng_uniform state) instead of forcing a refusal or a duplicate.
constexpr int64_t kSmallResultBytes = 64;
/// A transpose that moves the innermost dimension is cheap only this small.
constexpr int64_t kCheapTransposeElements = 1024;

enum class Refusal {
  NotFusible,
  Cycle,
  Duplication,
  Shape,
  Transpose,
  Operands,
  Size,
  SliceReshaped
};

StringRef describe(Refusal refusal) {
  switch (refusal) {
  case Refusal::NotFusible:
    return "the producer never fuses here";
  case Refusal::Cycle:
    return "fusing would create a cycle";
  case Refusal::Duplication:
    return "the producer has other users and duplicating it costs too much";
  case Refusal::Shape:
    return "the producer's element count differs from the consumer's";
  case Refusal::Transpose:
    return "the transpose is expensive";
  case Refusal::Operands:
    return "the fusion would exceed max-operands";
  case Refusal::Size:
    return "the fusion would exceed max-ops";
  case Refusal::SliceReshaped:
    return "a reshape alone is no kernel, and a product may read the slice "
           "in place";
  }
  llvm_unreachable("unknown refusal");
}

/// Whether a producer fuses into a consumer and how; XLA's FusionDecision.
struct FusionDecision {
  std::optional<Refusal> refusal;
  bool duplicate = false;

  static FusionDecision fuse(bool duplicate) {
    return {std::nullopt, duplicate};
  }
  static FusionDecision refuse(Refusal why) { return {why, false}; }
  explicit operator bool() const { return !refusal; }
};

bool isLoopFusion(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  return fusion && fusion.getKind() == FusionKind::loop;
}

bool isConsumer(Operation *op) {
  return isElementwiseLike(op) || isLoopFusion(op);
}

/// A pad or a concatenation that no consumer took in (one tied by a
/// barrier, read by a product: a chunk's key gradient padded to every key)
/// is a root too, after every other, so that the widening that made its
/// operand fuses into it and it reads the narrow value instead of a stored
/// widened copy.
bool isLateConsumer(Operation *op) { return isa<PadOp, ConcatenateOp>(op); }

/// Slices, pads and concatenations are index remappings too: fused into
/// their consumer, it reads their operands where they come from rather
/// than a copy (a chunk's key gradient padded to every key and added, the
/// query/key/value gradients padded into their joint projection's).
bool isFusibleProducer(Operation *op) {
  return isElementwiseLike(op) || isLoopFusion(op) ||
         isa<RngUniformOp, SliceOp, PadOp, ConcatenateOp>(op);
}

bool isCheapTranspose(TransposeOp op) {
  ArrayRef<int64_t> perm = op.getPermutation();
  return perm.empty() || perm.back() == int64_t(perm.size()) - 1 ||
         numElementsOf(op.getType()) <= kCheapTransposeElements;
}

/// Whether `value` stops a cascade of copies (see isDuplicationLeaf):
/// arguments, constants, broadcasts and iotas, ops that are never
/// duplicated (expensive elementwise ops, dots, fusions, ...) and values of
/// another size (which never fuse here).
bool stopsCopies(Value value, int64_t space) {
  Operation *def = value.getDefiningOp();
  return !def || isa<ConstantOp, BroadcastInDimOp, IotaOp>(def) ||
         !isCheapToDuplicate(def) || numElementsOf(value.getType()) != space;
}

/// Whether copies of the cheap ops `value` is computed from, up to where
/// copies stop, read fewer bytes per element than `value` has: a value
/// widened from 16 bits (a 16-bit product's f32 result, masked), or one
/// computed from iotas and constants alone (a mask). Recomputing such a
/// value in each consumer moves fewer bytes than storing it once and
/// reading it in each; at most kMaxRecomputedOps ops are copied.
bool isCheaperToRecompute(Value value, int64_t space) {
  constexpr int kMaxRecomputedOps = 6;
  auto bytesPerPoint = [&](Value v) {
    return byteSizeOf(v.getType()) / std::max<int64_t>(1, space);
  };
  int64_t readBytes = 0, copied = 0;
  llvm::SmallPtrSet<Value, 8> seen;
  SmallVector<Value> pending = {value};
  while (!pending.empty()) {
    Value v = pending.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (def && isa<ConstantOp, BroadcastInDimOp, IotaOp>(def))
      continue; // no [space] tensor read
    if (stopsCopies(v, space)) {
      readBytes += bytesPerPoint(v);
      continue;
    }
    if (++copied > kMaxRecomputedOps)
      return false;
    llvm::append_range(pending, def->getOperands());
  }
  return readBytes < bytesPerPoint(value);
}

/// Whether a duplicated producer may read `value` in a consumer iterating
/// over `space` elements: a copy must not make another cheap op shared, or
/// copies would cascade up a chain (a residual stream would be recomputed
/// from its start in every layer), unless that op is cheaper to recompute
/// than to read.
bool isDuplicationLeaf(Value value, int64_t space) {
  return stopsCopies(value, space) || isCheaperToRecompute(value, space);
}

/// Whether every reader of `value` is a pad or a concatenation, through
/// reshapes and transposes, which only rename elements (a gradient of
/// attention's heads reshaped to its rows before it is padded), and, with
/// `throughElementwise`, elementwise ops, which read each element for the
/// one point they make (the last chunk's key gradient, widened, added to
/// the other chunks' sum before the heads are joined). Not broadcasts:
/// they read an element for many points, and a producer fused through one
/// would repeat its work.
bool isReadOnlyPadded(Value value, bool throughElementwise) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (isa<PadOp, ConcatenateOp>(user))
      return true;
    return (isa<ReshapeOp, TransposeOp>(user) ||
            (throughElementwise &&
             user->hasTrait<mlir::OpTrait::Elementwise>())) &&
           isReadOnlyPadded(user->getResult(0), throughElementwise);
  });
}

/// Whether `consumer` is a fusion whose body arguments bound to `value`
/// all satisfy `reads`.
bool fusionReadsOnlyAs(Operation *consumer, Value value,
                       llvm::function_ref<bool(BlockArgument)> reads) {
  auto fusion = dyn_cast<FusionOp>(consumer);
  if (!fusion)
    return false;
  for (auto [input, argument] : llvm::zip(
           fusion.getInputs(), fusion.getBody().front().getArguments()))
    if (input == value && !reads(argument))
      return false;
  return true;
}

/// Whether `consumer`, a fusion, reads its operand `value` only through
/// pads and concatenations, reshaped or transposed first or not, and
/// combined elementwise first or not when `value` is made from fewer bytes
/// than it has (a widened 16-bit product: fused in, it is read narrow; an
/// f32 sum pulled in the same way only moved an add between kernels and
/// kept more buffers alive at once). Attention's gradients per head,
/// joined into the rows of the q/k/v projection's: each
/// of its points then reads at most one element of `value`, so a producer
/// of fewer elements (a chunk of attention's output, widened, concatenated
/// with the others; a chunk's key gradient padded to every key and added
/// to the other chunks' sum) fuses in with no work repeated, and the
/// kernel reads the producer's operands instead of a stored copy. A pad
/// counts as made from fewer bytes (its operand is smaller). The producer
/// may itself be a concatenation (the query gradient's chunks, read by the
/// join through a transpose, a reshape and a pad): each element is one
/// element of one input, so its inputs' widenings fuse in after it and the
/// join reads the 16-bit chunks instead of a stored f32 copy. Or a slice,
/// through elementwise ops too (Llama's rotate_half: one half of the heads
/// negated, then concatenated with the other): the rotary kernel then
/// reads the heads where they are, not a copy of each half. The readers'
/// path never goes through a slice: a producer computed for a slice would
/// bring its own operands of the producer's size along, which then fuse no
/// further and are stored (a bias broadcast to every token).
bool readsOnlyThroughPadsOrConcatenations(Operation *consumer, Value value) {
  if (isa<PadOp, ConcatenateOp>(consumer))
    return true;
  bool widened = isMadeFromFewerBytes(value) ||
                 isa_and_nonnull<PadOp, SliceOp>(value.getDefiningOp());
  return fusionReadsOnlyAs(consumer, value, [&](BlockArgument argument) {
    return isReadOnlyPadded(argument, widened);
  });
}

/// Whether `consumer` reads `value` only as the state of its rng_uniform
/// draws. A draw reads its state's two words once a thread, before its
/// loop, so a small producer of a state (an attention chunk's Philox
/// offset: the step's state plus a constant) fuses in without being
/// repeated per point; apart, it was a two-element kernel per chunk, 48 in
/// GPT-2 124M's step.
bool readsOnlyAsRngState(Operation *consumer, Value value) {
  auto isStateOf = [](OpOperand &use) {
    auto rng = dyn_cast<RngUniformOp>(use.getOwner());
    return rng && use.get() == rng.getState();
  };
  if (isa<RngUniformOp>(consumer))
    return llvm::all_of(value.getUses(), [&](OpOperand &use) {
      return use.getOwner() != consumer || isStateOf(use);
    });
  return fusionReadsOnlyAs(consumer, value, [&](BlockArgument argument) {
    return llvm::all_of(argument.getUses(), isStateOf);
  });
}

/// The decision for fusing `producer` into `consumer` (the group's root).
FusionDecision decideFusion(Operation *producer, Operation *consumer,
                            unsigned maxOperands, unsigned maxOps) {
  if (!isFusibleProducer(producer))
    return FusionDecision::refuse(Refusal::NotFusible);
  if (fusedBodyOps({producer, consumer}) > maxOps)
    return FusionDecision::refuse(Refusal::Size);
  // A slice that is one run of its source is no copy at all where only
  // products read it, reshaped or not (attention's chunk of grouped
  // queries), and a lone reshape is no kernel (its buffer is its
  // operand's); fused, the two would be a kernel copying the slice. (A
  // slice of several runs is copied anyway, better by the fusion's four
  // elements a thread.)
  if (auto slice = dyn_cast<SliceOp>(producer);
      slice && isa<ReshapeOp>(consumer) && isOneRunOfItsSource(slice))
    return FusionDecision::refuse(Refusal::SliceReshaped);
  // The consumer's iteration space; its small extra results (an rng state)
  // do not count.
  int64_t space = 0;
  for (Type type : consumer->getResultTypes())
    space = std::max(space, numElementsOf(type));
  bool hasOtherUsers = false, hasLargeOtherUsers = false;
  for (Value result : producer->getResults()) {
    bool usedHere = false, usedElsewhere = false, stored = false;
    for (Operation *user : result.getUsers()) {
      (user == consumer ? usedHere : usedElsewhere) = true;
      stored |= user->hasTrait<mlir::OpTrait::IsTerminator>();
    }
    // A pad (a late root) reads each element of its operand once, so a
    // loop fusion made earlier fuses into it whole: it then writes the
    // padded result itself instead of a copy the pad reads back (the
    // hidden states' gradient from the loss, [B, T - 1, H] padded to T
    // rows). Not into a concatenation: one of its inputs' fusions taken
    // in would leave that input's reduction (a loss chunk's) split in two.
    const bool remapsOnce =
        isElementwiseLike(producer) ||
        isa<PadOp, ConcatenateOp, SliceOp>(producer) ||
        (isLoopFusion(producer) && isa<PadOp>(consumer));
    if (usedHere && numElementsOf(result.getType()) != space &&
        !(remapsOnce && numElementsOf(result.getType()) < space &&
          (readsOnlyThroughPadsOrConcatenations(consumer, result) ||
           readsOnlyAsRngState(consumer, result))))
      return FusionDecision::refuse(Refusal::Shape);
    hasOtherUsers |= usedElsewhere;
    // A result the function returns is written whatever fuses: a consumer
    // of its shape may as well write it (an optimizer's new moments and
    // weights, with the update that reads them). Not one of another shape
    // (a reduction's reshaped operand): that kernel could no longer join
    // its reduction.
    bool storedHere =
        stored && llvm::is_contained(consumer->getResultTypes(),
                                     result.getType());
    hasLargeOtherUsers |= usedElsewhere && !storedHere &&
                          byteSizeOf(result.getType()) > kSmallResultBytes;
  }
  if (auto transpose = dyn_cast<TransposeOp>(producer);
      transpose && !isCheapTranspose(transpose))
    return FusionDecision::refuse(Refusal::Transpose);
  bool duplicate = hasLargeOtherUsers;
  if (duplicate &&
      !(isCheapToDuplicate(producer) &&
        llvm::all_of(producer->getOperands(), [&](Value operand) {
          return isDuplicationLeaf(operand, space);
        })))
    return FusionDecision::refuse(Refusal::Duplication);
  if (collectFusionInputs({producer, consumer}).size() > maxOperands)
    return FusionDecision::refuse(Refusal::Operands);
  if (!duplicate && hasOtherUsers && wouldCreateCycle({producer, consumer}))
    return FusionDecision::refuse(Refusal::Cycle);
  return FusionDecision::fuse(duplicate);
}

struct FuseElementwisePass
    : impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Block &block = getOperation().getBody().front();
    SmallVector<Operation *> roots;
    for (Operation &op : llvm::reverse(block.without_terminator()))
      if (isConsumer(&op))
        roots.push_back(&op);
    for (Operation &op : llvm::reverse(block.without_terminator()))
      if (isLateConsumer(&op))
        roots.push_back(&op);
    alive.clear();
    alive.insert(roots.begin(), roots.end());
    for (Operation *root : roots)
      if (alive.contains(root))
        grow(root);
  }

  /// Fuses legal producers into `root` until none is left; counts the
  /// refusals that remain.
  void grow(Operation *root) {
    while (true) {
      SmallVector<std::pair<Operation *, Refusal>> refusals;
      llvm::SmallPtrSet<Operation *, 8> seen;
      Operation *next = nullptr;
      FusionDecision chosen;
      for (Value operand : root->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || producer->hasTrait<mlir::OpTrait::ConstantLike>() ||
            !seen.insert(producer).second)
          continue;
        FusionDecision decision =
            decideFusion(producer, root, maxOperands, maxOps);
        if (decision) {
          next = producer;
          chosen = decision;
          break;
        }
        refusals.push_back({producer, *decision.refusal});
      }
      if (!next) {
        count(root, refusals);
        return;
      }
      root = fuse(next, root, chosen.duplicate);
    }
  }

  Operation *fuse(Operation *producer, Operation *root, bool duplicate) {
    alive.erase(root);
    if (duplicate) {
      // The producer keeps other users, so it stays (and stays a root).
      ++numDuplicated;
      return outlineFusion({root}, {producer}, FusionKind::loop);
    }
    ++numFused;
    alive.erase(producer);
    return outlineFusion({producer, root}, {}, FusionKind::loop);
  }

  void count(Operation *root,
             ArrayRef<std::pair<Operation *, Refusal>> refusals) {
    for (auto [producer, refusal] : refusals) {
      if (emitRemarks)
        producer->emitRemark() << "not fused into '" << root->getName()
                               << "': " << describe(refusal);
      switch (refusal) {
      case Refusal::NotFusible: ++numRefusedNotFusible; break;
      case Refusal::Cycle: ++numRefusedCycle; break;
      case Refusal::Duplication: ++numRefusedDuplication; break;
      case Refusal::Shape: ++numRefusedShape; break;
      case Refusal::Transpose: ++numRefusedTranspose; break;
      case Refusal::Operands: ++numRefusedOperands; break;
      case Refusal::Size:
        ++numRefusedSize;
        break;
      case Refusal::SliceReshaped: ++numRefusedSliceReshaped; break;
      }
    }
  }

  llvm::DenseSet<Operation *> alive;
};

} // namespace
} // namespace kiln
