// GEMM thunks on the CUDA runtime, computed by the fake cuBLASLt
// (tests/fake-cuda), which honours cuBLASLt's layouts, orders, transposes,
// batch strides and alignment preferences and refuses what it does not
// model: the numbers match a naive row-major product only if kiln's
// column-major mapping, strides and alignments are right. Also: TF32 only
// when allowed, k = 0, failures that name the thunk, one workspace.
#include "FakeCudaSupport.h"

#include "absl/strings/str_cat.h"

#include <cublasLt.h>

#include <cmath>
#include <cstdint>
#include <tuple>

namespace kiln {
namespace {

using namespace cudatest;
using Kind = runtime::BufferSlot::Kind;
using CudaGemmThunks = FakeCudaTest;

struct GemmShape {
  int64_t batch, m, n, k;
  bool transA = false, transB = false;
};

std::vector<int64_t> aShape(const GemmShape &g) {
  return g.transA ? std::vector<int64_t>{g.batch, g.k, g.m}
                  : std::vector<int64_t>{g.batch, g.m, g.k};
}

std::vector<int64_t> bShape(const GemmShape &g) {
  return g.transB ? std::vector<int64_t>{g.batch, g.n, g.k}
                  : std::vector<int64_t>{g.batch, g.k, g.n};
}

runtime::Thunk gemmThunk(const GemmShape &g, uint32_t a, uint32_t b,
                         uint32_t c) {
  runtime::Thunk t;
  t.kind = runtime::Thunk::Kind::gemm;
  t.gemm.a = a;
  t.gemm.b = b;
  t.gemm.c = c;
  t.gemm.batch = g.batch;
  t.gemm.m = g.m;
  t.gemm.n = g.n;
  t.gemm.k = g.k;
  t.gemm.transA = g.transA;
  t.gemm.transB = g.transB;
  return t;
}

/// C = op(A) · op(B) straight from the inputs (f32, bf16 or f16) into the
/// output (f32, or the inputs' 16-bit type).
runtime::Executable
gemmExecutable(const GemmShape &g, bool allowTf32 = false,
               runtime::GemmType input = runtime::GemmType::f32,
               runtime::GemmType output = runtime::GemmType::f32) {
  runtime::Executable e = cudaExecutable();
  e.allowTf32 = allowTf32;
  auto dtype = [](runtime::GemmType t) {
    return t == runtime::GemmType::bf16  ? DType::bf16
           : t == runtime::GemmType::f16 ? DType::f16
                                         : DType::f32;
  };
  e.signature.inputs = {{dtype(input), aShape(g), false},
                        {dtype(input), bShape(g), false}};
  e.signature.outputs = {{dtype(output), {g.batch, g.m, g.n}}};
  uint64_t inBytes = runtime::gemmTypeBytes(input);
  uint64_t aBytes = inBytes * g.batch * g.m * g.k,
           bBytes = inBytes * g.batch * g.k * g.n,
           cBytes = runtime::gemmTypeBytes(output) * g.batch * g.m * g.n;
  e.plan.slots = {slot(Kind::input, 0, 0, aBytes),
                  slot(Kind::input, 1, 0, bBytes),
                  slot(Kind::output, 0, 0, cBytes)};
  e.thunks = {gemmThunk(g, 0, 1, 2)};
  e.thunks[0].gemm.input = input;
  e.thunks[0].gemm.output = output;
  e.plan.outputSlots = {2};
  e.plan.outputDonors = {-1};
  return e;
}

/// Values in [-1, 1) with all mantissa bits (of f32, or bf16's 8) in use.
HostTensor randomTensor(std::vector<int64_t> shape, uint32_t seed,
                        DType dtype = DType::f32) {
  HostTensor t(dtype, std::move(shape));
  uint32_t state = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    state = state * 1664525u + 1013904223u;
    t.setDouble(i, (state >> 8) / double(1 << 23) - 1.0);
  }
  return t;
}

/// The row-major product in double, as GemmThunk defines it.
std::vector<double> naiveGemm(const GemmShape &g, const HostTensor &a,
                              const HostTensor &b) {
  std::vector<double> c(g.batch * g.m * g.n, 0.0);
  for (int64_t batch = 0; batch < g.batch; ++batch)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          int64_t ai =
              batch * g.m * g.k + (g.transA ? p * g.m + i : i * g.k + p);
          int64_t bi =
              batch * g.k * g.n + (g.transB ? j * g.k + p : p * g.n + j);
          sum += a.getDouble(ai) * b.getDouble(bi);
        }
        c[(batch * g.m + i) * g.n + j] = sum;
      }
  return c;
}

