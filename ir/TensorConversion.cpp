// Conversions between MLIR element types, tensor types and dense attributes
// on one side and kiln's DType and HostTensor on the other. Values are moved
// as raw bits (floats through APFloat::bitcastToAPInt), so a constant's NaN
// payloads and signed zeros survive a round trip unchanged.
#include "ir/TensorConversion.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <cstring>

namespace kiln {

namespace {

std::string printType(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

const llvm::fltSemantics &semanticsOf(DType dtype) {
  switch (dtype) {
  case DType::f16: return llvm::APFloat::IEEEhalf();
  case DType::bf16: return llvm::APFloat::BFloat();
  case DType::f64: return llvm::APFloat::IEEEdouble();
  default: return llvm::APFloat::IEEEsingle();
  }
}

/// The raw bits of a float element, as stored in the host tensor.
uint64_t floatBits(const HostTensor &tensor, int64_t i) {
  const std::byte *p = tensor.data() + i * byteWidth(tensor.dtype());
  if (tensor.dtype() == DType::f64) {
    uint64_t bits;
    std::memcpy(&bits, p, 8);
    return bits;
  }
  if (tensor.dtype() == DType::f32) {
    uint32_t bits;
    std::memcpy(&bits, p, 4);
    return bits;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return bits;
}

void setFloatBits(HostTensor &tensor, int64_t i, uint64_t bits) {
  std::byte *p = tensor.data() + i * byteWidth(tensor.dtype());
  if (tensor.dtype() == DType::f64) {
    std::memcpy(p, &bits, 8);
    return;
  }
  if (tensor.dtype() == DType::f32) {
    uint32_t narrow = static_cast<uint32_t>(bits);
    std::memcpy(p, &narrow, 4);
    return;
  }
  uint16_t narrow = static_cast<uint16_t>(bits);
  std::memcpy(p, &narrow, 2);
}

} // namespace

std::optional<DType> dtypeOf(mlir::Type elementType) {
  if (elementType.isF32())
    return DType::f32;
  if (elementType.isF64())
    return DType::f64;
  if (elementType.isF16())
    return DType::f16;
  if (elementType.isBF16())
    return DType::bf16;
  if (elementType.isSignlessInteger(1))
    return DType::i1;
  if (elementType.isSignlessInteger(32))
    return DType::i32;
  if (elementType.isSignlessInteger(64))
    return DType::i64;
  return std::nullopt;
}

mlir::Type elementTypeOf(DType dtype, mlir::MLIRContext *context) {
  switch (dtype) {
  case DType::f32: return mlir::Float32Type::get(context);
  case DType::f64: return mlir::Float64Type::get(context);
  case DType::f16: return mlir::Float16Type::get(context);
  case DType::bf16: return mlir::BFloat16Type::get(context);
  case DType::i1: return mlir::IntegerType::get(context, 1);
  case DType::i32: return mlir::IntegerType::get(context, 32);
  case DType::i64: return mlir::IntegerType::get(context, 64);
  }
  return {};
}

absl::StatusOr<std::pair<DType, std::vector<int64_t>>>
describeTensorType(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor)
    return absl::InvalidArgumentError(
        absl::StrCat("expected a ranked tensor type, got ", printType(type)));
  if (!tensor.hasStaticShape())
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a static shape, got ", printType(type)));
  std::optional<DType> dtype = dtypeOf(tensor.getElementType());
  if (!dtype)
    return absl::InvalidArgumentError(absl::StrCat(
        "expected an element type of f32, f64, f16, bf16, i1, i32 or i64, "
        "got ",
        printType(type)));
  std::vector<int64_t> shape(tensor.getShape().begin(),
                             tensor.getShape().end());
  return std::make_pair(*dtype, std::move(shape));
}

absl::StatusOr<HostTensor> toHostTensor(mlir::ElementsAttr attr) {
  auto described = describeTensorType(attr.getType());
  if (!described.ok())
    return described.status();
  auto [dtype, shape] = *std::move(described);
  absl::StatusOr<HostTensor> created = HostTensor::create(dtype, shape);
  if (!created.ok())
    return created.status();
  HostTensor tensor = *std::move(created);
  if (attr.getNumElements() != tensor.numElements())
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute of type ", printType(attr.getType()), " holds ",
        attr.getNumElements(), " elements"));

  // The iterators of a splat attribute repeat its one value, so splat and
  // non-splat attributes take the same path.
  int64_t i = 0;
  if (isFloat(dtype)) {
    auto values = attr.tryGetValues<llvm::APFloat>();
    if (!values)
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read the float elements of an attribute of "
                       "type ",
                       printType(attr.getType())));
    for (const llvm::APFloat &value : *values)
      setFloatBits(tensor, i++, value.bitcastToAPInt().getZExtValue());
    return tensor;
  }
  auto values = attr.tryGetValues<llvm::APInt>();
  if (!values)
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the integer elements of an attribute of type ",
        printType(attr.getType())));
  // An i1 APInt of 1 is -1 when sign-extended; read it unsigned.
  for (const llvm::APInt &value : *values)
    tensor.setInt(i++, dtype == DType::i1 ? int64_t{!value.isZero()}
                                          : value.getSExtValue());
  return tensor;
}

mlir::DenseElementsAttr toElementsAttr(const HostTensor &tensor,
                                       mlir::MLIRContext *context) {
  auto type = mlir::RankedTensorType::get(
      tensor.shape(), elementTypeOf(tensor.dtype(), context));
  if (isFloat(tensor.dtype())) {
    const llvm::fltSemantics &semantics = semanticsOf(tensor.dtype());
    unsigned width = static_cast<unsigned>(byteWidth(tensor.dtype())) * 8;
    llvm::SmallVector<llvm::APFloat> values;
    values.reserve(tensor.numElements());
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      values.emplace_back(semantics, llvm::APInt(width, floatBits(tensor, i)));
    return mlir::DenseElementsAttr::get(type, values);
  }
  unsigned width = tensor.dtype() == DType::i1    ? 1
                   : tensor.dtype() == DType::i32 ? 32
                                                  : 64;
  llvm::SmallVector<llvm::APInt> values;
  values.reserve(tensor.numElements());
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    values.emplace_back(width, static_cast<uint64_t>(tensor.getInt(i)),
                        /*isSigned=*/width != 1);
  return mlir::DenseElementsAttr::get(type, values);
}

} // namespace kiln
