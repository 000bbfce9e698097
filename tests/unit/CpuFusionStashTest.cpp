// The row kernels' stash (compiler/cpu/FusionPlanner.cpp, planStash;
// FusionEmitter.cpp, emitRow): a value a reduce pass sums and later passes
// read again (softmax's exponentials) is stored once a point, into a result
// row or a scratch row, and read back instead of recomputed; results that
// hold it never overwrite an input read after it is written. Each case
// matches the reference evaluator.
#include "CpuFusionSupport.h"

#include "compiler/cpu/CodeGen.h"
#include "compiler/cpu/KernelEmitter.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace kiln::testing {
namespace {

TEST(CpuFusion, SoftmaxStashesItsExponentials) {
  // The output pass reads exp(x - max) back from the output row instead of
  // recomputing it; the output may then not overwrite an input the output
  // pass still reads (%z), but may overwrite %x.
  std::string source = R"mlir(
func.func @main(%x: tensor<9x130xf32>, %z: tensor<9x130xf32>) -> tensor<9x130xf32> {
  %r = kiln.fusion reduction(%x, %z) : (tensor<9x130xf32>, tensor<9x130xf32>) -> tensor<9x130xf32> {
  ^bb0(%a: tensor<9x130xf32>, %b: tensor<9x130xf32>):
    %m = kiln.reduce max %a, dims = [1] : tensor<9x130xf32> -> tensor<9xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<9xf32> -> tensor<9x130xf32>
    %d = kiln.sub %a, %mb : tensor<9x130xf32>
    %e = kiln.exp %d : tensor<9x130xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<9x130xf32> -> tensor<9xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0] : tensor<9xf32> -> tensor<9x130xf32>
    %y = kiln.div %e, %sb : tensor<9x130xf32>
    %w = kiln.mul %y, %b : tensor<9x130xf32>
    kiln.yield %w : tensor<9x130xf32>
  }
  return %r : tensor<9x130xf32>
}
)mlir";
  ParsedModule parsed = parseModule(source);
  mlir::Operation *fusion = onlyFusion(parsed);
  ASSERT_TRUE(fusion);
  using compiler::cpu::mayWriteResultOverOperand;
  EXPECT_TRUE(mayWriteResultOverOperand(fusion, 0, 0));
  EXPECT_FALSE(mayWriteResultOverOperand(fusion, 0, 1));
  expectOneKernel(
      source,
      randomInputs({{DType::f32, {9, 130}}, {DType::f32, {9, 130}}}, 26), 300);
}

/// How many exponentials the kernel of the fusion in `source` computes a
/// point when a row's stash may take `mostScratchStashBytes` of scratch
/// (FusionKernelOptions::mostScratchStashBytes; the cpu's default beside
/// the GPU's 0).
int exponentialsPerPoint(const std::string &source,
                         int64_t mostScratchStashBytes) {
  ParsedModule parsed = parseModule(source);
  mlir::Operation *fusion = onlyFusion(parsed);
  EXPECT_TRUE(fusion) << source;
  if (!fusion)
    return -1;
  compiler::cpu::loadKernelDialects(*fusion->getContext());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(fusion->getLoc());
  compiler::cpu::detail::FusionKernelOptions options;
  options.mostScratchStashBytes = mostScratchStashBytes;
  EXPECT_TRUE(succeeded(compiler::cpu::detail::emitFusionKernel(
      fusion, *module, "kernel", options)));
  int count = 0;
  module->walk([&](mlir::math::ExpOp) { ++count; });
  return count;
}

/// `source` compiles to one kernel matching the reference, with the
/// scratch stash and without it.
void expectOneKernelWithAndWithoutScratch(const std::string &source,
                                          const std::vector<HostTensor> &inputs,
                                          double scale) {
  compiler::cpu::KernelTarget scratch, recompute;
  recompute.mostScratchStashBytes = 0;
  for (const compiler::cpu::KernelTarget &target : {scratch, recompute})
    expectOneKernel(source, inputs, scale, target);
}

