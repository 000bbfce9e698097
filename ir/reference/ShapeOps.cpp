// Shape kernels: broadcast_in_dim, reshape, transpose, slice, concatenate,
// pad and iota. Each walks the result's multi-index in row-major order and
// computes the operand position it reads, copying element bytes unchanged.
#include "ir/reference/Indexing.h"
#include "ir/reference/Kernels.h"

namespace kiln::reference {

namespace {

int64_t dot(llvm::ArrayRef<int64_t> index, llvm::ArrayRef<int64_t> strides) {
  int64_t linear = 0;
  for (size_t d = 0; d < index.size(); ++d)
    linear += index[d] * strides[d];
  return linear;
}

absl::Status rankMismatch(absl::string_view op, const HostTensor &x,
                          llvm::ArrayRef<int64_t> attr) {
  return absl::InvalidArgumentError(
      absl::StrCat(op, ": attribute ", shapeString(attr), " does not have one "
                   "entry per dimension of ", x.typeString()));
}

} // namespace

absl::StatusOr<HostTensor> evalBroadcastInDim(const HostTensor &x,
                                              llvm::ArrayRef<int64_t> dims,
                                              llvm::ArrayRef<int64_t> shape) {
  if (static_cast<int64_t>(dims.size()) != x.rank())
    return rankMismatch("kiln.broadcast_in_dim", x, dims);
  int64_t rank = static_cast<int64_t>(shape.size());
  if (absl::Status status = checkDimList("kiln.broadcast_in_dim", dims, rank);
      !status.ok())
    return status;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (x.shape()[i] != 1 && x.shape()[i] != shape[dims[i]])
      return absl::InvalidArgumentError(absl::StrCat(
          "kiln.broadcast_in_dim: cannot broadcast ", x.typeString(), " to ",
          shapeString(shape)));
  absl::StatusOr<HostTensor> result =
      HostTensor::create(x.dtype(), std::vector<int64_t>(shape));
  if (!result.ok())
    return result.status();
  std::vector<int64_t> strides = rowMajorStrides(x.shape());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < result->numElements(); ++i, nextIndex(index, shape)) {
    int64_t source = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      source += (x.shape()[d] == 1 ? 0 : index[dims[d]]) * strides[d];
    copyElement(*result, i, x, source);
  }
  return result;
}

absl::StatusOr<HostTensor> evalReshape(const HostTensor &x,
                                       llvm::ArrayRef<int64_t> shape) {
  absl::StatusOr<HostTensor> result =
      HostTensor::create(x.dtype(), std::vector<int64_t>(shape));
  if (!result.ok())
    return result.status();
  if (result->numElements() != x.numElements())
    return absl::InvalidArgumentError(
        absl::StrCat("kiln.reshape: cannot reshape ", x.typeString(), " to ",
                     shapeString(shape)));
  for (int64_t i = 0; i < x.numElements(); ++i)
    copyElement(*result, i, x, i);
  return result;
}

absl::StatusOr<HostTensor> evalTranspose(const HostTensor &x,
                                         llvm::ArrayRef<int64_t> perm) {
  if (static_cast<int64_t>(perm.size()) != x.rank())
    return rankMismatch("kiln.transpose", x, perm);
  if (absl::Status status = checkDimList("kiln.transpose", perm, x.rank());
      !status.ok())
    return status;
  std::vector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(x.shape()[p]);
  absl::StatusOr<HostTensor> result = HostTensor::create(x.dtype(), shape);
  if (!result.ok())
    return result.status();
  // Result index i reads operand index j with j[perm[k]] = i[k].
  std::vector<int64_t> strides = rowMajorStrides(x.shape());
  std::vector<int64_t> index(x.rank(), 0);
  for (int64_t i = 0; i < result->numElements(); ++i, nextIndex(index, shape)) {
    int64_t source = 0;
    for (int64_t k = 0; k < x.rank(); ++k)
      source += index[k] * strides[perm[k]];
    copyElement(*result, i, x, source);
  }
  return result;
}

absl::StatusOr<HostTensor> evalSlice(const HostTensor &x,
                                     llvm::ArrayRef<int64_t> start,
                                     llvm::ArrayRef<int64_t> limit,
                                     llvm::ArrayRef<int64_t> strides) {
  if (static_cast<int64_t>(start.size()) != x.rank() ||
      limit.size() != start.size() || strides.size() != start.size())
    return rankMismatch("kiln.slice", x, start);
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > x.shape()[d] ||
        strides[d] <= 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "kiln.slice: bad bounds in dimension ", d, " of ", x.typeString()));
    // ceil((limit - start) / stride)
    shape.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  absl::StatusOr<HostTensor> result = HostTensor::create(x.dtype(), shape);
  if (!result.ok())
    return result.status();
  std::vector<int64_t> xStrides = rowMajorStrides(x.shape());
  std::vector<int64_t> index(x.rank(), 0);
  for (int64_t i = 0; i < result->numElements(); ++i, nextIndex(index, shape)) {
    int64_t source = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      source += (start[d] + index[d] * strides[d]) * xStrides[d];
    copyElement(*result, i, x, source);
  }
  return result;
}