double maxRelativeError(const HostTensor &actual,
                        const std::vector<double> &expected) {
  double worst = 0;
  for (int64_t i = 0; i < actual.numElements(); ++i)
    worst = std::max(worst, std::abs(actual.getDouble(i) - expected[i]) /
                                std::max(1.0, std::abs(expected[i])));
  return worst;
}

std::unique_ptr<runtime::Program>
load(runtime::Executable executable,
     runtime::CudaRuntimeOptions options = fakeCudaOptions()) {
  auto program = runtime::loadCudaProgram(std::move(executable), options);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : nullptr;
}

absl::StatusOr<std::vector<HostTensor>>
runGemm(runtime::Program &program, const HostTensor &a, const HostTensor &b) {
  return program.run(runtime::inputList(runtime::ProgramInput::borrow(a),
                                        runtime::ProgramInput::borrow(b)));
}

class CudaGemmLayouts
    : public FakeCudaTest,
      public ::testing::WithParamInterface<std::tuple<bool, bool>> {};

TEST_P(CudaGemmLayouts, MatchesANaiveRowMajorProductOnEveryRun) {
  GemmShape g{3, 5, 7, 4, std::get<0>(GetParam()), std::get<1>(GetParam())};
  auto program = load(gemmExecutable(g));
  ASSERT_NE(program, nullptr);
  for (uint32_t run = 0; run < 3; ++run) { // direct, captured, replayed
    SCOPED_TRACE(run);
    HostTensor a = randomTensor(aShape(g), 2 * run + 1);
    HostTensor b = randomTensor(bShape(g), 2 * run + 2);
    auto out = runGemm(*program, a, b);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_LT(maxRelativeError((*out)[0], naiveGemm(g, a, b)), 1e-6);
  }
  EXPECT_EQ(
      FAKE_CUBLASLT(fake_cublaslt_calls_of)("cublasLtMatmulAlgoGetHeuristic"),
      1); // chosen once, at load
  EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_calls_of)("cublasLtMatmul"), 2);
  EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_matmuls_executed)(), 3);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_graph_launches)(), 2);
}

INSTANTIATE_TEST_SUITE_P(
    Transposes, CudaGemmLayouts,
    ::testing::Combine(::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<bool, bool>> &info) {
      return std::string(std::get<0>(info.param) ? "TransA" : "A") +
             (std::get<1>(info.param) ? "TransB" : "B");
    });

TEST_F(CudaGemmThunks, OperandsAtArenaOffsetsBelowTheDefaultAlignment) {
  // A copied into the arena at offset 64, C written at offset 192: batch
  // strides of 48 and 60 bytes. cuBLASLt assumes 256-byte alignment unless
  // told otherwise; the fake refuses a pointer less aligned than promised.
  GemmShape g{2, 3, 5, 4};
  runtime::Executable e = cudaExecutable();
  e.signature.inputs = {{DType::f32, aShape(g), false},
                        {DType::f32, bShape(g), false}};
  e.signature.outputs = {{DType::f32, {g.batch, g.m, g.n}}};
  e.plan.arenaBytes = 384;
  e.plan.slots = {slot(Kind::input, 0, 0, 96), slot(Kind::input, 1, 0, 160),
                  slot(Kind::arena, 0, 64, 96), slot(Kind::arena, 0, 192, 120),
                  slot(Kind::output, 0, 0, 120)};
  e.thunks = {copyThunk(0, 2, 96), gemmThunk(g, 2, 1, 3), copyThunk(3, 4, 120)};
  e.plan.outputSlots = {4};
  e.plan.outputDonors = {-1};
  auto program = load(e);
  ASSERT_NE(program, nullptr);
  for (uint32_t run = 0; run < 3; ++run) {
    HostTensor a = randomTensor(aShape(g), 10 + run);
    HostTensor b = randomTensor(bShape(g), 20 + run);
    auto out = runGemm(*program, a, b);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_LT(maxRelativeError((*out)[0], naiveGemm(g, a, b)), 1e-6) << run;
  }
}

