// Folders of the kiln ops: only the trivial ones that are exact under IEEE
// arithmetic. x + (-0.0) and x - (+0.0) fold for floats but x + 0.0 does not
// (-0.0 + 0.0 is +0.0); x * 1 and x / 1 fold for every element type.
#include "ir/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kiln;

namespace {

/// The splat element of a constant operand, if it is one.
std::optional<Attribute> splatValue(Attribute operand) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(operand);
  if (!splat)
    return std::nullopt;
  return splat.getSplatValue<Attribute>();
}

bool isSplatOf(Attribute operand, int64_t intValue, double floatValue,
               bool negativeZero = false) {
  std::optional<Attribute> value = splatValue(operand);
  if (!value)
    return false;
  if (auto i = dyn_cast<IntegerAttr>(*value))
    return i.getValue() == intValue;
  if (auto f = dyn_cast<FloatAttr>(*value)) {
    const APFloat &v = f.getValue();
    if (v.isZero())
      return floatValue == 0.0 && v.isNegative() == negativeZero;
    return v.convertToDouble() == floatValue;
  }
  return false;
}

bool isAdditiveIdentity(Attribute rhs, bool forSubtraction) {
  // Integers: 0. Floats: -0.0 for add, +0.0 for sub.
  return isSplatOf(rhs, 0, 0.0, /*negativeZero=*/!forSubtraction);
}

} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isAdditiveIdentity(adaptor.getRhs(), /*forSubtraction=*/false))
    return getLhs();
  if (isAdditiveIdentity(adaptor.getLhs(), /*forSubtraction=*/false))
    return getRhs();
  return {};
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isAdditiveIdentity(adaptor.getRhs(), /*forSubtraction=*/true))
    return getLhs();
  return {};
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1, 1.0))
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 1, 1.0))
    return getRhs();
  return {};
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1, 1.0))
    return getLhs();
  return {};
}

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getResult().getType())
    return getOperand();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getResult().getType())
    return getOperand();
  // reshape(reshape(x)) == reshape(x): the row-major order never changes.
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getOperand();
  // transpose(transpose(x, p), q) == transpose(x, p∘q).
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t d : perm)
      composed.push_back(innerPerm[d]);
    if (llvm::equal(composed, llvm::seq<int64_t>(0, composed.size())))
      return inner.getOperand();
    setPermutation(composed);
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  return {};
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getResult().getType())
    return getOperand();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getOperand()))
    return SplatElementsAttr::get(getResult().getType(),
                                  splat.getSplatValue<Attribute>());
  return {};
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }
