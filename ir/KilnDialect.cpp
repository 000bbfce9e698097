// The kiln dialect's registration, constant materialisation and the
// verification of its attributes: `kiln.donate` belongs on a function's tensor
// arguments only, and `kiln.output_alias` on a donated one, naming a result
// of the same type.
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

/// `kiln.output_alias = N` on argument `argIndex`: an integer naming a
/// result of the argument's type, on a donated argument.
static LogicalResult verifyOutputAlias(Operation *op, unsigned argIndex,
                                       NamedAttribute attr) {
  auto name = KilnDialect::kOutputAliasAttrName;
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  if (!index)
    return op->emitOpError() << "'" << name
                             << "' must be an integer, got " << attr.getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitOpError() << "'" << name << "' belongs on a function";
  if (!function.getArgAttr(argIndex, KilnDialect::kDonateAttrName))
    return op->emitOpError() << "'" << name << "' on argument #" << argIndex
                             << ", which is not donated";
  ArrayRef<Type> results = function.getResultTypes();
  int64_t n = index.getInt();
  if (n < 0 || n >= static_cast<int64_t>(results.size()))
    return op->emitOpError() << "'" << name << "' on argument #" << argIndex
                             << " names result #" << n << " of "
                             << results.size();
  if (results[n] != function.getArgumentTypes()[argIndex])
    return op->emitOpError() << "'" << name << "' on argument #" << argIndex
                             << " of type " << function.getArgumentTypes()[argIndex]
                             << " names result #" << n << " of type "
                             << results[n];
  return success();
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == kOutputAliasAttrName)
    return verifyOutputAlias(op, argIndex, attr);
  if (attr.getName() != kDonateAttrName)
    return op->emitOpError() << "unknown kiln argument attribute '"
                             << attr.getName().getValue() << "'";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitOpError()
           << "'" << kDonateAttrName << "' must be a unit attribute, got "
           << attr.getValue();
  // A declaration has no block arguments; its function type has the types.
  Type argType;
  Region &region = op->getRegion(regionIndex);
  if (argIndex < region.getNumArguments())
    argType = region.getArgument(argIndex).getType();
  else if (auto function = dyn_cast<FunctionOpInterface>(op);
           function && argIndex < function.getNumArguments())
    argType = function.getArgumentTypes()[argIndex];
  if (argType && !isa<RankedTensorType>(argType))
    return op->emitOpError() << "'" << kDonateAttrName << "' on argument #"
                             << argIndex << " of non-tensor type " << argType;
  return success();
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  // A result is written by the function, so "donating" it means nothing; the
  // attribute belongs on the argument whose buffer the result may reuse.
  if (attr.getName() == kDonateAttrName)
    return op->emitOpError()
           << "'" << kDonateAttrName << "' on result #" << resultIndex
           << ": only arguments can be donated";
  return op->emitOpError() << "unknown kiln result attribute '"
                           << attr.getName().getValue() << "'";
}

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  // Other kiln.* attributes are free for passes to use as annotations.
  if (attr.getName() == kDonateAttrName)
    return op->emitOpError() << "'" << kDonateAttrName
                             << "' marks a function argument and cannot be "
                                "placed on an operation";
  return success();
}
