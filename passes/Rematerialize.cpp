// kiln-rematerialize: under a memory budget, recomputes values after the
// peak instead of keeping them live across it: cheap ones first, and GEMMs
// and reductions only when nothing cheap is left that lowers the peak.
//
// The estimate is kiln-schedule's liveness model (passes/Liveness.h) over
// the function's top-level ops in their current order, plus the bytes of
// the function's arguments as a constant base (the caller's parameters,
// optimizer state and batch are resident), so it approximates the peak the
// backend's memory planner will find.
//
// Steps, repeated while the estimated peak exceeds the budget:
//   1. find the peak op P (the first op with the largest live bytes);
//   2. candidates: ops before P whose results are live across P (not read
//      by P, read after P), in two tiers. The cheap tier (isCheap: loop
//      fusions and elementwise or index-remapping ops), largest bytes
//      first, is tried first; only when none of it helps, the costly tier
//      (costlyWork: reductions, then GEMMs), least work per byte freed
//      first, so a budget recomputes a layer's cheapest GEMM before its
//      dearest and never one it does not need;
//   3. a candidate is a chain: D, and the producers of D's operands that
//      nothing else reads at or after P (else the clone would keep them
//      live across P in D's place), when their tier allows (chainFor);
//      clone the chain before D's first user after P and redirect every
//      user after P to D's clone (originals nothing reads are dropped from
//      the estimate and erased at the end); estimate again. The clone keeps D's operands live up to it, and the estimate
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
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

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

