// Elementwise kernels: unary and binary arithmetic, compare, select, clamp
// and convert. Floats are read exactly into double, computed there and
// rounded once by HostTensor::setDouble; integers are computed in int64 with
// wrapping (unsigned) arithmetic and truncated to their width by setInt,
// which equals wrapping at the narrower width since both are mod 2^k.
#include "ir/reference/Indexing.h"
#include "ir/reference/Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::reference {

namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

/// x / 0 = -1 and INT_MIN / -1 = INT_MIN; the i32 case of the latter needs
/// no branch: 2^31 truncates back to INT32_MIN.
int64_t intDiv(int64_t a, int64_t b) {
  if (b == 0)
    return -1;
  if (a == kInt64Min && b == -1)
    return kInt64Min;
  return a / b; // C++ truncates toward zero
}

/// Wrapping integer power. Square-and-multiply gives the same product as
/// repeated multiplication modulo 2^64, without 2^63 iterations.
int64_t intPow(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1)
      return 1;
    if (base == -1)
      return exponent % 2 == 0 ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, factor = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {
    if (e & 1)
      result *= factor;
    factor *= factor;
  }
  return static_cast<int64_t>(result);
}

double floatSign(double x) {
  if (std::isnan(x) || x == 0.0)
    return x; // NaN stays NaN, -0 stays -0
  return x > 0 ? 1.0 : -1.0;
}

bool isLogical(BinaryKind kind) {
  return kind == BinaryKind::And || kind == BinaryKind::Or;
}

/// True for the unary kinds defined only on floats (exp, log, ...).
bool isFloatOnly(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::Neg:
  case UnaryKind::Abs:
  case UnaryKind::Sign:
  case UnaryKind::Not:
    return false;
  default:
    return true;
  }
}

double unaryFloat(UnaryKind kind, double x) {
  switch (kind) {
  case UnaryKind::Neg: return -x;
  case UnaryKind::Abs: return std::fabs(x);
  case UnaryKind::Sign: return floatSign(x);
  case UnaryKind::Exp: return std::exp(x);
  case UnaryKind::Log: return std::log(x);
  case UnaryKind::Log1p: return std::log1p(x);
  case UnaryKind::Tanh: return std::tanh(x);
  case UnaryKind::Sqrt: return std::sqrt(x);
  case UnaryKind::Rsqrt: return 1.0 / std::sqrt(x);
  case UnaryKind::Logistic: return 1.0 / (1.0 + std::exp(-x));
  case UnaryKind::Erf: return std::erf(x);
  case UnaryKind::Floor: return std::floor(x);
  case UnaryKind::Not: break; // rejected before the loop
  }
  return std::numeric_limits<double>::quiet_NaN();
}

int64_t unaryInt(UnaryKind kind, int64_t x, DType dtype) {
  switch (kind) {
  case UnaryKind::Neg: return wrapSub(0, x);
  case UnaryKind::Abs: return x < 0 ? wrapSub(0, x) : x;
  case UnaryKind::Sign: return (x > 0) - (x < 0);
  case UnaryKind::Not: return dtype == DType::i1 ? !x : ~x;
  default: return 0; // float-only kinds are rejected before the loop
  }
}

double binaryFloat(BinaryKind kind, double a, double b) {
  switch (kind) {
  case BinaryKind::Add: return a + b;
  case BinaryKind::Sub: return a - b;
  case BinaryKind::Mul: return a * b;
  case BinaryKind::Div: return a / b;
  case BinaryKind::Max: return floatMax(a, b);
  case BinaryKind::Min: return floatMin(a, b);
  case BinaryKind::Pow: return std::pow(a, b);
  case BinaryKind::And:
  case BinaryKind::Or: break; // rejected before the loop
  }
  return std::numeric_limits<double>::quiet_NaN();
}

int64_t binaryInt(BinaryKind kind, int64_t a, int64_t b) {
  switch (kind) {
  case BinaryKind::Add: return wrapAdd(a, b);
  case BinaryKind::Sub: return wrapSub(a, b);
  case BinaryKind::Mul: return wrapMul(a, b);
  case BinaryKind::Div: return intDiv(a, b);
  case BinaryKind::Max: return std::max(a, b);
  case BinaryKind::Min: return std::min(a, b);
  case BinaryKind::Pow: return intPow(a, b);
  case BinaryKind::And: return a & b; // i1 holds 0/1, so bitwise is logical
  case BinaryKind::Or: return a | b;
  }
  return 0;
}

template <typename T>
bool compareValues(CompareKind kind, T a, T b) {
  // C++'s float comparisons already give the spec's NaN rules: every
  // ordered comparison with NaN is false and != is true.
  switch (kind) {
  case CompareKind::EQ: return a == b;
  case CompareKind::NE: return a != b;
  case CompareKind::LT: return a < b;
  case CompareKind::LE: return a <= b;
  case CompareKind::GT: return a > b;
  case CompareKind::GE: return a >= b;
  }
  return false;
}

absl::Status unsupported(absl::string_view what, DType dtype) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, " is not defined on ", std::string(dtypeName(dtype))));
}

/// An integer → a double that rounds to the same value in any narrower float
/// type: exact up to 53 significant bits, otherwise truncated to 53 bits with
/// the last bit set when bits were dropped (round to odd), so that rounding
/// it again to f32/f16/bf16 is the single correct rounding of the integer.
double intToDoubleRoundToOdd(int64_t value) {
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value)
                                 : static_cast<uint64_t>(value);
  int shift = 0;
  while ((magnitude >> shift) >= (uint64_t{1} << 53))
    ++shift;
  uint64_t kept = magnitude >> shift;
  if (shift > 0 && (magnitude & ((uint64_t{1} << shift) - 1)) != 0)
    kept |= 1;
  double result = std::ldexp(static_cast<double>(kept), shift);
  return value < 0 ? -result : result;
}

} // namespace

