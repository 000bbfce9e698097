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
    auto whole = runOnCpu(c.source, c.inputs, splitBelow(0));
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

} // namespace
} // namespace kiln
