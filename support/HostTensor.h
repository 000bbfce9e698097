// Element types and host tensors: the one tensor representation shared by the
// reference evaluator, the tools and (later) the runtime. No MLIR or LLVM here.
#ifndef KILN_SUPPORT_HOSTTENSOR_H
#define KILN_SUPPORT_HOSTTENSOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

/// The element types of the kiln dialect.
enum class DType : uint8_t { f32, f64, f16, bf16, i1, i32, i64 };

/// Bytes per element (i1 is stored as one byte holding 0 or 1).
size_t byteWidth(DType dtype);
bool isFloat(DType dtype);
/// "f32", "f64", "f16", "bf16", "i1", "i32", "i64".
std::string_view dtypeName(DType dtype);
absl::StatusOr<DType> parseDType(std::string_view name);

/// IEEE half and bfloat16 conversions, round to nearest even, directly from
/// double (no double rounding through f32).
uint16_t doubleToHalf(double value);
double halfToDouble(uint16_t bits);
uint16_t doubleToBFloat16(double value);
double bfloat16ToDouble(uint16_t bits);

/// Rounds `value` to the nearest value representable in the float `dtype`.
double roundToDType(double value, DType dtype);

/// A dense row-major tensor in host memory, 64-byte aligned, zero-filled on
/// creation. Element accessors convert through double (floats) or int64_t
/// (integers and i1), which represent every kiln element value exactly.
class HostTensor {
public:
  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);

  /// Fails instead of aborting when the shape is negative or too large.
  static absl::StatusOr<HostTensor> create(DType dtype,
                                           std::vector<int64_t> shape);

  HostTensor(const HostTensor &other);
  HostTensor &operator=(const HostTensor &other);
  HostTensor(HostTensor &&) noexcept = default;
  HostTensor &operator=(HostTensor &&) noexcept = default;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return numElements_; }
  size_t byteSize() const { return numElements_ * byteWidth(dtype_); }

  std::byte *data() { return data_.get(); }
  const std::byte *data() const { return data_.get(); }

  /// Element i (row-major) as a double; integers convert exactly up to 2^53.
  double getDouble(int64_t i) const;
  /// Stores `value` rounded to this tensor's dtype (integers truncate toward
  /// zero and saturate, NaN becoming 0; i1 stores value != 0, so NaN is 1).
  void setDouble(int64_t i, double value);
  int64_t getInt(int64_t i) const;
  void setInt(int64_t i, int64_t value);

  /// "tensor<2x3xf32>": the MLIR spelling of this tensor's type.
  std::string typeString() const;

  /// True when dtypes, shapes and bytes are identical.
  bool bitwiseEqual(const HostTensor &other) const;

private:
  struct AlignedFree {
    void operator()(std::byte *p) const;
  };

  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  int64_t numElements_ = 0;
  std::unique_ptr<std::byte[], AlignedFree> data_;
};

} // namespace kiln

#endif // KILN_SUPPORT_HOSTTENSOR_H
