// Host lanes (runtime/HostLanes.h): a warp's lanes meet at shuffles and
// syncs on one CPU thread, and the warp-per-row kernels a GPU runs (the
// cuda kernel forms: 32 lanes a row, full results stored while reducing,
// four points a lane) compiled for the cpu agree with the reference
// evaluator on the GPT-2 step's row kernels (bench/kernels), shrunk to a
// few rows.
#include "runtime/HostLanes.h"
#include "CpuTestSupport.h"
#include "compiler/cpu/KernelEmitter.h"

#include "absl/strings/str_cat.h"

#include <fstream>
#include <regex>

namespace kiln::testing {
namespace {

using runtime::hostLaneHooks;

/// Each lane of a row: its lane id and the row's sum of lane ids (a
/// butterfly of shuffles, as a kernel sums a row), written at [row, lane].
void sumLaneIds(void **buffers, int64_t begin, int64_t end) {
  const runtime::HostLaneHooks &h = hostLaneHooks();
  auto *out = static_cast<double *>(buffers[0]);
  int64_t lanes = *static_cast<int64_t *>(buffers[1]);
  for (int64_t row = begin; row < end; ++row) {
    int64_t lane = h.laneId();
    double sum = double(lane + row);
    for (int32_t offset = lanes / 2; offset >= 1; offset /= 2)
      sum += h.shuffleXorF64(sum, offset);
    h.syncWarp();
    out[2 * (row * lanes + lane)] = double(lane);
    out[2 * (row * lanes + lane) + 1] = sum;
  }
}

TEST(HostLanes, LanesMeetAtShufflesAndRunTheRowsOfTheirRange) {
  for (int64_t lanes : {4, 32}) {
    SCOPED_TRACE(lanes);
    std::vector<double> out(2 * 6 * lanes, -1);
    void *buffers[] = {out.data(), &lanes};
    // Threads [lanes - 1, 3 lanes + 1): rows 1, 2 and 3 start inside.
    hostLaneHooks().runLanes(sumLaneIds, buffers, lanes - 1, 3 * lanes + 1,
                             lanes);
    for (int64_t row = 0; row < 6; ++row)
      for (int64_t lane = 0; lane < lanes; ++lane) {
        double id = out[2 * (row * lanes + lane)];
        double sum = out[2 * (row * lanes + lane) + 1];
        if (row < 1 || row > 3) {
          EXPECT_EQ(id, -1) << "row " << row << " is outside the range";
          continue;
        }
        EXPECT_EQ(id, lane);
        EXPECT_EQ(sum, lanes * (lanes - 1) / 2 + lanes * row)
            << "row " << row << ", lane " << lane;
      }
  }
}

/// Lane 0 syncs once more than the others: a warp no GPU could run.
void divergingLanes(void **, int64_t, int64_t) {
  const runtime::HostLaneHooks &h = hostLaneHooks();
  if (h.laneId() == 0)
    h.syncWarp();
  h.syncWarp();
}

TEST(HostLanesDeathTest, LanesThatReachDifferentPrimitivesAreAnError) {
  EXPECT_DEATH(hostLaneHooks().runLanes(divergingLanes, nullptr, 0, 32, 32),
               "different numbers of warp primitives");
}

/// bench/kernels/NAME.mlir with its shapes replaced (longest first).
std::string benchKernel(const std::string &name,
                        const std::vector<std::pair<std::string, std::string>>
                            &shapes) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/bench/kernels/" + name +
                   ".mlir");
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();
  for (const auto &[from, to] : shapes)
    source = std::regex_replace(source, std::regex(from), to);
  return source;
}

/// The cuda kernel forms on the cpu, each warp by host lanes: the rows'
/// points held for every pass (the default), or loaded by each pass.
/// `elements`: 4 (the default), or 8 ($KILN_CUDA_ELEMENTS_PER_THREAD=8: a
/// lane's steps of 8 points where every lane gets whole steps).
compiler::cpu::KernelTarget gpuRowForms(bool holdRows, unsigned elements = 4) {
  compiler::cpu::KernelTarget target;
  target.rowLanes = 32;
  target.storeWhileReducing = true;
  target.elementsPerIndex = elements;
  target.holdRows = holdRows;
  return target;
}

/// Runs `source`'s @main with `target` on `inputs`.
std::vector<HostTensor> runOnCpu(const std::string &source,
                                 const std::vector<HostTensor> &inputs,
                                 const compiler::cpu::KernelTarget &target) {
  ParsedModule parsed = parseModule(source);
  auto program = compiler::cpu::createProgram(*parsed.module, "main", {},
                                              target);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok())
    return {};
  auto results = (*program)->run(runtime::borrowAll(inputs));
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  return results.ok() ? *std::move(results) : std::vector<HostTensor>{};
}

/// Both row forms against the reference, and against each other bit for
/// bit: a held row adds its points in the order the passes' loops do. With
/// a lane's steps of 4 points (the default) and of 8.
void expectRowKernelMatchesReference(const std::string &source,
                                     const std::vector<HostTensor> &inputs,
                                     double scale = 1) {
  for (unsigned elements : {4u, 8u}) {
    SCOPED_TRACE(absl::StrCat(elements, " elements an index"));
    std::vector<HostTensor> held =
        runOnCpu(source, inputs, gpuRowForms(true, elements));
    std::vector<HostTensor> loaded =
        runOnCpu(source, inputs, gpuRowForms(false, elements));
    ASSERT_EQ(held.size(), loaded.size());
    for (size_t i = 0; i < held.size(); ++i)
      EXPECT_EQ(
          0, std::memcmp(held[i].data(), loaded[i].data(), held[i].byteSize()))
          << "result " << i << " differs between the row forms";
    for (bool holdRows : {true, false}) {
      SCOPED_TRACE(holdRows ? "rows held" : "rows loaded by each pass");
      compiler::cpu::KernelTarget target = gpuRowForms(holdRows, elements);
      // The kernel must really be laned: its library then exports the
      // table.
      ParsedModule parsed = parseModule(source);
      ASSERT_TRUE(parsed.module) << source;
      absl::StatusOr<runtime::Executable> exe =
          compiler::cpu::compileExecutable(*parsed.module, "main", nullptr, {},
                                           target);
      ASSERT_TRUE(exe.ok()) << exe.status().ToString();
      EXPECT_NE(exe->kernelLibrary.find(runtime::kHostLaneHooksSymbol),
                std::string::npos)
          << "no kernel of this module was written for lanes";
      expectMatchesReferenceOn(cpuPrograms({}, target), source, inputs, scale);
    }
  }
}

TEST(HostLanes, LayerNormDropoutResidualKernelMatchesTheReference) {
  // Rows of 768 (24 points a lane), 128 of them.
  std::string source = benchKernel("layer-norm-dropout-residual",
                                   {{"16x512x", "2x64x"},
                                    {"8192x", "128x"},
                                    {"16x512xf32", "2x64xf32"}});
  std::mt19937 rng(7);
  std::vector<HostTensor> inputs = {
      randomTensor(DType::f32, {768}, rng, 1, false),
      randomTensor(DType::bf16, {128, 768}, rng, 1, false),
      rngState(1234, 5678),
      randomTensor(DType::f32, {2, 64, 768}, rng, 1, false)};
  expectRowKernelMatchesReference(source, inputs);
}

