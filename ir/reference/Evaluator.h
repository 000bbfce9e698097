// The reference evaluator: runs a func.func of the kiln dialect on host
// tensors with naive, obviously correct loops. It is the oracle every backend
// and every transformation is tested against, so it stays simple before fast.
#ifndef KILN_IR_REFERENCE_EVALUATOR_H
#define KILN_IR_REFERENCE_EVALUATOR_H

#include "support/HostTensor.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace mlir {
class Operation;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace kiln::reference {

/// func.func + one host tensor per argument → one host tensor per result.
/// Fails (never aborts) when the inputs do not match the signature or the
/// function holds an op the evaluator does not know.
absl::StatusOr<std::vector<HostTensor>>
evaluate(mlir::func::FuncOp function, llvm::ArrayRef<HostTensor> inputs);

/// Called after each op the evaluator runs, in program order, with the op,
/// its operand values and its result values (the ops in a kiln.fusion's
/// body come before the fusion op itself): how a caller steps through a
/// function op by op, e.g. to find the first op that made a NaN.
using OpObserver =
    llvm::function_ref<void(mlir::Operation *op,
                            llvm::ArrayRef<const HostTensor *> operands,
                            llvm::ArrayRef<HostTensor> results)>;

/// evaluate(), reporting every op to `observer`.
absl::StatusOr<std::vector<HostTensor>>
evaluate(mlir::func::FuncOp function, llvm::ArrayRef<HostTensor> inputs,
         OpObserver observer);

} // namespace kiln::reference

#endif // KILN_IR_REFERENCE_EVALUATOR_H
