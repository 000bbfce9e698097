// kiln-simplify: the dialect's folders and canonicalization patterns plus
// algebraic rewrites that are exact under docs/IR.md: lossless convert
// chains, transposes folded into dot_general's dimension numbers (of an
// operand) or its operand order (of the result), reduces
// of broadcasts over exactly the broadcast dimensions, and neg(neg(x)).
// One pattern struct per rewrite; the greedy driver applies them.
#include "passes/Passes.h"

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_SIMPLIFYPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

/// True when every value of `from` converts to `to` exactly, so a later
/// convert out of `to` sees the original value.
bool isLosslessConversion(Type from, Type to) {
  if (from == to || from.isInteger(1))
    return true;
  if (from.isInteger(32))
    return to.isInteger(64) || to.isF64();
  if (from.isF16() || from.isBF16())
    return to.isF32() || to.isF64();
  if (from.isF32())
    return to.isF64();
  return false;
}

/// convert(convert(x, A→B), B→C) → convert(x, A→C), or x when A = C,
/// when A→B is lossless (f32→f64→f32 is x; f32→f16→f32 rounds and stays).
struct FoldLosslessConvertChain : OpRewritePattern<ConvertOp> {
  FoldLosslessConvertChain(MLIRContext *context, Pass::Statistic &counter)
      : OpRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getOperand().getDefiningOp<ConvertOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "operand is not a convert");
    Value source = inner.getOperand();
    if (!isLosslessConversion(elementTypeOf(source), elementTypeOf(inner)))
      return rewriter.notifyMatchFailure(op, "inner convert rounds");
    if (source.getType() == op.getType())
      rewriter.replaceOp(op, source);
    else
      rewriter.replaceOpWithNewOp<ConvertOp>(op, op.getType(), source);
    ++counter;
    return success();
  }

  Pass::Statistic &counter;
};

/// Dimension numbers of one dot_general operand, rewritten through the
/// transpose that produced it; fails when its free dimensions would change
/// order (the result lists them in ascending order).
struct OperandDims {
  SmallVector<int64_t> batch, contract;
};

FailureOr<OperandDims> throughTranspose(ArrayRef<int64_t> perm,
                                        ArrayRef<int64_t> batch,
                                        ArrayRef<int64_t> contract) {
  OperandDims dims;
  for (int64_t d : batch)
    dims.batch.push_back(perm[d]);
  for (int64_t d : contract)
    dims.contract.push_back(perm[d]);
  int64_t previous = -1;
  for (int64_t d = 0, e = perm.size(); d < e; ++d) {
    if (llvm::is_contained(batch, d) || llvm::is_contained(contract, d))
      continue;
    if (perm[d] < previous)
      return failure();
    previous = perm[d];
  }
  return dims;
}

/// dot_general(transpose(x, p), y) → dot_general(x, y) with p folded into
/// the dimension numbers (either operand).
struct FoldTransposeIntoDotGeneral : OpRewritePattern<DotGeneralOp> {
  FoldTransposeIntoDotGeneral(MLIRContext *context, Pass::Statistic &counter)
      : OpRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(DotGeneralOp op,
                                PatternRewriter &rewriter) const override {
    Value lhs = op.getLhs(), rhs = op.getRhs();
    OperandDims lhsDims{llvm::to_vector(op.getLhsBatchingDimensions()),
                        llvm::to_vector(op.getLhsContractingDimensions())};
    OperandDims rhsDims{llvm::to_vector(op.getRhsBatchingDimensions()),
                        llvm::to_vector(op.getRhsContractingDimensions())};
    bool changed = false;
    auto absorb = [&](Value &operand, OperandDims &dims) {
      auto transpose = operand.getDefiningOp<TransposeOp>();
      if (!transpose)
        return;
      FailureOr<OperandDims> folded = throughTranspose(
          transpose.getPermutation(), dims.batch, dims.contract);
      if (failed(folded))
        return;
      operand = transpose.getOperand();
      dims = *folded;
      changed = true;
    };
    absorb(lhs, lhsDims);
    absorb(rhs, rhsDims);
    if (!changed)
      return rewriter.notifyMatchFailure(
          op, "no transposed operand whose free dimensions keep their order");
    rewriter.replaceOpWithNewOp<DotGeneralOp>(
        op, op.getType(), lhs, rhs, lhsDims.batch, rhsDims.batch,
        lhsDims.contract, rhsDims.contract);
    ++counter;
    return success();
  }

