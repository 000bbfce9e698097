// Kernels whose output elements each read many input elements (reduce, the
// loop form of dot_general), read through an index tensor (gather), write
// many places (scatter_add), or carry state (rng_uniform). Float sums and
// products accumulate in double and round once, as the spec does, with the
// `reassoc` flag on the accumulating op so LLVM vectorises the loop (the
// spec fixes the precision, not the order); integer ones in i64, which wraps
// to the same low bits. The accumulator helpers are shared with fusion
// kernels (FusionEmitter.cpp).
#include "compiler/cpu/KernelEmitter.h"
#include "compiler/cpu/ScalarOps.h"

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <limits>

namespace kiln::compiler::cpu::detail {

using namespace mlir;

namespace {

/// The accumulator type of a sum or product over elements of `elem`.
Type wideType(OpBuilder &b, Type elem) {
  return isa<FloatType>(elem) ? Type(b.getF64Type()) : Type(b.getI64Type());
}

/// A compute-type scalar → the accumulator type.
Value widen(KernelBuilder &kb, Value v, Type wide) {
  if (v.getType() == wide)
    return v;
  if (isa<FloatType>(wide))
    return arith::ExtFOp::create(kb.b, wide, v);
  return arith::ExtSIOp::create(kb.b, wide, v);
}

/// An accumulator → the compute type of storage type `elem`, rounded once.
Value narrow(KernelBuilder &kb, Value acc, Type elem) {
  return emitConvert(kb, acc, acc.getType(), elem);
}

Value combine(KernelBuilder &kb, ReduceKind kind, Value acc, Value x) {
  auto &b = kb.b;
  bool isFloat = isa<FloatType>(acc.getType());
  // Only the order of a float sum or product may change (see accumulate).
  auto reassoc = arith::FastMathFlagsAttr::get(b.getContext(),
                                               arith::FastMathFlags::reassoc);
  switch (kind) {
  case ReduceKind::sum:
    return isFloat ? arith::AddFOp::create(b, acc, x, reassoc).getResult()
                   : arith::AddIOp::create(b, acc, x).getResult();
  case ReduceKind::prod:
    return isFloat ? arith::MulFOp::create(b, acc, x, reassoc).getResult()
                   : arith::MulIOp::create(b, acc, x).getResult();
  case ReduceKind::max:
    return isFloat ? arith::MaximumFOp::create(b, acc, x).getResult()
                   : arith::MaxSIOp::create(b, acc, x).getResult();
  case ReduceKind::min:
    return isFloat ? arith::MinimumFOp::create(b, acc, x).getResult()
                   : arith::MinSIOp::create(b, acc, x).getResult();
  }
  return {};
}

/// Picks the entries of `values` at `positions`.
SmallVector<int64_t> pick(ArrayRef<int64_t> values,
                          ArrayRef<int64_t> positions) {
  SmallVector<int64_t> out;
  for (int64_t p : positions)
    out.push_back(values[p]);
  return out;
}

/// The dimensions of a rank-`rank` shape not in `used`, in order.
SmallVector<int64_t> remainingDims(int64_t rank, ArrayRef<int64_t> used) {
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(used, d))
      out.push_back(d);
  return out;
}

} // namespace

Type accumulatorType(OpBuilder &b, ReduceKind kind, Type elem) {
  if (kind == ReduceKind::sum || kind == ReduceKind::prod)
    return wideType(b, elem);
  return computeType(elem);
}

Value reductionInit(KernelBuilder &kb, ReduceKind kind, Type accType) {
  bool isFloat = isa<FloatType>(accType);
  unsigned width = accType.getIntOrFloatBitWidth();
  double inf = std::numeric_limits<double>::infinity();
  auto intLimit = [&](bool max) -> Value {
    APInt v =
        max ? APInt::getSignedMaxValue(width) : APInt::getSignedMinValue(width);
    return arith::ConstantOp::create(kb.b, kb.b.getIntegerAttr(accType, v));
  };
  switch (kind) {
  case ReduceKind::sum:
    return kb.constant(accType, 0);
  case ReduceKind::prod:
    return kb.constant(accType, 1);
  case ReduceKind::max:
    return isFloat ? kb.constant(accType, -inf) : intLimit(false);
  case ReduceKind::min:
    return isFloat ? kb.constant(accType, inf) : intLimit(true);
  }
  return {};
}

