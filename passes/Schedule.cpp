// kiln-schedule: reorders each function's top-level ops so that fewer bytes
// are live at once. Every op's results are allocated when it runs and an
// operand is freed after its last user runs; function arguments belong to
// the caller and are not counted, returned values stay live to the end.
//
// Steps:
//   1. count, for every op, the producers it waits for and, for every value,
//      the users that still have to run;
//   2. list scheduling: among the ready ops pick the one with the largest
//      (bytes it frees − bytes it allocates), the earliest on a tie; run it,
//      release its users;
//   3. estimate the peak of the old and the new order; keep the new order
//      only when its peak is lower.
#include "passes/Passes.h"

#include "passes/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {
#define GEN_PASS_DEF_SCHEDULEPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Distinct values an op reads that a top-level op of its block defines.
SmallVector<Value> producedOperands(Operation *op) {
  SetVector<Value> values;
  for (Value operand : op->getOperands())
    if (operand.getDefiningOp())
      values.insert(operand);
  return values.takeVector();
}

/// Remaining user counts of every op result; returned values never reach 0.
DenseMap<Value, int64_t> countUses(Block &block) {
  DenseMap<Value, int64_t> uses;
  for (Operation &op : block)
    for (Value value : producedOperands(&op))
      uses[value] += op.hasTrait<mlir::OpTrait::IsTerminator>() ? 1 << 30 : 1;
  return uses;
}

int64_t resultBytes(Operation *op) {
  int64_t bytes = 0;
  for (Type type : op->getResultTypes())
    bytes += byteSizeOf(type);
  return bytes;
}

/// Bytes freed when `op` runs, given the remaining user counts.
int64_t freedBytes(Operation *op, const DenseMap<Value, int64_t> &uses) {
  int64_t bytes = 0;
  for (Value value : producedOperands(op))
    if (uses.lookup(value) == 1)
      bytes += byteSizeOf(value.getType());
  return bytes;
}

/// Runs `op` in the simulation: returns the live bytes while it runs (its
/// operands and results together) and updates `live` to after it.
int64_t simulate(Operation *op, DenseMap<Value, int64_t> &uses, int64_t &live) {
  live += resultBytes(op);
  int64_t during = live;
  for (Value value : producedOperands(op))
    if (--uses[value] == 0)
      live -= byteSizeOf(value.getType());
  for (Value result : op->getResults())
    if (result.use_empty())
      live -= byteSizeOf(result.getType());
  return during;
}

int64_t peakBytes(Block &block, ArrayRef<Operation *> order) {
  DenseMap<Value, int64_t> uses = countUses(block);
  int64_t live = 0, peak = 0;
  for (Operation *op : order)
    peak = std::max(peak, simulate(op, uses, live));
  return peak;
}

SmallVector<Operation *> listSchedule(Block &block) {
  DenseMap<Operation *, int64_t> waiting, position;
  SmallVector<Operation *> ready, order;
  for (Operation &op : block.without_terminator()) {
    position[&op] = position.size();
    int64_t producers = 0;
    llvm::SmallPtrSet<Operation *, 4> seen;
    for (Value value : producedOperands(&op))
      producers += seen.insert(value.getDefiningOp()).second;
    waiting[&op] = producers;
    if (producers == 0)
      ready.push_back(&op);
  }
  DenseMap<Value, int64_t> uses = countUses(block);
  int64_t live = 0;
  while (!ready.empty()) {
    auto best = ready.begin();
    int64_t bestScore = std::numeric_limits<int64_t>::min();
    for (auto it = ready.begin(); it != ready.end(); ++it) {
      int64_t score = freedBytes(*it, uses) - resultBytes(*it);
      if (score > bestScore ||
          (score == bestScore && position[*it] < position[*best])) {
        best = it;
        bestScore = score;
      }
    }
    Operation *op = *best;
    ready.erase(best);
    order.push_back(op);
    simulate(op, uses, live);
    llvm::SmallPtrSet<Operation *, 8> released;
    for (Operation *user : op->getUsers())
      if (position.count(user) && released.insert(user).second &&
          --waiting[user] == 0)
        ready.push_back(user);
  }
  return order;
}

struct SchedulePass : impl::SchedulePassBase<SchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Block &block = getOperation().getBody().front();
    SmallVector<Operation *> original;
    for (Operation &op : block.without_terminator())
      original.push_back(&op);
    SmallVector<Operation *> scheduled = listSchedule(block);
    if (scheduled.size() != original.size()) {
      getOperation().emitError(
          "kiln-schedule: the function's ops form a cycle");
      return signalPassFailure();
    }
    int64_t before = peakBytes(block, original);
    int64_t after = peakBytes(block, scheduled);
    peakBytesBefore += before;
    if (emitRemarks)
      getOperation().emitRemark()
          << "estimated peak live bytes: " << before << " before, "
          << std::min(before, after) << " after";
    if (after >= before) {
      peakBytesAfter += before;
      return;
    }
    peakBytesAfter += after;
    Operation *terminator = block.getTerminator();
    for (Operation *op : scheduled)
      op->moveBefore(terminator);
  }
};

} // namespace
} // namespace kiln
