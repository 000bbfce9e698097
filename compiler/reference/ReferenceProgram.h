// The reference backend: a program that runs a kiln function on the reference
// evaluator. Slow and simple; the oracle other backends are compared with,
// and the backend the frontend uses until a native one is selected.
#ifndef KILN_COMPILER_REFERENCE_REFERENCEPROGRAM_H
#define KILN_COMPILER_REFERENCE_REFERENCEPROGRAM_H

#include "runtime/Program.h"

#include <memory>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::compiler {

/// module + function name → a program owning its own copy of the module (in
/// its own MLIRContext), so it outlives the caller's context.
absl::StatusOr<std::unique_ptr<runtime::Program>>
createReferenceProgram(mlir::ModuleOp module, const std::string &function);

} // namespace kiln::compiler

#endif // KILN_COMPILER_REFERENCE_REFERENCEPROGRAM_H
