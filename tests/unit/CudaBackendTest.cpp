// Differential tests of the CUDA backend against the reference evaluator: a
// compact set of ops and fusions, each compiled for $KILN_CUDA_ARCH (default
// sm_90) and run on the GPU, compared under docs/TESTING.md's rule with the
// CPU backend's scales: elementwise ops with transcendentals (f32 through
// the shared polynomials, f64 through libdevice), conversions between f32
// and bf16/f16, 16-bit products on cuBLASLt, reductions over inner and outer dimensions, softmax and
// layer norm as the pipeline fuses them, f32 dot_general on cuBLASLt
// (plain, transposed, batched), gather/scatter_add, and rng_uniform bit for
// bit. Every test skips without a GPU. The GPT-2 step is in
// CudaTrainStepTest.cpp; the exhaustive per-type coverage is the CPU's
// (CpuBackendTest), since both backends share every kernel's MLIR.
#include "BackendTestModules.h"
#include "CudaTestSupport.h"
#include "EvaluatorTestSupport.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace kiln::testing {
namespace {

using CudaBackend = CudaDeviceTest;

void expectOnCudaMatchesReference(const std::string &source,
                                  const std::vector<HostTensor> &inputs,
                                  double scale = 1) {
  expectMatchesReferenceOn(cudaProgramFactory(), source, inputs, scale);
}

const std::vector<int64_t> kShape = {3, 37};

TEST_F(CudaBackend, UnaryOpsAndTranscendentalsMatchReference) {
  const std::vector<std::string> ops = {"neg",   "abs",      "sign", "exp",
                                        "log",   "log1p",    "tanh", "sqrt",
                                        "rsqrt", "logistic", "erf",  "floor"};
  for (DType dtype : {DType::f32, DType::f64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::mt19937 rng(1);
    expectOnCudaMatchesReference(
        elementwiseModule(ops, 1, tensorType(dtype, kShape)),
        {randomTensor(dtype, kShape, rng)});
  }
}

TEST_F(CudaBackend, BinaryOpsMatchReference) {
  const std::vector<std::string> ops = {"add", "sub", "mul", "div",
                                        "max", "min", "pow"};
  for (DType dtype : {DType::f32, DType::f64}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::mt19937 rng(2);
    expectOnCudaMatchesReference(
        elementwiseModule(ops, 2, tensorType(dtype, kShape)),
        {randomTensor(dtype, kShape, rng), randomTensor(dtype, kShape, rng)});
  }
}

TEST_F(CudaBackend, ConvertBetweenF32AndHalfTypesMatchesReference) {
  std::string f32 = tensorType(DType::f32, kShape);
  std::string bf16 = tensorType(DType::bf16, kShape);
  std::string f16 = tensorType(DType::f16, kShape);
  std::string source = absl::StrCat(
      "func.func @main(%a: ", f32, ", %b: ", bf16, ", %h: ", f16, ") -> (",
      bf16, ", ", f16, ", ", f32, ", ", f32, ") {\n",
      "  %0 = kiln.convert %a : ", f32, " -> ", bf16, "\n",
      "  %1 = kiln.convert %a : ", f32, " -> ", f16, "\n",
      "  %2 = kiln.convert %b : ", bf16, " -> ", f32, "\n",
      "  %3 = kiln.convert %h : ", f16, " -> ", f32, "\n",
      "  return %0, %1, %2, %3 : ", bf16, ", ", f16, ", ", f32, ", ", f32,
      "\n}\n");
  std::mt19937 rng(6);
  // Large magnitudes overflow f16 (to ±Inf) and exercise bf16's rounding;
  // the small ones f16's denormals.
  HostTensor a = randomTensor(DType::f32, kShape, rng, 1e10);
  HostTensor small = randomTensor(DType::f32, kShape, rng, 300);
  for (int64_t i = 0; i < a.numElements(); i += 2)
    a.setDouble(i, small.getDouble(i));
  a.setDouble(1, 3e-6);
  a.setDouble(3, -6.1e-5);
  expectOnCudaMatchesReference(source,
                               {a, randomTensor(DType::bf16, kShape, rng, 300),
                                randomTensor(DType::f16, kShape, rng, 300)});
}

TEST_F(CudaBackend, ReductionsOverInnerAndOuterDimsMatchReference) {
  for (DType dtype : {DType::f32, DType::f16}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::string e(dtypeName(dtype));
    std::string in = absl::StrCat("tensor<6x5x130x", e, ">");
    std::string source =
        reduceModule(in, e, {"sum", "max"},
                     {{"[2]", "6x5x"}, {"[0]", "5x130x"}, {"[0, 1]", "130x"},
                      {"[0, 2]", "5x"}});
    std::mt19937 rng(8);
    // The CPU test's scale for lengths up to 200; [0, 2] adds 780
    // elements, still far inside it in practice (f64 accumulators).
    expectOnCudaMatchesReference(source,
                                 {randomTensor(dtype, {6, 5, 130}, rng)},
                                 /*scale=*/600);
  }
}

TEST_F(CudaBackend, SoftmaxAndLayerNormFusionsMatchReference) {
  std::mt19937 rng(4);
  expectOnCudaMatchesReference(softmaxSource(9, 130),
                               {randomTensor(DType::f32, {9, 130}, rng)}, 300);
  expectOnCudaMatchesReference(
      layerNormSource(7, 96),
      {randomTensor(DType::f32, {7, 96}, rng, 4, false),
       randomTensor(DType::f32, {96}, rng, 4, false),
       randomTensor(DType::f32, {96}, rng, 4, false)},
      300);
  // GPT-2 124M's row width, and more rows than one thread block (256
  // threads, a row each). The fused sums accumulate in f64, as on the CPU,
  // so the CPU test's scale holds at this width too.
  expectOnCudaMatchesReference(
      layerNormSource(300, 768),
      {randomTensor(DType::f32, {300, 768}, rng, 4, false),
       randomTensor(DType::f32, {768}, rng, 4, false),
       randomTensor(DType::f32, {768}, rng, 4, false)},
      300);
}

TEST_F(CudaBackend, F32DotGeneralRunsOnCublasLtAndMatchesReference) {
  struct Case {
    std::vector<int64_t> lhs, rhs, out;
    std::string dims;
    int64_t k; // the contraction length
  };
  const Case cases[] = {
      {{7, 33}, {33, 9}, {7, 9}, "batch = [] x [], contract = [1] x [0]", 33},
      {{33, 7}, {33, 9}, {7, 9}, "batch = [] x [], contract = [0] x [0]", 33},
      {{7, 33}, {9, 33}, {7, 9}, "batch = [] x [], contract = [1] x [1]", 33},
      {{2, 5, 6},
       {2, 6, 3},
       {2, 5, 3},
       "batch = [0] x [0], contract = [2] x [1]",
       6},
      {{5, 2, 6},
       {6, 3, 2},
       {2, 5, 3},
       "batch = [1] x [2], contract = [2] x [0]",
       6},
      // GPT-2 124M's hidden size as the contraction.
      {{128, 768},
       {768, 256},
       {128, 256},
       "batch = [] x [], contract = [1] x [0]",
       768},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dims + " k " + std::to_string(c.k));
    std::mt19937 rng(9);
    compiler::cpu::CpuCompileStats stats;
    // Finite inputs, as on the CPU: GEMM libraries need not keep NaN/Inf
    // positions exact. Scale: the random graphs' 4 (k + 1) for an f32
    // GEMM, and at least the CPU op test's 40.
    expectMatchesReferenceOn(
        cudaProgramFactory(&stats),
        dotModule(tensorType(DType::f32, c.lhs), tensorType(DType::f32, c.rhs),
                  tensorType(DType::f32, c.out), c.dims),
        {randomTensor(DType::f32, c.lhs, rng, 4, false),
         randomTensor(DType::f32, c.rhs, rng, 4, false)},
        std::max<double>(40, 4 * (c.k + 1)));
    EXPECT_EQ(stats.gemms, 1) << "expected one GEMM thunk (cuBLASLt)";
  }
}

// Mixed precision's products on the GPU: bf16 and f16 operands into f32
// and into their own type, one cuBLASLt GEMM each, against the reference
// (exact products summed in double, rounded once).
TEST_F(CudaBackend, SixteenBitDotGeneralRunsOnCublasLtAndMatchesReference) {
  for (DType in : {DType::bf16, DType::f16})
    for (DType out : {DType::f32, in}) {
      SCOPED_TRACE(std::string(dtypeName(in)) + " -> " +
                   std::string(dtypeName(out)));
      std::mt19937 rng(10);
      compiler::cpu::CpuCompileStats stats;
      expectMatchesReferenceOn(
          cudaProgramFactory(&stats),
          dotModule(tensorType(in, {2, 48, 96}), tensorType(in, {2, 96, 40}),
                    tensorType(out, {2, 48, 40}),
                    "batch = [0] x [0], contract = [2] x [1]"),
          {randomTensor(in, {2, 48, 96}, rng, 4, false),
           randomTensor(in, {2, 96, 40}, rng, 4, false)},
          4 * (96 + 1));
      EXPECT_EQ(stats.gemms, 1) << "expected one GEMM thunk (cuBLASLt)";
    }
}

TEST_F(CudaBackend, GatherAndScatterAddMatchReference) {
  for (DType dtype : {DType::f32, DType::f16}) {
    SCOPED_TRACE(std::string(dtypeName(dtype)));
    std::string e(dtypeName(dtype));
    std::string source = absl::StrCat(
        "func.func @main(%a: tensor<5x3x", e,
        ">, %i: tensor<2x4xi32>, %u: tensor<2x4x3x", e,
        ">, %j: tensor<6xi64>, %w: tensor<5x6x", e, ">) -> (tensor<2x4x3x", e,
        ">, tensor<5x3x", e, ">, tensor<5x6x", e, ">) {\n",
        "  %g = kiln.gather %a[%i], axis = 0 : tensor<5x3x", e,
        ">, tensor<2x4xi32> -> tensor<2x4x3x", e, ">\n",
        "  %s = kiln.scatter_add %a[%i], %u, axis = 0 : tensor<5x3x", e,
        ">, tensor<2x4xi32>, tensor<2x4x3x", e, ">\n",
        "  %t = kiln.scatter_add %w[%j], %w, axis = 1 : tensor<5x6x", e,
        ">, tensor<6xi64>, tensor<5x6x", e, ">\n",
        "  return %g, %s, %t : tensor<2x4x3x", e, ">, tensor<5x3x", e,
        ">, tensor<5x6x", e, ">\n}\n");
    std::mt19937 rng(10);
    // Negative, repeated and out-of-range indices (docs/IR.md's rules).
    HostTensor indices = ints(DType::i32, {2, 4}, {0, 4, -2, 7, 1, 1, 3, 1});
    HostTensor indices2 = ints(DType::i64, {6}, {5, 0, 0, 9, -1, 2});
    expectOnCudaMatchesReference(
        source,
        {randomTensor(dtype, {5, 3}, rng, 4, false), indices,
         randomTensor(dtype, {2, 4, 3}, rng, 4, false), indices2,
         randomTensor(dtype, {5, 6}, rng, 4, false)},
        /*scale=*/8);
  }
}

TEST_F(CudaBackend, RngUniformMatchesReferenceBitForBit) {
  // A small shape, and one spread over many thread blocks.
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{3, 7}, std::vector<int64_t>{257, 129}}) {
    for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
      std::string t = tensorType(dtype, shape);
      SCOPED_TRACE(t);
      std::string source = absl::StrCat(
          "func.func @main(%s: tensor<2xi64>) -> (", t,
          ", tensor<2xi64>) {\n  %v, %n = kiln.rng_uniform %s : tensor<2xi64> "
          "-> ",
          t, "\n  return %v, %n : ", t, ", tensor<2xi64>\n}\n");
      HostTensor state =
          ints(DType::i64, {2}, {0x123456789abcdefLL, -3 /* wraps */});
      expectOnCudaMatchesReference(source, {state}, /*scale=*/0);
    }
  }
}

} // namespace
} // namespace kiln::testing
