// Scalar lowering of kiln's elementwise ops. f32 transcendentals stay math
// ops (expanded later by MLIR's polynomial approximations, which vectorise);
// f64 ones, and pow in every float type, call the C library in double, which
// is what the spec defines. Integer division, pow, neg and abs follow the
// spec's wrapping rules explicitly instead of LLVM's poison-on-overflow ones.
#include "compiler/cpu/ScalarOps.h"

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace kiln::compiler::cpu {

using namespace mlir;

namespace {

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// A call to the C library function `name` (double or float signature).
Value callLibm(KernelBuilder &kb, StringRef name, ValueRange args) {
  auto &b = kb.b;
  ModuleOp module = kb.module;
  Type type = args[0].getType();
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<Type> inputs(args.size(), type);
    callee = func::FuncOp::create(b, name, b.getFunctionType(inputs, {type}));
    callee.setPrivate();
  }
  return func::CallOp::create(b, callee, args).getResult(0);
}

/// A double-precision C library function applied to a float scalar, rounded
/// once back to its type.
Value viaDouble(KernelBuilder &kb, StringRef name, ValueRange args) {
  auto &b = kb.b;
  Type type = args[0].getType();
  SmallVector<Value> wide;
  for (Value a : args)
    wide.push_back(
        type.isF64() ? a
                     : arith::ExtFOp::create(b, b.getF64Type(), a).getResult());
  Value r = callLibm(kb, name, wide);
  return type.isF64() ? r : arith::TruncFOp::create(b, type, r).getResult();
}

/// A unary transcendental: a math op for f32 (approximated later), libm for
/// f64.
template <typename MathOp>
Value transcendental(KernelBuilder &kb, Value x, StringRef libmName) {
  if (x.getType().isF64())
    return callLibm(kb, libmName, {x});
  return MathOp::create(kb.b, x);
}

/// f32 log whose polynomial sees only normal numbers: MLIR's approximation
/// treats denormals as FLT_MIN, so they are scaled by 2^24 first and the
/// logarithm corrected by 24 ln 2.
Value logF32(KernelBuilder &kb, Value x) {
  auto &b = kb.b;
  Type t = x.getType();
  Value small = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x,
                                      kb.constant(t, 1.17549435e-38));
  Value scaled = arith::MulFOp::create(b, x, kb.constant(t, 16777216.0));
  Value l =
      math::LogOp::create(b, arith::SelectOp::create(b, small, scaled, x));
  Value corrected =
      arith::SubFOp::create(b, l, kb.constant(t, 24 * 0.69314718055994531));
  return arith::SelectOp::create(b, small, corrected, l);
}

Value intDiv(KernelBuilder &kb, Value a, Value bv) {
  auto &b = kb.b;
  Type t = a.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value zero = kb.intConstant(t, 0), one = kb.intConstant(t, 1);
  Value minusOne = kb.intConstant(t, -1);
  Value minValue = arith::ConstantOp::create(
      b, b.getIntegerAttr(t, APInt::getSignedMinValue(width)));
  Value byZero = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bv, zero);
  Value overflow = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, a, minValue),
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bv, minusOne));
  Value unsafe = arith::OrIOp::create(b, byZero, overflow);
  Value safe = arith::SelectOp::create(b, unsafe, one, bv);
  Value q = arith::DivSIOp::create(b, a, safe);
  q = arith::SelectOp::create(b, overflow, minValue, q);
  return arith::SelectOp::create(b, byZero, minusOne, q);
}

/// Integer power by squaring over every exponent bit (wrapping), with the
/// spec's rules for negative exponents.
Value intPow(KernelBuilder &kb, Value x, Value e) {
  auto &b = kb.b;
  Type t = x.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value zero = kb.intConstant(t, 0), one = kb.intConstant(t, 1);
  Value minusOne = kb.intConstant(t, -1);
  ValueRange loop = kb.forLoop(
      kb.index(0), kb.index(width), ValueRange{one, x},
      [&](Value bit, ValueRange carried) -> SmallVector<Value> {
        Value shift = t.isInteger(64)
                          ? bit
                          : arith::TruncIOp::create(b, t, bit).getResult();
        Value set = arith::CmpIOp::create(
            b, arith::CmpIPredicate::ne,
            arith::AndIOp::create(b, arith::ShRUIOp::create(b, e, shift), one),
            zero);
        Value product = arith::MulIOp::create(b, carried[0], carried[1]);
        Value r = arith::SelectOp::create(b, set, product, carried[0]);
        Value p = arith::MulIOp::create(b, carried[1], carried[1]);
        return {r, p};
      });
  Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                    arith::AndIOp::create(b, e, one), zero);
  Value negOneResult = arith::SelectOp::create(b, odd, minusOne, one);
  Value isOne = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, one);
  Value isMinusOne =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, minusOne);
  Value negative = arith::SelectOp::create(
      b, isOne, one,
      arith::SelectOp::create(b, isMinusOne, negOneResult, zero));
  Value negExp = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, e, zero);
  return arith::SelectOp::create(b, negExp, negative, loop[0]);
}

