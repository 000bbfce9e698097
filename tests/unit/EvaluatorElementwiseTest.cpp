// The reference evaluator's elementwise ops against hand-computed answers:
// arithmetic with f16/bf16 rounding and integer wrapping, the NaN and signed
// zero rules of max/min/compare/select/clamp, the unary functions and every
// class of convert edge case in docs/IR.md.
#include "EvaluatorTestSupport.h"

#include <gmock/gmock.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace {

using ::kiln::testing::asDoubles;
using ::kiln::testing::asInts;
using ::kiln::testing::floats;
using ::kiln::testing::ints;
using ::kiln::testing::runOne;
using ::kiln::testing::signBits;
using ::testing::ElementsAre;
using ::testing::IsNan;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

/// @main(%a: type, %b: type) -> type applying `kiln.<op>` to both.
std::string binary(const std::string &op, const std::string &type) {
  return "func.func @main(%a: " + type + ", %b: " + type + ") -> " + type +
         " {\n  %0 = kiln." + op + " %a, %b : " + type + "\n  return %0 : " +
         type + "\n}\n";
}

/// @main(%a: type) -> type applying `kiln.<op>`.
std::string unary(const std::string &op, const std::string &type) {
  return "func.func @main(%a: " + type + ") -> " + type + " {\n  %0 = kiln." +
         op + " %a : " + type + "\n  return %0 : " + type + "\n}\n";
}

/// @main(%a: from) -> to applying kiln.convert.
std::string convert(const std::string &from, const std::string &to) {
  return "func.func @main(%a: " + from + ") -> " + to +
         " {\n  %0 = kiln.convert %a : " + from + " -> " + to +
         "\n  return %0 : " + to + "\n}\n";
}

TEST(Evaluator, AddsSubtractsMultipliesAndDividesF32) {
  HostTensor a = floats(DType::f32, {4}, {1.5, -2, 3, 1});
  HostTensor b = floats(DType::f32, {4}, {0.5, 4, -0.25, 0});
  const std::string t = "tensor<4xf32>";
  EXPECT_THAT(asDoubles(runOne(binary("add", t), {a, b})),
              ElementsAre(2, 2, 2.75, 1));
  EXPECT_THAT(asDoubles(runOne(binary("sub", t), {a, b})),
              ElementsAre(1, -6, 3.25, 1));
  EXPECT_THAT(asDoubles(runOne(binary("mul", t), {a, b})),
              ElementsAre(0.75, -8, -0.75, 0));
  EXPECT_THAT(asDoubles(runOne(binary("div", t), {a, b})),
              ElementsAre(3, -0.5, -12, kInf));
}

TEST(Evaluator, RoundsF16ResultsToNearestEven) {
  // 2^-11 is half an f16 ulp at 1: 1 + 2^-11 ties down to the even 1, and
  // (1 + 2^-10) + 2^-11 ties up to 1 + 2^-9. 65504 + 16 ties past the largest
  // f16 (odd significand) and so overflows to inf.
  HostTensor a = floats(DType::f16, {3}, {1, 1.0009765625, 65504});
  HostTensor b = floats(DType::f16, {3}, {0.00048828125, 0.00048828125, 16});
  EXPECT_THAT(asDoubles(runOne(binary("add", "tensor<3xf16>"), {a, b})),
              ElementsAre(1, 1.001953125, kInf));
}

TEST(Evaluator, RoundsBF16ResultsToNearestEven) {
  // bf16 keeps 8 significant bits: 1 + 2^-8 ties down to 1, (1 + 2^-7) +
  // 2^-8 ties up to 1 + 2^-6, and 256 + 1 ties down to 256.
  HostTensor a = floats(DType::bf16, {3}, {1, 1.0078125, 256});
  HostTensor b = floats(DType::bf16, {3}, {0.00390625, 0.00390625, 1});
  EXPECT_THAT(asDoubles(runOne(binary("add", "tensor<3xbf16>"), {a, b})),
              ElementsAre(1, 1.015625, 256));
}

