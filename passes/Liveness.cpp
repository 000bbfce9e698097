// The live-bytes model of passes/Liveness.h.
#include "passes/Liveness.h"

#include "passes/FusionUtils.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace kiln {

SmallVector<Value> producedOperands(Operation *op) {
  // The estimate calls this for every op of every order it tries (the
  // rematerializer: thousands of orders of thousands of ops), so ops with
  // few operands, nearly all, deduplicate by a scan, without a set's heap.
  constexpr unsigned kScanned = 32;
  if (op->getNumOperands() > kScanned) {
    SetVector<Value> values;
    for (Value operand : op->getOperands())
      if (operand.getDefiningOp())
        values.insert(operand);
    return values.takeVector();
  }
  SmallVector<Value> values;
  for (Value operand : op->getOperands())
    if (operand.getDefiningOp() && !llvm::is_contained(values, operand))
      values.push_back(operand);
  return values;
}

int64_t resultBytes(Operation *op) {
  int64_t bytes = 0;
  for (Type type : op->getResultTypes())
    bytes += byteSizeOf(type);
  return bytes;
}

int64_t argumentBytes(Block &block) {
  int64_t bytes = 0;
  for (BlockArgument argument : block.getArguments())
    bytes += byteSizeOf(argument.getType());
  return bytes;
}

LiveBytesSimulator::LiveBytesSimulator(ArrayRef<Operation *> ops,
                                       Operation *terminator) {
  for (Operation *op : ops)
    for (Value value : producedOperands(op))
      uses[value] += 1;
  // Returned values never reach 0.
  if (terminator)
    for (Value value : producedOperands(terminator))
      uses[value] += 1 << 30;
}

int64_t LiveBytesSimulator::freedBytes(Operation *op) const {
  int64_t bytes = 0;
  for (Value value : producedOperands(op))
    if (uses.lookup(value) == 1)
      bytes += byteSizeOf(value.getType());
  return bytes;
}

int64_t LiveBytesSimulator::run(Operation *op) {
  live += resultBytes(op);
  int64_t during = live;
  for (Value value : producedOperands(op))
    if (--uses[value] == 0)
      live -= byteSizeOf(value.getType());
  // A result no counted op reads dies at once.
  for (Value result : op->getResults())
    if (uses.lookup(result) == 0)
      live -= byteSizeOf(result.getType());
  return during;
}

SmallVector<int64_t> liveBytesProfile(Block &block,
                                      ArrayRef<Operation *> order) {
  LiveBytesSimulator simulator(
      order, block.mightHaveTerminator() ? block.getTerminator() : nullptr);
  SmallVector<int64_t> profile;
  profile.reserve(order.size());
  for (Operation *op : order)
    profile.push_back(simulator.run(op));
  return profile;
}

int64_t peakBytes(Block &block, ArrayRef<Operation *> order) {
  int64_t peak = 0;
  for (int64_t during : liveBytesProfile(block, order))
    peak = std::max(peak, during);
  return peak;
}

} // namespace kiln
