// How the native lowering names ops in what it reports: a slot's origin in
// memory reports, a kernel thunk's label in profiles, thunk listings and
// error messages.
#ifndef KILN_COMPILER_CPU_OPLABELS_H
#define KILN_COMPILER_CPU_OPLABELS_H

#include "mlir/IR/Operation.h"

#include <string>

namespace kiln::compiler::cpu {

/// `op`'s name and, when known, its location.
std::string describeOrigin(mlir::Operation *op);

/// A kernel's label (runtime::KernelThunk::label): the op without its
/// dialect prefix (a fusion lists the distinct ops of its body in order)
/// and its operand and result types. Long type lists are cut, so an error
/// line stays readable.
std::string kernelLabel(mlir::Operation *op);

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_OPLABELS_H
