// A tensor's bytes in storage and a dense constant's bytes as stored
// (ConstantBytes.h).
#include "compiler/cpu/ConstantBytes.h"

namespace kiln::compiler::cpu {

using namespace mlir;

uint64_t storageBytes(Type element) {
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

uint64_t bytesOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getNumElements() * storageBytes(type.getElementType());
}

absl::StatusOr<std::string> constantBytes(ConstantOp op) {
  auto attr = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!attr)
    return absl::UnimplementedError(
        "cpu backend: only dense constants are supported");
  Type element = attr.getElementType();
  uint64_t width = storageBytes(element);
  std::string out;
  out.reserve(attr.getNumElements() * width);
  auto append = [&](const APInt &bits) {
    uint64_t word = bits.getZExtValue();
    out.append(reinterpret_cast<const char *>(&word), width);
  };
  if (isa<FloatType>(element)) {
    for (const APFloat &v : attr.getValues<APFloat>())
      append(v.bitcastToAPInt());
  } else {
    for (const APInt &v : attr.getValues<APInt>())
      append(v.zextOrTrunc(64));
  }
  return out;
}

} // namespace kiln::compiler::cpu