// Operands read in place (GemmOperandView): A is rows 2..5 of each of
// [batch, 6, k] (attention's chunk of query rows: offset 2k, batch stride
// 6k); B starts 5 elements into a flat buffer, its matrices 3 elements
// apart beyond their size (a 20-byte offset: the alignment promised falls
// to 4). Layouts, pointers and alignments must all follow the views for
// the fake's product to equal the naive one on the sliced matrices.
TEST_F(CudaGemmThunks, OperandsReadInPlaceThroughTheirViews) {
  for (bool transB : {false, true}) {
    SCOPED_TRACE(transB);
    GemmShape g{2, 4, 3, 5, false, transB};
    const int64_t rows = 6, first = 2, gap = 3, lead = 5;
    const int64_t bStride = g.k * g.n + gap;
    HostTensor aSource = randomTensor({g.batch, rows, g.k}, 31);
    HostTensor bSource = randomTensor({lead + g.batch * bStride}, 32);
    HostTensor a(DType::f32, aShape(g)), b(DType::f32, bShape(g));
    for (int64_t i = 0; i < a.numElements(); ++i) {
      int64_t batch = i / (g.m * g.k), within = i % (g.m * g.k);
      a.setDouble(i, aSource.getDouble(batch * rows * g.k + first * g.k + within));
    }
    for (int64_t i = 0; i < b.numElements(); ++i) {
      int64_t batch = i / (g.k * g.n), within = i % (g.k * g.n);
      b.setDouble(i, bSource.getDouble(lead + batch * bStride + within));
    }
    runtime::Executable e = gemmExecutable(g);
    e.signature.inputs = {{DType::f32, aSource.shape(), false},
                          {DType::f32, bSource.shape(), false}};
    e.plan.slots[0].bytes = 4 * aSource.numElements();
    e.plan.slots[1].bytes = 4 * bSource.numElements();
    e.thunks[0].gemm.aView = {first * g.k, rows * g.k};
    e.thunks[0].gemm.bView = {lead, bStride};
    auto program = load(e);
    ASSERT_NE(program, nullptr);
    for (uint32_t run = 0; run < 2; ++run) {
      auto out = runGemm(*program, aSource, bSource);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_LT(maxRelativeError((*out)[0], naiveGemm(g, a, b)), 1e-6) << run;
    }
  }
}

TEST_F(CudaGemmThunks, Tf32OnlyWhenTheExecutableAllowsIt) {
  GemmShape g{1, 4, 4, 64};
  HostTensor a = randomTensor(aShape(g), 1), b = randomTensor(bShape(g), 2);
  std::vector<double> exact = naiveGemm(g, a, b);
  {
    auto program = load(gemmExecutable(g, /*allowTf32=*/false));
    ASSERT_NE(program, nullptr);
    EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_last_compute_type)(),
              CUBLAS_COMPUTE_32F);
    auto out = runGemm(*program, a, b);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_LT(maxRelativeError((*out)[0], exact), 1e-6);
  }
  auto program = load(gemmExecutable(g, /*allowTf32=*/true));
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_last_compute_type)(),
            CUBLAS_COMPUTE_32F_FAST_TF32);
  auto out = runGemm(*program, a, b);
  ASSERT_TRUE(out.ok()) << out.status();
  // Inputs rounded to 10 mantissa bits: visibly off, within TF32's error.
  double error = maxRelativeError((*out)[0], exact);
  EXPECT_GT(error, 1e-6);
  EXPECT_LT(error, 1e-2);
}