Value sign(KernelBuilder &kb, Value x) {
  auto &b = kb.b;
  Type t = x.getType();
  bool isFloat = isa<FloatType>(t);
  Value zero = kb.constant(t, 0);
  Value gt = isFloat
                 ? arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, zero)
                       .getResult()
                 : arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, x, zero)
                       .getResult();
  Value lt = isFloat
                 ? arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, zero)
                       .getResult()
                 : arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, zero)
                       .getResult();
  // Floats keep NaN and ±0 as they are; integers give 0.
  Value otherwise = isFloat ? x : zero;
  return arith::SelectOp::create(
      b, gt, kb.constant(t, 1),
      arith::SelectOp::create(b, lt, kb.constant(t, -1), otherwise));
}

Value compare(KernelBuilder &kb, ComparisonDirection direction, Value l,
              Value r) {
  auto &b = kb.b;
  if (isa<FloatType>(l.getType())) {
    arith::CmpFPredicate p;
    switch (direction) {
    case ComparisonDirection::EQ:
      p = arith::CmpFPredicate::OEQ;
      break;
    case ComparisonDirection::NE:
      p = arith::CmpFPredicate::UNE;
      break;
    case ComparisonDirection::LT:
      p = arith::CmpFPredicate::OLT;
      break;
    case ComparisonDirection::LE:
      p = arith::CmpFPredicate::OLE;
      break;
    case ComparisonDirection::GT:
      p = arith::CmpFPredicate::OGT;
      break;
    case ComparisonDirection::GE:
      p = arith::CmpFPredicate::OGE;
      break;
    }
    return arith::CmpFOp::create(b, p, l, r);
  }
  arith::CmpIPredicate p;
  switch (direction) {
  case ComparisonDirection::EQ:
    p = arith::CmpIPredicate::eq;
    break;
  case ComparisonDirection::NE:
    p = arith::CmpIPredicate::ne;
    break;
  case ComparisonDirection::LT:
    p = arith::CmpIPredicate::slt;
    break;
  case ComparisonDirection::LE:
    p = arith::CmpIPredicate::sle;
    break;
  case ComparisonDirection::GT:
    p = arith::CmpIPredicate::sgt;
    break;
  case ComparisonDirection::GE:
    p = arith::CmpIPredicate::sge;
    break;
  }
  return arith::CmpIOp::create(b, p, l, r);
}

Value maxOf(KernelBuilder &kb, Value a, Value c) {
  if (isa<FloatType>(a.getType()))
    return arith::MaximumFOp::create(kb.b, a, c);
  return arith::MaxSIOp::create(kb.b, a, c);
}

Value minOf(KernelBuilder &kb, Value a, Value c) {
  if (isa<FloatType>(a.getType()))
    return arith::MinimumFOp::create(kb.b, a, c);
  return arith::MinSIOp::create(kb.b, a, c);
}

/// f64 → f32 rounded to odd: a later f32 → f16/bf16 rounding to nearest then
/// equals one direct rounding from f64.
Value roundToOddF32(KernelBuilder &kb, Value x) {
  auto &b = kb.b;
  Value t = arith::TruncFOp::create(b, b.getF32Type(), x);
  Value back = arith::ExtFOp::create(b, b.getF64Type(), t);
  Value inexact = arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, back, x);
  Value bits = arith::BitcastOp::create(b, b.getI32Type(), t);
  Value one = kb.intConstant(b.getI32Type(), 1);
  Value even = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                     arith::AndIOp::create(b, bits, one),
                                     kb.intConstant(b.getI32Type(), 0));
  Value awayFromZero = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                             math::AbsFOp::create(b, back),
                                             math::AbsFOp::create(b, x));
  Value adjusted = arith::SelectOp::create(b, awayFromZero,
                                           arith::SubIOp::create(b, bits, one),
                                           arith::AddIOp::create(b, bits, one));
  Value fix = arith::AndIOp::create(b, inexact, even);
  bits = arith::SelectOp::create(b, fix, adjusted, bits);
  return arith::BitcastOp::create(b, b.getF32Type(), bits);
}

