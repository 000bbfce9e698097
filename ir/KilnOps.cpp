// Verifiers and result-type inference for the kiln ops. Every message names
// the op and the offending shapes or attributes, as `emitOpError` would.
#include "ir/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace kiln;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// "[1, 2, 3]": how dimension lists appear in messages.
std::string formatDims(ArrayRef<int64_t> dims) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(dims, os);
  os << "]";
  return text;
}

/// Reports a type-inference failure in the form emitOpError uses.
template <typename... Args>
LogicalResult inferError(std::optional<Location> loc, StringRef opName,
                         Args &&...args) {
  return emitOptionalError(loc, "'", opName, "' op ",
                           std::forward<Args>(args)...);
}

/// True if `dims` holds distinct values in [0, rank).
bool isUniqueDimList(ArrayRef<int64_t> dims, int64_t rank) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t d : dims)
    if (d < 0 || d >= rank || !seen.insert(d).second)
      return false;
  return true;
}

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

} // namespace

std::string kiln::checkTensorSize(RankedTensorType type) {
  ArrayRef<int64_t> shape = type.getShape();
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return "dynamic dimensions are not supported, got " +
           llvm::formatv("{0}", type).str();
  if (!boundedElementCount(absl::MakeConstSpan(shape.data(), shape.size())))
    return llvm::formatv("tensor type {0} exceeds the limit of 2^40 "
                         "elements",
                         type)
        .str();
  return "";
}