Value accumulate(KernelBuilder &kb, ReduceKind kind, Value acc, Value x) {
  return combine(kb, kind, acc, widen(kb, x, acc.getType()));
}

Value finishReduction(KernelBuilder &kb, Value acc, Type elem) {
  if (acc.getType() == computeType(elem))
    return acc;
  return narrow(kb, acc, elem);
}

std::optional<ColumnSplit> outerReduction(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> reducedDims) {
  ColumnSplit split;
  bool seenKept = false;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (shape[d] == 1)
      continue;
    if (llvm::is_contained(reducedDims, d)) {
      if (seenKept)
        return std::nullopt; // a reduced dim inside a kept one
      split.rows *= shape[d];
    } else {
      seenKept = true;
      split.columns *= shape[d];
    }
  }
  if (split.rows == 1 || split.columns == 1)
    return std::nullopt;
  return split;
}

namespace {

/// A reduce over the outer dims of its operand, viewed as [R, C] summed
/// over R: each call walks its range of columns in chunks of
/// kColumnChunk, reduced rows outer and the chunk's columns inner, with the
/// partial results in a stack array, so every row read is contiguous (and
/// vectorised) instead of one strided column walk per output element.
/// Each column still adds its rows in row-major order, as the reference.
void emitColumnReduce(KernelBuilder &kb, Value b, Value e, ReduceKind kind,
                      Type elem, ColumnSplit split) {
  Type accType = accumulatorType(kb.b, kind, elem);
  Value acc = kb.stackArray(accType, kColumnChunk);
  kb.forChunks(b, e, kColumnChunk, [&](Value c0, Value w) {
    Value zero = kb.index(0);
    kb.forLoop(zero, w, {}, [&](Value j, ValueRange) {
      kb.storeAt(acc, j, reductionInit(kb, kind, accType));
      return SmallVector<Value>{};
    });
    kb.forLoop(zero, kb.index(split.rows), {}, [&](Value r, ValueRange) {
      Value base = arith::AddIOp::create(
          kb.b, arith::MulIOp::create(kb.b, r, kb.index(split.columns)), c0);
      kb.forLoop(zero, w, {}, [&](Value j, ValueRange) {
        Value x = kb.load(0, elem, arith::AddIOp::create(kb.b, base, j));
        kb.storeAt(acc, j, accumulate(kb, kind, kb.loadAt(acc, accType, j), x));
        return SmallVector<Value>{};
      });
      return SmallVector<Value>{};
    });
    kb.forLoop(zero, w, {}, [&](Value j, ValueRange) {
      Value total = kb.loadAt(acc, accType, j);
      kb.store(1, elem, arith::AddIOp::create(kb.b, c0, j),
               finishReduction(kb, total, elem));
      return SmallVector<Value>{};
    });
  });
}

} // namespace

FailureOr<KernelInfo> emitReduce(Operation *op, ModuleOp module,
                                 StringRef name) {
  auto reduce = cast<ReduceOp>(op);
  Value operand = reduce.getOperand(), result = reduce.getResult();
  ArrayRef<int64_t> shape = shapeOf(operand);
  SmallVector<int64_t> strides = rowMajorStrides(shape);
  SmallVector<int64_t> dims(reduce.getDimensions());
  // Row-major order over the reduced dimensions, as the reference sums.
  llvm::sort(dims);
  SmallVector<int64_t> kept = remainingDims(shape.size(), dims);
  ReduceKind kind = reduce.getKind();
  Type elem = elementOf(operand);
  if (std::optional<ColumnSplit> split = outerReduction(shape, dims)) {
    // The accumulators live in memory across the row loop: no parallel
    // loop annotation (it would claim the row loop carries nothing).
    buildKernel(
        module, name, 2,
        [&](KernelBuilder &kb, Value b, Value e) {
          emitColumnReduce(kb, b, e, kind, elem, *split);
        },
        /*parallel=*/false);
    return KernelInfo{numElementsOf(result), true, split->rows};
  }
  buildKernel(module, name, 2, [&](KernelBuilder &kb, Value b, Value e) {
    Type accType = accumulatorType(kb.b, kind, elem);
    kb.forLoop(b, e, {}, [&](Value i, ValueRange) {
      SmallVector<Value> outIdx = kb.delinearize(i, shapeOf(result));
      Value base = kb.linearize(outIdx, pick(strides, kept));
      Value init = reductionInit(kb, kind, accType);
      SmallVector<Value> acc = kb.nestedLoops(
          pick(shape, dims), ValueRange{init},
          [&](ArrayRef<Value> ivs, ValueRange carried) -> SmallVector<Value> {
            Value off = kb.linearize(ivs, pick(strides, dims), base);
            return {accumulate(kb, kind, carried[0], kb.load(0, elem, off))};
          });
      // With no reduced dimension the "loop nest" runs its body once.
      kb.store(1, elementOf(result), i, finishReduction(kb, acc[0], elem));
      return SmallVector<Value>{};
    });
  });
  return KernelInfo{numElementsOf(result), true,
                    computeProduct(pick(shape, dims))};
}

