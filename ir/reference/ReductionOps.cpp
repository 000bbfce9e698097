// Kernels that combine many elements into one or move elements by index:
// reduce, dot_general, gather and scatter_add. Float sums and products
// accumulate in double and round once when stored; integer ones accumulate
// in int64 with wrapping.
#include "ir/reference/Indexing.h"
#include "ir/reference/Kernels.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::reference {

namespace {

double floatInit(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum: return 0.0;
  case ReductionKind::Prod: return 1.0;
  case ReductionKind::Max: return -std::numeric_limits<double>::infinity();
  case ReductionKind::Min: return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

int64_t intInit(ReductionKind kind, DType dtype) {
  bool narrow = dtype == DType::i32;
  switch (kind) {
  case ReductionKind::Sum: return 0;
  case ReductionKind::Prod: return 1;
  case ReductionKind::Max:
    return narrow ? std::numeric_limits<int32_t>::min()
                  : std::numeric_limits<int64_t>::min();
  case ReductionKind::Min:
    return narrow ? std::numeric_limits<int32_t>::max()
                  : std::numeric_limits<int64_t>::max();
  }
  return 0;
}

double combineFloat(ReductionKind kind, double acc, double x) {
  switch (kind) {
  case ReductionKind::Sum: return acc + x;
  case ReductionKind::Prod: return acc * x;
  case ReductionKind::Max: return floatMax(acc, x);
  case ReductionKind::Min: return floatMin(acc, x);
  }
  return acc;
}

int64_t combineInt(ReductionKind kind, int64_t acc, int64_t x) {
  switch (kind) {
  case ReductionKind::Sum: return wrapAdd(acc, x);
  case ReductionKind::Prod: return wrapMul(acc, x);
  case ReductionKind::Max: return std::max(acc, x);
  case ReductionKind::Min: return std::min(acc, x);
  }
  return acc;
}

/// The dimensions of a rank-`rank` operand that appear in neither list, in
/// order: a dot_general operand's free dimensions.
std::vector<int64_t> freeDims(int64_t rank, llvm::ArrayRef<int64_t> batch,
                              llvm::ArrayRef<int64_t> contract) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(batch, d) && !llvm::is_contained(contract, d))
      dims.push_back(d);
  return dims;
}

/// Checks a dot_general operand's dimension lists: distinct, in range.
absl::Status checkDotDims(const HostTensor &x, llvm::ArrayRef<int64_t> batch,
                          llvm::ArrayRef<int64_t> contract) {
  std::vector<int64_t> used(batch.begin(), batch.end());
  used.insert(used.end(), contract.begin(), contract.end());
  return checkDimList("kiln.dot_general", used, x.rank());
}

/// Sizes of an operand split as [outer, n, inner] around `axis`, the view
/// gather and scatter_add index through.
struct AxisSplit {
  int64_t outer = 1, n = 0, inner = 1;
};

absl::StatusOr<AxisSplit> splitAtAxis(absl::string_view op, const HostTensor &x,
                                      int64_t axis) {
  if (axis < 0 || axis >= x.rank())
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": axis ", axis, " is out of range for ", x.typeString()));
  AxisSplit split;
  for (int64_t d = 0; d < axis; ++d)
    split.outer *= x.shape()[d];
  split.n = x.shape()[axis];
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    split.inner *= x.shape()[d];
  return split;
}

/// operand[:axis] ++ indices.shape ++ operand[axis+1:].
std::vector<int64_t> gatheredShape(const HostTensor &x,
                                   const HostTensor &indices, int64_t axis) {
  std::vector<int64_t> shape(x.shape().begin(), x.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  return shape;
}

absl::Status checkIndices(absl::string_view op, const HostTensor &indices) {
  if (indices.dtype() == DType::i32 || indices.dtype() == DType::i64)
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      op, ": indices must be i32 or i64, got ", indices.typeString()));
}

} // namespace