namespace kiln::OpTrait {
LogicalResult verifyBoundedTensorShapes(Operation *op) {
  auto check = [&](Type type) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    std::string problem = checkTensorSize(tensor);
    if (problem.empty())
      return success();
    return op->emitOpError() << problem;
  };
  for (Type type : op->getOperandTypes())
    if (failed(check(type)))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(check(type)))
      return failure();
  return success();
}
} // namespace kiln::OpTrait

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  auto lhs = dyn_cast<RankedTensorType>(adaptor.getLhs().getType());
  if (!lhs)
    return inferError(loc, "kiln.compare", "expected a ranked tensor lhs");
  results.push_back(lhs.clone(IntegerType::get(context, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType operand = tensorType(getOperand());
  RankedTensorType result = getResult().getType();
  ArrayRef<int64_t> dims = getBroadcastDimensions();
  if (static_cast<int64_t>(dims.size()) != operand.getRank())
    return emitOpError() << "broadcast_dimensions " << formatDims(dims)
                         << " must have one entry per operand dimension of "
                         << operand;
  if (!isUniqueDimList(dims, result.getRank()))
    return emitOpError() << "broadcast_dimensions " << formatDims(dims)
                         << " must be distinct dimensions of " << result;
  if (!llvm::is_sorted(dims))
    return emitOpError() << "broadcast_dimensions " << formatDims(dims)
                         << " must be increasing (use kiln.transpose to "
                            "reorder)";
  for (auto [i, dim] : llvm::enumerate(dims)) {
    int64_t from = operand.getDimSize(i), to = result.getDimSize(dim);
    if (from != 1 && from != to)
      return emitOpError() << "operand dimension " << i << " of " << operand
                           << " (size " << from << ") cannot broadcast to "
                           << "result dimension " << dim << " of " << result
                           << " (size " << to << ")";
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType operand = tensorType(getOperand());
  RankedTensorType result = getResult().getType();
  if (operand.getNumElements() != result.getNumElements())
    return emitOpError() << "cannot reshape " << operand << " ("
                         << operand.getNumElements() << " elements) to "
                         << result << " (" << result.getNumElements()
                         << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto operand = cast<RankedTensorType>(adaptor.getOperand().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != operand.getRank() ||
      !isUniqueDimList(perm, operand.getRank()))
    return inferError(loc, "kiln.transpose", "permutation ", formatDims(perm),
                      " is not a permutation of the dimensions of ", operand);
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(operand.getDimSize(d));
  results.push_back(operand.clone(shape));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto operand = cast<RankedTensorType>(adaptor.getOperand().getType());
  ArrayRef<int64_t> start = adaptor.getStartIndices();
  ArrayRef<int64_t> limit = adaptor.getLimitIndices();
  ArrayRef<int64_t> strides = adaptor.getStrides();
  int64_t rank = operand.getRank();
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return inferError(loc, "kiln.slice", "start ", formatDims(start),
                      ", limit ", formatDims(limit), " and strides ",
                      formatDims(strides), " must each have ", rank,
                      " entries for ", operand);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (start[i] < 0 || start[i] > limit[i] ||
        limit[i] > operand.getDimSize(i) || strides[i] <= 0)
      return inferError(loc, "kiln.slice", "dimension ", i, " of ", operand,
                        ": need 0 <= start (", start[i], ") <= limit (",
                        limit[i], ") <= size and stride (", strides[i],
                        ") > 0");
    shape.push_back(llvm::divideCeil(limit[i] - start[i], strides[i]));
  }
  results.push_back(operand.clone(shape));
  return success();
}

LogicalResult ConcatenateOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return inferError(loc, "kiln.concatenate", "needs at least one input");
  auto first = cast<RankedTensorType>(inputs.front().getType());
  int64_t dim = adaptor.getDimension();
  if (dim < 0 || dim >= first.getRank())
    return inferError(loc, "kiln.concatenate", "dimension ", dim,
                      " is out of range for ", first);
  SmallVector<int64_t> shape(first.getShape());
  for (Value input : inputs.drop_front()) {
    auto type = cast<RankedTensorType>(input.getType());
    bool compatible = type.getRank() == first.getRank() &&
                      type.getElementType() == first.getElementType();
    for (int64_t i = 0; compatible && i < first.getRank(); ++i)
      compatible = i == dim || type.getDimSize(i) == first.getDimSize(i);
    if (!compatible)
      return inferError(loc, "kiln.concatenate", "input ", type,
                        " does not match ", first,
                        " outside dimension ", dim);
    shape[dim] += type.getDimSize(dim);
  }
  results.push_back(first.clone(shape));
  return success();
}

/// Parses `%a, %b, ..., dim = N` (at least one operand).
static ParseResult
parseConcatInputs(OpAsmParser &parser,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
                  IntegerAttr &dimension) {
  do {
    if (succeeded(parser.parseOptionalKeyword("dim"))) {
      int64_t value = 0;
      if (parser.parseEqual() || parser.parseInteger(value))
        return failure();
      dimension = parser.getBuilder().getI64IntegerAttr(value);
      return success();
    }
    if (parser.parseOperand(inputs.emplace_back()))
      return failure();
  } while (succeeded(parser.parseOptionalComma()));
  return parser.emitError(parser.getCurrentLocation(),
                          "expected ', dim = <dimension>' after the inputs");
}

static void printConcatInputs(OpAsmPrinter &printer, Operation *,
                              OperandRange inputs, IntegerAttr dimension) {
  for (Value input : inputs)
    printer << input << ", ";
  printer << "dim = " << dimension.getInt();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  auto operand = cast<RankedTensorType>(adaptor.getOperand().getType());
  auto value = cast<RankedTensorType>(adaptor.getPaddingValue().getType());
  if (value.getRank() != 0 ||
      value.getElementType() != operand.getElementType())
    return inferError(loc, "kiln.pad", "padding value must be a rank-0 tensor "
                      "of the operand's element type, got ", value, " for ",
                      operand);
  ArrayRef<int64_t> low = adaptor.getEdgePaddingLow();
  ArrayRef<int64_t> high = adaptor.getEdgePaddingHigh();
  int64_t rank = operand.getRank();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank)
    return inferError(loc, "kiln.pad", "low ", formatDims(low), " and high ",
                      formatDims(high), " must each have ", rank,
                      " entries for ", operand);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (low[i] < 0 || high[i] < 0 || low[i] > kMaxTensorElements ||
        high[i] > kMaxTensorElements)
      return inferError(loc, "kiln.pad", "padding of dimension ", i,
                        " must be in [0, 2^40], got low ", low[i],
                        " and high ", high[i]);
    shape.push_back(low[i] + operand.getDimSize(i) + high[i]);
  }
  results.push_back(operand.clone(shape));
  return success();
}