FailureOr<KernelInfo> emitDotGeneral(Operation *op, ModuleOp module,
                                     StringRef name) {
  auto dot = cast<DotGeneralOp>(op);
  Value lhs = dot.getLhs(), rhs = dot.getRhs(), result = dot.getResult();
  ArrayRef<int64_t> ls = shapeOf(lhs), rs = shapeOf(rhs);
  SmallVector<int64_t> lStr = rowMajorStrides(ls), rStr = rowMajorStrides(rs);
  SmallVector<int64_t> lb(dot.getLhsBatchingDimensions());
  SmallVector<int64_t> rb(dot.getRhsBatchingDimensions());
  SmallVector<int64_t> lc(dot.getLhsContractingDimensions());
  SmallVector<int64_t> rc(dot.getRhsContractingDimensions());
  SmallVector<int64_t> lUsed(lb), rUsed(rb);
  lUsed.append(lc);
  rUsed.append(rc);
  SmallVector<int64_t> lFree = remainingDims(ls.size(), lUsed);
  SmallVector<int64_t> rFree = remainingDims(rs.size(), rUsed);
  // Result index k → a stride in lhs and in rhs (zero where it is absent).
  SmallVector<int64_t> lOut, rOut;
  for (size_t k = 0; k < lb.size(); ++k) {
    lOut.push_back(lStr[lb[k]]);
    rOut.push_back(rStr[rb[k]]);
  }
  for (int64_t d : lFree) {
    lOut.push_back(lStr[d]);
    rOut.push_back(0);
  }
  for (int64_t d : rFree) {
    lOut.push_back(0);
    rOut.push_back(rStr[d]);
  }
  Type lElem = elementOf(lhs), rElem = elementOf(rhs);
  Type resElem = elementOf(result);
  buildKernel(module, name, 3, [&](KernelBuilder &kb, Value b, Value e) {
    Type accType = wideType(kb.b, resElem);
    kb.forLoop(b, e, {}, [&](Value i, ValueRange) {
      SmallVector<Value> outIdx = kb.delinearize(i, shapeOf(result));
      Value lBase = kb.linearize(outIdx, lOut);
      Value rBase = kb.linearize(outIdx, rOut);
      Value zero = kb.constant(accType, 0);
      auto step = [&](ArrayRef<Value> ivs, Value acc) {
        Value lo = kb.linearize(ivs, pick(lStr, lc), lBase);
        Value ro = kb.linearize(ivs, pick(rStr, rc), rBase);
        Value x = widen(kb, kb.load(0, lElem, lo), accType);
        Value y = widen(kb, kb.load(1, rElem, ro), accType);
        bool isFloat = isa<FloatType>(accType);
        Value p = isFloat ? arith::MulFOp::create(kb.b, x, y).getResult()
                          : arith::MulIOp::create(kb.b, x, y).getResult();
        return combine(kb, ReduceKind::sum, acc, p);
      };
      Value total =
          kb.nestedLoops(pick(ls, lc), ValueRange{zero},
                         [&](ArrayRef<Value> ivs, ValueRange carried) {
                           return SmallVector<Value>{step(ivs, carried[0])};
                         })[0];
      kb.store(2, resElem, i, narrow(kb, total, resElem));
      return SmallVector<Value>{};
    });
  });
  return KernelInfo{numElementsOf(result), true, computeProduct(pick(ls, lc))};
}