absl::StatusOr<HostTensor> evalReduce(ReductionKind kind, const HostTensor &x,
                                      llvm::ArrayRef<int64_t> dims) {
  if (absl::Status status = checkDimList("kiln.reduce", dims, x.rank());
      !status.ok())
    return status;
  if (x.dtype() == DType::i1)
    return absl::InvalidArgumentError("kiln.reduce is not defined on i1");
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!llvm::is_contained(dims, d))
      shape.push_back(x.shape()[d]);
  absl::StatusOr<HostTensor> result = HostTensor::create(x.dtype(), shape);
  if (!result.ok())
    return result.status();

  bool floating = isFloat(x.dtype());
  std::vector<double> floatAcc(result->numElements(), floatInit(kind));
  std::vector<int64_t> intAcc(result->numElements(), intInit(kind, x.dtype()));
  // Each operand element adds into the result element its kept dims name.
  std::vector<int64_t> resultStrides = rowMajorStrides(shape);
  std::vector<int64_t> index(x.rank(), 0);
  for (int64_t i = 0; i < x.numElements(); ++i, nextIndex(index, x.shape())) {
    int64_t target = 0, k = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!llvm::is_contained(dims, d))
        target += index[d] * resultStrides[k++];
    if (floating)
      floatAcc[target] = combineFloat(kind, floatAcc[target], x.getDouble(i));
    else
      intAcc[target] = combineInt(kind, intAcc[target], x.getInt(i));
  }
  for (int64_t j = 0; j < result->numElements(); ++j) {
    if (floating)
      result->setDouble(j, floatAcc[j]);
    else
      result->setInt(j, intAcc[j]);
  }
  return result;
}

absl::StatusOr<HostTensor>
evalDotGeneral(const HostTensor &lhs, const HostTensor &rhs,
               llvm::ArrayRef<int64_t> lhsBatch,
               llvm::ArrayRef<int64_t> rhsBatch,
               llvm::ArrayRef<int64_t> lhsContract,
               llvm::ArrayRef<int64_t> rhsContract, DType resultType) {
  // 1. Validate the element and dimension lists and that paired dimensions
  //    agree.
  bool widened = (lhs.dtype() == DType::bf16 || lhs.dtype() == DType::f16) &&
                 resultType == DType::f32;
  if (lhs.dtype() != rhs.dtype() || lhs.dtype() == DType::i1 ||
      (resultType != lhs.dtype() && !widened))
    return absl::InvalidArgumentError(
        absl::StrCat("kiln.dot_general: bad element types ", lhs.typeString(),
                     " and ", rhs.typeString(), " for a ",
                     std::string(dtypeName(resultType)), " result"));
  if (lhsBatch.size() != rhsBatch.size() ||
      lhsContract.size() != rhsContract.size())
    return absl::InvalidArgumentError(
        "kiln.dot_general: batch and contracting dimensions must pair up");
  if (absl::Status status = checkDotDims(lhs, lhsBatch, lhsContract);
      !status.ok())
    return status;
  if (absl::Status status = checkDotDims(rhs, rhsBatch, rhsContract);
      !status.ok())
    return status;
  for (size_t k = 0; k < lhsBatch.size(); ++k)
    if (lhs.shape()[lhsBatch[k]] != rhs.shape()[rhsBatch[k]])
      return absl::InvalidArgumentError("kiln.dot_general: batch sizes differ");
  for (size_t k = 0; k < lhsContract.size(); ++k)
    if (lhs.shape()[lhsContract[k]] != rhs.shape()[rhsContract[k]])
      return absl::InvalidArgumentError(
          "kiln.dot_general: contracting sizes differ");

  // 2. Result shape: batch dims, then lhs free dims, then rhs free dims.
  std::vector<int64_t> lhsFree = freeDims(lhs.rank(), lhsBatch, lhsContract);
  std::vector<int64_t> rhsFree = freeDims(rhs.rank(), rhsBatch, rhsContract);
  std::vector<int64_t> shape, contractShape;
  for (int64_t d : lhsBatch)
    shape.push_back(lhs.shape()[d]);
  for (int64_t d : lhsFree)
    shape.push_back(lhs.shape()[d]);
  for (int64_t d : rhsFree)
    shape.push_back(rhs.shape()[d]);
  int64_t contractCount = 1;
  for (int64_t d : lhsContract) {
    contractShape.push_back(lhs.shape()[d]);
    contractCount *= lhs.shape()[d];
  }
  absl::StatusOr<HostTensor> result = HostTensor::create(resultType, shape);
  if (!result.ok())
    return result.status();

  // 3. For each result element, scatter its index into both operands'
  //    indices, then sum over the contracting index space.
  std::vector<int64_t> lhsStrides = rowMajorStrides(lhs.shape());
  std::vector<int64_t> rhsStrides = rowMajorStrides(rhs.shape());
  std::vector<int64_t> lhsIndex(lhs.rank(), 0), rhsIndex(rhs.rank(), 0);
  std::vector<int64_t> index(shape.size(), 0);
  size_t numBatch = lhsBatch.size();
  for (int64_t i = 0; i < result->numElements(); ++i, nextIndex(index, shape)) {
    for (size_t k = 0; k < numBatch; ++k) {
      lhsIndex[lhsBatch[k]] = index[k];
      rhsIndex[rhsBatch[k]] = index[k];
    }
    for (size_t k = 0; k < lhsFree.size(); ++k)
      lhsIndex[lhsFree[k]] = index[numBatch + k];
    for (size_t k = 0; k < rhsFree.size(); ++k)
      rhsIndex[rhsFree[k]] = index[numBatch + lhsFree.size() + k];
    double floatSum = 0.0;
    int64_t intSum = 0;
    std::vector<int64_t> contract(contractShape.size(), 0);
    for (int64_t c = 0; c < contractCount;
         ++c, nextIndex(contract, contractShape)) {
      for (size_t k = 0; k < contract.size(); ++k) {
        lhsIndex[lhsContract[k]] = contract[k];
        rhsIndex[rhsContract[k]] = contract[k];
      }
      int64_t l = 0, r = 0;
      for (int64_t d = 0; d < lhs.rank(); ++d)
        l += lhsIndex[d] * lhsStrides[d];
      for (int64_t d = 0; d < rhs.rank(); ++d)
        r += rhsIndex[d] * rhsStrides[d];
      if (isFloat(lhs.dtype()))
        floatSum += lhs.getDouble(l) * rhs.getDouble(r);
      else
        intSum = wrapAdd(intSum, wrapMul(lhs.getInt(l), rhs.getInt(r)));
    }
    if (isFloat(lhs.dtype()))
      result->setDouble(i, floatSum);
    else
      result->setInt(i, intSum);
  }
  return result;
}