// Mixed precision: bf16 A and B into an f32 C, every transpose, batched:
// bf16 layouts, exact f32 compute even where the executable allows TF32
// (which applies to f32 inputs), and the exact products summed in f32.
TEST_F(CudaGemmThunks, Bf16InputsAccumulateInF32) {
  for (bool transA : {false, true})
    for (bool transB : {false, true}) {
      SCOPED_TRACE(std::to_string(transA) + std::to_string(transB));
      GemmShape g{3, 5, 7, 40, transA, transB};
      auto program = load(
          gemmExecutable(g, /*allowTf32=*/true, runtime::GemmType::bf16));
      ASSERT_NE(program, nullptr);
      EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_last_compute_type)(),
                CUBLAS_COMPUTE_32F);
      HostTensor a = randomTensor(aShape(g), 5, DType::bf16);
      HostTensor b = randomTensor(bShape(g), 6, DType::bf16);
      auto out = runGemm(*program, a, b);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].dtype(), DType::f32);
      EXPECT_LT(maxRelativeError((*out)[0], naiveGemm(g, a, b)), 1e-6);
    }
}

// bf16 into bf16 (kiln-autocast's products): bf16 C and D layouts, the f32
// sum rounded once: within half a bf16 ulp (2^-8 relative) of the exact
// product, and the zero fill of an empty inner dimension sized in bf16.
TEST_F(CudaGemmThunks, Bf16IntoBf16RoundsTheSumOnce) {
  GemmShape g{2, 5, 7, 40, false, true};
  auto program = load(gemmExecutable(g, false, runtime::GemmType::bf16,
                                     runtime::GemmType::bf16));
  ASSERT_NE(program, nullptr);
  HostTensor a = randomTensor(aShape(g), 7, DType::bf16);
  HostTensor b = randomTensor(bShape(g), 8, DType::bf16);
  auto out = runGemm(*program, a, b);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::bf16);
  std::vector<double> exact = naiveGemm(g, a, b);
  for (int64_t i = 0; i < (*out)[0].numElements(); ++i)
    EXPECT_LE(std::abs((*out)[0].getDouble(i) - exact[i]),
              0x1p-8 * std::abs(exact[i]) + 1e-30)
        << "element " << i;
  GemmShape empty{2, 3, 4, 0};
  auto zeros = load(gemmExecutable(empty, false, runtime::GemmType::bf16,
                                   runtime::GemmType::bf16));
  ASSERT_NE(zeros, nullptr);
  HostTensor ea(DType::bf16, aShape(empty)), eb(DType::bf16, bShape(empty));
  auto filled = runGemm(*zeros, ea, eb);
  ASSERT_TRUE(filled.ok()) << filled.status();
  for (int64_t i = 0; i < (*filled)[0].numElements(); ++i)
    EXPECT_EQ((*filled)[0].getDouble(i), 0.0);
}

// f16 (--fp16's products): f16 A and B into f32 sum exactly; into f16 the
// f32 sum is rounded once, within half an f16 ulp (2^-11 relative), and a
// sum past f16's largest value (65504) becomes infinity, which is what the
// loss scaler of an fp16 step detects.
TEST_F(CudaGemmThunks, F16ProductsRoundOnceAndOverflowToInfinity) {
  GemmShape g{2, 5, 7, 40, true, false};
  auto wide = load(gemmExecutable(g, /*allowTf32=*/true,
                                  runtime::GemmType::f16));
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_last_compute_type)(),
            CUBLAS_COMPUTE_32F);
  HostTensor a = randomTensor(aShape(g), 9, DType::f16);
  HostTensor b = randomTensor(bShape(g), 10, DType::f16);
  std::vector<double> exact = naiveGemm(g, a, b);
  auto sums = runGemm(*wide, a, b);
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_EQ((*sums)[0].dtype(), DType::f32);
  EXPECT_LT(maxRelativeError((*sums)[0], exact), 1e-6);

  auto narrow = load(gemmExecutable(g, false, runtime::GemmType::f16,
                                    runtime::GemmType::f16));
  ASSERT_NE(narrow, nullptr);
  auto out = runGemm(*narrow, a, b);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::f16);
  for (int64_t i = 0; i < (*out)[0].numElements(); ++i)
    EXPECT_LE(std::abs((*out)[0].getDouble(i) - exact[i]),
              0x1p-11 * std::abs(exact[i]) + 0x1p-25)
        << "element " << i;

  // 40 products of 64 · 32 sum to 81920 > 65504.
  HostTensor big(DType::f16, aShape(g)), wideB(DType::f16, bShape(g));
  for (int64_t i = 0; i < big.numElements(); ++i)
    big.setDouble(i, 64.0);
  for (int64_t i = 0; i < wideB.numElements(); ++i)
    wideB.setDouble(i, 32.0);
  auto overflow = runGemm(*narrow, big, wideB);
  ASSERT_TRUE(overflow.ok()) << overflow.status();
  for (int64_t i = 0; i < (*overflow)[0].numElements(); ++i)
    EXPECT_EQ((*overflow)[0].getDouble(i), INFINITY) << "element " << i;
}