/// A producer worth recomputing whenever it helps: one cheap op, or a loop
/// or multi-output fusion whose body holds only cheap ops and constants (no
/// reduce).
bool isCheap(Operation *op) {
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

int64_t elementsOf(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.hasStaticShape() ? shaped.getNumElements() : 0;
}

/// The work of recomputing a costly producer, in bytes moved: a reduce or
/// a reduction fusion moves its operands and results; a GEMM is charged
/// its multiply-adds (2·M·N·K flops) at 16 flops a byte, a tensor-core
/// GPU's and a vector CPU's ratio to within a few times, so that any GEMM
/// ranks after a reduction of the same size. 0 for a producer that is
/// cheap or never recomputed (gathers, scatters, slices, pads, concatenates:
/// copies whose savings the partitioner already weighed).
int64_t costlyWork(Operation *op) {
  if (op->getNumResults() == 0 || !isMemoryEffectFree(op) || isCheap(op))
    return 0;
  auto fusion = dyn_cast<FusionOp>(op);
  bool reduction = isa<ReduceOp>(op) ||
                   (fusion && fusion.getKind() == FusionKind::reduction);
  if (reduction) {
    int64_t bytes = resultBytes(op);
    for (Value operand : op->getOperands())
      bytes += byteSizeOf(operand.getType());
    return std::max<int64_t>(bytes, 1);
  }
  auto dot = dyn_cast<DotGeneralOp>(op);
  // A gemm fusion (a product and the add of its accumulator) costs its
  // product.
  if (fusion && fusion.getKind() == FusionKind::gemm)
    fusion.getBody().walk([&](DotGeneralOp inner) { dot = inner; });
  if (!dot)
    return 0;
  // Every result element is a dot product over the contracted dims.
  ArrayRef<int64_t> lhs = cast<ShapedType>(dot.getLhs().getType()).getShape();
  int64_t depth = 1;
  for (int64_t dim : dot.getLhsContractingDimensions())
    depth *= lhs[dim];
  constexpr int64_t kFlopsPerByte = 16;
  return std::max<int64_t>(
      2 * elementsOf(dot.getResult().getType()) * depth / kFlopsPerByte, 1);
}

/// isCheap and costlyWork of each op, computed once per op: every step
/// ranks the ops before the peak again, and the side-effect walks of their
/// fusions' bodies were a tenth of a large over-budget plan's compile.
class RecomputeCosts {
public:
  bool cheap(Operation *op) { return of(op).cheap; }
  int64_t work(Operation *op) { return of(op).work; }
  /// Forgets `op`, which is about to be erased (a new op may take its
  /// address).
  void forget(Operation *op) { known_.erase(op); }
  void clear() { known_.clear(); }

private:
  struct Costs {
    bool cheap;
    int64_t work;
  };
  Costs of(Operation *op) {
    auto [it, inserted] = known_.try_emplace(op);
    if (inserted)
      it->second = {isCheap(op), costlyWork(op)};
    return it->second;
  }
  DenseMap<Operation *, Costs> known_;
};

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

/// Ops recomputed together: the candidate (the root, last) and the
/// producers of operands nothing else would keep alive past the peak.
constexpr size_t kMaxChainLength = 4;

/// One accepted recomputation: the originals and their clones, in program
/// order, the root last.
struct Remat {
  SmallVector<Operation *> originals;
  SmallVector<Operation *> clones;
  /// Bytes of the root's results that were live across the peak.
  int64_t bytes;
  /// The op the clones run just before.
  Operation *before;
  /// Originals nothing reads any more (moved, not copied).
  SmallVector<Operation *> dead;
  /// From the costly tier (a reduction or a GEMM among the ops).
  bool costly;

  Operation *root() const { return originals.back(); }
};

struct RematerializePass : impl::RematerializePassBase<RematerializePass> {
  using Base::Base;

  /// Each op's tier, for this run of the pass (cleared at its start).
  RecomputeCosts costs;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (memoryBudget <= 0 || function.isExternal())
      return;
    Block &block = function.getBody().front();
    int64_t base = argumentBytes(block);
    costs.clear();

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
      for (Operation *op : done.back().dead)
        dead.erase(op);
      undo(done.back());
      done.pop_back();
    }

    if (emitRemarks)
      for (const Remat &remat : done) {
        InFlightDiagnostic remark = remat.clones.back()->emitRemark();
        remark << "rematerialized " << remat.bytes << " bytes of '"
               << remat.root()->getName() << "' before '"
               << remat.before->getName() << "'";
        if (remat.originals.size() > 1) {
          remark << " with its operands' producers";
          for (Operation *op : ArrayRef(remat.originals).drop_back())
            remark << " '" << op->getName() << "'";
        }
        remark << (remat.costly ? " (costly tier)" : "")
               << (llvm::is_contained(remat.dead, remat.root())
                       ? " (moved: nothing read it before the peak)"
                       : "");
      }
    // Dead originals, users first (a chain's root reads its producers).
    for (const Remat &remat : llvm::reverse(done))
      for (Operation *op : llvm::reverse(remat.originals))
        if (dead.contains(op) && op->use_empty()) {
          dead.erase(op);
          op->erase();
        }

    int64_t after = best;
    int64_t costly = llvm::count_if(done, [](const Remat &r) { return r.costly; });
    numRematerialized += done.size();
    numCostly += costly;
    bytesSaved += before - after;
    if (after > memoryBudget)
      ++numBudgetsMissed;
    if (!emitRemarks)
      return;
    function.emitRemark() << "estimated peak bytes (arguments included): "
                          << before << " before, " << after << " after, budget "
                          << static_cast<int64_t>(memoryBudget) << "; "
                          << done.size() << " values rematerialized, "
                          << before - after << " bytes saved; " << costly
                          << " of them reductions or GEMMs";
    if (after > memoryBudget)
      function.emitRemark() << "memory budget of "
                            << static_cast<int64_t>(memoryBudget)
                            << " bytes not met: nothing "
                            << (recomputeCostly ? "" : "cheap ")
                            << "left to recompute lowers the peak of "
                            << after << " bytes";
  }

  /// Whether `value` is produced by an op before the peak and read only
  /// before it: a clone reading it after the peak would keep it alive.
  static bool deadAtPeak(Value value, size_t peak,
                         llvm::function_ref<size_t(Operation *)> positionOf) {
    size_t at = positionOf(value.getDefiningOp());
    if (at == ~size_t(0) || at >= peak)
      return false;
    return llvm::none_of(value.getUsers(), [&](Operation *user) {
      size_t userAt = positionOf(user);
      return userAt != ~size_t(0) && userAt >= peak;
    });
  }

  /// A candidate: the ops to recompute (program order, the root last).
  struct Candidate {
    SmallVector<Operation *> ops;
    /// Bytes of the root's results live across the peak.
    int64_t bytes = 0;
    /// What it frees at the peak op: `bytes` less the operands the clones
    /// keep alive there. Candidates are ranked by it.
    int64_t freed = 0;
    /// The chain's costly work (costlyWork summed); 0 in the cheap tier.
    int64_t work = 0;

    bool costly() const { return work > 0; }
    double workPerByteFreed() const {
      return static_cast<double>(work) / static_cast<double>(freed);
    }
  };

  /// `root` and the producers that must be recomputed with it so that its
  /// operands do not stay live across the peak for the clone alone: an
  /// operand whose readers all run before the peak has its producer
  /// recomputed too, when that producer may be (cheap, or costly when
  /// `costlyAllowed`); up to `maxLength` ops (1: the root alone).
  /// std::nullopt when `root` itself may not be recomputed.
  std::optional<Candidate>
  chainFor(Operation *root, size_t peak, bool costlyAllowed,
           size_t maxLength,
           llvm::function_ref<size_t(Operation *)> positionOf) {
    auto allowed = [&](Operation *op) {
      return costs.cheap(op) || (costlyAllowed && costs.work(op) > 0);
    };
    if (!allowed(root))
      return std::nullopt;
    SetVector<Operation *> chain;
    chain.insert(root);
    for (size_t next = 0; next < chain.size(); ++next) {
      for (Value operand : producedOperands(chain[next])) {
        Operation *producer = operand.getDefiningOp();
        if (chain.contains(producer) || chain.size() >= maxLength)
          continue;
        // One read at or after the peak keeps it live anyway: its producer
        // need not run again.
        if (deadAtPeak(operand, peak, positionOf) && allowed(producer))
          chain.insert(producer);
      }
    }
    Candidate candidate;
    candidate.ops.assign(chain.begin(), chain.end());
    llvm::sort(candidate.ops, [&](Operation *a, Operation *b) {
      return positionOf(a) < positionOf(b);
    });
    for (Operation *op : candidate.ops)
      candidate.work += costs.work(op); // 0 for a cheap op
    return candidate;
  }

  /// The bytes a candidate keeps alive at the peak op for its clones: the
  /// chain's operands that were dead there (every reader before the
  /// peak). Its root's results stop being live there, so it lowers the
  /// peak op's bytes by `bytes` less these; one that does not lower them
  /// cannot lower the peak nor the ops at it, and is never tried.
  static int64_t
  addedAtPeak(ArrayRef<Operation *> ops, size_t peak,
              llvm::function_ref<size_t(Operation *)> positionOf) {
    int64_t added = 0;
    SmallVector<Value> seen;
    for (Operation *op : ops)
      for (Value operand : producedOperands(op)) {
        Operation *producer = operand.getDefiningOp();
        if (llvm::is_contained(ops, producer) ||
            llvm::is_contained(seen, operand))
          continue;
        seen.push_back(operand);
        if (deadAtPeak(operand, peak, positionOf))
          added += byteSizeOf(operand.getType());
      }
    return added;
  }

  /// One step: the first candidate (cheap tier, then costly tier) whose
  /// recomputation improves the estimate. Updates `order` and `current`;
  /// false when none.
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

    SmallVector<Candidate> cheap, costly;
    for (size_t index = 0; index < peak; ++index) {
      Operation *op = order[index];
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
      if (bytes == 0)
        continue;
      // Each root alone and as a chain, with cheap producers only and with
      // costly ones too: the root alone keeps its operands alive across
      // the peak, which pays when they are small (a GEMM's input), and a
      // chain when they are not (a bias add's GEMM result). Distinct
      // variants only; the costly tier only holds those with costly work.
      SmallVector<Candidate, 4> variants;
      for (bool costlyAllowed : {false, true}) {
        if (costlyAllowed && !recomputeCostly)
          continue;
        for (size_t length : {size_t(1), kMaxChainLength}) {
          std::optional<Candidate> variant =
              chainFor(op, peak, costlyAllowed, length, positionOf);
          if (!variant || llvm::any_of(variants, [&](const Candidate &c) {
                return c.ops == variant->ops;
              }))
            continue;
          variant->bytes = bytes;
          variants.push_back(std::move(*variant));
        }
      }
      for (Candidate &variant : variants) {
        // Ranked by the bytes it frees at the peak op, net of the operands
        // it keeps alive there.
        variant.freed = bytes - addedAtPeak(variant.ops, peak, positionOf);
        if (variant.freed <= 0)
          continue;
        (variant.costly() ? costly : cheap).push_back(std::move(variant));
      }
    }
    // Cheap: largest first; on a tie the earliest (it is live the longest).
    llvm::stable_sort(cheap, [](const Candidate &a, const Candidate &b) {
      return a.freed > b.freed;
    });
    // Costly: least work per byte freed first, then largest.
    llvm::stable_sort(costly, [](const Candidate &a, const Candidate &b) {
      if (a.workPerByteFreed() != b.workPerByteFreed())
        return a.workPerByteFreed() < b.workPerByteFreed();
      return a.freed > b.freed;
    });
    if (cheap.size() > kMaxTrialsPerStep)
      cheap.resize(kMaxTrialsPerStep);
    if (costly.size() > kMaxTrialsPerStep)
      costly.resize(kMaxTrialsPerStep);
    // The costly tier only when no cheap candidate helps.
    SmallVector<Candidate> candidates = std::move(cheap);
    candidates.append(std::make_move_iterator(costly.begin()),
                      std::make_move_iterator(costly.end()));

    for (const Candidate &candidate : candidates) {
      Operation *root = candidate.ops.back();
      // The first user of the root after the peak: the clones run just
      // before it.
      size_t first = ~size_t(0);
      for (Operation *user : root->getUsers()) {
        size_t at = positionOf(user);
        if (at != ~size_t(0) && at > peak)
          first = std::min(first, at);
      }
      Operation *before = first == order.size() ? terminator : order[first];
      Remat remat{candidate.ops, {}, candidate.bytes, before, {},
                  candidate.costly()};
      OpBuilder builder(before);
      IRMapping mapping;
      for (Operation *op : candidate.ops)
        remat.clones.push_back(builder.clone(*op, mapping));
      for (auto [result, copy] :
           llvm::zip(root->getResults(), remat.clones.back()->getResults()))
        result.replaceUsesWithIf(copy, [&](OpOperand &use) {
          size_t at = positionOf(use.getOwner());
          return at != ~size_t(0) && at > peak;
        });
      // Originals nothing reads any more, users first: the root, then
      // producers read only by dead originals.
      for (Operation *op : llvm::reverse(candidate.ops))
        if (llvm::all_of(op->getUsers(), [&](Operation *user) {
              return llvm::is_contained(remat.dead, user);
            }))
          remat.dead.push_back(op);

      SmallVector<Operation *> trial;
      trial.reserve(order.size() + remat.clones.size());
      for (auto [index, op] : llvm::enumerate(order)) {
        if (index == first)
          trial.append(remat.clones.begin(), remat.clones.end());
        if (!llvm::is_contained(remat.dead, op))
          trial.push_back(op);
      }
      if (first == order.size())
        trial.append(remat.clones.begin(), remat.clones.end());
      Estimate next = estimate(block, trial, base);
      if (next.betterThan(current)) {
        for (Operation *op : remat.dead)
          dead.insert(op);
        done.push_back(std::move(remat));
        order = std::move(trial);
        current = next;
        return true;
      }
      undo(remat);
    }
    return false;
  }

  /// Sends the root clone's users back to the root and erases the clones.
  void undo(const Remat &remat) {
    for (auto [result, copy] : llvm::zip(remat.root()->getResults(),
                                         remat.clones.back()->getResults()))
      copy.replaceAllUsesWith(result);
    for (Operation *clone : llvm::reverse(remat.clones)) {
      costs.forget(clone);
      clone->erase();
    }
  }
};

} // namespace
} // namespace kiln