LogicalResult IotaOp::verify() {
  int64_t rank = getResult().getType().getRank();
  int64_t dim = getIotaDimension();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "iota_dimension " << dim << " is out of range for "
                         << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, indexing
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto operand = cast<RankedTensorType>(adaptor.getOperand().getType());
  ArrayRef<int64_t> dims = adaptor.getDimensions();
  if (!isUniqueDimList(dims, operand.getRank()))
    return inferError(loc, "kiln.reduce", "dimensions ", formatDims(dims),
                      " must be distinct dimensions of ", operand);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < operand.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(operand.getDimSize(i));
  results.push_back(operand.clone(shape));
  return success();
}

LogicalResult DotGeneralOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  ArrayRef<int64_t> lhsBatch = adaptor.getLhsBatchingDimensions();
  ArrayRef<int64_t> rhsBatch = adaptor.getRhsBatchingDimensions();
  ArrayRef<int64_t> lhsContract = adaptor.getLhsContractingDimensions();
  ArrayRef<int64_t> rhsContract = adaptor.getRhsContractingDimensions();
  if (lhs.getElementType() != rhs.getElementType())
    return inferError(loc, "kiln.dot_general", "element types of ", lhs,
                      " and ", rhs, " differ");
  if (lhsBatch.size() != rhsBatch.size() ||
      lhsContract.size() != rhsContract.size())
    return inferError(loc, "kiln.dot_general", "batch dims ",
                      formatDims(lhsBatch), " x ", formatDims(rhsBatch),
                      " and contracting dims ", formatDims(lhsContract), " x ",
                      formatDims(rhsContract), " must pair up");
  SmallVector<int64_t> lhsUsed(lhsBatch), rhsUsed(rhsBatch);
  llvm::append_range(lhsUsed, lhsContract);
  llvm::append_range(rhsUsed, rhsContract);
  if (!isUniqueDimList(lhsUsed, lhs.getRank()) ||
      !isUniqueDimList(rhsUsed, rhs.getRank()))
    return inferError(loc, "kiln.dot_general", "batch and contracting dims ",
                      formatDims(lhsUsed), " of ", lhs, " and ",
                      formatDims(rhsUsed), " of ", rhs,
                      " must be distinct and in range");
  for (auto [l, r] : llvm::zip(lhsUsed, rhsUsed))
    if (lhs.getDimSize(l) != rhs.getDimSize(r))
      return inferError(loc, "kiln.dot_general", "lhs dimension ", l, " of ",
                        lhs, " (size ", lhs.getDimSize(l),
                        ") does not match rhs dimension ", r, " of ", rhs,
                        " (size ", rhs.getDimSize(r), ")");
  SmallVector<int64_t> shape;
  for (int64_t d : lhsBatch)
    shape.push_back(lhs.getDimSize(d));
  for (int64_t d = 0; d < lhs.getRank(); ++d)
    if (!llvm::is_contained(lhsUsed, d))
      shape.push_back(lhs.getDimSize(d));
  for (int64_t d = 0; d < rhs.getRank(); ++d)
    if (!llvm::is_contained(rhsUsed, d))
      shape.push_back(rhs.getDimSize(d));
  results.push_back(lhs.clone(shape));
  return success();
}

bool DotGeneralOp::isCompatibleReturnTypes(TypeRange inferred,
                                           TypeRange actual) {
  if (inferred == actual)
    return true;
  if (inferred.size() != 1 || actual.size() != 1)
    return false;
  auto want = dyn_cast<RankedTensorType>(inferred.front());
  auto have = dyn_cast<RankedTensorType>(actual.front());
  // 16-bit float operands may produce an f32 result (mixed precision).
  return want && have && want.getShape() == have.getShape() &&
         (want.getElementType().isBF16() || want.getElementType().isF16()) &&
         have.getElementType().isF32();
}