TEST(CpuFusion, SixteenBitSoftmaxStashesItsExponentialsInAScratchRow) {
  // bf16 results cannot hold the f32 exp(x - max) the output pass reads:
  // the stash goes to a stack array a row long instead, so exp is
  // generated once a point, as in f32. A target without such arrays (the
  // GPU's options), or a row longer than the target's limit, computes exp
  // again in the output pass. Each form matches the reference.
  std::string source = R"mlir(
func.func @main(%x: tensor<9x130xbf16>) -> tensor<9x130xbf16> {
  %r = kiln.fusion reduction(%x) : (tensor<9x130xbf16>) -> tensor<9x130xbf16> {
  ^bb0(%a: tensor<9x130xbf16>):
    %w = kiln.convert %a : tensor<9x130xbf16> -> tensor<9x130xf32>
    %m = kiln.reduce max %w, dims = [1] : tensor<9x130xf32> -> tensor<9xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<9xf32> -> tensor<9x130xf32>
    %d = kiln.sub %w, %mb : tensor<9x130xf32>
    %e = kiln.exp %d : tensor<9x130xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<9x130xf32> -> tensor<9xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0] : tensor<9xf32> -> tensor<9x130xf32>
    %y = kiln.div %e, %sb : tensor<9x130xf32>
    %n = kiln.convert %y : tensor<9x130xf32> -> tensor<9x130xbf16>
    kiln.yield %n : tensor<9x130xbf16>
  }
  return %r : tensor<9x130xbf16>
}
)mlir";
  const int64_t rowBytes = 130 * 4;
  EXPECT_EQ(exponentialsPerPoint(source, rowBytes), 1);
  EXPECT_EQ(exponentialsPerPoint(source, rowBytes - 1), 2);
  EXPECT_EQ(exponentialsPerPoint(source, 0), 2);
  expectOneKernelWithAndWithoutScratch(
      source, randomInputs({{DType::bf16, {9, 130}}}, 28, false), 8);
}

TEST(CpuFusion, AttentionBackwardStashesTheExponentialsItsSecondPassSums) {
  // Attention's backward recomputes P = softmax(s) and makes
  // dS = P * (dP - sum(P * dP)): three passes (max, sum of exp, sum of
  // P * dP) and the output pass. The last pass's operand P * dP is read
  // by no later pass, so the stash is pass 2's exp(s - max), kept in a
  // scratch row (in f32 too: no result's buffer changes what it may
  // share) and read by passes 2 and 3 and the output: one exponential a
  // point, where recomputing takes three.
  std::string source = R"mlir(
func.func @main(%x: tensor<9x130xf32>, %dp: tensor<9x130xf32>) -> (tensor<9x130xf32>, tensor<9x130xf32>) {
  %r:2 = kiln.fusion reduction(%x, %dp) : (tensor<9x130xf32>, tensor<9x130xf32>) -> (tensor<9x130xf32>, tensor<9x130xf32>) {
  ^bb0(%a: tensor<9x130xf32>, %g: tensor<9x130xf32>):
    %m = kiln.reduce max %a, dims = [1] : tensor<9x130xf32> -> tensor<9xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<9xf32> -> tensor<9x130xf32>
    %d = kiln.sub %a, %mb : tensor<9x130xf32>
    %e = kiln.exp %d : tensor<9x130xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<9x130xf32> -> tensor<9xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0] : tensor<9xf32> -> tensor<9x130xf32>
    %p = kiln.div %e, %sb : tensor<9x130xf32>
    %pg = kiln.mul %p, %g : tensor<9x130xf32>
    %t = kiln.reduce sum %pg, dims = [1] : tensor<9x130xf32> -> tensor<9xf32>
    %tb = kiln.broadcast_in_dim %t, dims = [0] : tensor<9xf32> -> tensor<9x130xf32>
    %c = kiln.sub %g, %tb : tensor<9x130xf32>
    %ds = kiln.mul %p, %c : tensor<9x130xf32>
    kiln.yield %p, %ds : tensor<9x130xf32>, tensor<9x130xf32>
  }
  return %r#0, %r#1 : tensor<9x130xf32>, tensor<9x130xf32>
}
)mlir";
  EXPECT_EQ(exponentialsPerPoint(source, 130 * 4), 1);
  EXPECT_EQ(exponentialsPerPoint(source, 0), 3);
  // The scratch leaves the results free to take either input's buffer.
  ParsedModule parsed = parseModule(source);
  mlir::Operation *fusion = onlyFusion(parsed);
  ASSERT_TRUE(fusion);
  for (unsigned result = 0; result < 2; ++result)
    for (unsigned input = 0; input < 2; ++input)
      EXPECT_TRUE(
          compiler::cpu::mayWriteResultOverOperand(fusion, result, input))
          << "result " << result << ", input " << input;
  expectOneKernelWithAndWithoutScratch(
      source,
      randomInputs({{DType::f32, {9, 130}}, {DType::f32, {9, 130}}}, 29, false),
      300);
}

