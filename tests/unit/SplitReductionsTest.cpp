// kiln-split-reductions on the CPU backend against the reference
// evaluator: a reduction written as a tree (the GPU's pipeline) computes
// what the single reduce computes. Sums of f32 and bf16 go through f64
// partials, so they match as closely as the unsplit kernel does; max and
// min are exact. The same graphs with the pass off give the baseline.
#include "CpuTestSupport.h"

#include "compiler/Pipeline.h"
#include "compiler/cpu/CpuCompiler.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::parseModule;
using testing::randomTensor;

struct ReduceCase {
  std::string name;
  std::string source;           // @main
  std::vector<HostTensor> inputs;
  int extraReduces = 0;         // the pass adds at least these
};

int countReduces(mlir::ModuleOp module) {
  int n = 0;
  module.walk([&](ReduceOp) { ++n; });
  return n;
}

/// Gradient clipping's global norm over four gradients, as the frontend
/// records it: each one's squares summed, the sums added one by one, and a
/// gradient scaled by the clipping coefficient. Split, the two matrices'
/// sums are trees; kiln-join-sums then sums all four at once.
ReduceCase globalNormCase(std::mt19937 &rng) {
  return {"global norm of four gradients",
          R"(func.func @main(%a: tensor<1200x384xf32>, %b: tensor<384xf32>, %c: tensor<96x2000xbf16>, %d: tensor<7x5xf32>) -> (tensor<f32>, tensor<7x5xf32>) {
  %a2 = kiln.mul %a, %a : tensor<1200x384xf32>
  %sa = kiln.reduce sum %a2, dims = [0, 1] : tensor<1200x384xf32> -> tensor<f32>
  %b2 = kiln.mul %b, %b : tensor<384xf32>
  %sb = kiln.reduce sum %b2, dims = [0] : tensor<384xf32> -> tensor<f32>
  %cw = kiln.convert %c : tensor<96x2000xbf16> -> tensor<96x2000xf32>
  %c2 = kiln.mul %cw, %cw : tensor<96x2000xf32>
  %sc = kiln.reduce sum %c2, dims = [0, 1] : tensor<96x2000xf32> -> tensor<f32>
  %d2 = kiln.mul %d, %d : tensor<7x5xf32>
  %sd = kiln.reduce sum %d2, dims = [0, 1] : tensor<7x5xf32> -> tensor<f32>
  %t1 = kiln.add %sa, %sb : tensor<f32>
  %t2 = kiln.add %t1, %sc : tensor<f32>
  %t3 = kiln.add %t2, %sd : tensor<f32>
  %n = kiln.sqrt %t3 : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-6> : tensor<f32>
  %ne = kiln.add %n, %eps : tensor<f32>
  %q = kiln.div %one, %ne : tensor<f32>
  %k = kiln.min %q, %one : tensor<f32>
  %kb = kiln.broadcast_in_dim %k, dims = [] : tensor<f32> -> tensor<7x5xf32>
  %dc = kiln.mul %d, %kb : tensor<7x5xf32>
  return %n, %dc : tensor<f32>, tensor<7x5xf32>
})",
          {randomTensor(DType::f32, {1200, 384}, rng),
           randomTensor(DType::f32, {384}, rng),
           randomTensor(DType::bf16, {96, 2000}, rng),
           randomTensor(DType::f32, {7, 5}, rng)},
          2};
}

std::vector<ReduceCase> cases() {
  std::mt19937 rng(17);
  std::vector<ReduceCase> out;
  // A global norm: a transpose's squares summed to one scalar (3 stages).
  out.push_back({"global sum of squares",
                 R"(func.func @main(%x: tensor<1200x384xf32>) -> tensor<f32> {
  %t = kiln.transpose %x, perm = [1, 0] : tensor<1200x384xf32> -> tensor<384x1200xf32>
  %q = kiln.mul %t, %t : tensor<384x1200xf32>
  %s = kiln.reduce sum %q, dims = [0, 1] : tensor<384x1200xf32> -> tensor<f32>
  return %s : tensor<f32>
})",
                 {randomTensor(DType::f32, {1200, 384}, rng, 4, false)}, 2});
  // A bias gradient: columns of [rows, 96] (the rows split by a reshape).
  out.push_back({"column sum",
                 R"(func.func @main(%x: tensor<4096x96xf32>) -> tensor<96xf32> {
  %s = kiln.reduce sum %x, dims = [0] : tensor<4096x96xf32> -> tensor<96xf32>
  return %s : tensor<96xf32>
})",
                 {randomTensor(DType::f32, {4096, 96}, rng, 4, false)}, 1});
  // Few long rows (a loss chunk's logsumexp): max and min with specials.
  out.push_back({"row max and min",
                 R"(func.func @main(%x: tensor<5x4802xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %a = kiln.reduce max %x, dims = [1] : tensor<5x4802xf32> -> tensor<5xf32>
  %b = kiln.reduce min %x, dims = [1] : tensor<5x4802xf32> -> tensor<5xf32>
  return %a, %b : tensor<5xf32>, tensor<5xf32>
})",
                 {randomTensor(DType::f32, {5, 4802}, rng)}, 2});
  out.push_back({"bf16 sum over two dimensions",
                 R"(func.func @main(%x: tensor<3x64x96xbf16>) -> tensor<3xbf16> {
  %s = kiln.reduce sum %x, dims = [1, 2] : tensor<3x64x96xbf16> -> tensor<3xbf16>
  return %s : tensor<3xbf16>
})",
                 {randomTensor(DType::bf16, {3, 64, 96}, rng, 1, false)}, 1});
  out.push_back(globalNormCase(rng));
  return out;
}

