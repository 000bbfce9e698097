// The kiln dialect and its ops: the contract between frontends and backends.
// Include this header to use the dialect; it pulls in only what the ops need.
#ifndef KILN_IR_KILNDIALECT_H
#define KILN_IR_KILNDIALECT_H

#include "support/HostTensor.h" // kMaxTensorElements

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::OpTrait {
/// Verifies that every tensor an op touches is static and within
/// kMaxTensorElements; declared by every kiln op.
mlir::LogicalResult verifyBoundedTensorShapes(mlir::Operation *op);

template <typename ConcreteType>
class BoundedTensorShapes
    : public mlir::OpTrait::TraitBase<ConcreteType, BoundedTensorShapes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyBoundedTensorShapes(op);
  }
};
} // namespace kiln::OpTrait

#include "ir/KilnDialect.h.inc"
#include "ir/KilnEnums.h.inc"

#define GET_OP_CLASSES
#include "ir/KilnOps.h.inc"

namespace kiln {

/// Checks that `type` is a static shape of at most kMaxTensorElements
/// (support/HostTensor.h) elements; on failure returns a message naming the
/// type, otherwise an empty string.
std::string checkTensorSize(mlir::RankedTensorType type);

} // namespace kiln

#endif // KILN_IR_KILNDIALECT_H