TEST(Evaluator, ComputesF64WithoutRounding) {
  // The spec's addendum: f64 ops compute in double, so 1 + 2^-40 survives,
  // and only a convert to f32 rounds it away.
  HostTensor a = floats(DType::f64, {1}, {1});
  HostTensor b = floats(DType::f64, {1}, {0x1p-40});
  HostTensor sum = runOne(binary("add", "tensor<1xf64>"), {a, b});
  EXPECT_THAT(asDoubles(sum), ElementsAre(1 + 0x1p-40));
  EXPECT_THAT(asDoubles(runOne(convert("tensor<1xf64>", "tensor<1xf32>"),
                               {sum})),
              ElementsAre(1));
  // i64 → f64 rounds once to nearest even: 2^53 + 1 ties to 2^53.
  HostTensor big = ints(DType::i64, {1}, {(int64_t{1} << 53) + 1});
  EXPECT_THAT(asDoubles(runOne(convert("tensor<1xi64>", "tensor<1xf64>"),
                               {big})),
              ElementsAre(0x1p53));
}

TEST(Evaluator, WrapsIntegerArithmetic) {
  HostTensor a = ints(DType::i32, {3}, {kI32Max, kI32Min, 65536});
  HostTensor b = ints(DType::i32, {3}, {1, 1, 65536});
  const std::string t = "tensor<3xi32>";
  EXPECT_THAT(asInts(runOne(binary("add", t), {a, b})),
              ElementsAre(kI32Min, kI32Min + 1, 131072));
  EXPECT_THAT(asInts(runOne(binary("sub", t), {a, b})),
              ElementsAre(kI32Max - 1, kI32Max, 0));
  EXPECT_THAT(asInts(runOne(binary("mul", t), {a, b})),
              ElementsAre(kI32Max, kI32Min, 0)); // 2^32 wraps to 0

  HostTensor c = ints(DType::i64, {2}, {kI64Max, kI64Min});
  HostTensor d = ints(DType::i64, {2}, {1, -1});
  EXPECT_THAT(asInts(runOne(binary("add", "tensor<2xi64>"), {c, d})),
              ElementsAre(kI64Min, kI64Max));
}

TEST(Evaluator, DividesIntegersTowardZeroWithMinusOneForZeroDivisors) {
  HostTensor a = ints(DType::i32, {6}, {7, -7, 7, kI32Min, 0, -9});
  HostTensor b = ints(DType::i32, {6}, {2, 2, 0, -1, 0, -4});
  EXPECT_THAT(asInts(runOne(binary("div", "tensor<6xi32>"), {a, b})),
              ElementsAre(3, -3, -1, kI32Min, -1, 2));
  HostTensor c = ints(DType::i64, {2}, {kI64Min, 5});
  HostTensor d = ints(DType::i64, {2}, {-1, 0});
  EXPECT_THAT(asInts(runOne(binary("div", "tensor<2xi64>"), {c, d})),
              ElementsAre(kI64Min, -1));
}

TEST(Evaluator, MaxAndMinPropagateNaNAndOrderSignedZeros) {
  HostTensor a = floats(DType::f32, {5}, {1, kNaN, -0.0, 0.0, 3});
  HostTensor b = floats(DType::f32, {5}, {2, 1, 0.0, -0.0, kNaN});
  HostTensor max = runOne(binary("max", "tensor<5xf32>"), {a, b});
  EXPECT_THAT(asDoubles(max), ElementsAre(2, IsNan(), 0, 0, IsNan()));
  EXPECT_FALSE(std::signbit(max.getDouble(2)));
  EXPECT_FALSE(std::signbit(max.getDouble(3)));
  HostTensor min = runOne(binary("min", "tensor<5xf32>"), {a, b});
  EXPECT_THAT(asDoubles(min), ElementsAre(1, IsNan(), 0, 0, IsNan()));
  EXPECT_TRUE(std::signbit(min.getDouble(2)));
  EXPECT_TRUE(std::signbit(min.getDouble(3)));

  HostTensor c = ints(DType::i32, {2}, {-5, 3});
  HostTensor d = ints(DType::i32, {2}, {2, -7});
  EXPECT_THAT(asInts(runOne(binary("max", "tensor<2xi32>"), {c, d})),
              ElementsAre(2, 3));
  EXPECT_THAT(asInts(runOne(binary("min", "tensor<2xi32>"), {c, d})),
              ElementsAre(-5, -7));
}