TEST(CpuFusion, CrossEntropyStashNeverOverwritesItsLogits) {
  // Cross-entropy's shape: the label term sum((x - max) * w) sits in the
  // last pass beside sum(exp(x - max)), so it reads x after the stash loop
  // wrote exp(x - max) into the output: the output may not take x's buffer
  // (x donated here, as the planner would reuse dying logits).
  std::string source = R"mlir(
func.func @main(%x: tensor<16x300xf32> {kiln.donate}, %w: tensor<16x300xf32>) -> (tensor<16x300xf32>, tensor<16xf32>) {
  %r:2 = kiln.fusion reduction(%x, %w) : (tensor<16x300xf32>, tensor<16x300xf32>) -> (tensor<16x300xf32>, tensor<16xf32>) {
  ^bb0(%a: tensor<16x300xf32>, %b: tensor<16x300xf32>):
    %m = kiln.reduce max %a, dims = [1] : tensor<16x300xf32> -> tensor<16xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<16xf32> -> tensor<16x300xf32>
    %d = kiln.sub %a, %mb : tensor<16x300xf32>
    %e = kiln.exp %d : tensor<16x300xf32>
    %s = kiln.reduce sum %e, dims = [1] : tensor<16x300xf32> -> tensor<16xf32>
    %dw = kiln.mul %d, %b : tensor<16x300xf32>
    %t = kiln.reduce sum %dw, dims = [1] : tensor<16x300xf32> -> tensor<16xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [0] : tensor<16xf32> -> tensor<16x300xf32>
    %y = kiln.div %e, %sb : tensor<16x300xf32>
    %ls = kiln.log %s : tensor<16xf32>
    %loss = kiln.sub %ls, %t : tensor<16xf32>
    kiln.yield %y, %loss : tensor<16x300xf32>, tensor<16xf32>
  }
  return %r#0, %r#1 : tensor<16x300xf32>, tensor<16xf32>
}
)mlir";
  ParsedModule parsed = parseModule(source);
  mlir::Operation *fusion = onlyFusion(parsed);
  ASSERT_TRUE(fusion);
  EXPECT_FALSE(compiler::cpu::mayWriteResultOverOperand(fusion, 0, 0));
  std::vector<HostTensor> inputs = randomInputs(
      {{DType::f32, {16, 300}}, {DType::f32, {16, 300}}}, 27, false);
  auto main = parsed.module->lookupSymbol<mlir::func::FuncOp>("main");
  absl::StatusOr<std::vector<HostTensor>> expected =
      reference::evaluate(main, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  compiler::cpu::CpuCompileStats stats;
  absl::StatusOr<runtime::Executable> exe =
      compiler::cpu::compileExecutable(*parsed.module, "main", &stats);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(stats.opKernels, 1);
  auto program = runtime::loadCpuProgram(*std::move(exe));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto actual = (*program)->run(std::vector<HostTensor>(inputs)); // donated
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  ASSERT_EQ(actual->size(), 2u);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_EQ(compareTensors((*actual)[i], (*expected)[i], 400), "")
        << "result " << i;
}

} // namespace
} // namespace kiln::testing