/// Fusions whose full-shaped results come from the pass that accumulates
/// (KernelTarget::storeWhileReducing) or after it (softmax's, which read
/// the row's sum), in strided and contiguous rows.
std::vector<ReduceCase> fusionCases() {
  std::mt19937 rng(23);
  std::vector<ReduceCase> out;
  // GELU-backward-like: a product stored and summed over B*T (a bias
  // gradient: split by a reshape into a middle reduction, rows strided).
  out.push_back({"product and its column sum",
                 R"(func.func @main(%x: tensor<16x64x48xf32>, %y: tensor<16x64x48xf32>) -> (tensor<16x64x48xf32>, tensor<48xf32>) {
  %m = kiln.mul %x, %y : tensor<16x64x48xf32>
  %s = kiln.reduce sum %m, dims = [0, 1] : tensor<16x64x48xf32> -> tensor<48xf32>
  return %m, %s : tensor<16x64x48xf32>, tensor<48xf32>
})",
                 {randomTensor(DType::f32, {16, 64, 48}, rng),
                  randomTensor(DType::f32, {16, 64, 48}, rng)}, 1});
  // A sum and an output over contiguous rows, written in place of x.
  out.push_back({"row sum and a product",
                 R"(func.func @main(%x: tensor<32x640xf32>, %y: tensor<32x640xf32>) -> (tensor<32x640xf32>, tensor<32xf32>) {
  %m = kiln.mul %x, %y : tensor<32x640xf32>
  %s = kiln.reduce sum %x, dims = [1] : tensor<32x640xf32> -> tensor<32xf32>
  return %m, %s : tensor<32x640xf32>, tensor<32xf32>
})",
                 {randomTensor(DType::f32, {32, 640}, rng),
                  randomTensor(DType::f32, {32, 640}, rng)}, 1});
  // Softmax: the output reads the row's max and sum (two passes before it).
  out.push_back({"softmax",
                 R"(func.func @main(%x: tensor<24x1500xf32>) -> tensor<24x1500xf32> {
  %m = kiln.reduce max %x, dims = [1] : tensor<24x1500xf32> -> tensor<24xf32>
  %b = kiln.broadcast_in_dim %m, dims = [0] : tensor<24xf32> -> tensor<24x1500xf32>
  %d = kiln.sub %x, %b : tensor<24x1500xf32>
  %e = kiln.exp %d : tensor<24x1500xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<24x1500xf32> -> tensor<24xf32>
  %c = kiln.broadcast_in_dim %s, dims = [0] : tensor<24xf32> -> tensor<24x1500xf32>
  %y = kiln.div %e, %c : tensor<24x1500xf32>
  return %y : tensor<24x1500xf32>
})",
                 {randomTensor(DType::f32, {24, 1500}, rng)}, 2});
  return out;
}

absl::StatusOr<std::vector<HostTensor>>
runOnCpu(const std::string &source, const std::vector<HostTensor> &inputs,
         const PipelineOptions &options,
         const compiler::cpu::KernelTarget &target = {}) {
  testing::ParsedModule parsed = parseModule(source);
  if (!parsed.module)
    return absl::InvalidArgumentError("does not parse");
  auto program = testing::cpuPrograms(options, target)(*parsed.module);
  if (!program.ok())
    return program.status();
  return (*program)->run(runtime::borrowAll(inputs));
}

PipelineOptions splitBelow(int64_t threads) {
  PipelineOptions options;
  options.splitReductionsBelow = threads;
  return options;
}

/// What compileExecutable sets for cuda, scaled to these small graphs: a
/// warp per contiguous row, at most 64 elements a thread.
PipelineOptions gpuLikeSplit() {
  PipelineOptions options = splitBelow(1 << 14);
  options.splitReductionsMaxSerial = 64;
  options.splitReductionsRowLanes = 32;
  options.splitReductionsMinLanedRow = 64;
  return options;
}