TEST(Evaluator, RaisesFloatsToPowersLikeCPow) {
  HostTensor a = floats(DType::f32, {4}, {2, 4, -2, 0});
  HostTensor b = floats(DType::f32, {4}, {10, 0.5, 3, -1});
  EXPECT_THAT(asDoubles(runOne(binary("pow", "tensor<4xf32>"), {a, b})),
              ElementsAre(1024, 2, -8, kInf));
}

TEST(Evaluator, RaisesIntegersToPowersWithWrappingAndNegativeExponents) {
  // 3^21 = 10460353203 wraps to 10460353203 - 2 * 2^32 = 1870418611;
  // 2^31 wraps to INT32_MIN.
  HostTensor a = ints(DType::i32, {9}, {2, 3, 1, -1, -1, 5, 0, 2, 3});
  HostTensor b = ints(DType::i32, {9}, {10, 0, -3, -3, -4, -1, 0, 31, 21});
  EXPECT_THAT(asInts(runOne(binary("pow", "tensor<9xi32>"), {a, b})),
              ElementsAre(1024, 1, 1, -1, 1, 0, 1, kI32Min, 1870418611));
}

TEST(Evaluator, AndOrNotAreLogicalOnI1AndBitwiseOnIntegers) {
  HostTensor p = ints(DType::i1, {4}, {0, 0, 1, 1});
  HostTensor q = ints(DType::i1, {4}, {0, 1, 0, 1});
  EXPECT_THAT(asInts(runOne(binary("and", "tensor<4xi1>"), {p, q})),
              ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(asInts(runOne(binary("or", "tensor<4xi1>"), {p, q})),
              ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(asInts(runOne(unary("not", "tensor<4xi1>"), {p})),
              ElementsAre(1, 1, 0, 0));

  HostTensor a = ints(DType::i32, {2}, {12, -1});
  HostTensor b = ints(DType::i32, {2}, {10, 5});
  EXPECT_THAT(asInts(runOne(binary("and", "tensor<2xi32>"), {a, b})),
              ElementsAre(8, 5));
  EXPECT_THAT(asInts(runOne(binary("or", "tensor<2xi32>"), {a, b})),
              ElementsAre(14, -1));
  EXPECT_THAT(asInts(runOne(unary("not", "tensor<2xi32>"), {a})),
              ElementsAre(-13, 0));
}

TEST(Evaluator, NegAbsAndSignKeepNaNAndSignedZero) {
  HostTensor x = floats(DType::f32, {5}, {-2.5, 0.0, -0.0, kNaN, 3});
  HostTensor neg = runOne(unary("neg", "tensor<5xf32>"), {x});
  EXPECT_THAT(asDoubles(neg), ElementsAre(2.5, 0, 0, IsNan(), -3));
  EXPECT_THAT(signBits(neg), ElementsAre(false, true, false, true, true));
  HostTensor abs = runOne(unary("abs", "tensor<5xf32>"), {x});
  EXPECT_THAT(asDoubles(abs), ElementsAre(2.5, 0, 0, IsNan(), 3));
  EXPECT_THAT(signBits(abs), ElementsAre(false, false, false, false, false));
  HostTensor sign = runOne(unary("sign", "tensor<5xf32>"), {x});
  EXPECT_THAT(asDoubles(sign), ElementsAre(-1, 0, 0, IsNan(), 1));
  EXPECT_THAT(signBits(sign), ElementsAre(true, false, true, false, false));
}

TEST(Evaluator, NegAndAbsOfIntMinWrapToIntMin) {
  HostTensor x = ints(DType::i32, {4}, {kI32Min, -3, 0, 7});
  EXPECT_THAT(asInts(runOne(unary("neg", "tensor<4xi32>"), {x})),
              ElementsAre(kI32Min, 3, 0, -7));
  EXPECT_THAT(asInts(runOne(unary("abs", "tensor<4xi32>"), {x})),
              ElementsAre(kI32Min, 3, 0, 7));
  EXPECT_THAT(asInts(runOne(unary("sign", "tensor<4xi32>"), {x})),
              ElementsAre(-1, -1, 0, 1));
  HostTensor y = ints(DType::i64, {1}, {kI64Min});
  EXPECT_THAT(asInts(runOne(unary("neg", "tensor<1xi64>"), {y})),
              ElementsAre(kI64Min));
}

TEST(Evaluator, ExpLogAndLog1pRoundTheCLibraryResult) {
  // f32(e) = 2.7182817459106445 and f16(e) = 2.71875 (spacing 2^-9 there).
  HostTensor x = floats(DType::f32, {3}, {0, 1, -1});
  EXPECT_THAT(asDoubles(runOne(unary("exp", "tensor<3xf32>"), {x})),
              ElementsAre(1, 2.7182817459106445, 0.3678794503211975));
  HostTensor h = floats(DType::f16, {1}, {1});
  EXPECT_THAT(asDoubles(runOne(unary("exp", "tensor<1xf16>"), {h})),
              ElementsAre(2.71875));
  HostTensor y = floats(DType::f32, {4}, {1, 0, -1, 0.5});
  EXPECT_THAT(asDoubles(runOne(unary("log", "tensor<4xf32>"), {y})),
              ElementsAre(0, -kInf, IsNan(), -0.6931471824645996));
  EXPECT_THAT(asDoubles(runOne(unary("log1p", "tensor<4xf32>"), {y})),
              ElementsAre(0.6931471824645996, 0, -kInf, 0.40546509623527527));
}

TEST(Evaluator, TanhErfAndLogisticSaturate) {
  HostTensor x = floats(DType::f32, {4}, {0, 20, -kInf, kInf});
  EXPECT_THAT(asDoubles(runOne(unary("tanh", "tensor<4xf32>"), {x})),
              ElementsAre(0, 1, -1, 1));
  EXPECT_THAT(asDoubles(runOne(unary("erf", "tensor<4xf32>"), {x})),
              ElementsAre(0, 1, -1, 1));
  EXPECT_THAT(asDoubles(runOne(unary("logistic", "tensor<4xf32>"), {x})),
              ElementsAre(0.5, 1, 0, 1));
}

TEST(Evaluator, SqrtRsqrtAndFloorFollowIEEE) {
  HostTensor x = floats(DType::f32, {5}, {4, 2, 0.0, -0.0, -1});
  EXPECT_THAT(asDoubles(runOne(unary("sqrt", "tensor<5xf32>"), {x})),
              ElementsAre(2, 1.4142135381698608, 0, 0, IsNan()));
  EXPECT_THAT(asDoubles(runOne(unary("rsqrt", "tensor<5xf32>"), {x})),
              ElementsAre(0.5, 0.7071067690849304, kInf, -kInf, IsNan()));
  HostTensor y = floats(DType::f32, {4}, {-1.5, 2.5, -0.0, 3});
  HostTensor floor = runOne(unary("floor", "tensor<4xf32>"), {y});
  EXPECT_THAT(asDoubles(floor), ElementsAre(-2, 2, 0, 3));
  EXPECT_TRUE(std::signbit(floor.getDouble(2)));
}

/// @main comparing two tensor<6xf32> in `direction`.
std::string compare(const std::string &direction) {
  return "func.func @main(%a: tensor<6xf32>, %b: tensor<6xf32>) -> "
         "tensor<6xi1> {\n  %0 = kiln.compare " +
         direction +
         ", %a, %b : tensor<6xf32>\n  return %0 : tensor<6xi1>\n}\n";
}

TEST(Evaluator, ComparesWithNaNUnorderedInAllSixDirections) {
  // Pairs: less, equal, greater, NaN vs 1, -0 vs +0, NaN vs NaN.
  std::vector<HostTensor> in = {
      floats(DType::f32, {6}, {1, 2, 3, kNaN, -0.0, kNaN}),
      floats(DType::f32, {6}, {2, 2, 2, 1, 0.0, kNaN})};
  EXPECT_THAT(asInts(runOne(compare("EQ"), in)), ElementsAre(0, 1, 0, 0, 1, 0));
  EXPECT_THAT(asInts(runOne(compare("NE"), in)), ElementsAre(1, 0, 1, 1, 0, 1));
  EXPECT_THAT(asInts(runOne(compare("LT"), in)), ElementsAre(1, 0, 0, 0, 0, 0));
  EXPECT_THAT(asInts(runOne(compare("LE"), in)), ElementsAre(1, 1, 0, 0, 1, 0));
  EXPECT_THAT(asInts(runOne(compare("GT"), in)), ElementsAre(0, 0, 1, 0, 0, 0));
  EXPECT_THAT(asInts(runOne(compare("GE"), in)), ElementsAre(0, 1, 1, 0, 1, 0));
}

TEST(Evaluator, ComparesIntegersAsSigned) {
  const std::string source =
      "func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi1> "
      "{\n  %0 = kiln.compare LT, %a, %b : tensor<3xi32>\n"
      "  return %0 : tensor<3xi1>\n}\n";
  HostTensor a = ints(DType::i32, {3}, {-1, 5, kI32Min});
  HostTensor b = ints(DType::i32, {3}, {1, 5, kI32Max});
  EXPECT_THAT(asInts(runOne(source, {a, b})), ElementsAre(1, 0, 1));
}

TEST(Evaluator, SelectPicksElementwiseAndKeepsNaN) {
  const std::string source =
      "func.func @main(%p: tensor<4xi1>, %t: tensor<4xf32>, "
      "%f: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = kiln.select %p, %t, %f : tensor<4xi1>, tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n}\n";
  HostTensor p = ints(DType::i1, {4}, {1, 0, 1, 0});
  HostTensor t = floats(DType::f32, {4}, {1, 2, kNaN, 4});
  HostTensor f = floats(DType::f32, {4}, {10, kNaN, 30, 40});
  EXPECT_THAT(asDoubles(runOne(source, {p, t, f})),
              ElementsAre(1, IsNan(), IsNan(), 40));
}

TEST(Evaluator, ClampBoundsEachElementAndPropagatesNaN) {
  const std::string source =
      "func.func @main(%lo: tensor<5xf32>, %x: tensor<5xf32>, "
      "%hi: tensor<5xf32>) -> tensor<5xf32> {\n"
      "  %0 = kiln.clamp %lo, %x, %hi : tensor<5xf32>\n"
      "  return %0 : tensor<5xf32>\n}\n";
  HostTensor lo = floats(DType::f32, {5}, {0, 0, 0, 0, kNaN});
  HostTensor x = floats(DType::f32, {5}, {-1, 0.5, 2, kNaN, 0.5});
  HostTensor hi = floats(DType::f32, {5}, {1, 1, 1, 1, 1});
  EXPECT_THAT(asDoubles(runOne(source, {lo, x, hi})),
              ElementsAre(0, 0.5, 1, IsNan(), IsNan()));

  // -0 clamped below by +0 is max(-0, +0) = +0.
  HostTensor zero = runOne(source, {floats(DType::f32, {5}, {0, 0, 0, 0, 0}),
                                    floats(DType::f32, {5}, {-0.0, 0, 0, 0, 0}),
                                    floats(DType::f32, {5}, {1, 1, 1, 1, 1})});
  EXPECT_FALSE(std::signbit(zero.getDouble(0)));

  const std::string intSource =
      "func.func @main(%lo: tensor<2xi32>, %x: tensor<2xi32>, "
      "%hi: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %0 = kiln.clamp %lo, %x, %hi : tensor<2xi32>\n"
      "  return %0 : tensor<2xi32>\n}\n";
  EXPECT_THAT(asInts(runOne(intSource, {ints(DType::i32, {2}, {0, 0}),
                                        ints(DType::i32, {2}, {-5, 50}),
                                        ints(DType::i32, {2}, {10, 10})})),
              ElementsAre(0, 10));
}

TEST(Evaluator, ConvertsFloatsToIntegersTruncatingAndSaturating) {
  HostTensor x =
      floats(DType::f32, {7}, {kNaN, 3.9, -3.9, 3e9, -3e9, kInf, -kInf});
  EXPECT_THAT(asInts(runOne(convert("tensor<7xf32>", "tensor<7xi32>"), {x})),
              ElementsAre(0, 3, -3, kI32Max, kI32Min, kI32Max, kI32Min));
  EXPECT_THAT(asInts(runOne(convert("tensor<7xf32>", "tensor<7xi64>"), {x})),
              ElementsAre(0, 3, -3, 3000000000, -3000000000, kI64Max,
                          kI64Min));
}

TEST(Evaluator, ConvertsToI1AsNonZeroWithNaNTrue) {
  HostTensor x = floats(DType::f32, {4}, {0.0, -0.0, kNaN, 0.5});
  EXPECT_THAT(asInts(runOne(convert("tensor<4xf32>", "tensor<4xi1>"), {x})),
              ElementsAre(0, 0, 1, 1));
  HostTensor y = ints(DType::i32, {3}, {0, 2, -1});
  EXPECT_THAT(asInts(runOne(convert("tensor<3xi32>", "tensor<3xi1>"), {y})),
              ElementsAre(0, 1, 1));
  HostTensor p = ints(DType::i1, {2}, {1, 0});
  EXPECT_THAT(asDoubles(runOne(convert("tensor<2xi1>", "tensor<2xf32>"), {p})),
              ElementsAre(1, 0));
  EXPECT_THAT(asInts(runOne(convert("tensor<2xi1>", "tensor<2xi32>"), {p})),
              ElementsAre(1, 0));
}

TEST(Evaluator, ConvertsBetweenIntegersByWrapping) {
  HostTensor x = ints(DType::i64, {3}, {4294967297, -1, 2147483648});
  EXPECT_THAT(asInts(runOne(convert("tensor<3xi64>", "tensor<3xi32>"), {x})),
              ElementsAre(1, -1, kI32Min));
  HostTensor y = ints(DType::i32, {1}, {-7});
  EXPECT_THAT(asInts(runOne(convert("tensor<1xi32>", "tensor<1xi64>"), {y})),
              ElementsAre(-7));
}

TEST(Evaluator, ConvertsBetweenFloatsRoundingToNearestEven) {
  // f16: 65520 ties past the largest f16 to inf, 1 + 2^-11 ties down to 1,
  // 1e-8 is below half the smallest subnormal (2^-24).
  HostTensor x = floats(DType::f32, {4}, {65520, 1.00048828125, 1e-8, 65504});
  EXPECT_THAT(asDoubles(runOne(convert("tensor<4xf32>", "tensor<4xf16>"), {x})),
              ElementsAre(kInf, 1, 0, 65504));
  // bf16: 1 + 2^-8 ties down to 1; 1 + 2^-8 + 2^-20 is past the tie.
  HostTensor y = floats(DType::f32, {2}, {1.00390625, 1.00390625 + 0x1p-20});
  EXPECT_THAT(
      asDoubles(runOne(convert("tensor<2xf32>", "tensor<2xbf16>"), {y})),
      ElementsAre(1, 1.0078125));
  // f16 0.1 is 0.0999755859375, exactly representable in f32.
  HostTensor h = floats(DType::f16, {1}, {0.1});
  EXPECT_THAT(asDoubles(runOne(convert("tensor<1xf16>", "tensor<1xf32>"), {h})),
              ElementsAre(0.0999755859375));
}

TEST(Evaluator, ConvertsIntegersToFloatsRoundingOnce) {
  // 2^60 + 2^36 + 1 is just above the midpoint between two f32 values, so
  // it rounds up to 2^60 + 2^37; going through double first would drop the
  // +1, land on the tie and round down to 2^60.
  HostTensor x = ints(DType::i64, {2}, {1152921573326323713, -3});
  EXPECT_THAT(asDoubles(runOne(convert("tensor<2xi64>", "tensor<2xf32>"), {x})),
              ElementsAre(1152921642045800448.0, -3));
  // f16 spacing is 2 in [2048, 4096): 2049 ties to 2048, 2051 to 2052.
  HostTensor y = ints(DType::i32, {3}, {2049, 2051, 70000});
  EXPECT_THAT(asDoubles(runOne(convert("tensor<3xi32>", "tensor<3xf16>"), {y})),
              ElementsAre(2048, 2052, kInf));
}

} // namespace
} // namespace kiln