TEST_F(CudaGemmThunks, EmptyInnerDimensionWritesZeros) {
  GemmShape g{2, 3, 4, 0};
  auto program = load(gemmExecutable(g));
  ASSERT_NE(program, nullptr);
  HostTensor a(DType::f32, aShape(g)), b(DType::f32, bShape(g));
  for (int run = 0; run < 3; ++run) {
    auto out = runGemm(*program, a, b);
    ASSERT_TRUE(out.ok()) << out.status();
    // Fresh device memory is garbage in the fake: zeros were written.
    for (int64_t i = 0; i < (*out)[0].numElements(); ++i)
      ASSERT_EQ((*out)[0].getDouble(i), 0.0) << run << ": " << i;
  }
  EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_calls_of)("cublasLtMatmul"), 0);
}

/// gemmExecutable with a third input, an f32 accumulator shaped like C
/// that the GEMM adds (kiln-fuse-gemm-epilogue's thunks). `inPlace`: a
/// copy thunk puts it in C first and the GEMM adds C into itself (C == D
/// for cuBLASLt), as when the plan gives C the accumulator's bytes.
runtime::Executable accumulatingExecutable(const GemmShape &g,
                                           runtime::GemmType input,
                                           bool inPlace) {
  runtime::Executable e = gemmExecutable(g, false, input);
  uint64_t cBytes = 4 * g.batch * g.m * g.n;
  e.signature.inputs.push_back({DType::f32, {g.batch, g.m, g.n}, false});
  e.plan.slots.push_back(slot(Kind::input, 2, 0, cBytes));
  runtime::GemmThunk &gemm = e.thunks[0].gemm;
  if (!inPlace) {
    gemm.accumulator = 3;
    return e;
  }
  gemm.accumulator = gemm.c;
  runtime::Thunk copy;
  copy.kind = runtime::Thunk::Kind::copy;
  copy.copy = {3, gemm.c, cBytes};
  e.thunks.insert(e.thunks.begin(), copy);
  return e;
}

/// Runs an accumulating program on (a, b, acc) twice (the second run on
/// the buffers the first left) against `expected`.
void expectAccumulatedTwice(runtime::Program &program, const HostTensor &a,
                            const HostTensor &b, const HostTensor &acc,
                            const std::vector<double> &expected) {
  for (int run = 0; run < 2; ++run) {
    auto out = program.run(runtime::inputList(
        runtime::ProgramInput::borrow(a), runtime::ProgramInput::borrow(b),
        runtime::ProgramInput::borrow(acc)));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_LT(maxRelativeError((*out)[0], expected), 1e-6) << run;
  }
}

