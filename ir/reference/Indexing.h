// Small helpers shared by the kernels: row-major strides, a multi-index that
// counts through a shape like an odometer, bit-exact element copies and the
// shape checks every kernel starts with.
#ifndef KILN_IR_REFERENCE_INDEXING_H
#define KILN_IR_REFERENCE_INDEXING_H

#include "support/HostTensor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstring>
#include "absl/strings/string_view.h"
#include <vector>

namespace kiln::reference {

/// shape → the row-major stride of each dimension, in elements.
inline std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Steps `index` to the next row-major position in `shape` (the last
/// dimension moves fastest); wraps to all zeros after the last position.
inline void nextIndex(std::vector<int64_t> &index,
                      llvm::ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return;
    index[d] = 0;
  }
}

/// Copies one element's bytes, so NaN payloads and -0 survive shape ops.
inline void copyElement(HostTensor &dst, int64_t dstIndex,
                        const HostTensor &src, int64_t srcIndex) {
  size_t width = byteWidth(src.dtype());
  std::memcpy(dst.data() + dstIndex * width, src.data() + srcIndex * width,
              width);
}

inline std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

/// An error unless `a` and `b` have the same dtype and shape.
inline absl::Status checkSameType(absl::string_view op, const HostTensor &a,
                                  const HostTensor &b) {
  if (a.dtype() == b.dtype() && a.shape() == b.shape())
    return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(op, ": operand types differ: ", a.typeString(), " vs ",
                   b.typeString()));
}

/// An error unless every entry of `dims` is a distinct dimension in
/// [0, rank).
inline absl::Status checkDimList(absl::string_view op,
                                 llvm::ArrayRef<int64_t> dims, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d])
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": dimensions ", shapeString(dims),
                       " are not distinct dimensions of a rank-", rank,
                       " tensor"));
    seen[d] = true;
  }
  return absl::OkStatus();
}

} // namespace kiln::reference

#endif // KILN_IR_REFERENCE_INDEXING_H