TEST(SplitReductions, TheTreeComputesWhatTheReduceComputes) {
  for (const ReduceCase &c : cases()) {
    testing::ParsedModule parsed = parseModule(c.source);
    ASSERT_TRUE(parsed.module) << c.name;
    std::vector<HostTensor> expected =
        testing::evaluateMain(*parsed.module, c.inputs);
    auto split = runOnCpu(c.source, c.inputs, splitBelow(32768));
    auto whole = runOnCpu(c.source, c.inputs, splitBelow(-1));
    ASSERT_TRUE(split.ok() && whole.ok()) << c.name;
    // Reductions of thousands of elements: the usual tolerance (4 ulp-ish
    // relative) is what the unsplit kernel meets too.
    testing::expectAllMatch(*split, expected, 1, c.name + ", split");
    testing::expectAllMatch(*whole, expected, 1, c.name + ", whole");
  }
}

TEST(SplitReductions, GpuFormsComputeWhatTheReduceComputes) {
  compiler::cpu::KernelTarget target;
  target.storeWhileReducing = true;
  std::vector<ReduceCase> all = cases();
  for (ReduceCase &c : fusionCases())
    all.push_back(std::move(c));
  for (const ReduceCase &c : all) {
    testing::ParsedModule parsed = parseModule(c.source);
    ASSERT_TRUE(parsed.module) << c.name;
    std::vector<HostTensor> expected =
        testing::evaluateMain(*parsed.module, c.inputs);
    auto gpuLike = runOnCpu(c.source, c.inputs, gpuLikeSplit(), target);
    ASSERT_TRUE(gpuLike.ok()) << c.name << ": " << gpuLike.status();
    testing::expectAllMatch(*gpuLike, expected, 1, c.name + ", gpu forms");
  }
}

TEST(SplitReductions, TheCpuSplitsFullSumsIntoContiguousParts) {
  // The CPU's own setting (compileExecutable with the pipeline's defaults):
  // a sum of 98976 elements to one output is one core's loop unless
  // split; its parts are blocks of whole rows (the outermost reduced dim:
  // 1031 rows, prime, so a part a row), never the 96 columns, each of
  // which strides across every row. A column sum is left alone: its
  // kernel walks column blocks on every core.
  std::mt19937 rng(31);
  const std::string source =
      R"(func.func @main(%x: tensor<1031x96xf32>, %c: tensor<512x768xf32>) -> (tensor<1031x96xf32>, tensor<f32>, tensor<768xf32>) {
  %k = kiln.constant dense<1.5> : tensor<1031x96xf32>
  %y = kiln.mul %x, %k : tensor<1031x96xf32>
  %q = kiln.mul %y, %y : tensor<1031x96xf32>
  %s = kiln.reduce sum %q, dims = [0, 1] : tensor<1031x96xf32> -> tensor<f32>
  %t = kiln.reduce sum %c, dims = [0] : tensor<512x768xf32> -> tensor<768xf32>
  return %y, %s, %t : tensor<1031x96xf32>, tensor<f32>, tensor<768xf32>
})";
  std::vector<HostTensor> inputs = {randomTensor(DType::f32, {1031, 96}, rng),
                                    randomTensor(DType::f32, {512, 768}, rng)};
  testing::ParsedModule parsed = parseModule(source);
  ASSERT_TRUE(parsed.module);
  std::vector<HostTensor> expected =
      testing::evaluateMain(*parsed.module, inputs);
  auto program = testing::cpuPrograms()(*parsed.module);
  ASSERT_TRUE(program.ok()) << program.status();
  auto results = (*program)->run(runtime::borrowAll(inputs));
  ASSERT_TRUE(results.ok()) << results.status();
  testing::expectAllMatch(*results, expected, 1, "split on the cpu");
  // Compiled in place: the reduces the kernels run.
  std::vector<std::string> reduces;
  parsed.module->walk([&](ReduceOp reduce) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << reduce.getOperand().getType() << " over ";
    llvm::interleaveComma(reduce.getDimensions(), os);
    reduces.push_back(text);
  });
  llvm::sort(reduces);
  EXPECT_EQ(reduces, std::vector<std::string>({"tensor<1031x96xf64> over 1",
                                               "tensor<1031xf64> over 0",
                                               "tensor<512x768xf32> over 0"}));
}