absl::StatusOr<HostTensor>
evalConcatenate(llvm::ArrayRef<const HostTensor *> inputs, int64_t dim) {
  if (inputs.empty())
    return absl::InvalidArgumentError("kiln.concatenate: no inputs");
  const HostTensor &first = *inputs.front();
  if (dim < 0 || dim >= first.rank())
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.concatenate: dimension ", dim, " is out of range for ",
        first.typeString()));
  std::vector<int64_t> shape = first.shape();
  shape[dim] = 0;
  for (const HostTensor *input : inputs) {
    bool compatible =
        input->dtype() == first.dtype() && input->rank() == first.rank();
    for (int64_t d = 0; compatible && d < first.rank(); ++d)
      compatible = d == dim || input->shape()[d] == first.shape()[d];
    if (!compatible)
      return absl::InvalidArgumentError(
          absl::StrCat("kiln.concatenate: ", input->typeString(),
                       " does not match ", first.typeString()));
    shape[dim] += input->shape()[dim];
  }
  absl::StatusOr<HostTensor> result = HostTensor::create(first.dtype(), shape);
  if (!result.ok())
    return result.status();
  // Walk each input and write it at its offset along `dim`.
  std::vector<int64_t> resultStrides = rowMajorStrides(shape);
  int64_t offset = 0;
  for (const HostTensor *input : inputs) {
    std::vector<int64_t> index(input->rank(), 0);
    for (int64_t i = 0; i < input->numElements();
         ++i, nextIndex(index, input->shape())) {
      index[dim] += offset;
      copyElement(*result, dot(index, resultStrides), *input, i);
      index[dim] -= offset;
    }
    offset += input->shape()[dim];
  }
  return result;
}

absl::StatusOr<HostTensor> evalPad(const HostTensor &x,
                                   const HostTensor &value,
                                   llvm::ArrayRef<int64_t> low,
                                   llvm::ArrayRef<int64_t> high) {
  if (static_cast<int64_t>(low.size()) != x.rank() ||
      high.size() != low.size())
    return rankMismatch("kiln.pad", x, low);
  if (value.rank() != 0 || value.dtype() != x.dtype())
    return absl::InvalidArgumentError(
        absl::StrCat("kiln.pad: padding value ", value.typeString(),
                     " must be a scalar of the type of ", x.typeString()));
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (low[d] < 0 || high[d] < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("kiln.pad: negative padding in dimension ", d));
    shape.push_back(low[d] + x.shape()[d] + high[d]);
  }
  absl::StatusOr<HostTensor> result = HostTensor::create(x.dtype(), shape);
  if (!result.ok())
    return result.status();
  std::vector<int64_t> xStrides = rowMajorStrides(x.shape());
  std::vector<int64_t> index(x.rank(), 0);
  for (int64_t i = 0; i < result->numElements(); ++i, nextIndex(index, shape)) {
    bool inside = true;
    int64_t source = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      int64_t j = index[d] - low[d];
      inside = inside && j >= 0 && j < x.shape()[d];
      source += j * xStrides[d];
    }
    if (inside)
      copyElement(*result, i, x, source);
    else
      copyElement(*result, i, value, 0);
  }
  return result;
}

absl::StatusOr<HostTensor> evalIota(DType dtype, llvm::ArrayRef<int64_t> shape,
                                    int64_t dim) {
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    return absl::InvalidArgumentError(
        absl::StrCat("kiln.iota: dimension ", dim, " is out of range for ",
                     shapeString(shape)));
  absl::StatusOr<HostTensor> result =
      HostTensor::create(dtype, std::vector<int64_t>(shape));
  if (!result.ok())
    return result.status();
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < result->numElements(); ++i, nextIndex(index, shape)) {
    // An index is below 2^40, so the double is exact and setDouble rounds
    // it once to a float dtype (large f16 indices become inf, as in convert).
    if (isFloat(dtype))
      result->setDouble(i, static_cast<double>(index[dim]));
    else
      result->setInt(i, index[dim]);
  }
  return result;
}

} // namespace kiln::reference
