// kiln-schedule: reorders each function's top-level ops so that fewer bytes
// are live at once. Every op's results are allocated when it runs and an
// operand is freed after its last user runs; function arguments belong to
// the caller and are not counted, returned values stay live to the end
// (passes/Liveness.h, the model kiln-rematerialize shares).
//
// Steps:
//   1. count, for every op, the producers it waits for and, for every value,
//      the users that still have to run;
//   2. list scheduling: among the ready ops pick the one with the largest
//      (bytes it frees − bytes it allocates), the earliest on a tie; run it,
//      release its users;
//   3. estimate the peak of the old and the new order; keep the new order
//      only when its peak is lower;
//   4. move each sum over the processes (with the barrier that ties it to
//      the sum before it) up to just after its operands: the exchange runs
//      as soon as its gradient exists, as DistributedDataParallel's buckets
//      do, and under ZeRO stage 2 a process frees the gradient it does not
//      own there instead of holding every gradient until backward ends.
#include "passes/Passes.h"

#include "passes/Liveness.h"

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {
#define GEN_PASS_DEF_SCHEDULEPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

SmallVector<Operation *> listSchedule(Block &block) {
  DenseMap<Operation *, int64_t> waiting, position;
  SmallVector<Operation *> ready, order, original;
  for (Operation &op : block.without_terminator()) {
    original.push_back(&op);
    position[&op] = position.size();
    int64_t producers = 0;
    llvm::SmallPtrSet<Operation *, 4> seen;
    for (Value value : producedOperands(&op))
      producers += seen.insert(value.getDefiningOp()).second;
    waiting[&op] = producers;
    if (producers == 0)
      ready.push_back(&op);
  }
  LiveBytesSimulator simulator(original, block.getTerminator());
  while (!ready.empty()) {
    auto best = ready.begin();
    int64_t bestScore = std::numeric_limits<int64_t>::min();
    for (auto it = ready.begin(); it != ready.end(); ++it) {
      int64_t score = simulator.freedBytes(*it) - resultBytes(*it);
      if (score > bestScore ||
          (score == bestScore && position[*it] < position[*best])) {
        best = it;
        bestScore = score;
      }
    }
    Operation *op = *best;
    ready.erase(best);
    order.push_back(op);
    simulator.run(op);
    llvm::SmallPtrSet<Operation *, 8> released;
    for (Operation *user : op->getUsers())
      if (position.count(user) && released.insert(user).second &&
          --waiting[user] == 0)
        ready.push_back(user);
  }
  return order;
}

/// The op that defines the latest of `op`'s operands in `op`'s block, or
/// null when all are defined outside it or by arguments.
Operation *lastProducer(Operation *op) {
  Operation *last = nullptr;
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (def && def->getBlock() == op->getBlock() &&
        (!last || last->isBeforeInBlock(def)))
      last = def;
  }
  return last;
}

/// Step 4: each all_reduce, in block order, and the barrier that feeds it
/// alone, moved up to just after their latest operand. The sums keep their
/// order: each is tied to the one before it, which has moved already.
void hoistExchanges(Block &block) {
  SmallVector<AllReduceOp> sums;
  for (Operation &op : block)
    if (auto sum = dyn_cast<AllReduceOp>(op))
      sums.push_back(sum);
  for (AllReduceOp sum : sums) {
    Operation *barrier = sum.getOperand().getDefiningOp();
    if (isa_and_nonnull<OptimizationBarrierOp>(barrier) &&
        barrier->getBlock() == &block && barrier->hasOneUse()) {
      if (Operation *after = lastProducer(barrier))
        barrier->moveAfter(after);
      else
        barrier->moveBefore(&block.front());
    }
    if (Operation *after = lastProducer(sum))
      sum->moveAfter(after);
    else
      sum->moveBefore(&block.front());
  }
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
    } else {
      peakBytesAfter += after;
      Operation *terminator = block.getTerminator();
      for (Operation *op : scheduled)
        op->moveBefore(terminator);
    }
    hoistExchanges(block);
  }
};

} // namespace
} // namespace kiln
