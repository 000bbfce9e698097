// TensorBuilder: kiln ops with their result types worked out; see the header.
#include "passes/TensorBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;

namespace kiln {
namespace {

RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

} // namespace

Value TensorBuilder::splat(double value, Type element,
                           ArrayRef<int64_t> shape) {
  auto scalarType = tensorOf({}, element);
  Attribute attr;
  if (auto f = dyn_cast<FloatType>(element)) {
    APFloat v(value);
    bool lost = false;
    v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    attr = DenseElementsAttr::get(scalarType, v);
  } else {
    attr = DenseElementsAttr::get(
        scalarType, APInt(element.getIntOrFloatBitWidth(),
                          static_cast<int64_t>(value), /*isSigned=*/true));
  }
  Value scalar = ConstantOp::create(b_, loc_, cast<ElementsAttr>(attr));
  if (shape.empty())
    return scalar;
  return BroadcastInDimOp::create(b_, loc_, tensorOf(shape, element), scalar,
                                  ArrayRef<int64_t>{});
}

Value TensorBuilder::i64Vector(ArrayRef<int64_t> values) {
  auto type = tensorOf({static_cast<int64_t>(values.size())},
                       b_.getIntegerType(64));
  return ConstantOp::create(
      b_, loc_, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

Value TensorBuilder::slice(Value x, ArrayRef<int64_t> start,
                           ArrayRef<int64_t> limit) {
  if (llvm::all_of(start, [](int64_t s) { return s == 0; }) &&
      limit == shapeOf(x))
    return x;
  SmallVector<int64_t> strides(start.size(), 1);
  return SliceOp::create(b_, loc_, x, start, limit, strides);
}

Value TensorBuilder::sliceDim(Value x, int64_t dim, int64_t begin,
                              int64_t end) {
  SmallVector<int64_t> start(shapeOf(x).size(), 0);
  SmallVector<int64_t> limit(shapeOf(x));
  if (begin == 0 && end == limit[dim])
    return x;
  start[dim] = begin;
  limit[dim] = end;
  return slice(x, start, limit);
}

Value TensorBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape)
    return x;
  return ReshapeOp::create(b_, loc_, tensorOf(shape, elementOf(x)), x);
}

Value TensorBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  return TransposeOp::create(b_, loc_, x, perm);
}

Value TensorBuilder::broadcast(Value x, ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> dims) {
  return BroadcastInDimOp::create(b_, loc_, tensorOf(shape, elementOf(x)), x,
                                  dims);
}

Value TensorBuilder::pad(Value x, ArrayRef<int64_t> low,
                         ArrayRef<int64_t> high) {
  auto none = [](int64_t n) { return n == 0; };
  if (llvm::all_of(low, none) && llvm::all_of(high, none))
    return x;
  return PadOp::create(b_, loc_, x, splat(0, elementOf(x), {}), low, high);
}

Value TensorBuilder::padHigh(Value x, ArrayRef<int64_t> high) {
  return pad(x, SmallVector<int64_t>(high.size(), 0), high);
}

Value TensorBuilder::concatenate(ValueRange xs, int64_t dim) {
  if (xs.size() == 1)
    return xs.front();
  return ConcatenateOp::create(b_, loc_, xs, static_cast<uint64_t>(dim));
}

Value TensorBuilder::convert(Value x, Type element) {
  if (elementOf(x) == element)
    return x;
  return ConvertOp::create(b_, loc_, tensorOf(shapeOf(x), element), x);
}

Value TensorBuilder::iota(Type element, ArrayRef<int64_t> shape,
                          int64_t dim) {
  return IotaOp::create(b_, loc_, tensorOf(shape, element),
                        static_cast<uint64_t>(dim));
}

Value TensorBuilder::dot(Value lhs, Value rhs, ArrayRef<int64_t> lhsBatch,
                         ArrayRef<int64_t> rhsBatch,
                         ArrayRef<int64_t> lhsContract,
                         ArrayRef<int64_t> rhsContract) {
  return DotGeneralOp::create(b_, loc_, lhs, rhs, lhsBatch, rhsBatch,
                              lhsContract, rhsContract);
}

Value TensorBuilder::reduce(ReduceKind kind, Value x, ArrayRef<int64_t> dims) {
  return ReduceOp::create(b_, loc_, kind, x, dims);
}

Value TensorBuilder::add(Value a, Value b) {
  return AddOp::create(b_, loc_, a.getType(), a, b);
}
Value TensorBuilder::sub(Value a, Value b) {
  return SubOp::create(b_, loc_, a.getType(), a, b);
}
Value TensorBuilder::mul(Value a, Value b) {
  return MulOp::create(b_, loc_, a.getType(), a, b);
}
Value TensorBuilder::div(Value a, Value b) {
  return DivOp::create(b_, loc_, a.getType(), a, b);
}
Value TensorBuilder::exp(Value x) {
  return ExpOp::create(b_, loc_, x.getType(), x);
}
Value TensorBuilder::log(Value x) {
  return LogOp::create(b_, loc_, x.getType(), x);
}
Value TensorBuilder::tanh(Value x) {
  return TanhOp::create(b_, loc_, x.getType(), x);
}

Value TensorBuilder::compare(ComparisonDirection direction, Value a, Value b) {
  return CompareOp::create(b_, loc_, direction, a, b);
}

Value TensorBuilder::select(Value pred, Value onTrue, Value onFalse) {
  return SelectOp::create(b_, loc_, onTrue.getType(), pred, onTrue, onFalse);
}

std::pair<Value, Value> TensorBuilder::rngUniform(Value state,
                                                  ArrayRef<int64_t> shape) {
  auto op = RngUniformOp::create(b_, loc_, tensorOf(shape, b_.getF32Type()),
                                 state.getType(), state);
  return {op.getResult(), op.getNewState()};
}

int64_t tiledChunkRows(int64_t n, int64_t most) {
  constexpr int64_t kTile = 64;
  n = std::max<int64_t>(1, n);
  most = std::clamp<int64_t>(most, 1, n);
  int64_t chunks = (n + most - 1) / most;
  int64_t rows = (n + chunks - 1) / chunks;
  int64_t up = (rows + kTile - 1) / kTile * kTile;
  if (up <= most)
    return up;
  int64_t down = most / kTile * kTile;
  return down >= kTile ? down : rows;
}

} // namespace kiln