namespace {

/// The position along `axis` an index element names, as i64.
Value loadIndex(KernelBuilder &kb, Value indices, Value flat) {
  Value idx = kb.load(1, elementOf(indices), flat);
  if (!idx.getType().isInteger(64))
    idx = arith::ExtSIOp::create(kb.b, kb.b.getI64Type(), idx);
  return idx;
}

/// For an index space shaped operand[:axis] ++ indices ++ operand[axis+1:]:
/// flat index → (flat index into `indices`, the operand offset as a function
/// of the chosen position along axis).
struct AxisSplit {
  Value indicesFlat;
  Value outerOffset; // operand offset with position 0 along axis
  int64_t axisStride;
};

AxisSplit splitAxis(KernelBuilder &kb, Value flat, ArrayRef<int64_t> operand,
                    ArrayRef<int64_t> indices, int64_t axis) {
  SmallVector<int64_t> space(operand.begin(), operand.begin() + axis);
  space.append(indices.begin(), indices.end());
  space.append(operand.begin() + axis + 1, operand.end());
  SmallVector<Value> idx = kb.delinearize(flat, space);
  SmallVector<int64_t> oStr = rowMajorStrides(operand);
  SmallVector<int64_t> iStr = rowMajorStrides(indices);
  int64_t r = indices.size();
  SmallVector<Value> outer, inner;
  SmallVector<int64_t> outerStr;
  for (int64_t k = 0; k < axis; ++k) {
    outer.push_back(idx[k]);
    outerStr.push_back(oStr[k]);
  }
  for (int64_t k = 0; k < r; ++k)
    inner.push_back(idx[axis + k]);
  for (size_t k = axis + 1; k < operand.size(); ++k) {
    outer.push_back(idx[k - 1 + r]);
    outerStr.push_back(oStr[k]);
  }
  return {kb.linearize(inner, iStr), kb.linearize(outer, outerStr), oStr[axis]};
}

/// Where update `u` of a scatter_add lands in its result: the flat offset,
/// and whether its index is inside the operand (out-of-range updates are
/// dropped, as the reference does).
struct ScatterTarget {
  Value offset, valid;
};

ScatterTarget scatterTarget(KernelBuilder &kb, ScatterAddOp scatter, Value u) {
  Value operand = scatter.getOperand(), indices = scatter.getIndices();
  int64_t axis = scatter.getAxis();
  AxisSplit s = splitAxis(kb, u, shapeOf(operand), shapeOf(indices), axis);
  Value pos = loadIndex(kb, indices, s.indicesFlat);
  Value valid = arith::CmpIOp::create(kb.b, arith::CmpIPredicate::ult, pos,
                                      kb.index(shapeOf(operand)[axis]));
  return {kb.linearize({pos}, {s.axisStride}, s.outerOffset), valid};
}

} // namespace

FailureOr<KernelInfo> emitGather(Operation *op, ModuleOp module,
                                 StringRef name) {
  auto gather = cast<GatherOp>(op);
  Value operand = gather.getOperand(), indices = gather.getIndices();
  Value result = gather.getResult();
  int64_t axis = gather.getAxis();
  int64_t n = shapeOf(operand)[axis];
  buildKernel(module, name, 3, [&](KernelBuilder &kb, Value b, Value e) {
    kb.forLoop(b, e, {}, [&](Value i, ValueRange) {
      AxisSplit s = splitAxis(kb, i, shapeOf(operand), shapeOf(indices), axis);
      Value pos = loadIndex(kb, indices, s.indicesFlat);
      pos = arith::MaxSIOp::create(kb.b, pos, kb.index(0));
      pos = arith::MinSIOp::create(kb.b, pos,
                                   kb.index(std::max<int64_t>(n - 1, 0)));
      Value off = kb.linearize({pos}, {s.axisStride}, s.outerOffset);
      kb.store(2, elementOf(result), i, kb.load(0, elementOf(operand), off));
      return SmallVector<Value>{};
    });
  });
  return KernelInfo{numElementsOf(result), true};
}