double floatMax(double a, double b) {
  if (std::isnan(a))
    return a;
  if (std::isnan(b))
    return b;
  if (a == b) // only ±0 can be equal with different bits
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double floatMin(double a, double b) {
  if (std::isnan(a))
    return a;
  if (std::isnan(b))
    return b;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

absl::StatusOr<HostTensor> evalUnary(UnaryKind kind, const HostTensor &x) {
  DType dtype = x.dtype();
  if ((isFloat(dtype) && kind == UnaryKind::Not) ||
      (!isFloat(dtype) && isFloatOnly(kind)) ||
      (dtype == DType::i1 && kind != UnaryKind::Not))
    return unsupported("this unary op", dtype);
  absl::StatusOr<HostTensor> result = HostTensor::create(dtype, x.shape());
  if (!result.ok())
    return result.status();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    if (isFloat(dtype))
      result->setDouble(i, unaryFloat(kind, x.getDouble(i)));
    else
      result->setInt(i, unaryInt(kind, x.getInt(i), dtype));
  }
  return result;
}

absl::StatusOr<HostTensor> evalBinary(BinaryKind kind, const HostTensor &a,
                                      const HostTensor &b) {
  if (absl::Status status = checkSameType("binary op", a, b); !status.ok())
    return status;
  DType dtype = a.dtype();
  if ((isFloat(dtype) && isLogical(kind)) ||
      (dtype == DType::i1 && !isLogical(kind)))
    return unsupported("this binary op", dtype);
  absl::StatusOr<HostTensor> result = HostTensor::create(dtype, a.shape());
  if (!result.ok())
    return result.status();
  for (int64_t i = 0; i < a.numElements(); ++i) {
    if (isFloat(dtype))
      result->setDouble(i, binaryFloat(kind, a.getDouble(i), b.getDouble(i)));
    else
      result->setInt(i, binaryInt(kind, a.getInt(i), b.getInt(i)));
  }
  return result;
}

absl::StatusOr<HostTensor> evalCompare(CompareKind kind, const HostTensor &a,
                                       const HostTensor &b) {
  if (absl::Status status = checkSameType("kiln.compare", a, b); !status.ok())
    return status;
  absl::StatusOr<HostTensor> result = HostTensor::create(DType::i1, a.shape());
  if (!result.ok())
    return result.status();
  for (int64_t i = 0; i < a.numElements(); ++i) {
    bool value = isFloat(a.dtype())
                     ? compareValues(kind, a.getDouble(i), b.getDouble(i))
                     : compareValues(kind, a.getInt(i), b.getInt(i));
    result->setInt(i, value);
  }
  return result;
}

absl::StatusOr<HostTensor> evalSelect(const HostTensor &pred,
                                      const HostTensor &onTrue,
                                      const HostTensor &onFalse) {
  if (absl::Status status = checkSameType("kiln.select", onTrue, onFalse);
      !status.ok())
    return status;
  if (pred.dtype() != DType::i1 || pred.shape() != onTrue.shape())
    return absl::InvalidArgumentError(
        absl::StrCat("kiln.select: predicate ", pred.typeString(),
                     " must be i1 of the shape of ", onTrue.typeString()));
  absl::StatusOr<HostTensor> result =
      HostTensor::create(onTrue.dtype(), onTrue.shape());
  if (!result.ok())
    return result.status();
  for (int64_t i = 0; i < pred.numElements(); ++i)
    copyElement(*result, i, pred.getInt(i) ? onTrue : onFalse, i);
  return result;
}

absl::StatusOr<HostTensor> evalClamp(const HostTensor &lo, const HostTensor &x,
                                     const HostTensor &hi) {
  if (absl::Status status = checkSameType("kiln.clamp", lo, x); !status.ok())
    return status;
  if (absl::Status status = checkSameType("kiln.clamp", x, hi); !status.ok())
    return status;
  if (x.dtype() == DType::i1)
    return unsupported("kiln.clamp", x.dtype());
  absl::StatusOr<HostTensor> result = HostTensor::create(x.dtype(), x.shape());
  if (!result.ok())
    return result.status();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    if (isFloat(x.dtype()))
      result->setDouble(i, floatMin(floatMax(x.getDouble(i), lo.getDouble(i)),
                                    hi.getDouble(i)));
    else
      result->setInt(
          i, std::min(std::max(x.getInt(i), lo.getInt(i)), hi.getInt(i)));
  }
  return result;
}

absl::StatusOr<HostTensor> evalConvert(const HostTensor &x, DType to) {
  absl::StatusOr<HostTensor> result = HostTensor::create(to, x.shape());
  if (!result.ok())
    return result.status();
  DType from = x.dtype();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    if (from == to)
      copyElement(*result, i, x, i);
    else if (isFloat(from))
      // setDouble implements float→float rounding, float→int truncation with
      // saturation and NaN → 0, and float→i1 as x != 0 (NaN → 1).
      result->setDouble(i, x.getDouble(i));
    else if (to == DType::f64)
      result->setDouble(i, static_cast<double>(x.getInt(i))); // rounds once
    else if (isFloat(to))
      result->setDouble(i, intToDoubleRoundToOdd(x.getInt(i)));
    else
      // int→int wraps (setInt keeps the low bits); int→i1 is x != 0.
      result->setInt(i, x.getInt(i));
  }
  return result;
}

} // namespace kiln::reference
