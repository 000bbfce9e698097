// The row kernels' stash (compiler/cpu/FusionPlanner.cpp, planStash;
// FusionRows.cpp, emitRow): a value a reduce pass sums and later passes
// read again (softmax's exponentials) is stored once a point, into a result
// row or a scratch row, and read back instead of recomputed; results that
// hold it never overwrite an input read after it is written. A row's
// dropout draws go to a scratch row too, a Philox block at a time
// (planDraws, fillDraws), and the scratch's accesses are parallel in the
// loops inside a row (CodeGen.cpp, markParallelLoops). Each case matches
// the reference evaluator.
#include "CpuFusionSupport.h"

#include "compiler/cpu/CodeGen.h"
#include "compiler/cpu/KernelEmitter.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/DenseSet.h"

#include <map>

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

/// The kernel of `parsed`'s fusion (scratch rows of at most
/// `mostScratchStashBytes`), before its lowering to LLVM.
mlir::OwningOpRef<mlir::ModuleOp> emitFusion(ParsedModule &parsed,
                                             int64_t mostScratchStashBytes) {
  compiler::cpu::detail::FusionKernelOptions options;
  options.mostScratchStashBytes = mostScratchStashBytes;
  return emitFusionKernelModule(parsed, options);
}

/// How many exponentials the kernel of the fusion in `source` computes a
/// point when a row's stash may take `mostScratchStashBytes` of scratch
/// (FusionKernelOptions::mostScratchStashBytes; the cpu's default beside
/// the GPU's 0).
int exponentialsPerPoint(const std::string &source,
                         int64_t mostScratchStashBytes) {
  compiler::cpu::detail::FusionKernelOptions options;
  options.mostScratchStashBytes = mostScratchStashBytes;
  return opsInKernel<mlir::math::ExpOp>(source, options);
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

/// Attention's backward with dropout, as GPT-2's step makes it at
/// [batch 2, heads 3, seq 16]: the mask's uniforms drawn as [seq, batch *
/// heads * seq], viewed as [batch, heads, seq, seq] through a reshape and a
/// transpose; pass 3 (the sum of P * dP) and the output pass both read it.
/// `@PERM@`: the transpose's permutation ([1, 2, 0, 3]: a row of S takes
/// consecutive draws; [1, 2, 3, 0]: a row takes every 96th).
constexpr const char *kAttentionBackwardWithDropout = R"mlir(
func.func @main(%st: tensor<2xi64>, %x: tensor<2x3x16x16xf32>, %dp: tensor<2x3x16x16xf32>) -> (tensor<2x3x16x16xf32>, tensor<2x3x16x16xf32>) {
  %r:2 = kiln.fusion reduction(%st, %x, %dp) : (tensor<2xi64>, tensor<2x3x16x16xf32>, tensor<2x3x16x16xf32>) -> (tensor<2x3x16x16xf32>, tensor<2x3x16x16xf32>) {
  ^bb0(%s: tensor<2xi64>, %a: tensor<2x3x16x16xf32>, %g: tensor<2x3x16x16xf32>):
    %m = kiln.reduce max %a, dims = [3] : tensor<2x3x16x16xf32> -> tensor<2x3x16xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : tensor<2x3x16xf32> -> tensor<2x3x16x16xf32>
    %d = kiln.sub %a, %mb : tensor<2x3x16x16xf32>
    %e = kiln.exp %d : tensor<2x3x16x16xf32>
    %sum = kiln.reduce sum %e, dims = [3] : tensor<2x3x16x16xf32> -> tensor<2x3x16xf32>
    %sb = kiln.broadcast_in_dim %sum, dims = [0, 1, 2] : tensor<2x3x16xf32> -> tensor<2x3x16x16xf32>
    %p = kiln.div %e, %sb : tensor<2x3x16x16xf32>
    %u, %n = kiln.rng_uniform %s : tensor<2xi64> -> tensor<16x96xf32>
    %u4 = kiln.reshape %u : tensor<16x96xf32> -> tensor<16x2x3x16xf32>
    %ut = kiln.transpose %u4, perm = @PERM@ : tensor<16x2x3x16xf32> -> tensor<2x3x16x16xf32>
    %q = kiln.constant dense<0.1> : tensor<2x3x16x16xf32>
    %keep = kiln.compare GE, %ut, %q : tensor<2x3x16x16xf32>
    %k = kiln.constant dense<1.25> : tensor<2x3x16x16xf32>
    %z = kiln.constant dense<0.0> : tensor<2x3x16x16xf32>
    %pk = kiln.mul %p, %k : tensor<2x3x16x16xf32>
    %pd = kiln.select %keep, %pk, %z : tensor<2x3x16x16xi1>, tensor<2x3x16x16xf32>
    %gk = kiln.mul %g, %k : tensor<2x3x16x16xf32>
    %gd = kiln.select %keep, %gk, %z : tensor<2x3x16x16xi1>, tensor<2x3x16x16xf32>
    %pg = kiln.mul %p, %gd : tensor<2x3x16x16xf32>
    %t = kiln.reduce sum %pg, dims = [3] : tensor<2x3x16x16xf32> -> tensor<2x3x16xf32>
    %tb = kiln.broadcast_in_dim %t, dims = [0, 1, 2] : tensor<2x3x16xf32> -> tensor<2x3x16x16xf32>
    %c = kiln.sub %gd, %tb : tensor<2x3x16x16xf32>
    %ds = kiln.mul %p, %c : tensor<2x3x16x16xf32>
    kiln.yield %pd, %ds : tensor<2x3x16x16xf32>, tensor<2x3x16x16xf32>
  }
  return %r#0, %r#1 : tensor<2x3x16x16xf32>, tensor<2x3x16x16xf32>
}
)mlir";