TEST(HostLanes, AttentionSoftmaxGradientKernelMatchesTheReference) {
  // Rows of 512 keys under a causal mask, 32 of them, three reduce levels.
  std::string source =
      benchKernel("attention-softmax-grad", {{"16x12x128x512", "2x2x8x512"},
                                             {"128x98304", "8x2048"},
                                             {"128x16x12x512", "8x2x2x512"},
                                             {"16x12x128x", "2x2x8x"}});
  // Scores of up to ±8 after the kernel's 1/8 scale, so that a row's
  // probabilities gather on a few keys: with near-uniform rows (~1/500)
  // every value would lie under the bf16 comparison's absolute floor. The
  // results are rounded to bf16 from the same f32 values, so a quarter of
  // that tolerance (1 bf16 unit) bounds them.
  std::mt19937 rng(11);
  std::vector<HostTensor> inputs = {
      randomTensor(DType::bf16, {2, 2, 8, 512}, rng, 64, false),
      rngState(42, 7),
      randomTensor(DType::bf16, {2, 2, 8, 512}, rng, 1, false)};
  expectRowKernelMatchesReference(source, inputs, 0.25);
}

/// A softmax over the innermost dims `dims` of x.
std::string softmaxOver(const std::string &type, const std::string &rows,
                        const std::string &dims,
                        const std::string &broadcastDims) {
  return "func.func @main(%x: " + type + ") -> " + type + " {\n" +
         "  %m = kiln.reduce max %x, dims = " + dims + " : " + type + " -> " +
         rows + "\n  %mb = kiln.broadcast_in_dim %m, dims = " +
         broadcastDims + " : " + rows + " -> " + type +
         "\n  %d = kiln.sub %x, %mb : " + type + "\n  %e = kiln.exp %d : " +
         type + "\n  %s = kiln.reduce sum %e, dims = " + dims + " : " + type +
         " -> " + rows + "\n  %sb = kiln.broadcast_in_dim %s, dims = " +
         broadcastDims + " : " + rows + " -> " + type +
         "\n  %y = kiln.div %e, %sb : " + type + "\n  return %y : " + type +
         "\n}\n";
}

// `a` (which reads no reduce result) is written over the donated %y, which
// only the last pass reads (`b`): a held row must read %y's points before
// it stores `a` (it did not when it stored such results in its first
// pass: that form was withdrawn, docs/CUDA-BACKEND.md).
TEST(HostLanes, AResultWrittenOverAnInputOnlyTheLastPassReadsKeepsItsValues) {
  const char *source = R"mlir(
func.func @main(%y: tensor<4x128xf32> {kiln.donate, kiln.output_alias = 0 : i64}, %x: tensor<4x128xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %a = kiln.add %x, %x : tensor<4x128xf32>
  %s = kiln.reduce sum %x, dims = [1] : tensor<4x128xf32> -> tensor<4xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0] : tensor<4xf32> -> tensor<4x128xf32>
  %b = kiln.mul %y, %sb : tensor<4x128xf32>
  return %a, %b : tensor<4x128xf32>, tensor<4x128xf32>
}
)mlir";
  std::mt19937 rng(5);
  std::vector<HostTensor> inputs = {
      randomTensor(DType::f32, {4, 128}, rng, 2, false),
      randomTensor(DType::f32, {4, 128}, rng, 2, false)};
  for (bool holdRows : {true, false}) {
    SCOPED_TRACE(holdRows ? "rows held" : "rows loaded by each pass");
    // Given, not lent: the program writes `a` over %y's buffer.
    expectMatchesReferenceOn(cpuPrograms({}, gpuRowForms(holdRows)), source,
                             inputs, /*scale=*/1, InputPassing::given);
  }
}

TEST(HostLanes, RowsOfSeveralDimsAndLongRowsMatchTheReference) {
  std::mt19937 rng(3);
  // A row of two dims (3 x 64: 6 points a lane, held, split by division).
  expectRowKernelMatchesReference(
      softmaxOver("tensor<8x3x64xf32>", "tensor<8xf32>", "[1, 2]", "[0]"),
      {randomTensor(DType::f32, {8, 3, 64}, rng, 4, false)});
  // A row longer than a lane holds (128 points a lane): passes over it.
  expectRowKernelMatchesReference(
      softmaxOver("tensor<4x4096xf32>", "tensor<4xf32>", "[1]", "[0]"),
      {randomTensor(DType::f32, {4, 4096}, rng, 4, false)});
}