absl::StatusOr<HostTensor> evalGather(const HostTensor &x,
                                      const HostTensor &indices, int64_t axis) {
  if (absl::Status status = checkIndices("kiln.gather", indices); !status.ok())
    return status;
  absl::StatusOr<AxisSplit> split = splitAtAxis("kiln.gather", x, axis);
  if (!split.ok())
    return split.status();
  absl::StatusOr<HostTensor> result =
      HostTensor::create(x.dtype(), gatheredShape(x, indices, axis));
  if (!result.ok())
    return result.status();
  if (split->n == 0 && result->numElements() != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.gather: cannot take indices from the empty axis ", axis, " of ",
        x.typeString()));
  // Row-major, the result is [outer, m, inner] and the operand
  // [outer, n, inner], m being the number of indices.
  int64_t m = indices.numElements();
  for (int64_t o = 0; o < split->outer; ++o)
    for (int64_t k = 0; k < m; ++k) {
      int64_t at = std::clamp<int64_t>(indices.getInt(k), 0, split->n - 1);
      for (int64_t r = 0; r < split->inner; ++r)
        copyElement(*result, (o * m + k) * split->inner + r, x,
                    (o * split->n + at) * split->inner + r);
    }
  return result;
}

absl::StatusOr<HostTensor> evalScatterAdd(const HostTensor &x,
                                          const HostTensor &indices,
                                          const HostTensor &updates,
                                          int64_t axis) {
  if (absl::Status status = checkIndices("kiln.scatter_add", indices);
      !status.ok())
    return status;
  absl::StatusOr<AxisSplit> split = splitAtAxis("kiln.scatter_add", x, axis);
  if (!split.ok())
    return split.status();
  if (x.dtype() == DType::i1 || updates.dtype() != x.dtype() ||
      updates.shape() != gatheredShape(x, indices, axis))
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.scatter_add: updates ", updates.typeString(),
        " do not have the gathered type for ", x.typeString(), " and ",
        indices.typeString()));
  absl::StatusOr<HostTensor> result = HostTensor::create(x.dtype(), x.shape());
  if (!result.ok())
    return result.status();

  bool floating = isFloat(x.dtype());
  std::vector<double> floatAcc(floating ? x.numElements() : 0);
  std::vector<int64_t> intAcc(floating ? 0 : x.numElements());
  for (int64_t j = 0; j < x.numElements(); ++j) {
    if (floating)
      floatAcc[j] = x.getDouble(j);
    else
      intAcc[j] = x.getInt(j);
  }
  int64_t m = indices.numElements();
  for (int64_t o = 0; o < split->outer; ++o)
    for (int64_t k = 0; k < m; ++k) {
      int64_t at = indices.getInt(k);
      if (at < 0 || at >= split->n)
        continue; // out-of-range updates are dropped
      for (int64_t r = 0; r < split->inner; ++r) {
        int64_t source = (o * m + k) * split->inner + r;
        int64_t target = (o * split->n + at) * split->inner + r;
        if (floating)
          floatAcc[target] += updates.getDouble(source);
        else
          intAcc[target] = wrapAdd(intAcc[target], updates.getInt(source));
      }
    }
  for (int64_t j = 0; j < x.numElements(); ++j) {
    if (floating)
      result->setDouble(j, floatAcc[j]);
    else
      result->setInt(j, intAcc[j]);
  }
  return result;
}

} // namespace kiln::reference
