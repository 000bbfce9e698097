// The reference evaluator's shape, reduction and indexing ops against
// hand-computed answers: broadcast_in_dim, reshape, rank-3 transposes, slice,
// concatenate, pad, iota, reduce over several dims, dot_general with batch
// dims and leading contracting dims, gather and scatter_add.
#include "EvaluatorTestSupport.h"

#include <gmock/gmock.h>

#include <limits>

namespace kiln {
namespace {

using ::kiln::testing::asDoubles;
using ::kiln::testing::asInts;
using ::kiln::testing::floats;
using ::kiln::testing::ints;
using ::kiln::testing::runOne;
using ::testing::ElementsAre;
using ::testing::IsNan;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

/// @main(%a: in) -> out whose body is `%0 = <op> : <in> -> <out>`, where
/// `op` is the op's text up to its type signature.
std::string oneOp(const std::string &op, const std::string &in,
                  const std::string &out) {
  return "func.func @main(%a: " + in + ") -> " + out + " {\n  %0 = " + op +
         " : " + in + " -> " + out + "\n  return %0 : " + out + "\n}\n";
}

/// x[i, j, k] = 100 i + 10 j + k for a 2x3x4 i32 tensor.
HostTensor digits234() {
  HostTensor x(DType::i32, {2, 3, 4});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        x.setInt((i * 3 + j) * 4 + k, 100 * i + 10 * j + k);
  return x;
}

TEST(Evaluator, BroadcastInDimRepeatsSizeOneDims) {
  // Operand dim 0 (size 2) → result dim 0; operand dim 1 (size 1) → result
  // dim 2, repeated 3 times; result dim 1 is new.
  HostTensor x = ints(DType::i32, {2, 1}, {1, 2});
  EXPECT_THAT(asInts(runOne(oneOp("kiln.broadcast_in_dim %a, dims = [0, 2]",
                                  "tensor<2x1xi32>", "tensor<2x2x3xi32>"),
                            {x})),
              ElementsAre(1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2));
  HostTensor row = floats(DType::f32, {3}, {1, 2, 3});
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.broadcast_in_dim %a, dims = [1]",
                                     "tensor<3xf32>", "tensor<2x3xf32>"),
                               {row})),
              ElementsAre(1, 2, 3, 1, 2, 3));
  HostTensor scalar = floats(DType::f32, {}, {7});
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.broadcast_in_dim %a, dims = []",
                                     "tensor<f32>", "tensor<2x2xf32>"),
                               {scalar})),
              ElementsAre(7, 7, 7, 7));
}

