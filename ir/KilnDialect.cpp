// The kiln dialect's registration, constant materialisation and the
// verification of its `kiln.donate` argument attribute.
#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace kiln;

#include "ir/KilnDialect.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/KilnOps.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() != kDonateAttrName)
    return op->emitError() << "unknown kiln argument attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << kDonateAttrName
                           << "' must be a unit attribute, got "
                           << attr.getValue();
  Region &region = op->getRegion(regionIndex);
  if (region.empty() || argIndex >= region.getNumArguments())
    return success(); // declarations carry no body to check against
  Type argType = region.getArgument(argIndex).getType();
  if (!isa<RankedTensorType>(argType))
    return op->emitError() << "'" << kDonateAttrName
                           << "' on argument #" << argIndex
                           << " of non-tensor type " << argType;
  return success();
}