  Pass::Statistic &counter;
};

/// transpose(dot_general(x, y)) whose permutation keeps the batch dimensions
/// and swaps x's free dimensions with y's (each group in order) →
/// dot_general(y, x): the same products summed in the same order, written
/// in the transposed layout directly (a weight gradient xᵀ·dy read back as
/// dyᵀ·x, without a transposing kernel). Only when the transpose is the
/// product's one reader, so nothing is computed twice.
struct SwapDotGeneralOperandsForTranspose : OpRewritePattern<TransposeOp> {
  SwapDotGeneralOperandsForTranspose(MLIRContext *context,
                                     Pass::Statistic &counter)
      : OpRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto dot = op.getOperand().getDefiningOp<DotGeneralOp>();
    if (!dot || !dot->hasOneUse())
      return rewriter.notifyMatchFailure(op, "not the one reader of a product");
    auto rank = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank();
    };
    int64_t batch = dot.getLhsBatchingDimensions().size();
    int64_t lhsFree = rank(dot.getLhs()) - batch -
                      int64_t(dot.getLhsContractingDimensions().size());
    int64_t rhsFree = rank(dot.getRhs()) - batch -
                      int64_t(dot.getRhsContractingDimensions().size());
    // The result is [batch, lhs free, rhs free]; the swapped product's is
    // [batch, rhs free, lhs free].
    SmallVector<int64_t> swapped;
    for (int64_t d = 0; d < batch; ++d)
      swapped.push_back(d);
    for (int64_t d = 0; d < rhsFree; ++d)
      swapped.push_back(batch + lhsFree + d);
    for (int64_t d = 0; d < lhsFree; ++d)
      swapped.push_back(batch + d);
    if (lhsFree == 0 || rhsFree == 0 ||
        ArrayRef<int64_t>(swapped) != op.getPermutation())
      return rewriter.notifyMatchFailure(
          op, "the permutation does not swap the two operands' free dims");
    rewriter.replaceOpWithNewOp<DotGeneralOp>(
        op, op.getType(), dot.getRhs(), dot.getLhs(),
        dot.getRhsBatchingDimensions(), dot.getLhsBatchingDimensions(),
        dot.getRhsContractingDimensions(), dot.getLhsContractingDimensions());
    ++counter;
    return success();
  }

  Pass::Statistic &counter;
};

/// Whether x·count equals the reference's sum of `count` copies of x: the
/// count must be exact in the element type, and the double accumulation
/// exact too (an f32 has 24 significant bits, so below 2^29 copies; an f64
/// sum of copies rounds, so f64 is left alone).
bool isExactCount(Type type, int64_t count) {
  if (isa<IntegerType>(type))
    return true;
  auto floatType = dyn_cast<FloatType>(type);
  if (!floatType || type.isF64() || count >= (int64_t{1} << 29))
    return false;
  APFloat value(floatType.getFloatSemantics());
  return value.convertFromAPInt(APInt(64, count), /*IsSigned=*/false,
                                APFloat::rmNearestTiesToEven) ==
         APFloat::opOK;
}

Value splatConstant(PatternRewriter &rewriter, Location loc,
                    RankedTensorType type, double floatValue,
                    int64_t intValue) {
  Type element = type.getElementType();
  Attribute value =
      isa<FloatType>(element)
          ? Attribute(rewriter.getFloatAttr(element, floatValue))
          : Attribute(rewriter.getIntegerAttr(element, intValue));
  return ConstantOp::create(rewriter, loc,
                            DenseElementsAttr::get(type, value));
}

