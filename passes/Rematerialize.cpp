// kiln-rematerialize: under a memory budget, recomputes cheap values after
// the peak instead of keeping them live across it.
//
// The estimate is kiln-schedule's liveness model (passes/Liveness.h) over
// the function's top-level ops in their current order, plus the bytes of
// the function's arguments as a constant base (the caller's parameters,
// optimizer state and batch are resident), so it approximates the peak the
// backend's memory planner will find.
//
// Steps, repeated while the estimated peak exceeds the budget:
//   1. find the peak op P (the first op with the largest live bytes);
//   2. candidates: ops before P, cheap to recompute (isCheapToRecompute),
//      with results live across P (not read by P, read after P); largest
//      such bytes first;
//   3. for a candidate D: clone D before its first user after P and
//      redirect every user after P to the clone (D is dropped from the
//      estimate once nothing reads it: it is erased at the end); estimate
//      again. The clone keeps D's operands live up to it, and the estimate
//      counts that, so no lifetime extension goes unaccounted. Keep the
//      change when the peak falls, or when it stays and fewer ops reach
//      it (a plateau of equal peaks is walked one op at a time); else undo
//      it and try the next candidate;
//   4. stop when no candidate helps. Plateau steps after the last fall of
//      the peak are undone (they would recompute for nothing).
// Never fails: a budget out of reach is the memory planner's error.
#include "passes/Passes.h"

#include "passes/FusionUtils.h"
#include "passes/Liveness.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace kiln {
#define GEN_PASS_DEF_REMATERIALIZEPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Candidates tried per step before giving up on the step.
constexpr size_t kMaxTrialsPerStep = 64;

/// One op cheap enough to run twice: elementwise ops and the index
/// remappings, and rng_uniform (Pure: the same state gives the same bits).
/// Never a GEMM, a reduce, a gather, a scatter or a copy of part of a
/// tensor.
bool isCheapSingleOp(Operation *op) {
  if (isa<DotGeneralOp, ReduceOp, GatherOp, ScatterAddOp, SliceOp, PadOp,
          ConcatenateOp, ConstantOp, FusionOp>(op))
    return false;
  return op->hasTrait<mlir::OpTrait::Elementwise>() ||
         isa<BroadcastInDimOp, ConvertOp, IotaOp, TransposeOp, ReshapeOp,
             RngUniformOp>(op);
}

/// A producer worth recomputing: one cheap op, or a loop or multi-output
/// fusion whose body holds only cheap ops and constants (no reduce).
bool isCheapToRecompute(Operation *op) {
  if (op->getNumResults() == 0 || !isMemoryEffectFree(op))
    return false;
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion)
    return isCheapSingleOp(op);
  if (fusion.getKind() == FusionKind::reduction)
    return false;
  for (Operation &inner : fusion.getBody().front())
    if (!isa<ConstantOp, YieldOp>(inner) && !isCheapSingleOp(&inner))
      return false;
  return true;
}

/// The estimated peak (arguments included) of one order.
struct Estimate {
  int64_t peak = 0;
  /// How many ops reach the peak, and the first of them.
  int64_t opsAtPeak = 0;
  size_t position = 0;

  bool betterThan(const Estimate &other) const {
    return peak < other.peak ||
           (peak == other.peak && opsAtPeak < other.opsAtPeak);
  }
};

Estimate estimate(Block &block, ArrayRef<Operation *> order, int64_t base) {
  Estimate result;
  result.peak = base;
  SmallVector<int64_t> profile = liveBytesProfile(block, order);
  for (auto [index, during] : llvm::enumerate(profile)) {
    int64_t bytes = base + during;
    if (bytes > result.peak || result.opsAtPeak == 0) {
      result = {bytes, 1, index};
    } else if (bytes == result.peak) {
      ++result.opsAtPeak;
    }
  }
  return result;
}

/// One accepted recomputation.
struct Remat {
  Operation *original;
  Operation *clone;
  /// Bytes of the original's results that were live across the peak.
  int64_t bytes;
  /// The op the clone runs just before.
  Operation *before;
  /// Nothing reads the original any more.
  bool originalDead;
};

