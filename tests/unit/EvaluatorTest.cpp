// The reference evaluator's driver and its remaining ops: input checking and
// the errors evaluate() reports, constants (splat and dense, every element
// type) and their conversion to host tensors, kiln.fusion, the per-op
// observer, and rng_uniform with the Philox-4x32-10 known answers and the
// moments of its samples.
#include "EvaluatorTestSupport.h"

#include "ir/TensorConversion.h"
#include "ir/reference/Philox.h"

#include <gmock/gmock.h>

#include <array>
#include <cstring>

namespace kiln {
namespace {

using ::kiln::testing::asDoubles;
using ::kiln::testing::asInts;
using ::kiln::testing::floats;
using ::kiln::testing::ints;
using ::kiln::testing::mustRun;
using ::kiln::testing::runMain;
using ::kiln::testing::runOne;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char *const kAddTwo =
    "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> "
    "{\n  %0 = kiln.add %a, %b : tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n}\n";

//===--- Errors -----------------------------------------------------------===//

TEST(Evaluator, RejectsTheWrongNumberOfInputs) {
  auto result = runMain(kAddTwo, {floats(DType::f32, {2}, {1, 2})});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("takes 2 arguments"));
  EXPECT_THAT(result.status().message(), HasSubstr("got 1"));
}

TEST(Evaluator, RejectsAnInputOfTheWrongShapeNamingBothTypes) {
  auto result = runMain(kAddTwo, {floats(DType::f32, {2}, {1, 2}),
                                  floats(DType::f32, {3}, {1, 2, 3})});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("argument 1"));
  EXPECT_THAT(result.status().message(), HasSubstr("tensor<2xf32>"));
  EXPECT_THAT(result.status().message(), HasSubstr("tensor<3xf32>"));
}

TEST(Evaluator, RejectsAnInputOfTheWrongDType) {
  auto result = runMain(kAddTwo, {ints(DType::i32, {2}, {1, 2}),
                                  floats(DType::f32, {2}, {1, 2})});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("argument 0"));
  EXPECT_THAT(result.status().message(), HasSubstr("tensor<2xi32>"));
}

TEST(Evaluator, ReportsAnUnknownOpAsUnimplementedNamingIt) {
  const std::string source =
      "func.func private @helper(tensor<2xf32>) -> tensor<2xf32>\n"
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "  %0 = func.call @helper(%a) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n}\n";
  auto result = runMain(source, {floats(DType::f32, {2}, {1, 2})});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(result.status().message(), HasSubstr("func.call"));
}

TEST(Evaluator, RejectsAFunctionWithoutABody) {
  mlir::MLIRContext context;
  context.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      "func.func private @main(tensor<2xf32>) -> tensor<2xf32>\n", &context);
  ASSERT_TRUE(module);
  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  auto result = reference::evaluate(main, {floats(DType::f32, {2}, {1, 2})});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

//===--- Constants and conversion -----------------------------------------===//

TEST(Evaluator, EvaluatesSplatAndDenseConstants) {
  const std::string source =
      "func.func @main() -> (tensor<2x2xf32>, tensor<2x2xi32>, tensor<3xi1>, "
      "tensor<2xf16>, tensor<2xbf16>, tensor<2xi64>, tensor<2xi1>) {\n"
      "  %0 = kiln.constant dense<2.5> : tensor<2x2xf32>\n"
      "  %1 = kiln.constant dense<[[1, -2], [3, 2147483647]]> : "
      "tensor<2x2xi32>\n"
      "  %2 = kiln.constant dense<[true, false, true]> : tensor<3xi1>\n"
      "  %3 = kiln.constant dense<[0.1, -2.0]> : tensor<2xf16>\n"
      "  %4 = kiln.constant dense<[0.1, 3.0]> : tensor<2xbf16>\n"
      "  %5 = kiln.constant dense<-9223372036854775808> : tensor<2xi64>\n"
      "  %6 = kiln.constant dense<true> : tensor<2xi1>\n"
      "  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x2xf32>, tensor<2x2xi32>, "
      "tensor<3xi1>, tensor<2xf16>, tensor<2xbf16>, tensor<2xi64>, "
      "tensor<2xi1>\n}\n";
  std::vector<HostTensor> results = mustRun(source);
  ASSERT_EQ(results.size(), 7u);
  EXPECT_EQ(results[0].typeString(), "tensor<2x2xf32>");
  EXPECT_THAT(asDoubles(results[0]), ElementsAre(2.5, 2.5, 2.5, 2.5));
  EXPECT_THAT(asInts(results[1]), ElementsAre(1, -2, 3, 2147483647));
  EXPECT_THAT(asInts(results[2]), ElementsAre(1, 0, 1));
  // f16(0.1) = 1638 * 2^-14; bf16(0.1) = 205 * 2^-11.
  EXPECT_THAT(asDoubles(results[3]), ElementsAre(0.0999755859375, -2));
  EXPECT_THAT(asDoubles(results[4]), ElementsAre(0.10009765625, 3));
  EXPECT_THAT(asInts(results[5]), ElementsAre(INT64_MIN, INT64_MIN));
  EXPECT_THAT(asInts(results[6]), ElementsAre(1, 1));
}

