// kiln's estimate of live bytes over a block's top-level ops in a given
// order, shared by kiln-schedule and kiln-rematerialize. The model: an op's
// results are allocated when it runs; an operand is freed after its last
// user runs; a result nobody reads is freed right after its op; values the
// terminator reads (returned values) stay live to the end. Block arguments
// belong to the caller and are not counted here (argumentBytes gives them
// for passes that want the caller's resident bytes as a base).
#ifndef KILN_PASSES_LIVENESS_H
#define KILN_PASSES_LIVENESS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln {

/// Distinct values `op` reads that some op defines (block arguments excluded).
llvm::SmallVector<mlir::Value> producedOperands(mlir::Operation *op);

/// Bytes of all of `op`'s results.
int64_t resultBytes(mlir::Operation *op);

/// Bytes of the block's arguments (a function's: the caller's inputs).
int64_t argumentBytes(mlir::Block &block);

/// Runs ops one after another through the model, tracking the live bytes.
class LiveBytesSimulator {
public:
  /// Users are counted from `ops` (the ops that will run, terminator
  /// excluded) and from `terminator`, whose operands never die; a null
  /// terminator counts none.
  LiveBytesSimulator(llvm::ArrayRef<mlir::Operation *> ops,
                     mlir::Operation *terminator);

  /// Bytes `op` would free if it ran now.
  int64_t freedBytes(mlir::Operation *op) const;

  /// Runs `op`: returns the bytes live while it runs (its operands and
  /// results together) and moves the live count to after it.
  int64_t run(mlir::Operation *op);

  int64_t liveBytes() const { return live; }

private:
  llvm::DenseMap<mlir::Value, int64_t> uses;
  int64_t live = 0;
};

/// The bytes live while each op of `order` runs (block arguments excluded).
/// `order` holds the block's ops without its terminator, each once.
llvm::SmallVector<int64_t> liveBytesProfile(mlir::Block &block,
                                            llvm::ArrayRef<mlir::Operation *> order);

/// The largest entry of liveBytesProfile (0 for an empty order).
int64_t peakBytes(mlir::Block &block, llvm::ArrayRef<mlir::Operation *> order);

} // namespace kiln

#endif // KILN_PASSES_LIVENESS_H