Value floatToInt(KernelBuilder &kb, Value x, Type to) {
  auto &b = kb.b;
  unsigned width = to.getIntOrFloatBitWidth();
  if (!x.getType().isF64())
    x = arith::ExtFOp::create(b, b.getF64Type(), x);
  double limit = std::ldexp(1.0, width - 1);
  Value hi = kb.constant(b.getF64Type(), limit);
  Value lo = kb.constant(b.getF64Type(), -limit);
  Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
  Value tooBig = arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, x, hi);
  Value tooSmall = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, x, lo);
  Value outside =
      arith::OrIOp::create(b, isNan, arith::OrIOp::create(b, tooBig, tooSmall));
  Value safe =
      arith::SelectOp::create(b, outside, kb.constant(b.getF64Type(), 0), x);
  Value r = arith::FPToSIOp::create(b, to, safe);
  Value maxV = arith::ConstantOp::create(
      b, b.getIntegerAttr(to, APInt::getSignedMaxValue(width)));
  Value minV = arith::ConstantOp::create(
      b, b.getIntegerAttr(to, APInt::getSignedMinValue(width)));
  r = arith::SelectOp::create(b, tooBig, maxV, r);
  return arith::SelectOp::create(b, tooSmall, minV, r);
}

} // namespace

Value emitConvert(KernelBuilder &kb, Value x, Type from, Type to) {
  auto &b = kb.b;
  Type src = x.getType();
  Type dst = computeType(to);
  bool srcFloat = isa<FloatType>(src), dstFloat = isa<FloatType>(to);
  if (to.isInteger(1)) {
    if (srcFloat)
      return arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, x,
                                   kb.constant(src, 0));
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, x,
                                 kb.intConstant(src, 0));
  }
  if (dstFloat && to != dst) {
    // f16/bf16 values are computed in f32; round to the narrow type here,
    // since inside a fused kernel no store to memory would round it. Wider
    // sources go through f64 and f32 rounded to odd, so the final rounding
    // to nearest is the only one that counts.
    Value wide = x;
    if (!srcFloat)
      wide = from.isInteger(1)
                 ? arith::UIToFPOp::create(b, b.getF64Type(), x).getResult()
                 : arith::SIToFPOp::create(b, b.getF64Type(), x).getResult();
    if (wide.getType().isF64())
      wide = roundToOddF32(kb, wide);
    Value narrow = arith::TruncFOp::create(b, to, wide);
    return arith::ExtFOp::create(b, dst, narrow);
  }
  if (srcFloat && dstFloat) {
    if (src == dst)
      return x;
    unsigned sw = src.getIntOrFloatBitWidth(), dw = dst.getIntOrFloatBitWidth();
    if (sw > dw)
      return src.isF64() && dst != to
                 ? roundToOddF32(kb, x)
                 : arith::TruncFOp::create(b, dst, x).getResult();
    return arith::ExtFOp::create(b, dst, x);
  }
  if (srcFloat)
    return floatToInt(kb, x, dst);
  if (from.isInteger(1))
    return dstFloat ? arith::UIToFPOp::create(b, dst, x).getResult()
                    : arith::ExtUIOp::create(b, dst, x).getResult();
  if (dstFloat)
    return arith::SIToFPOp::create(b, dst, x);
  unsigned sw = src.getIntOrFloatBitWidth(), dw = dst.getIntOrFloatBitWidth();
  if (sw == dw)
    return x;
  return sw > dw ? arith::TruncIOp::create(b, dst, x).getResult()
                 : arith::ExtSIOp::create(b, dst, x).getResult();
}

bool isScalarizable(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, AndOp, OrOp,
             NegOp, AbsOp, SignOp, ExpOp, LogOp, Log1pOp, TanhOp, SqrtOp,
             RsqrtOp, LogisticOp, ErfOp, FloorOp, NotOp, CompareOp, SelectOp,
             ClampOp, ConvertOp>(op);
}