/// A split sum's last stage (the weight and bias gradients' partials,
/// `rows` of them per column, summed over the outer dim), f64 and its f32
/// rounding scaled, as the GPT-2 step's 74 such kernels.
std::string columnSum(int64_t rows, int64_t columns) {
  std::string in = absl::StrCat("tensor<", rows, "x", columns, "xf64>");
  std::string out = absl::StrCat("tensor<", columns, "xf64>");
  std::string out32 = absl::StrCat("tensor<", columns, "xf32>");
  return absl::StrCat("func.func @main(%p: ", in, ") -> (", out, ", ", out32,
                      ") {\n", "  %s = kiln.reduce sum %p, dims = [0] : ", in,
                      " -> ", out, "\n", "  %f = kiln.convert %s : ", out,
                      " -> ", out32, "\n",
                      "  %h = kiln.constant dense<0.5> : ", out32, "\n",
                      "  %g = kiln.mul %f, %h : ", out32, "\n",
                      "  return %s, %g : ", out, ", ", out32, "\n}\n");
}

TEST(HostLanes, FewColumnsSummedOverOuterDimsTakeAWarpEach) {
  // 96 columns of 256 partials (8 a lane): a warp a column, not a thread
  // (compiler::cpu::detail::kMostStridedLanedRows), held and loaded.
  std::mt19937 rng(5);
  expectRowKernelMatchesReference(
      columnSum(256, 96), {randomTensor(DType::f64, {256, 96}, rng, 1, false)});
}

TEST(HostLanes, ManyColumnsSummedOverOuterDimsKeepAThreadEach) {
  // More columns than kMostStridedLanedRows: their threads alone fill the
  // GPU and read neighbouring columns across the warp, so no lanes.
  const int64_t columns = compiler::cpu::detail::kMostStridedLanedRows + 8;
  ParsedModule parsed = parseModule(columnSum(64, columns));
  ASSERT_TRUE(parsed.module);
  absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
      *parsed.module, "main", nullptr, {}, gpuRowForms(true));
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(exe->kernelLibrary.find(runtime::kHostLaneHooksSymbol),
            std::string::npos)
      << "a column sum over " << columns << " columns was written for lanes";
}

TEST(HostLanes, ALongRowALaneWalksUnrolledAddsInTheSameOrder) {
  // A reduction tree's last stage: one row of 14197 f64 partials (the
  // global norm's, a prime length: no lane steps, not held), 443 points
  // a lane. With rowUnroll a lane takes 8 of its points an iteration (55
  // whole groups, then the rest): the same sum, bit for bit, as one point
  // an iteration, and the reference's within the tolerance.
  std::string source = R"mlir(
func.func @main(%p: tensor<14197xf64>) -> tensor<f32> {
  %q = kiln.mul %p, %p : tensor<14197xf64>
  %s = kiln.reduce sum %q, dims = [0] : tensor<14197xf64> -> tensor<f64>
  %r = kiln.sqrt %s : tensor<f64>
  %f = kiln.convert %r : tensor<f64> -> tensor<f32>
  return %f : tensor<f32>
}
)mlir";
  std::mt19937 rng(11);
  std::vector<HostTensor> inputs = {
      randomTensor(DType::f64, {14197}, rng, 1, false)};
  compiler::cpu::KernelTarget one = gpuRowForms(true), eight = one;
  eight.rowUnroll = 8;
  std::vector<HostTensor> a = runOnCpu(source, inputs, one);
  std::vector<HostTensor> b = runOnCpu(source, inputs, eight);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(0, std::memcmp(a[0].data(), b[0].data(), a[0].byteSize()))
      << "the unrolled lanes add in another order";
  expectMatchesReferenceOn(cpuPrograms({}, eight), source, inputs);
}

} // namespace
} // namespace kiln::testing