TEST(Evaluator, ReshapeKeepsRowMajorOrder) {
  HostTensor x = floats(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor y = runOne(oneOp("kiln.reshape %a", "tensor<2x3xf32>",
                              "tensor<3x1x2xf32>"),
                        {x});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_THAT(asDoubles(y), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(Evaluator, TransposesRankThreeTensors) {
  // perm [2, 0, 1]: result[a, b, c] = x[b, c, a] = 100 b + 10 c + a.
  HostTensor y = runOne(oneOp("kiln.transpose %a, perm = [2, 0, 1]",
                              "tensor<2x3x4xi32>", "tensor<4x2x3xi32>"),
                        {digits234()});
  EXPECT_THAT(asInts(y), ElementsAre(0, 10, 20, 100, 110, 120,  //
                                     1, 11, 21, 101, 111, 121,  //
                                     2, 12, 22, 102, 112, 122,  //
                                     3, 13, 23, 103, 113, 123));
  // perm [1, 2, 0]: result[a, b, c] = x[c, a, b] = 100 c + 10 a + b.
  HostTensor z = runOne(oneOp("kiln.transpose %a, perm = [1, 2, 0]",
                              "tensor<2x3x4xi32>", "tensor<3x4x2xi32>"),
                        {digits234()});
  EXPECT_THAT(asInts(z), ElementsAre(0, 100, 1, 101, 2, 102, 3, 103,      //
                                     10, 110, 11, 111, 12, 112, 13, 113,  //
                                     20, 120, 21, 121, 22, 122, 23, 123));
}

TEST(Evaluator, SlicesWithStridesRoundingTheCountUp) {
  HostTensor x = ints(DType::i32, {7}, {0, 1, 2, 3, 4, 5, 6});
  EXPECT_THAT(asInts(runOne(oneOp("kiln.slice %a, start = [1], limit = [6], "
                                  "strides = [2]",
                                  "tensor<7xi32>", "tensor<3xi32>"),
                            {x})),
              ElementsAre(1, 3, 5));
  HostTensor m = ints(DType::i32, {3, 4},
                      {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23});
  EXPECT_THAT(asInts(runOne(oneOp("kiln.slice %a, start = [1, 0], limit = "
                                  "[3, 4], strides = [1, 3]",
                                  "tensor<3x4xi32>", "tensor<2x2xi32>"),
                            {m})),
              ElementsAre(10, 13, 20, 23));
}

TEST(Evaluator, ConcatenatesInputsInOrderAlongTheDimension) {
  const std::string source =
      "func.func @main(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>) -> "
      "tensor<2x3xf32> {\n"
      "  %0 = kiln.concatenate %a, %b, dim = 1 : (tensor<2x1xf32>, "
      "tensor<2x2xf32>) -> tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>\n}\n";
  HostTensor a = floats(DType::f32, {2, 1}, {1, 2});
  HostTensor b = floats(DType::f32, {2, 2}, {3, 4, 5, 6});
  EXPECT_THAT(asDoubles(runOne(source, {a, b})),
              ElementsAre(1, 3, 4, 2, 5, 6));

  const std::string three =
      "func.func @main(%a: tensor<1xi32>, %b: tensor<2xi32>) -> "
      "tensor<4xi32> {\n"
      "  %0 = kiln.concatenate %b, %a, %a, dim = 0 : (tensor<2xi32>, "
      "tensor<1xi32>, tensor<1xi32>) -> tensor<4xi32>\n"
      "  return %0 : tensor<4xi32>\n}\n";
  EXPECT_THAT(asInts(runOne(three, {ints(DType::i32, {1}, {9}),
                                    ints(DType::i32, {2}, {1, 2})})),
              ElementsAre(1, 2, 9, 9));
}

TEST(Evaluator, PadsLowAndHighEdgesWithTheValue) {
  const std::string source =
      "func.func @main(%a: tensor<2x2xf32>, %v: tensor<f32>) -> "
      "tensor<3x4xf32> {\n"
      "  %0 = kiln.pad %a, %v, low = [1, 0], high = [0, 2] : tensor<2x2xf32>, "
      "tensor<f32> -> tensor<3x4xf32>\n"
      "  return %0 : tensor<3x4xf32>\n}\n";
  HostTensor x = floats(DType::f32, {2, 2}, {1, 2, 3, 4});
  HostTensor v = floats(DType::f32, {}, {9});
  EXPECT_THAT(asDoubles(runOne(source, {x, v})),
              ElementsAre(9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9));
}

TEST(Evaluator, IotaCountsAlongItsDimension) {
  const std::string ints23 =
      "func.func @main() -> tensor<2x3xi32> {\n"
      "  %0 = kiln.iota dim = 1 : tensor<2x3xi32>\n"
      "  return %0 : tensor<2x3xi32>\n}\n";
  EXPECT_THAT(asInts(runOne(ints23)), ElementsAre(0, 1, 2, 0, 1, 2));
  const std::string floats23 =
      "func.func @main() -> tensor<2x3xf32> {\n"
      "  %0 = kiln.iota dim = 0 : tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>\n}\n";
  EXPECT_THAT(asDoubles(runOne(floats23)), ElementsAre(0, 0, 0, 1, 1, 1));
}

/// x[i, j, k] for a 2x3x2 f32 tensor holding 1..12 in row-major order.
HostTensor oneToTwelve() {
  return floats(DType::f32, {2, 3, 2},
                {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST(Evaluator, ReducesOverSeveralDimensions) {
  // dims [0, 2] leave j: j=0 sums 1+2+7+8, j=1 3+4+9+10, j=2 5+6+11+12.
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce sum %a, dims = [0, 2]",
                                     "tensor<2x3x2xf32>", "tensor<3xf32>"),
                               {oneToTwelve()})),
              ElementsAre(18, 26, 34));
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce max %a, dims = [2, 0]",
                                     "tensor<2x3x2xf32>", "tensor<3xf32>"),
                               {oneToTwelve()})),
              ElementsAre(8, 10, 12));
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce min %a, dims = [1]",
                                     "tensor<2x3x2xf32>", "tensor<2x2xf32>"),
                               {oneToTwelve()})),
              ElementsAre(1, 2, 7, 8));
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce prod %a, dims = [2]",
                                     "tensor<2x3x2xf32>", "tensor<2x3xf32>"),
                               {oneToTwelve()})),
              ElementsAre(2, 12, 30, 56, 90, 132));
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce sum %a, dims = [0, 1, 2]",
                                     "tensor<2x3x2xf32>", "tensor<f32>"),
                               {oneToTwelve()})),
              ElementsAre(78));
}