TEST(TensorConversion, RoundTripsEveryDTypeBitForBit) {
  mlir::MLIRContext context;
  // A NaN with a payload and -0 must survive the trip unchanged.
  HostTensor f32 = floats(DType::f32, {3}, {-0.0, 1.5, 0});
  uint32_t payloadNaN = 0x7fc00123;
  std::memcpy(f32.data() + 8, &payloadNaN, 4);
  std::vector<HostTensor> tensors = {
      f32,
      floats(DType::f64, {2}, {0.1, -1e300}),
      floats(DType::f16, {2}, {65504, -0.5}),
      floats(DType::bf16, {2, 1}, {3.0e38, 1}),
      ints(DType::i1, {3}, {1, 0, 1}),
      ints(DType::i32, {2}, {-1, 7}),
      ints(DType::i64, {2}, {INT64_MIN, INT64_MAX})};
  for (const HostTensor &tensor : tensors) {
    mlir::DenseElementsAttr attr = toElementsAttr(tensor, &context);
    absl::StatusOr<HostTensor> back = toHostTensor(attr);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(back->bitwiseEqual(tensor)) << tensor.typeString();
  }
}

TEST(TensorConversion, DescribesKilnTensorTypesAndRejectsOthers) {
  mlir::MLIRContext context;
  auto i32 = mlir::IntegerType::get(&context, 32);
  auto described =
      describeTensorType(mlir::RankedTensorType::get({2, 3}, i32));
  ASSERT_TRUE(described.ok());
  EXPECT_EQ(described->first, DType::i32);
  EXPECT_THAT(described->second, ElementsAre(2, 3));
  auto i8 = mlir::IntegerType::get(&context, 8);
  EXPECT_FALSE(describeTensorType(mlir::RankedTensorType::get({2}, i8)).ok());
  EXPECT_FALSE(describeTensorType(i32).ok());
  EXPECT_EQ(dtypeOf(mlir::BFloat16Type::get(&context)), DType::bf16);
  EXPECT_EQ(elementTypeOf(DType::f16, &context),
            mlir::Float16Type::get(&context));
}

//===--- Fusion -----------------------------------------------------------===//

