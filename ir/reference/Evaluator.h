// The reference evaluator: runs a func.func of the kiln dialect on host
// tensors with naive, obviously correct loops. It is the oracle every backend
// and every transformation is tested against, so it stays simple before fast.
#ifndef KILN_IR_REFERENCE_EVALUATOR_H
#define KILN_IR_REFERENCE_EVALUATOR_H

#include "support/HostTensor.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace kiln::reference {

/// func.func + one host tensor per argument → one host tensor per result.
/// Fails (never aborts) when the inputs do not match the signature or the
/// function holds an op the evaluator does not know.
absl::StatusOr<std::vector<HostTensor>>
evaluate(mlir::func::FuncOp function, llvm::ArrayRef<HostTensor> inputs);

} // namespace kiln::reference

#endif // KILN_IR_REFERENCE_EVALUATOR_H