/// operand[:axis] ++ indices ++ operand[axis+1:]: the gathered (and scattered)
/// shape.
static FailureOr<RankedTensorType>
gatheredType(std::optional<Location> loc, StringRef opName,
             RankedTensorType operand, RankedTensorType indices, int64_t axis) {
  if (axis < 0 || axis >= operand.getRank())
    return inferError(loc, opName, "axis ", axis, " is out of range for ",
                      operand);
  SmallVector<int64_t> shape(operand.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, operand.getShape().drop_front(axis + 1));
  auto result = operand.clone(shape);
  std::string problem = checkTensorSize(result);
  if (!problem.empty())
    return inferError(loc, opName, problem);
  return result;
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto operand = cast<RankedTensorType>(adaptor.getOperand().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  FailureOr<RankedTensorType> type =
      gatheredType(loc, "kiln.gather", operand, indices, adaptor.getAxis());
  if (failed(type))
    return failure();
  // Indices clamp into [0, n - 1]: with n = 0 there is no row to read.
  if (operand.getDimSize(adaptor.getAxis()) == 0 && type->getNumElements() != 0)
    return inferError(loc, "kiln.gather", "axis ", adaptor.getAxis(), " of ",
                      operand, " is empty, so indices ", indices,
                      " have nothing to gather");
  results.push_back(*type);
  return success();
}

LogicalResult ScatterAddOp::verify() {
  FailureOr<RankedTensorType> expected =
      gatheredType(getLoc(), "kiln.scatter_add", tensorType(getOperand()),
                   tensorType(getIndices()), getAxis());
  if (failed(expected))
    return failure();
  if (*expected != tensorType(getUpdates()))
    return emitOpError() << "updates must have type " << *expected
                         << " for operand " << getOperand().getType()
                         << " and indices " << getIndices().getType()
                         << ", got " << getUpdates().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Random numbers and constants
//===----------------------------------------------------------------------===//

LogicalResult RngUniformOp::verify() {
  if (tensorType(getState()).getDimSize(0) != 2)
    return emitOpError() << "state must be tensor<2xi64> ([key, counter]), got "
                         << getState().getType();
  return success();
}

LogicalResult OptimizationBarrierOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, adaptor.getOperands().getTypes());
  return success();
}

LogicalResult OptimizationBarrierOp::verify() {
  if (getGradientSeed() && getNumOperands() != 2)
    return emitOpError() << "a gradient seed barrier takes the seed and the "
                            "value it differentiates, got "
                         << getNumOperands() << " operands";
  return success();
}

LogicalResult AllReduceOp::verify() {
  // The transports sum these (MPI's float, double, int and long); a 16-bit
  // gradient is widened first, as the sum would round at every process.
  Type element = getType().getElementType();
  if (!element.isF32() && !element.isF64() && !element.isInteger(32) &&
      !element.isInteger(64))
    return emitOpError() << "sums f32, f64, i32 or i64 elements, not "
                         << element;
  return success();
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return inferError(loc, "kiln.constant", "value must be a ranked tensor");
  results.push_back(type);
  return success();
}

LogicalResult ConstantOp::verify() {
  // Backends read constants as dense<...> data; sparse and dense_resource
  // attributes would need a path of their own.
  if (!isa<DenseIntOrFPElementsAttr>(getValue()))
    return emitOpError() << "value must be a dense<...> attribute of ints or "
                            "floats, got "
                         << (isa<SparseElementsAttr>(getValue()) ? "sparse"
                             : isa<DenseResourceElementsAttr>(getValue())
                                 ? "dense_resource"
                                 : "another")
                         << " elements attribute";
  return success();
}

ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  ElementsAttr value;
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseAttribute(value))
    return failure();
  result.addAttribute(getValueAttrName(result.name), value);
  result.addTypes(value.getType());
  return success();
}

void ConstantOp::print(OpAsmPrinter &printer) {
  printer.printOptionalAttrDict((*this)->getAttrs(), {getValueAttrName()});
  printer << ' ' << getValue();
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError() << "body arguments must match the inputs' types";
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end in kiln.yield";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "kiln.yield types must match the fusion's "
                            "result types";
  return success();
}

#define GET_OP_CLASSES
#include "ir/KilnOps.cpp.inc"
#include "ir/KilnEnums.cpp.inc"
