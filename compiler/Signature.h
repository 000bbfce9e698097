// Reading a program's interface off a kiln module: which function is the
// entry, and the types and donations of its arguments and results.
#ifndef KILN_COMPILER_SIGNATURE_H
#define KILN_COMPILER_SIGNATURE_H

#include "runtime/Program.h"

#include "absl/status/statusor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln::compiler {

/// The function named `name`; with an empty name, `main` if it has a body,
/// else the only public function with one. The error lists the candidates.
absl::StatusOr<mlir::func::FuncOp> findEntryFunction(mlir::ModuleOp module,
                                                     const std::string &name);

/// func → its inputs and outputs (dtype, shape, kiln.donate).
absl::StatusOr<runtime::ProgramSignature>
signatureOf(mlir::func::FuncOp function);

} // namespace kiln::compiler

#endif // KILN_COMPILER_SIGNATURE_H