// An accumulator is cuBLASLt's C with beta = 1, D being kiln's C: in a
// buffer of its own or in C itself, f32 or bf16 operands, every transpose,
// batched; k = 0 leaves the accumulator (copied when it is elsewhere).
TEST_F(CudaGemmThunks, AnAccumulatorIsAddedAsCublasLtsC) {
  for (runtime::GemmType input :
       {runtime::GemmType::f32, runtime::GemmType::bf16})
    for (bool inPlace : {false, true})
      for (GemmShape g : {GemmShape{3, 5, 7, 40, false, false},
                          GemmShape{1, 6, 9, 33, true, false},
                          GemmShape{2, 4, 3, 17, false, true},
                          GemmShape{2, 3, 4, 0}}) {
        SCOPED_TRACE(absl::StrCat(input == runtime::GemmType::f32 ? "f32" : "bf16",
                                  inPlace ? " in place" : " apart", " k=", g.k,
                                  g.transA ? " transA" : "",
                                  g.transB ? " transB" : ""));
        auto program = load(accumulatingExecutable(g, input, inPlace));
        ASSERT_NE(program, nullptr);
        DType dtype = input == runtime::GemmType::f32 ? DType::f32 : DType::bf16;
        HostTensor a = randomTensor(aShape(g), 5, dtype);
        HostTensor b = randomTensor(bShape(g), 6, dtype);
        HostTensor acc = randomTensor({g.batch, g.m, g.n}, 7);
        std::vector<double> expected = naiveGemm(g, a, b);
        for (size_t i = 0; i < expected.size(); ++i)
          expected[i] += acc.getDouble(i);
        expectAccumulatedTwice(*program, a, b, acc, expected);
      }
}

// A viewed C (kiln-fuse-gemm-epilogue's product padded along its rows):
// the product is added into rows [low, low + m) of each of the
// accumulator's [m + low + high, n] matrices, cuBLASLt's C and D both at
// the view (the strided batch being the padded matrix), and every other
// element is the accumulator's: in C's own bytes, or copied there first;
// k = 0 or an empty product (m = 0) copies the accumulator whole.
TEST_F(CudaGemmThunks, AViewedCAddsTheProductIntoBlocksOfTheSumsRows) {
  const int64_t low = 2, high = 3;
  for (bool inPlace : {false, true})
    for (GemmShape g : {GemmShape{3, 5, 7, 40, true, false},
                        GemmShape{1, 6, 9, 33, false, true},
                        GemmShape{2, 3, 4, 0}, GemmShape{2, 0, 4, 3}}) {
      SCOPED_TRACE(absl::StrCat(inPlace ? "in place" : "apart", " k=", g.k,
                                " batch=", g.batch));
      const int64_t rows = g.m + low + high;
      runtime::Executable e = accumulatingExecutable(
          GemmShape{g.batch, rows, g.n, g.k, g.transA, g.transB},
          runtime::GemmType::bf16, inPlace);
      // The product's operands are m rows; C and the accumulator `rows`.
      e.signature.inputs[0].shape = aShape(g);
      e.plan.slots[0].bytes = 2 * g.batch * g.m * g.k;
      runtime::GemmThunk &gemm = e.thunks.back().gemm;
      gemm.m = g.m;
      gemm.cView = {low * g.n, rows * g.n};
      auto program = load(std::move(e));
      ASSERT_NE(program, nullptr);
      HostTensor a = randomTensor(aShape(g), 5, DType::bf16);
      HostTensor b = randomTensor(bShape(g), 6, DType::bf16);
      HostTensor acc = randomTensor({g.batch, rows, g.n}, 7);
      std::vector<double> product = naiveGemm(g, a, b);
      std::vector<double> expected(acc.numElements());
      for (int64_t i = 0; i < acc.numElements(); ++i) {
        int64_t batch = i / (rows * g.n), row = i / g.n % rows, col = i % g.n;
        bool inView = row >= low && row < low + g.m;
        expected[i] =
            acc.getDouble(i) +
            (inView ? product[(batch * g.m + row - low) * g.n + col] : 0.0);
      }
      expectAccumulatedTwice(*program, a, b, acc, expected);
    }
}

// The loader refuses a viewed C whose matrices overlap, whose slot does
// not hold every batch's stride, or that has no accumulator.
TEST_F(CudaGemmThunks, AViewedCThatDoesNotFitIsRefusedAtLoad) {
  GemmShape g{2, 3, 4, 5};
  auto viewed = [&](runtime::GemmOperandView view, bool accumulates) {
    runtime::Executable e =
        accumulatingExecutable(GemmShape{2, 8, 4, 5}, runtime::GemmType::f32,
                               /*inPlace=*/false);
    e.signature.inputs[0].shape = aShape(g);
    e.plan.slots[0].bytes = 4 * g.batch * g.m * g.k;
    runtime::GemmThunk &gemm = e.thunks.back().gemm;
    gemm.m = g.m;
    gemm.cView = view;
    if (!accumulates)
      gemm.accumulator = runtime::kNoSlot;
    return runtime::loadCudaProgram(std::move(e), fakeCudaOptions()).status();
  };
  EXPECT_TRUE(viewed({4, 32}, true).ok()) << viewed({4, 32}, true);
  EXPECT_FALSE(viewed({4, 12}, true).ok()); // 3 rows at row 1 overlap the next
  EXPECT_FALSE(viewed({4, 36}, true).ok()); // 2 strides of 36 > the slot
  EXPECT_FALSE(viewed({4, 32}, false).ok());
}