TEST(Evaluator, ReduceMaxAndMinPropagateNaN) {
  HostTensor x = floats(DType::f32, {2, 3}, {1, kNaN, 3, 4, 5, 6});
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce max %a, dims = [1]",
                                     "tensor<2x3xf32>", "tensor<2xf32>"),
                               {x})),
              ElementsAre(IsNan(), 6));
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce min %a, dims = [1]",
                                     "tensor<2x3xf32>", "tensor<2xf32>"),
                               {x})),
              ElementsAre(IsNan(), 4));
}

TEST(Evaluator, ReduceAccumulatesF16InDoubleAndRoundsOnce) {
  // In f16, 2048 + 1 ties back to 2048, so summing in f16 gives 2048; in
  // double the sum is 2050, which f16 represents.
  HostTensor x = floats(DType::f16, {3}, {2048, 1, 1});
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce sum %a, dims = [0]",
                                     "tensor<3xf16>", "tensor<f16>"),
                               {x})),
              ElementsAre(2050));
}

TEST(Evaluator, ReduceWrapsIntegersAndGivesInitForEmptyInputs) {
  HostTensor x = ints(DType::i32, {2}, {kI32Max, 1});
  EXPECT_THAT(asInts(runOne(oneOp("kiln.reduce sum %a, dims = [0]",
                                  "tensor<2xi32>", "tensor<i32>"),
                            {x})),
              ElementsAre(kI32Min));
  HostTensor empty(DType::i32, {0, 2});
  EXPECT_THAT(asInts(runOne(oneOp("kiln.reduce max %a, dims = [0]",
                                  "tensor<0x2xi32>", "tensor<2xi32>"),
                            {empty})),
              ElementsAre(kI32Min, kI32Min));
  EXPECT_THAT(asInts(runOne(oneOp("kiln.reduce min %a, dims = [0]",
                                  "tensor<0x2xi32>", "tensor<2xi32>"),
                            {empty})),
              ElementsAre(kI32Max, kI32Max));
  HostTensor emptyFloat(DType::f32, {0});
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce max %a, dims = [0]",
                                     "tensor<0xf32>", "tensor<f32>"),
                               {emptyFloat})),
              ElementsAre(-kInf));
  EXPECT_THAT(asDoubles(runOne(oneOp("kiln.reduce prod %a, dims = [0]",
                                     "tensor<0xf32>", "tensor<f32>"),
                               {emptyFloat})),
              ElementsAre(1));
}

/// @main(%a: lhs, %b: rhs) -> out with one kiln.dot_general `dims`.
std::string dot(const std::string &dims, const std::string &lhs,
                const std::string &rhs, const std::string &out) {
  return "func.func @main(%a: " + lhs + ", %b: " + rhs + ") -> " + out +
         " {\n  %0 = kiln.dot_general %a, %b, " + dims + " : " + lhs + ", " +
         rhs + " -> " + out + "\n  return %0 : " + out + "\n}\n";
}