FailureOr<KernelInfo> emitScatterAdd(Operation *op, ModuleOp module,
                                     StringRef name) {
  auto scatter = cast<ScatterAddOp>(op);
  Value updates = scatter.getUpdates(), result = scatter.getResult();
  Type elem = elementOf(scatter.getOperand());
  // The range partitions the result: each call copies its part of the
  // operand, then scans every update and adds those landing in its part, so
  // ranges can run on different threads without atomics.
  buildKernel(
      module, name, 4,
      [&](KernelBuilder &kb, Value b, Value e) {
        kb.forLoop(b, e, {}, [&](Value i, ValueRange) {
          kb.store(3, elem, i, kb.load(0, elem, i));
          return SmallVector<Value>{};
        });
        kb.forLoop(
            kb.index(0), kb.index(numElementsOf(updates)), {},
            [&](Value u, ValueRange) {
              ScatterTarget t = scatterTarget(kb, scatter, u);
              Value mine = arith::AndIOp::create(
                  kb.b,
                  arith::CmpIOp::create(kb.b, arith::CmpIPredicate::sge,
                                        t.offset, b),
                  arith::CmpIOp::create(kb.b, arith::CmpIPredicate::slt,
                                        t.offset, e));
              auto ifOp = scf::IfOp::create(
                  kb.b, TypeRange{}, arith::AndIOp::create(kb.b, t.valid, mine),
                  false);
              OpBuilder::InsertionGuard guard(kb.b);
              kb.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
              Value sum = combine(kb, ReduceKind::sum, kb.load(3, elem, t.offset),
                                  kb.load(2, elem, u));
              kb.store(3, elem, t.offset, sum);
              return SmallVector<Value>{};
            });
      },
      /*parallel=*/false); // updates may hit one element twice
  return KernelInfo{numElementsOf(result), true};
}

bool hasAtomicScatterAdd(ScatterAddOp scatter) {
  Type elem = elementOf(scatter.getOperand());
  return elem.isF32() || elem.isF64() || elem.isInteger(32) ||
         elem.isInteger(64);
}

FailureOr<KernelInfo> emitAtomicScatterAdd(Operation *op, ModuleOp module,
                                           StringRef name) {
  auto scatter = cast<ScatterAddOp>(op);
  Value updates = scatter.getUpdates();
  Type elem = elementOf(scatter.getOperand());
  if (!hasAtomicScatterAdd(scatter))
    return failure();
  LLVM::AtomicBinOp add =
      isa<FloatType>(elem) ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  buildKernel(
      module, name, 4,
      [&](KernelBuilder &kb, Value b, Value e) {
        kb.forLoop(b, e, {}, [&](Value u, ValueRange) {
          ScatterTarget t = scatterTarget(kb, scatter, u);
          auto ifOp = scf::IfOp::create(kb.b, TypeRange{}, t.valid, false);
          OpBuilder::InsertionGuard guard(kb.b);
          kb.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          LLVM::AtomicRMWOp::create(kb.b, add, kb.address(3, elem, t.offset),
                                    kb.load(2, elem, u),
                                    LLVM::AtomicOrdering::monotonic);
          return SmallVector<Value>{};
        });
      },
      /*parallel=*/false); // updates may hit one element twice
  return KernelInfo{numElementsOf(updates), true};
}

namespace {

/// Philox-4x32-10 on (x0, x1, 0, 0) under key (k0, k1): the four lanes.
SmallVector<Value> philox(KernelBuilder &kb, Value x0, Value x1, Value k0,
                          Value k1) {
  auto &b = kb.b;
  Type i32 = b.getI32Type();
  Value m0 = kb.intConstant(i32, 0xD2511F53),
        m1 = kb.intConstant(i32, 0xCD9E8D57);
  Value bump0 = kb.intConstant(i32, 0x9E3779B9);
  Value bump1 = kb.intConstant(i32, 0xBB67AE85);
  Value x[4] = {x0, x1, kb.intConstant(i32, 0), kb.intConstant(i32, 0)};
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 = arith::AddIOp::create(b, k0, bump0);
      k1 = arith::AddIOp::create(b, k1, bump1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, m0, x[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, m1, x[2]);
    Value n0 = arith::XOrIOp::create(
        b, arith::XOrIOp::create(b, p1.getHigh(), x[1]), k0);
    Value n2 = arith::XOrIOp::create(
        b, arith::XOrIOp::create(b, p0.getHigh(), x[3]), k1);
    x[0] = n0;
    x[1] = p1.getLow();
    x[2] = n2;
    x[3] = p0.getLow();
  }
  return {x[0], x[1], x[2], x[3]};
}

} // namespace

