// kiln-fuse-siblings: multi-output fusion of independent consumers of one
// large input, so a kernel reads it once. Consumers are fusions and
// elementwise ops; two merge when neither depends on the other, they touch
// the same largest element count, they hold reduces of one shape and
// dimension list at most, and the merged group stays within max-operands.
// Only consumers close in block order are paired (a window of users, a
// bounded dependence search): far-apart siblings would stretch live ranges,
// and the search stays linear in the function's size.
//
// Steps, for each value of at least min-bytes (arguments, then each op's
// results in block order):
//   1. list its consumers in block order;
//   2. merge the first pair within the window that decideMerge() accepts
//      into one kiln.fusion multi_output and list again;
//   3. when no pair merges, count the refusals of the last listing.
// Then, walking the ops in block order, each consumer absorbs the producers
// of its operands that iterate over the same elements, with the producers'
// other readers served by extra results (XLA's producer-consumer
// multi-output fusion: an optimizer update whose new moment is both
// returned and read by the parameter update becomes one kernel).
#include "passes/Passes.h"

#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {
#define GEN_PASS_DEF_FUSESIBLINGSPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

enum class Refusal { Cycle, Shape, Reductions, Operands };

StringRef describe(Refusal refusal) {
  switch (refusal) {
  case Refusal::Cycle:
    return "one sibling depends on the other";
  case Refusal::Shape:
    return "the siblings iterate over different element counts";
  case Refusal::Reductions:
    return "the siblings reduce over different shapes";
  case Refusal::Operands:
    return "the fusion would exceed max-operands inputs or kMaxFusionOps ops";
  }
  llvm_unreachable("unknown refusal");
}

struct Refused {
  Operation *first, *second;
  Refusal refusal;
};

bool isSiblingCandidate(Operation *op) {
  // A gemm fusion is a GEMM library call, not a kernel others can join.
  if (auto fusion = dyn_cast<FusionOp>(op))
    return fusion.getKind() != FusionKind::gemm;
  return op->hasTrait<mlir::OpTrait::Elementwise>();
}

/// The largest element count among the tensors `op` touches: the size of
/// the iteration space its kernel walks.
int64_t iterationSpace(Operation *op) {
  int64_t space = 0;
  for (Type type : op->getOperandTypes())
    space = std::max(space, numElementsOf(type));
  for (Type type : op->getResultTypes())
    space = std::max(space, numElementsOf(type));
  return space;
}

/// The (operand type, reduced dimensions) of the reduces `op` holds.
SmallVector<std::pair<Type, ArrayRef<int64_t>>> reductionsIn(Operation *op) {
  SmallVector<std::pair<Type, ArrayRef<int64_t>>> found;
  op->walk([&](ReduceOp reduce) {
    std::pair<Type, ArrayRef<int64_t>> key{reduce.getOperand().getType(),
                                           reduce.getDimensions()};
    if (!llvm::is_contained(found, key))
      found.push_back(key);
  });
  return found;
}

/// One kernel walks one reduction structure: merged ops may hold reduces of
/// one operand type and dimension list at most.
bool haveCompatibleReductions(Operation *a, Operation *b) {
  auto all = reductionsIn(a);
  for (auto key : reductionsIn(b))
    if (!llvm::is_contained(all, key))
      all.push_back(key);
  return all.size() <= 1;
}

/// A kernel holding reduces walks their operands' elements and writes
/// results of that many elements or of the reduces' results' many. A
/// merged fusion with another result (a slice of the reduction's full-sized
/// output) would have no kernel, and the backend lowers such a fusion op by
/// op: GPT-2's last layer norm beside the loss's shifted hidden states was
/// 22 kernels. `results` are what the merged fusion would return; those of
/// at most kOnceResultElements do not count.
bool writesWhatTheReductionWalks(Operation *a, Operation *b,
                                 ArrayRef<Value> results) {
  SmallVector<int64_t> counts;
  for (Operation *op : {a, b})
    op->walk([&](ReduceOp reduce) {
      counts.push_back(numElementsOf(reduce.getOperand().getType()));
      counts.push_back(numElementsOf(reduce.getResult().getType()));
    });
  return counts.empty() || llvm::all_of(results, [&](Value result) {
           int64_t n = numElementsOf(result.getType());
           return n <= kOnceResultElements || llvm::is_contained(counts, n);
         });
}

bool usesResultOf(Operation *user, Operation *producer) {
  return llvm::any_of(user->getOperands(), [&](Value operand) {
    return operand.getDefiningOp() == producer;
  });
}

/// Each consumer is paired with at most this many later ones.
constexpr size_t kPairWindow = 8;
/// The dependence search between two siblings visits at most this many ops.
constexpr unsigned kSearchBudget = 512;

std::optional<Refusal> decideMerge(Operation *a, Operation *b,
                                   unsigned maxOperands) {
  if (iterationSpace(a) != iterationSpace(b))
    return Refusal::Shape;
  SmallVector<Value> results(a->getResults());
  llvm::append_range(results, b->getResults());
  if (!haveCompatibleReductions(a, b) ||
      !writesWhatTheReductionWalks(a, b, results))
    return Refusal::Reductions;
  if (usesResultOf(a, b) || usesResultOf(b, a) ||
      wouldCreateCycle({a, b}, kSearchBudget))
    return Refusal::Cycle;
  if (collectFusionInputs({a, b}).size() > maxOperands ||
      fusedBodyOps({a, b}) > kMaxFusionOps)
    return Refusal::Operands;
  return std::nullopt;
}