std::string attentionBackwardWithDropout(const std::string &perm) {
  std::string source = kAttentionBackwardWithDropout;
  source.replace(source.find("@PERM@"), 6, perm);
  return source;
}

/// For each loop of the kernel of the fusion in `source` that computes
/// Philox blocks: its trip count → the blocks an iteration computes (each
/// block is ten rounds of two extended multiplications).
std::map<int64_t, int> philoxLoops(const std::string &source,
                                   int64_t mostScratchStashBytes) {
  ParsedModule parsed = parseModule(source);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      emitFusion(parsed, mostScratchStashBytes);
  std::map<int64_t, int> loops;
  if (!module)
    return loops;
  std::map<mlir::Operation *, int> multiplies;
  module->walk([&](mlir::arith::MulUIExtendedOp mul) {
    ++multiplies[mul->getParentOfType<mlir::scf::ForOp>()];
  });
  for (auto [op, count] : multiplies) {
    auto loop = llvm::cast<mlir::scf::ForOp>(op);
    std::optional<int64_t> trips =
        mlir::getConstantIntValue(loop.getUpperBound());
    EXPECT_TRUE(trips && mlir::getConstantIntValue(loop.getLowerBound()) == 0 &&
                mlir::getConstantIntValue(loop.getStep()) == 1);
    EXPECT_EQ(count % 20, 0);
    loops[trips.value_or(-1)] += count / 20;
  }
  return loops;
}

TEST(CpuFusion, DropoutDrawsAreGeneratedOnceABlockIntoAScratchRow) {
  // A row of 16 points takes draws 96 t + 48 b + 16 h + 0..15: four whole
  // Philox blocks. With scratch, one loop of 4 iterations computes each
  // block once and stores its four draws; passes 3 and the output read
  // them. Without, each of those passes computes a block for every point:
  // 16 a row twice, eight times the blocks. Both match the reference.
  std::string source = attentionBackwardWithDropout("[1, 2, 0, 3]");
  const int64_t rowBytes = 16 * 4;
  EXPECT_EQ(philoxLoops(source, 2 * rowBytes),
            (std::map<int64_t, int>{{4, 1}}));
  EXPECT_EQ(philoxLoops(source, 0), (std::map<int64_t, int>{{16, 2}}));
  // Room for the exponentials' stash only: the draws are recomputed.
  EXPECT_EQ(philoxLoops(source, rowBytes), (std::map<int64_t, int>{{16, 2}}));
  std::mt19937 rng(30);
  std::vector<HostTensor> inputs = {
      rngState(0x5eed, -7 /* wraps */),
      randomTensor(DType::f32, {2, 3, 16, 16}, rng, 4, false),
      randomTensor(DType::f32, {2, 3, 16, 16}, rng, 4, false)};
  expectOneKernelWithAndWithoutScratch(source, inputs, 300);
}