TEST(Evaluator, EvaluatesAFusionBodyOnItsInputs) {
  const std::string source =
      "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> "
      "(tensor<2xf32>, tensor<2xf32>) {\n"
      "  %0:2 = kiln.fusion multi_output(%a, %b) : (tensor<2xf32>, "
      "tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {\n"
      "  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):\n"
      "    %s = kiln.add %x, %y : tensor<2xf32>\n"
      "    %p = kiln.mul %s, %y : tensor<2xf32>\n"
      "    kiln.yield %p, %s : tensor<2xf32>, tensor<2xf32>\n"
      "  }\n"
      "  %1 = kiln.sub %0#0, %a : tensor<2xf32>\n"
      "  return %1, %0#1 : tensor<2xf32>, tensor<2xf32>\n}\n";
  // s = a + b = [4, 6]; p = s * b = [12, 24]; p - a = [11, 22].
  std::vector<HostTensor> results =
      mustRun(source, {floats(DType::f32, {2}, {1, 2}),
                       floats(DType::f32, {2}, {3, 4})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(asDoubles(results[0]), ElementsAre(11, 22));
  EXPECT_THAT(asDoubles(results[1]), ElementsAre(4, 6));
}

TEST(Evaluator, ReportsEveryOpToItsObserverInProgramOrder) {
  const std::string source =
      "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> "
      "tensor<2xf32> {\n"
      "  %0 = kiln.fusion loop(%a, %b) : (tensor<2xf32>, tensor<2xf32>) "
      "-> tensor<2xf32> {\n"
      "  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):\n"
      "    %s = kiln.add %x, %y : tensor<2xf32>\n"
      "    kiln.yield %s : tensor<2xf32>\n"
      "  }\n"
      "  %1 = kiln.mul %0, %a : tensor<2xf32>\n"
      "  return %1 : tensor<2xf32>\n}\n";
  mlir::MLIRContext context;
  context.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  // Each op with its operands' and results' first elements: the fused add
  // before the fusion op, which comes before the mul.
  std::vector<std::string> seen;
  auto observe = [&](mlir::Operation *op,
                     llvm::ArrayRef<const HostTensor *> operands,
                     llvm::ArrayRef<HostTensor> results) {
    std::string entry = op->getName().getStringRef().str();
    for (const HostTensor *operand : operands)
      entry += " " + std::to_string(int(operand->getDouble(0)));
    for (const HostTensor &result : results)
      entry += " -> " + std::to_string(int(result.getDouble(0)));
    seen.push_back(entry);
  };
  auto results = reference::evaluate(main,
                                     {floats(DType::f32, {2}, {1, 2}),
                                      floats(DType::f32, {2}, {3, 4})},
                                     observe);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(asDoubles((*results)[0]), ElementsAre(4, 12));
  EXPECT_THAT(seen, ElementsAre("kiln.add 1 3 -> 4", "kiln.fusion 1 3 -> 4",
                                "kiln.mul 4 1 -> 4"));
}

//===--- Random numbers ---------------------------------------------------===//

TEST(Evaluator, Bf16DotIntoF32KeepsTheBitsABf16ResultWouldRound) {
  // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14: exact in f32, 1 + 2^-6 in bf16.
  auto dot = [](const std::string &out) {
    return "func.func @main(%a: tensor<1xbf16>, %b: tensor<1xbf16>) -> " +
           out + " {\n  %0 = kiln.dot_general %a, %b, batch = [] x [], "
                 "contract = [0] x [0] : tensor<1xbf16>, tensor<1xbf16> -> " +
           out + "\n  return %0 : " + out + "\n}\n";
  };
  const double x = 1 + 0x1p-7;
  std::vector<HostTensor> in = {floats(DType::bf16, {1}, {x}),
                                floats(DType::bf16, {1}, {x})};
  std::vector<HostTensor> wide = mustRun(dot("tensor<f32>"), in);
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_EQ(wide[0].dtype(), DType::f32);
  EXPECT_EQ(wide[0].getDouble(0), 1 + 0x1p-6 + 0x1p-14);
  std::vector<HostTensor> narrow = mustRun(dot("tensor<bf16>"), in);
  ASSERT_EQ(narrow.size(), 1u);
  EXPECT_EQ(narrow[0].getDouble(0), 1 + 0x1p-6);
}

TEST(Philox, MatchesTheRandom123KnownAnswerForZeroKeyAndCounter) {
  std::array<uint32_t, 4> lanes = reference::philox4x32({0, 0, 0, 0}, {0, 0});
  EXPECT_THAT(lanes, ElementsAre(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu,
                                 0x9b00dbd8u));
}

/// @main(%s) -> (values of `type`, new state) with one kiln.rng_uniform.
std::string rng(const std::string &type) {
  return "func.func @main(%s: tensor<2xi64>) -> (" + type +
         ", tensor<2xi64>) {\n"
         "  %v, %n = kiln.rng_uniform %s : tensor<2xi64> -> " +
         type + "\n  return %v, %n : " + type + ", tensor<2xi64>\n}\n";
}

HostTensor state(int64_t key, int64_t counter) {
  return ints(DType::i64, {2}, {key, counter});
}

TEST(Evaluator, RngUniformTurnsPhiloxLanesIntoExactFloats) {
  // The KAT lanes: f32 keeps the top 24 bits, f16 11, bf16 8.
  std::vector<HostTensor> f32 = mustRun(rng("tensor<4xf32>"), {state(0, 0)});
  ASSERT_EQ(f32.size(), 2u);
  EXPECT_THAT(asDoubles(f32[0]),
              ElementsAre(0x6627e8 * 0x1p-24, 0xe169c5 * 0x1p-24,
                          0xbc57ac * 0x1p-24, 0x9b00db * 0x1p-24));
  std::vector<HostTensor> f16 = mustRun(rng("tensor<2xf16>"), {state(0, 0)});
  ASSERT_EQ(f16.size(), 2u);
  EXPECT_THAT(asDoubles(f16[0]),
              ElementsAre(0x331 * 0x1p-11, 0x70b * 0x1p-11));
  std::vector<HostTensor> bf16 = mustRun(rng("tensor<1xbf16>"), {state(0, 0)});
  ASSERT_EQ(bf16.size(), 2u);
  EXPECT_THAT(asDoubles(bf16[0]), ElementsAre(0x66 * 0x1p-8));
  // The spec gives no f64 recipe; the evaluator keeps the whole lane.
  std::vector<HostTensor> f64 = mustRun(rng("tensor<1xf64>"), {state(0, 0)});
  ASSERT_EQ(f64.size(), 2u);
  EXPECT_THAT(asDoubles(f64[0]), ElementsAre(0x6627e8d5 * 0x1p-32));
}

TEST(Evaluator, RngUniformIsDeterministicAndDependsOnTheKey) {
  HostTensor first = mustRun(rng("tensor<64xf32>"), {state(42, 7)}).at(0);
  HostTensor again = mustRun(rng("tensor<64xf32>"), {state(42, 7)}).at(0);
  HostTensor otherKey = mustRun(rng("tensor<64xf32>"), {state(43, 7)}).at(0);
  EXPECT_TRUE(first.bitwiseEqual(again));
  EXPECT_FALSE(first.bitwiseEqual(otherKey));
  // Key bits above 32 (k1) must matter too.
  HostTensor highKey =
      mustRun(rng("tensor<64xf32>"), {state(42 + (int64_t{1} << 32), 7)}).at(0);
  EXPECT_FALSE(first.bitwiseEqual(highKey));
}

TEST(Evaluator, RngUniformAdvancesTheCounterByGroupsOfFour) {
  std::vector<HostTensor> ten = mustRun(rng("tensor<2x5xf32>"), {state(5, 9)});
  ASSERT_EQ(ten.size(), 2u);
  EXPECT_THAT(asInts(ten[1]), ElementsAre(5, 12)); // ceil(10 / 4) = 3
  // The counter is a uint64 and wraps.
  std::vector<HostTensor> wrap = mustRun(rng("tensor<8xf32>"), {state(5, -1)});
  ASSERT_EQ(wrap.size(), 2u);
  EXPECT_THAT(asInts(wrap[1]), ElementsAre(5, 1));
  // Elements 4..7 under counter c are elements 0..3 under counter c + 1.
  HostTensor eight = mustRun(rng("tensor<8xf32>"), {state(5, 9)}).at(0);
  HostTensor next = mustRun(rng("tensor<4xf32>"), {state(5, 10)}).at(0);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(eight.getDouble(4 + i), next.getDouble(i)) << i;
}

TEST(Evaluator, RngUniformSamplesHaveTheMomentsOfUniform01) {
  HostTensor x = mustRun(rng("tensor<100000xf32>"), {state(1234, 0)}).at(0);
  double sum = 0, sumSquares = 0, low = 1, high = 0;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double v = x.getDouble(i);
    sum += v;
    sumSquares += v * v;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  double mean = sum / x.numElements();
  double variance = sumSquares / x.numElements() - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(variance, 1.0 / 12, 0.002);
  EXPECT_GE(low, 0.0);
  EXPECT_LT(high, 1.0);
}

} // namespace
} // namespace kiln