TEST(SplitReductions, CountsAWarpPerContiguousRowAsItsThreads) {
  // 8 rows of 4096: 8 threads each taking 4096 elements, or 8 warps
  // (256 threads) taking 128 each. With a warp per row and at most 256
  // elements a thread, the rows are long enough; column sums of the same
  // shape (a thread per output, 8 x 4096 elements) are not.
  testing::ParsedModule parsed = parseModule(
      R"(func.func @main(%x: tensor<8x4096xf32>, %y: tensor<4096x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = kiln.reduce sum %x, dims = [1] : tensor<8x4096xf32> -> tensor<8xf32>
  %b = kiln.reduce sum %y, dims = [0] : tensor<4096x8xf32> -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
})");
  ASSERT_TRUE(parsed.module);
  PipelineOptions options = splitBelow(1 << 14);
  options.splitReductionsMaxSerial = 256;
  options.splitReductionsRowLanes = 32;
  options.fuse = false;
  ASSERT_TRUE(mlir::succeeded(runKilnPipeline(*parsed.module, options)));
  int rowReduces = 0, columnReduces = 0;
  parsed.module->walk([&](ReduceOp reduce) {
    auto shape = mlir::cast<mlir::RankedTensorType>(
                     reduce.getOperand().getType())
                     .getShape();
    (shape.back() == 4096 ? rowReduces : columnReduces) += 1;
  });
  EXPECT_EQ(rowReduces, 1);
  EXPECT_GE(columnReduces, 2);
}

TEST(SplitReductions, SplitsOnlyWhatHasFewOutputsAndLongRows) {
  for (const ReduceCase &c : cases()) {
    testing::ParsedModule parsed = parseModule(c.source);
    ASSERT_TRUE(parsed.module);
    int before = countReduces(*parsed.module);
    PipelineOptions options;
    options.splitReductionsBelow = 32768;
    options.fuse = false;
    options.joinSums = false; // counted by JoinSums.*
    ASSERT_TRUE(mlir::succeeded(runKilnPipeline(*parsed.module, options)));
    EXPECT_GE(countReduces(*parsed.module), before + c.extraReduces) << c.name;
  }
  // Many outputs, short rows, a prime row length, integers: left alone.
  testing::ParsedModule kept = parseModule(
      R"(func.func @main(%x: tensor<8192x768xf32>, %y: tensor<7x2053xf32>, %z: tensor<64x4096xi64>) -> (tensor<8192xf32>, tensor<7xf32>, tensor<64xi64>) {
  %a = kiln.reduce sum %x, dims = [1] : tensor<8192x768xf32> -> tensor<8192xf32>
  %b = kiln.reduce sum %y, dims = [1] : tensor<7x2053xf32> -> tensor<7xf32>
  %c = kiln.reduce sum %z, dims = [1] : tensor<64x4096xi64> -> tensor<64xi64>
  return %a, %b, %c : tensor<8192xf32>, tensor<7xf32>, tensor<64xi64>
})");
  ASSERT_TRUE(kept.module);
  PipelineOptions options;
  options.splitReductionsBelow = 32768;
  options.fuse = false;
  ASSERT_TRUE(mlir::succeeded(runKilnPipeline(*kept.module, options)));
  EXPECT_EQ(countReduces(*kept.module), 3);
}

TEST(JoinSums, AGlobalNormSumsEveryGradientAtOnce) {
  // Split for a GPU, the norm is a tree per matrix and a sum per vector,
  // added one by one; joined, one concatenation per element type (f64
  // partial sums of the matrices, f32 squares of the vectors) feeds one
  // sum each, and no scalar add of partial sums is left but theirs.
  std::mt19937 rng(5);
  ReduceCase norm = globalNormCase(rng);
  auto reducesAndConcatenations = [&](bool join) {
    testing::ParsedModule parsed = parseModule(norm.source);
    EXPECT_TRUE(parsed.module);
    PipelineOptions options = gpuLikeSplit();
    options.fuse = false;
    options.joinSums = join;
    EXPECT_TRUE(mlir::succeeded(runKilnPipeline(*parsed.module, options)));
    int concatenations = 0;
    parsed.module->walk([&](ConcatenateOp) { ++concatenations; });
    return std::make_pair(countReduces(*parsed.module), concatenations);
  };
  auto [apartReduces, apartConcatenations] = reducesAndConcatenations(false);
  auto [joinedReduces, joinedConcatenations] = reducesAndConcatenations(true);
  EXPECT_EQ(apartConcatenations, 0);
  EXPECT_EQ(joinedConcatenations, 2);
  EXPECT_LT(joinedReduces, apartReduces);

  // And what the joined graph computes, in the GPU's forms and the cpu's.
  testing::ParsedModule parsed = parseModule(norm.source);
  ASSERT_TRUE(parsed.module);
  std::vector<HostTensor> expected =
      testing::evaluateMain(*parsed.module, norm.inputs);
  compiler::cpu::KernelTarget target;
  target.storeWhileReducing = true;
  auto joined = runOnCpu(norm.source, norm.inputs, gpuLikeSplit(), target);
  ASSERT_TRUE(joined.ok()) << joined.status();
  testing::expectAllMatch(*joined, expected, 1, "joined, gpu forms");
}

} // namespace
} // namespace kiln
