// Conversions between MLIR's types and attributes and kiln's host tensors:
// constants in the IR, kiln-run's inputs and printed outputs.
#ifndef KILN_IR_TENSORCONVERSION_H
#define KILN_IR_TENSORCONVERSION_H

#include "support/HostTensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace kiln {

/// f32/f16/bf16/i1/i32/i64 element type → DType; nullopt for anything else.
std::optional<DType> dtypeOf(mlir::Type elementType);

/// DType → the MLIR element type.
mlir::Type elementTypeOf(DType dtype, mlir::MLIRContext *context);

/// A ranked tensor type of a kiln element type → (dtype, shape).
absl::StatusOr<std::pair<DType, std::vector<int64_t>>>
describeTensorType(mlir::Type type);

/// Dense elements (splat or not) → a host tensor with the same bits.
absl::StatusOr<HostTensor> toHostTensor(mlir::ElementsAttr attr);

/// A host tensor → a DenseElementsAttr of the same type and bits.
mlir::DenseElementsAttr toElementsAttr(const HostTensor &tensor,
                                       mlir::MLIRContext *context);

} // namespace kiln

#endif // KILN_IR_TENSORCONVERSION_H