TEST(CpuFusion, DropoutDrawsAcrossBlocksAreGeneratedPointByPoint) {
  // The transpose puts consecutive draws down a column: a row's points
  // take draws 96 apart, each from a block of its own. The scratch row is
  // filled a point at a time (16 blocks a row, once), and still read by
  // both passes.
  std::string source = attentionBackwardWithDropout("[1, 2, 3, 0]");
  EXPECT_EQ(philoxLoops(source, 2 * 16 * 4), (std::map<int64_t, int>{{16, 1}}));
  std::mt19937 rng(31);
  std::vector<HostTensor> inputs = {
      rngState(77, 1LL << 40),
      randomTensor(DType::f32, {2, 3, 16, 16}, rng, 4, false),
      randomTensor(DType::f32, {2, 3, 16, 16}, rng, 4, false)};
  expectOneKernelWithAndWithoutScratch(source, inputs, 300);
}

TEST(CpuFusion, ScratchRowsAreParallelInTheLoopsOfARowOnly) {
  // After lowering: the buffers' accesses are one access group that every
  // loop claims; the scratch rows' accesses another, claimed by the loops
  // inside the row loop (each point its own element) and not by the row
  // loop (every row writes the same scratch). A loop left without the
  // scratch's claim is not parallel, and an output written over its input
  // then fails LLVM's alias check: the scalar loop.
  ParsedModule parsed =
      parseModule(attentionBackwardWithDropout("[1, 2, 0, 3]"));
  mlir::OwningOpRef<mlir::ModuleOp> module = emitFusion(parsed, 256 * 1024);
  ASSERT_TRUE(module);
  ASSERT_TRUE(compiler::cpu::lowerKernelsToLLVMDialect(*module).ok());
  llvm::DenseSet<mlir::Attribute> stackGroups, bufferGroups;
  auto groupsOf = [](mlir::Operation *op) -> mlir::ArrayAttr {
    if (auto load = llvm::dyn_cast<mlir::LLVM::LoadOp>(op))
      return load.getAccessGroupsAttr();
    if (auto store = llvm::dyn_cast<mlir::LLVM::StoreOp>(op))
      return store.getAccessGroupsAttr();
    return nullptr;
  };
  module->walk([&](mlir::Operation *op) {
    if (!llvm::isa<mlir::LLVM::LoadOp, mlir::LLVM::StoreOp>(op))
      return;
    mlir::Value address =
        op->getOperand(llvm::isa<mlir::LLVM::LoadOp>(op) ? 0 : 1);
    while (auto gep = address.getDefiningOp<mlir::LLVM::GEPOp>())
      address = gep.getBase();
    mlir::ArrayAttr groups = groupsOf(op);
    ASSERT_TRUE(groups && groups.size() == 1);
    (address.getDefiningOp<mlir::LLVM::AllocaOp>() ? stackGroups : bufferGroups)
        .insert(groups[0]);
  });
  ASSERT_EQ(stackGroups.size(), 1u); // the exponentials' and the draws' rows
  ASSERT_EQ(bufferGroups.size(), 1u);
  int rowLoops = 0, innerLoops = 0;
  module->walk([&](mlir::LLVM::BrOp br) {
    mlir::LLVM::LoopAnnotationAttr loop = br.getLoopAnnotationAttr();
    if (!loop)
      return;
    llvm::DenseSet<mlir::Attribute> claimed(loop.getParallelAccesses().begin(),
                                            loop.getParallelAccesses().end());
    EXPECT_TRUE(claimed.contains(*bufferGroups.begin()));
    ++(claimed.contains(*stackGroups.begin()) ? innerLoops : rowLoops);
  });
  EXPECT_EQ(rowLoops, 1);
  // The fill, the stash's loop, the three passes and the output pass.
  EXPECT_EQ(innerLoops, 6);
}

} // namespace
} // namespace kiln::testing