struct RematerializePass : impl::RematerializePassBase<RematerializePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (memoryBudget <= 0 || function.isExternal())
      return;
    Block &block = function.getBody().front();
    int64_t base = argumentBytes(block);

    SmallVector<Operation *> order;
    for (Operation &op : block.without_terminator())
      order.push_back(&op);
    Estimate current = estimate(block, order, base);
    const int64_t before = current.peak;
    int64_t best = before;

    // Originals nothing reads any more: out of the estimate, erased at the
    // end (kept until then so a step can be undone).
    DenseSet<Operation *> dead;
    SmallVector<Remat> done;
    size_t doneAtBest = 0;
    size_t maxSteps = 2 * order.size() + 16;
    for (size_t step = 0; current.peak > memoryBudget && step < maxSteps;
         ++step) {
      if (current.opsAtPeak == 0 ||
          !rematerializeOnce(block, order, base, current, dead, done))
        break;
      if (current.peak < best) {
        best = current.peak;
        doneAtBest = done.size();
      }
    }
    // Plateau steps that never led to a lower peak.
    while (done.size() > doneAtBest) {
      undo(done.back());
      dead.erase(done.back().original);
      done.pop_back();
    }

    if (emitRemarks)
      for (const Remat &remat : done)
        remat.clone->emitRemark()
            << "rematerialized " << remat.bytes << " bytes of '"
            << remat.original->getName() << "' before '"
            << remat.before->getName() << "'"
            << (remat.originalDead ? " (moved: nothing read it before the "
                                     "peak)"
                                   : "");
    for (const Remat &remat : done)
      if (dead.contains(remat.original) && remat.original->use_empty()) {
        dead.erase(remat.original);
        remat.original->erase();
      }

    int64_t after = best;
    numRematerialized += done.size();
    bytesSaved += before - after;
    if (after > memoryBudget)
      ++numBudgetsMissed;
    if (!emitRemarks)
      return;
    function.emitRemark() << "estimated peak bytes (arguments included): "
                          << before << " before, " << after << " after, budget "
                          << static_cast<int64_t>(memoryBudget) << "; "
                          << done.size() << " values rematerialized, "
                          << before - after << " bytes saved";
    if (after > memoryBudget)
      function.emitRemark() << "memory budget of "
                            << static_cast<int64_t>(memoryBudget)
                            << " bytes not met: nothing cheap left to "
                               "recompute lowers the peak of "
                            << after << " bytes";
  }

  /// One step: the first candidate (largest first) whose recomputation
  /// improves the estimate. Updates `order` and `current`; false when none.
  bool rematerializeOnce(Block &block, SmallVector<Operation *> &order,
                         int64_t base, Estimate &current,
                         DenseSet<Operation *> &dead,
                         SmallVector<Remat> &done) {
    Operation *terminator = block.getTerminator();
    DenseMap<Operation *, size_t> position;
    for (auto [index, op] : llvm::enumerate(order))
      position[op] = index;
    position[terminator] = order.size();
    const size_t peak = current.position;
    // The top-level op a use belongs to, by position; ~0 for ops outside
    // the estimate.
    auto positionOf = [&](Operation *user) -> size_t {
      Operation *top = block.findAncestorOpInBlock(*user);
      auto it = top ? position.find(top) : position.end();
      return it == position.end() ? ~size_t(0) : it->second;
    };

    struct Candidate {
      Operation *op;
      int64_t bytes;
    };
    SmallVector<Candidate> candidates;
    for (size_t index = 0; index < peak; ++index) {
      Operation *op = order[index];
      if (!isCheapToRecompute(op))
        continue;
      int64_t bytes = 0;
      for (Value result : op->getResults()) {
        bool readByPeak = false, readAfter = false;
        for (Operation *user : result.getUsers()) {
          size_t at = positionOf(user);
          readByPeak |= at == peak;
          readAfter |= at != ~size_t(0) && at > peak;
        }
        if (readAfter && !readByPeak)
          bytes += byteSizeOf(result.getType());
      }
      if (bytes > 0)
        candidates.push_back({op, bytes});
    }
    // Largest first; on a tie the earliest (it is live the longest).
    llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
      return a.bytes > b.bytes;
    });
    if (candidates.size() > kMaxTrialsPerStep)
      candidates.resize(kMaxTrialsPerStep);

    for (const Candidate &candidate : candidates) {
      Operation *original = candidate.op;
      // The first user after the peak: the clone runs just before it.
      size_t first = ~size_t(0);
      for (Operation *user : original->getUsers()) {
        size_t at = positionOf(user);
        if (at != ~size_t(0) && at > peak)
          first = std::min(first, at);
      }
      Operation *before = first == order.size() ? terminator : order[first];
      OpBuilder builder(before);
      Operation *clone = builder.clone(*original);
      for (auto [result, copy] :
           llvm::zip(original->getResults(), clone->getResults()))
        result.replaceUsesWithIf(copy, [&](OpOperand &use) {
          size_t at = positionOf(use.getOwner());
          return at != ~size_t(0) && at > peak;
        });
      bool originalDead = original->use_empty();

      SmallVector<Operation *> trial;
      trial.reserve(order.size() + 1);
      for (auto [index, op] : llvm::enumerate(order)) {
        if (index == first)
          trial.push_back(clone);
        if (!(originalDead && op == original))
          trial.push_back(op);
      }
      if (first == order.size())
        trial.push_back(clone);
      Estimate next = estimate(block, trial, base);
      if (next.betterThan(current)) {
        if (originalDead)
          dead.insert(original);
        done.push_back(
            {original, clone, candidate.bytes, before, originalDead});
        order = std::move(trial);
        current = next;
        return true;
      }
      undo({original, clone, candidate.bytes, before, originalDead});
    }
    return false;
  }

  /// Sends the clone's users back to the original and erases the clone.
  static void undo(const Remat &remat) {
    for (auto [result, copy] :
         llvm::zip(remat.original->getResults(), remat.clone->getResults()))
      copy.replaceAllUsesWith(result);
    remat.clone->erase();
  }
};

} // namespace
} // namespace kiln