TEST(Evaluator, DotGeneralContractsWithinEachBatch) {
  // Batch 0: [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]].
  // Batch 1: [[1,0,-1],[2,2,2]] x [[1,2],[3,4],[5,6]] = [[-4,-4],[18,24]].
  HostTensor lhs = floats(DType::f32, {2, 2, 3},
                          {1, 2, 3, 4, 5, 6, 1, 0, -1, 2, 2, 2});
  HostTensor rhs = floats(DType::f32, {2, 3, 2},
                          {1, 0, 0, 1, 1, 1, 1, 2, 3, 4, 5, 6});
  EXPECT_THAT(
      asDoubles(runOne(dot("batch = [0] x [0], contract = [2] x [1]",
                           "tensor<2x2x3xf32>", "tensor<2x3x2xf32>",
                           "tensor<2x2x2xf32>"),
                       {lhs, rhs})),
      ElementsAre(4, 5, 10, 11, -4, -4, 18, 24));
}

TEST(Evaluator, DotGeneralContractsALeadingDimension) {
  // result[i, j] = sum_k lhs[k, i] rhs[k, j]: lhs^T rhs.
  HostTensor lhs = floats(DType::f32, {3, 2}, {1, 2, 3, 4, 5, 6});
  HostTensor rhs = floats(DType::f32, {3, 2}, {1, 0, 0, 1, 1, 1});
  EXPECT_THAT(asDoubles(runOne(dot("batch = [] x [], contract = [0] x [0]",
                                   "tensor<3x2xf32>", "tensor<3x2xf32>",
                                   "tensor<2x2xf32>"),
                               {lhs, rhs})),
              ElementsAre(6, 8, 8, 10));
  // Batch dims at different positions: result[b] = sum_k lhs[k, b] rhs[b, k]
  // = [1+3+5, 2*1 + 4*0 + 6*(-1)].
  HostTensor rhs2 = floats(DType::f32, {2, 3}, {1, 1, 1, 1, 0, -1});
  EXPECT_THAT(asDoubles(runOne(dot("batch = [1] x [0], contract = [0] x [1]",
                                   "tensor<3x2xf32>", "tensor<2x3xf32>",
                                   "tensor<2xf32>"),
                               {lhs, rhs2})),
              ElementsAre(9, -4));
}

TEST(Evaluator, DotGeneralWithoutContractionIsAnOuterProduct) {
  HostTensor lhs = ints(DType::i32, {2}, {1, 2});
  HostTensor rhs = ints(DType::i32, {3}, {3, 4, 65536});
  // 2 * 65536 fits; the i32 wrap shows in the next test.
  EXPECT_THAT(asInts(runOne(dot("batch = [] x [], contract = [] x []",
                                "tensor<2xi32>", "tensor<3xi32>",
                                "tensor<2x3xi32>"),
                            {lhs, rhs})),
              ElementsAre(3, 4, 65536, 6, 8, 131072));
}

TEST(Evaluator, DotGeneralWrapsIntegersAndRoundsFloatsOnce) {
  HostTensor a = ints(DType::i32, {2}, {65536, 1});
  HostTensor b = ints(DType::i32, {2}, {65536, 5});
  EXPECT_THAT(asInts(runOne(dot("batch = [] x [], contract = [0] x [0]",
                                "tensor<2xi32>", "tensor<2xi32>",
                                "tensor<i32>"),
                            {a, b})),
              ElementsAre(5)); // 2^32 wraps to 0
  HostTensor h = floats(DType::f16, {3}, {2048, 1, 1});
  HostTensor ones = floats(DType::f16, {3}, {1, 1, 1});
  EXPECT_THAT(asDoubles(runOne(dot("batch = [] x [], contract = [0] x [0]",
                                   "tensor<3xf16>", "tensor<3xf16>",
                                   "tensor<f16>"),
                               {h, ones})),
              ElementsAre(2050));
}