FailureOr<Value> emitScalarOp(KernelBuilder &kb, Operation *op, ValueRange in) {
  auto &b = kb.b;
  bool isFloat = !in.empty() && isa<FloatType>(in.back().getType());
  auto fl = [&](auto floatOp, auto intOp) -> Value {
    if (isFloat)
      return decltype(floatOp)::create(b, in[0], in[1]);
    return decltype(intOp)::create(b, in[0], in[1]);
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](AddOp) { return fl(arith::AddFOp(), arith::AddIOp()); })
      .Case([&](SubOp) { return fl(arith::SubFOp(), arith::SubIOp()); })
      .Case([&](MulOp) { return fl(arith::MulFOp(), arith::MulIOp()); })
      .Case([&](DivOp) -> Value {
        return isFloat ? arith::DivFOp::create(b, in[0], in[1]).getResult()
                       : intDiv(kb, in[0], in[1]);
      })
      .Case([&](MaxOp) { return maxOf(kb, in[0], in[1]); })
      .Case([&](MinOp) { return minOf(kb, in[0], in[1]); })
      .Case([&](PowOp) {
        return isFloat ? viaDouble(kb, "pow", {in[0], in[1]})
                       : intPow(kb, in[0], in[1]);
      })
      .Case([&](AndOp) { return arith::AndIOp::create(b, in[0], in[1]); })
      .Case([&](OrOp) { return arith::OrIOp::create(b, in[0], in[1]); })
      .Case([&](NotOp) {
        return arith::XOrIOp::create(b, in[0],
                                     kb.intConstant(in[0].getType(), -1));
      })
      .Case([&](NegOp) -> Value {
        return isFloat ? arith::NegFOp::create(b, in[0]).getResult()
                       : arith::SubIOp::create(
                             b, kb.intConstant(in[0].getType(), 0), in[0])
                             .getResult();
      })
      .Case([&](AbsOp) -> Value {
        if (isFloat)
          return math::AbsFOp::create(b, in[0]);
        Value zero = kb.intConstant(in[0].getType(), 0);
        Value neg = arith::SubIOp::create(b, zero, in[0]);
        Value lt =
            arith::CmpIOp::create(b, arith::CmpIPredicate::slt, in[0], zero);
        return arith::SelectOp::create(b, lt, neg, in[0]);
      })
      .Case([&](SignOp) { return sign(kb, in[0]); })
      .Case(
          [&](ExpOp) { return transcendental<math::ExpOp>(kb, in[0], "exp"); })
      .Case([&](LogOp) -> Value {
        if (in[0].getType().isF64())
          return callLibm(kb, "log", {in[0]});
        return logF32(kb, in[0]);
      })
      .Case([&](Log1pOp) {
        return transcendental<math::Log1pOp>(kb, in[0], "log1p");
      })
      .Case([&](TanhOp) {
        return transcendental<math::TanhOp>(kb, in[0], "tanh");
      })
      .Case(
          [&](ErfOp) { return transcendental<math::ErfOp>(kb, in[0], "erf"); })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, in[0]); })
      .Case([&](RsqrtOp) -> Value {
        Value s = math::SqrtOp::create(b, in[0]);
        return arith::DivFOp::create(b, kb.constant(s.getType(), 1), s);
      })
      .Case([&](LogisticOp) -> Value {
        Type t = in[0].getType();
        Value e = transcendental<math::ExpOp>(
            kb, arith::NegFOp::create(b, in[0]), "exp");
        Value one = kb.constant(t, 1);
        return arith::DivFOp::create(b, one, arith::AddFOp::create(b, one, e));
      })
      .Case([&](FloorOp) { return math::FloorOp::create(b, in[0]); })
      .Case([&](CompareOp c) {
        return compare(kb, c.getDirection(), in[0], in[1]);
      })
      .Case([&](SelectOp) {
        return arith::SelectOp::create(b, in[0], in[1], in[2]);
      })
      .Case([&](ClampOp) { return minOf(kb, maxOf(kb, in[1], in[0]), in[2]); })
      .Case([&](ConvertOp c) {
        return emitConvert(kb, in[0], elementTypeOf(c.getOperand()),
                           elementTypeOf(c.getResult()));
      })
      .Default([](Operation *) { return failure(); });
}

} // namespace kiln::compiler::cpu