SmallVector<Value> philoxGroup(KernelBuilder &kb, Value key, Value counter,
                               Value group) {
  auto &ob = kb.b;
  Type i32 = ob.getI32Type();
  Value c32 = kb.index(32);
  Value k0 = arith::TruncIOp::create(ob, i32, key);
  Value k1 =
      arith::TruncIOp::create(ob, i32, arith::ShRUIOp::create(ob, key, c32));
  Value c = arith::AddIOp::create(ob, counter, group);
  Value x0 = arith::TruncIOp::create(ob, i32, c);
  Value x1 =
      arith::TruncIOp::create(ob, i32, arith::ShRUIOp::create(ob, c, c32));
  return philox(kb, x0, x1, k0, k1);
}

Value uniformFromLanes(KernelBuilder &kb, ArrayRef<Value> lanes, Value lane,
                       Type elem) {
  auto &ob = kb.b;
  Type i32 = ob.getI32Type();
  int width = elem.isF64() ? 32 : elem.isF32() ? 24 : elem.isF16() ? 11 : 8;
  Value u = lanes[3];
  for (int l = 2; l >= 0; --l) {
    Value is =
        arith::CmpIOp::create(ob, arith::CmpIPredicate::eq, lane, kb.index(l));
    u = arith::SelectOp::create(ob, is, lanes[l], u);
  }
  Value bits = arith::ShRUIOp::create(ob, u, kb.intConstant(i32, 32 - width));
  Type ct = computeType(elem);
  Value f = arith::UIToFPOp::create(ob, ct, bits);
  Value scale = kb.constant(ct, std::ldexp(1.0, -width));
  return arith::MulFOp::create(ob, f, scale);
}

Value philoxUniform(KernelBuilder &kb, Value key, Value counter, Value i,
                    Type elem) {
  Value group = arith::ShRUIOp::create(kb.b, i, kb.index(2));
  Value lane = arith::AndIOp::create(kb.b, i, kb.index(3));
  return uniformFromLanes(kb, philoxGroup(kb, key, counter, group), lane,
                          elem);
}

Value rngNewState(KernelBuilder &kb, Value key, Value counter, Value i,
                  int64_t n) {
  Value advanced = arith::AddIOp::create(kb.b, counter, kb.index((n + 3) / 4));
  Value isKey =
      arith::CmpIOp::create(kb.b, arith::CmpIPredicate::eq, i, kb.index(0));
  return arith::SelectOp::create(kb.b, isKey, key, advanced);
}

FailureOr<KernelInfo> emitRngUniform(Operation *op, ModuleOp module,
                                     StringRef name) {
  auto rng = cast<RngUniformOp>(op);
  Value result = rng.getResult();
  Type elem = elementOf(result);
  int64_t n = numElementsOf(result);
  buildKernel(module, name, 3, [&](KernelBuilder &kb, Value b, Value e) {
    auto &ob = kb.b;
    Type i64 = ob.getI64Type();
    Value key = kb.load(0, i64, kb.index(0));
    Value counter = kb.load(0, i64, kb.index(1));
    kb.forLoop(b, e, {}, [&](Value i, ValueRange) {
      kb.store(1, elem, i, philoxUniform(kb, key, counter, i, elem));
      return SmallVector<Value>{};
    });
    // The first range writes the advanced state (also when n == 0).
    Value first =
        arith::CmpIOp::create(ob, arith::CmpIPredicate::eq, b, kb.index(0));
    auto ifOp = scf::IfOp::create(ob, TypeRange{}, first, false);
    OpBuilder::InsertionGuard guard(ob);
    ob.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (int64_t k = 0; k < 2; ++k)
      kb.store(2, i64, kb.index(k),
               rngNewState(kb, key, counter, kb.index(k), n));
  });
  return KernelInfo{n, true, 32};
}

} // namespace kiln::compiler::cpu::detail