TEST(Evaluator, GatherClampsOutOfRangeIndices) {
  const std::string source =
      "func.func @main(%x: tensor<3x2xf32>, %i: tensor<4xi32>) -> "
      "tensor<4x2xf32> {\n"
      "  %0 = kiln.gather %x[%i], axis = 0 : tensor<3x2xf32>, tensor<4xi32> "
      "-> tensor<4x2xf32>\n"
      "  return %0 : tensor<4x2xf32>\n}\n";
  HostTensor x = floats(DType::f32, {3, 2}, {1, 2, 3, 4, 5, 6});
  HostTensor i = ints(DType::i32, {4}, {2, -1, 5, 0});
  EXPECT_THAT(asDoubles(runOne(source, {x, i})),
              ElementsAre(5, 6, 1, 2, 5, 6, 1, 2));
}

TEST(Evaluator, GatherInsertsIndexDimsAtTheAxis) {
  // result[a, i, j] = x[a, idx[i, j]].
  const std::string source =
      "func.func @main(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>) -> "
      "tensor<2x2x2xf32> {\n"
      "  %0 = kiln.gather %x[%i], axis = 1 : tensor<2x3xf32>, tensor<2x2xi64> "
      "-> tensor<2x2x2xf32>\n"
      "  return %0 : tensor<2x2x2xf32>\n}\n";
  HostTensor x = floats(DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor i = ints(DType::i64, {2, 2}, {2, 0, 1, 1});
  EXPECT_THAT(asDoubles(runOne(source, {x, i})),
              ElementsAre(3, 1, 2, 2, 6, 4, 5, 5));
}

TEST(Evaluator, ScatterAddAccumulatesRepeatsAndSkipsOutOfRange) {
  const std::string source =
      "func.func @main(%x: tensor<3xf32>, %i: tensor<5xi32>, "
      "%u: tensor<5xf32>) -> tensor<3xf32> {\n"
      "  %0 = kiln.scatter_add %x[%i], %u, axis = 0 : tensor<3xf32>, "
      "tensor<5xi32>, tensor<5xf32>\n"
      "  return %0 : tensor<3xf32>\n}\n";
  HostTensor x = floats(DType::f32, {3}, {1, 2, 3});
  HostTensor i = ints(DType::i32, {5}, {0, 2, 0, 3, -1});
  HostTensor u = floats(DType::f32, {5}, {10, 20, 30, 40, 50});
  EXPECT_THAT(asDoubles(runOne(source, {x, i, u})), ElementsAre(41, 2, 23));
}

TEST(Evaluator, ScatterAddAlongAnInnerAxis) {
  // Row r gets updates[r, k] added at column idx[k] = [1, 1, 2].
  const std::string source =
      "func.func @main(%x: tensor<2x3xi32>, %i: tensor<3xi64>, "
      "%u: tensor<2x3xi32>) -> tensor<2x3xi32> {\n"
      "  %0 = kiln.scatter_add %x[%i], %u, axis = 1 : tensor<2x3xi32>, "
      "tensor<3xi64>, tensor<2x3xi32>\n"
      "  return %0 : tensor<2x3xi32>\n}\n";
  HostTensor x = ints(DType::i32, {2, 3}, {0, 0, kI32Max, 0, 0, 0});
  HostTensor i = ints(DType::i64, {3}, {1, 1, 2});
  HostTensor u = ints(DType::i32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(asInts(runOne(source, {x, i, u})),
              ElementsAre(0, 3, kI32Min + 2, 0, 9, 6));
}

TEST(Evaluator, ScatterAddRoundsFloatsOnce) {
  const std::string source =
      "func.func @main(%x: tensor<1xf16>, %i: tensor<2xi32>, "
      "%u: tensor<2xf16>) -> tensor<1xf16> {\n"
      "  %0 = kiln.scatter_add %x[%i], %u, axis = 0 : tensor<1xf16>, "
      "tensor<2xi32>, tensor<2xf16>\n"
      "  return %0 : tensor<1xf16>\n}\n";
  HostTensor x = floats(DType::f16, {1}, {2048});
  HostTensor i = ints(DType::i32, {2}, {0, 0});
  HostTensor u = floats(DType::f16, {2}, {1, 1});
  EXPECT_THAT(asDoubles(runOne(source, {x, i, u})), ElementsAre(2050));
}

} // namespace
} // namespace kiln