/// The sibling candidates reading `value`, in block order.
SmallVector<Operation *> consumersOf(Value value) {
  SetVector<Operation *> users;
  for (Operation *user : value.getUsers())
    if (isSiblingCandidate(user))
      users.insert(user);
  SmallVector<Operation *> sorted = users.takeVector();
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return sorted;
}

/// What the ops of `group` merged into one fusion return: their results
/// that ops outside the group read.
SmallVector<Value> mergedResults(ArrayRef<Operation *> group) {
  SmallVector<Value> results;
  for (Operation *op : group)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !llvm::is_contained(group, user);
          }))
        results.push_back(result);
  return results;
}

struct FuseSiblingsPass : impl::FuseSiblingsPassBase<FuseSiblingsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Block &block = getOperation().getBody().front();
    for (BlockArgument argument : block.getArguments())
      mergeConsumersOf(argument);
    // Merges touch only consumers, which come after the value's owner, and
    // re-sorting never moves an op above it: the walk goes on from there.
    // Constants are skipped: every fusion clones the constants it reads (so
    // readers of one constant share nothing worth merging), and a merge
    // erases a constant nothing else reads, which would end the walk on a
    // dead op.
    for (Operation *op = &block.front(); op != block.getTerminator();
         op = op->getNextNode())
      if (!isa<ConstantOp>(op))
        for (Value result : op->getResults())
          mergeConsumersOf(result);
    // Producer-consumer multi-output fusion: the merged fusion stands where
    // the consumer stood, so the walk goes on from it.
    for (Operation *op = &block.front(); op != block.getTerminator();
         op = op->getNextNode())
      if (isSiblingCandidate(op))
        op = mergeProducersInto(op);
  }

  /// Merges into `consumer` every producer of its operands that iterates
  /// over the same elements and is not kept apart by a path through other
  /// ops; the producer's results that others read stay results. Reshapes
  /// between the two are copied into the merge (and kept for their other
  /// readers): they only rename elements, and as a path between the two
  /// they kept apart a layer norm and the normalization that reads its row
  /// statistics reshaped from [B, T, 1] to [B, T] (a second kernel
  /// re-reading the row). Returns the op that stands for the consumer
  /// afterwards.
  Operation *mergeProducersInto(Operation *consumer) {
    bool merged = true;
    while (merged) {
      merged = false;
      for (Value operand : consumer->getOperands()) {
        SmallVector<Operation *> reshapes; // from the consumer up
        Value source = operand;
        while (auto reshape = source.getDefiningOp<ReshapeOp>()) {
          reshapes.push_back(reshape);
          source = reshape.getOperand();
        }
        std::reverse(reshapes.begin(), reshapes.end());
        Operation *producer = source.getDefiningOp();
        if (!producer || !isSiblingCandidate(producer))
          continue;
        // The reshapes are copied in (kept for their other readers); as
        // far as paths go they are inside.
        SmallVector<Operation *> group = {producer};
        group.append(reshapes);
        group.push_back(consumer);
        if (iterationSpace(producer) != iterationSpace(consumer) ||
            !haveCompatibleReductions(producer, consumer) ||
            !writesWhatTheReductionWalks(producer, consumer,
                                         mergedResults(group)) ||
            wouldCreateCycle(group, kSearchBudget) ||
            collectFusionInputs(group).size() > maxOperands ||
            fusedBodyOps(group) > kMaxFusionOps)
          continue;
        consumer = outlineFusion({producer, consumer}, reshapes,
                                 FusionKind::multi_output);
        ++numMergedProducers;
        merged = true;
        break;
      }
    }
    return consumer;
  }

  void mergeConsumersOf(Value value) {
    if (byteSizeOf(value.getType()) < minBytes)
      return;
    SmallVector<Refused> refusals;
    while (mergeOnePair(consumersOf(value), refusals))
      refusals.clear();
    for (auto [first, second, refusal] : refusals) {
      if (emitRemarks)
        second->emitRemark() << "not merged with the sibling at "
                             << first->getLoc() << ": " << describe(refusal);
      switch (refusal) {
      case Refusal::Cycle: ++numRefusedCycle; break;
      case Refusal::Shape: ++numRefusedShape; break;
      case Refusal::Reductions: ++numRefusedReductions; break;
      case Refusal::Operands: ++numRefusedOperands; break;
      }
    }
  }

  /// Merges the first legal pair of `consumers`; records every refusal met.
  bool mergeOnePair(ArrayRef<Operation *> consumers,
                    SmallVector<Refused> &refusals) {
    for (size_t i = 0; i < consumers.size(); ++i)
      for (size_t j = i + 1; j < consumers.size() && j <= i + kPairWindow;
           ++j) {
        std::optional<Refusal> refusal =
            decideMerge(consumers[i], consumers[j], maxOperands);
        if (refusal) {
          refusals.push_back({consumers[i], consumers[j], *refusal});
          continue;
        }
        outlineFusion({consumers[i], consumers[j]}, {},
                      FusionKind::multi_output);
        ++numMerged;
        return true;
      }
    return false;
  }
};

} // namespace
} // namespace kiln
