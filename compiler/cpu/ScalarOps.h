// The scalar form of every elementwise kiln op, built from arith/math ops
// (and libm calls where only double precision is right), following
// docs/IR.md. Used by per-op kernels and by fusion kernels.
#ifndef KILN_COMPILER_CPU_SCALAROPS_H
#define KILN_COMPILER_CPU_SCALAROPS_H

#include "compiler/cpu/KernelBuilder.h"

#include "mlir/IR/Operation.h"

namespace kiln::compiler::cpu {

/// True when `op` is an elementwise kiln op that emitScalarOp handles.
bool isScalarizable(mlir::Operation *op);

/// Elementwise op + its operands as compute-type scalars → the result scalar
/// in the result's compute type; failure for ops that are not elementwise.
mlir::FailureOr<mlir::Value>
emitScalarOp(KernelBuilder &kb, mlir::Operation *op, mlir::ValueRange operands);

/// A compute-type scalar of storage type `from` → the compute type of storage
/// type `to`, with kiln.convert's rounding and saturation rules.
mlir::Value emitConvert(KernelBuilder &kb, mlir::Value x, mlir::Type from,
                        mlir::Type to);

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_SCALAROPS_H