TEST_F(CudaGemmThunks, MatmulFailureNamesTheThunkAndItsShape) {
  GemmShape g{3, 5, 7, 4, true, false};
  auto program = load(gemmExecutable(g));
  ASSERT_NE(program, nullptr);
  FAKE_CUBLASLT(fake_cublaslt_fail_next)
  ("cublasLtMatmul", CUBLAS_STATUS_EXECUTION_FAILED);
  HostTensor a = randomTensor(aShape(g), 1), b = randomTensor(bShape(g), 2);
  auto out = runGemm(*program, a, b);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(contains(out.status(),
                       "GEMM thunk 0 (m=5, n=7, k=4, batch=3, transA): "
                       "cublasLtMatmul failed: CUBLAS_STATUS_EXECUTION_FAILED"))
      << out.status();
}

TEST_F(CudaGemmThunks, NoAlgorithmFailsTheLoadNamingTheThunk) {
  FAKE_CUBLASLT(fake_cublaslt_fail_next)
  ("cublasLtMatmulAlgoGetHeuristic", CUBLAS_STATUS_NOT_SUPPORTED);
  auto program =
      runtime::loadCudaProgram(gemmExecutable({3, 5, 7, 4}), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_TRUE(contains(program.status(),
                       "GEMM thunk 0 (m=5, n=7, k=4, batch=3): "
                       "cublasLtMatmulAlgoGetHeuristic failed: "
                       "CUBLAS_STATUS_NOT_SUPPORTED"))
      << program.status();
}

TEST_F(CudaGemmThunks, MissingCublasLtIsAFailedPrecondition) {
  runtime::CudaRuntimeOptions options = fakeCudaOptions();
  options.cublasLtLibrary = "/nonexistent/kiln/libcublasLt.so";
  auto program =
      runtime::loadCudaProgram(gemmExecutable({1, 2, 2, 2}), options);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(program.status(),
                       "CUDA backend: cuBLASLt could not be loaded "
                       "(/nonexistent/kiln/libcublasLt.so: "))
      << program.status();
}

TEST_F(CudaGemmThunks, OneWorkspaceServesEveryGemmAndRunsAllocateNothing) {
  // C1 = A · B and C2 = A^T-read · B^T-read over the same buffers.
  GemmShape g{1, 4, 4, 4};
  GemmShape transposed{1, 4, 4, 4, true, true};
  runtime::Executable e = gemmExecutable(g);
  e.signature.outputs.push_back({DType::f32, {1, 4, 4}});
  e.plan.slots.push_back(slot(Kind::output, 1, 0, 64));
  e.thunks.push_back(gemmThunk(transposed, 0, 1, 3));
  e.plan.outputSlots = {2, 3};
  e.plan.outputDonors = {-1, -1};
  auto program = load(e);
  ASSERT_NE(program, nullptr);
  // The device copies (A, B, C1, C2) and the workspace; no arena, no
  // kernel tables.
  EXPECT_EQ(FAKE_CUDA(fake_cuda_allocations)(), 2);
  HostTensor a = randomTensor({1, 4, 4}, 5), b = randomTensor({1, 4, 4}, 6);
  for (int run = 0; run < 4; ++run) {
    auto out = runGemm(*program, a, b);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_LT(maxRelativeError((*out)[0], naiveGemm(g, a, b)), 1e-6);
    EXPECT_LT(maxRelativeError((*out)[1], naiveGemm(transposed, a, b)), 1e-6);
  }
  EXPECT_EQ(FAKE_CUDA(fake_cuda_allocations)(), 2);
}

} // namespace
} // namespace kiln