/// reduce(broadcast_in_dim(x), dims = exactly the new dimensions):
/// max/min → x; sum → x·n (+0.0 for floats: a sum starts at +0.0, so n
/// copies of -0.0 sum to +0.0).
struct SimplifyReduceOfBroadcast : OpRewritePattern<ReduceOp> {
  SimplifyReduceOfBroadcast(MLIRContext *context, Pass::Statistic &counter)
      : OpRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto broadcast = op.getOperand().getDefiningOp<BroadcastInDimOp>();
    if (!broadcast)
      return rewriter.notifyMatchFailure(op, "operand is not a broadcast");
    Value x = broadcast.getOperand();
    auto xType = cast<RankedTensorType>(x.getType());
    ArrayRef<int64_t> shape = broadcast.getType().getShape();
    ArrayRef<int64_t> kept = broadcast.getBroadcastDimensions();
    for (auto [i, d] : llvm::enumerate(kept))
      if (xType.getDimSize(i) != shape[d])
        return rewriter.notifyMatchFailure(op, "broadcast expands a dim");
    int64_t count = 1;
    SmallVector<int64_t> added;
    for (int64_t d = 0, e = shape.size(); d < e; ++d)
      if (!llvm::is_contained(kept, d)) {
        added.push_back(d);
        count *= shape[d];
      }
    SmallVector<int64_t> reduced = llvm::to_vector(op.getDimensions());
    llvm::sort(reduced);
    if (reduced != added || count == 0 || op.getType() != xType)
      return rewriter.notifyMatchFailure(
          op, "reduced dims are not exactly the broadcast's new dims");
    switch (op.getKind()) {
    case ReduceKind::max:
    case ReduceKind::min:
      rewriter.replaceOp(op, x);
      break;
    case ReduceKind::sum: {
      Type element = xType.getElementType();
      if (!isExactCount(element, count))
        return rewriter.notifyMatchFailure(op, "count is not exact");
      Location loc = op.getLoc();
      Value n = splatConstant(rewriter, loc, xType, count, count);
      Value product = MulOp::create(rewriter, loc, x, n);
      if (isa<FloatType>(element))
        product = AddOp::create(rewriter, loc, product,
                                splatConstant(rewriter, loc, xType, 0.0, 0));
      rewriter.replaceOp(op, product);
      break;
    }
    case ReduceKind::prod:
      return rewriter.notifyMatchFailure(op, "prod is not simplified");
    }
    ++counter;
    return success();
  }

  Pass::Statistic &counter;
};

/// neg(neg(x)) → x: exact for floats (two sign flips) and wrapping ints.
struct RemoveDoubleNegation : OpRewritePattern<NegOp> {
  RemoveDoubleNegation(MLIRContext *context, Pass::Statistic &counter)
      : OpRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(NegOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getOperand().getDefiningOp<NegOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "operand is not a neg");
    rewriter.replaceOp(op, inner.getOperand());
    ++counter;
    return success();
  }

  Pass::Statistic &counter;
};

struct SimplifyPass : impl::SimplifyPassBase<SimplifyPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    Dialect *kiln = context->getLoadedDialect<KilnDialect>();
    for (RegisteredOperationName name : context->getRegisteredOperations())
      if (&name.getDialect() == kiln)
        name.getCanonicalizationPatterns(patterns, context);
    patterns.add<FoldLosslessConvertChain>(context, numConvertChains);
    patterns.add<FoldTransposeIntoDotGeneral>(context, numTransposesIntoDot);
    patterns.add<SwapDotGeneralOperandsForTranspose>(context,
                                                     numTransposedProducts);
    patterns.add<SimplifyReduceOfBroadcast>(context, numBroadcastReduces);
    patterns.add<RemoveDoubleNegation>(context, numDoubleNegations);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("kiln-simplify did not converge");
      signalPassFailure();
    }
  }
};

} // namespace
} // namespace kiln
