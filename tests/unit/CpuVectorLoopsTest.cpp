// How the cpu's fusion kernels shape their loops for LLVM's vectoriser.
//
// Loop fusions walk rows of their innermost dimension (splitInnermostRows,
// FusionKernelOptions::innermostRows): the kernel's range is the leading
// dims' rows and a loop inside each walks the innermost dim, so what
// depends on the row alone is computed once per row and the inner loop
// vectorises. Each case runs with the split (the cpu's default) and
// without it and is compared with the reference evaluator; the kernel's
// range says which form was emitted: the row count where the split
// applies, every element where it does not (an innermost dim under
// kMinInnermostRow, an rng draw, one dim).
//
// Column-blocked reductions declare their block's column loops parallel
// (KernelBuilder::parallelLoop → an access group on each such loop's
// back-edge), and only those: the loop over rows carries the columns'
// partial sums. Without it a full result written over its input (in
// place) failed LLVM's runtime alias check and ran the scalar loop (GELU's
// bf16 backward: 5.5 ms a call in the step, 1 ms alone).
#include "CpuTestSupport.h"

#include "compiler/cpu/CodeGen.h"
#include "compiler/cpu/KernelBuilder.h"
#include "compiler/cpu/KernelEmitter.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <gtest/gtest.h>

namespace kiln::testing {
namespace {

/// The range of @main's one kernel thunk when compiled for `target`.
int64_t kernelRange(const std::string &source,
                    const compiler::cpu::KernelTarget &target) {
  ParsedModule parsed = parseModule(source);
  EXPECT_TRUE(parsed.module) << source;
  if (!parsed.module)
    return -1;
  absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
      *parsed.module, "main", nullptr, {}, target);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (!exe.ok())
    return -1;
  int64_t range = -1, kernels = 0;
  for (const runtime::Thunk &t : exe->thunks)
    if (t.kind == runtime::Thunk::Kind::kernel) {
      range = t.kernel.rangeSize;
      ++kernels;
    }
  EXPECT_EQ(kernels, 1) << source;
  return range;
}

compiler::cpu::KernelTarget withRows(bool on) {
  compiler::cpu::KernelTarget target;
  target.innermostRows = on;
  return target;
}

/// Both forms match the reference on `inputs`; the split one's range is
/// `rows`, the flat one's `elements`.
void expectBothForms(const std::string &source,
                     const std::vector<HostTensor> &inputs, int64_t rows,
                     int64_t elements, double scale = 1,
                     InputPassing passing = InputPassing::borrowed) {
  SCOPED_TRACE(source);
  for (bool on : {true, false}) {
    SCOPED_TRACE(on ? "rows of the innermost dim" : "one row per element");
    expectMatchesReferenceOn(cpuPrograms({}, withRows(on)), source, inputs,
                             scale, passing);
    EXPECT_EQ(kernelRange(source, withRows(on)), on ? rows : elements);
  }
}

/// The cases' inputs: seed 3, no special values (each result is compared
/// with the reference elementwise).
std::vector<HostTensor> plainInputs(
    std::initializer_list<std::pair<DType, std::vector<int64_t>>> specs) {
  return randomInputs(specs, 3, /*specials=*/false);
}

TEST(CpuLoopRows, TheLossGradientReadsEachRowsValuesOnce) {
  // The fused loss's exp(logits - lse) - onehot(label), masked: the log-sum
  // -exp, the label and the mask are one value a row.
  std::vector<HostTensor> inputs = plainInputs(
      {{DType::f32, {24, 40}}, {DType::f32, {24}}, {DType::i1, {24}}});
  HostTensor labels(DType::i64, {24});
  for (int64_t i = 0; i < 24; ++i)
    labels.setDouble(i, double((i * 7) % 40));
  inputs.insert(inputs.begin() + 1, labels);
  expectBothForms(R"mlir(
func.func @main(%x: tensor<24x40xf32>, %l: tensor<24xi64>, %s: tensor<24xf32>, %m: tensor<24xi1>) -> tensor<24x40xf32> {
  %r = kiln.fusion loop(%x, %l, %s, %m) : (tensor<24x40xf32>, tensor<24xi64>, tensor<24xf32>, tensor<24xi1>) -> tensor<24x40xf32> {
  ^bb0(%a: tensor<24x40xf32>, %b: tensor<24xi64>, %c: tensor<24xf32>, %d: tensor<24xi1>):
    %cb = kiln.broadcast_in_dim %c, dims = [0] : tensor<24xf32> -> tensor<24x40xf32>
    %sh = kiln.sub %a, %cb : tensor<24x40xf32>
    %p = kiln.exp %sh : tensor<24x40xf32>
    %io = kiln.iota dim = 1 : tensor<24x40xi64>
    %bb = kiln.broadcast_in_dim %b, dims = [0] : tensor<24xi64> -> tensor<24x40xi64>
    %hit = kiln.compare EQ, %io, %bb : tensor<24x40xi64>
    %one = kiln.constant dense<1.0> : tensor<24x40xf32>
    %zero = kiln.constant dense<0.0> : tensor<24x40xf32>
    %oh = kiln.select %hit, %one, %zero : tensor<24x40xi1>, tensor<24x40xf32>
    %g = kiln.sub %p, %oh : tensor<24x40xf32>
    %db = kiln.broadcast_in_dim %d, dims = [0] : tensor<24xi1> -> tensor<24x40xi1>
    %out = kiln.select %db, %g, %zero : tensor<24x40xi1>, tensor<24x40xf32>
    kiln.yield %out : tensor<24x40xf32>
  }
  return %r : tensor<24x40xf32>
}
)mlir",
                  inputs, 24, 24 * 40, 8);
}

TEST(CpuLoopRows, DataMovementAlongAndAcrossTheInnermostDim) {
  // A transposed operand, a column broadcast, a reshape splitting the
  // innermost dim, an iota, a slice and pad and a concatenation along it,
  // two results, over [3, 4, 40]: 12 rows.
  expectBothForms(R"mlir(
func.func @main(%x: tensor<3x4x2x20xf32>, %t: tensor<40x4x3xf32>, %c: tensor<40xf32>, %u: tensor<3x4x16xf32>, %v: tensor<3x4x24xf32>, %p: tensor<f32>) -> (tensor<3x4x40xf32>, tensor<3x4x40xf32>) {
  %r:2 = kiln.fusion loop(%x, %t, %c, %u, %v, %p) : (tensor<3x4x2x20xf32>, tensor<40x4x3xf32>, tensor<40xf32>, tensor<3x4x16xf32>, tensor<3x4x24xf32>, tensor<f32>) -> (tensor<3x4x40xf32>, tensor<3x4x40xf32>) {
  ^bb0(%a: tensor<3x4x2x20xf32>, %b: tensor<40x4x3xf32>, %cc: tensor<40xf32>, %uu: tensor<3x4x16xf32>, %vv: tensor<3x4x24xf32>, %pv: tensor<f32>):
    %rs = kiln.reshape %a : tensor<3x4x2x20xf32> -> tensor<3x4x40xf32>
    %tr = kiln.transpose %b, perm = [2, 1, 0] : tensor<40x4x3xf32> -> tensor<3x4x40xf32>
    %cb = kiln.broadcast_in_dim %cc, dims = [2] : tensor<40xf32> -> tensor<3x4x40xf32>
    %io = kiln.iota dim = 2 : tensor<3x4x40xf32>
    %sl = kiln.slice %rs, start = [0, 0, 1], limit = [3, 4, 39], strides = [1, 1, 1] : tensor<3x4x40xf32> -> tensor<3x4x38xf32>
    %pd = kiln.pad %sl, %pv, low = [0, 0, 1], high = [0, 0, 1] : tensor<3x4x38xf32>, tensor<f32> -> tensor<3x4x40xf32>
    %cat = kiln.concatenate %uu, %vv, dim = 2 : (tensor<3x4x16xf32>, tensor<3x4x24xf32>) -> tensor<3x4x40xf32>
    %m = kiln.mul %tr, %cb : tensor<3x4x40xf32>
    %s = kiln.add %m, %pd : tensor<3x4x40xf32>
    %w = kiln.mul %cat, %io : tensor<3x4x40xf32>
    %e = kiln.sub %s, %w : tensor<3x4x40xf32>
    kiln.yield %s, %e : tensor<3x4x40xf32>, tensor<3x4x40xf32>
  }
  return %r#0, %r#1 : tensor<3x4x40xf32>, tensor<3x4x40xf32>
}
)mlir",
                  plainInputs({{DType::f32, {3, 4, 2, 20}},
                               {DType::f32, {40, 4, 3}},
                               {DType::f32, {40}},
                               {DType::f32, {3, 4, 16}},
                               {DType::f32, {3, 4, 24}},
                               {DType::f32, {}}}),
                  12, 480);
}

TEST(CpuLoopRows, SixteenBitValuesAndAResultWrittenOverItsInput) {
  // bf16 in and out (rounded as each is stored), and the inputs given, so
  // the result may take the buffer of the input it reads at its own
  // element while the row's scale is read once.
  expectBothForms(R"mlir(
func.func @main(%x: tensor<16x32xbf16>, %s: tensor<16xf32>) -> tensor<16x32xbf16> {
  %r = kiln.fusion loop(%x, %s) : (tensor<16x32xbf16>, tensor<16xf32>) -> tensor<16x32xbf16> {
  ^bb0(%a: tensor<16x32xbf16>, %b: tensor<16xf32>):
    %w = kiln.convert %a : tensor<16x32xbf16> -> tensor<16x32xf32>
    %bb = kiln.broadcast_in_dim %b, dims = [0] : tensor<16xf32> -> tensor<16x32xf32>
    %y = kiln.mul %w, %bb : tensor<16x32xf32>
    %t = kiln.tanh %y : tensor<16x32xf32>
    %z = kiln.add %t, %w : tensor<16x32xf32>
    %n = kiln.convert %z : tensor<16x32xf32> -> tensor<16x32xbf16>
    kiln.yield %n : tensor<16x32xbf16>
  }
  return %r : tensor<16x32xbf16>
}
)mlir",
                  plainInputs({{DType::bf16, {16, 32}}, {DType::f32, {16}}}),
                  16, 512, 1, InputPassing::given);
}

TEST(CpuLoopRows, ShortRowsDrawsAndOneDimKeepAFlatLoop) {
  // Negative twins: an innermost dim of 12 (under kMinInnermostRow), an
  // rng draw (its Philox blocks go by groups of elements) and a single dim
  // keep one row per element with the split asked for.
  const std::string shortRows = R"mlir(
func.func @main(%x: tensor<40x12xf32>, %c: tensor<40xf32>) -> tensor<40x12xf32> {
  %r = kiln.fusion loop(%x, %c) : (tensor<40x12xf32>, tensor<40xf32>) -> tensor<40x12xf32> {
  ^bb0(%a: tensor<40x12xf32>, %b: tensor<40xf32>):
    %bb = kiln.broadcast_in_dim %b, dims = [0] : tensor<40xf32> -> tensor<40x12xf32>
    %e = kiln.sub %a, %bb : tensor<40x12xf32>
    %f = kiln.exp %e : tensor<40x12xf32>
    kiln.yield %f : tensor<40x12xf32>
  }
  return %r : tensor<40x12xf32>
}
)mlir";
  expectBothForms(shortRows,
                  plainInputs({{DType::f32, {40, 12}}, {DType::f32, {40}}}),
                  480, 480, 8);
  const std::string oneDim = R"mlir(
func.func @main(%x: tensor<640xf32>) -> tensor<640xf32> {
  %r = kiln.fusion loop(%x) : (tensor<640xf32>) -> tensor<640xf32> {
  ^bb0(%a: tensor<640xf32>):
    %f = kiln.tanh %a : tensor<640xf32>
    kiln.yield %f : tensor<640xf32>
  }
  return %r : tensor<640xf32>
}
)mlir";
  expectBothForms(oneDim, plainInputs({{DType::f32, {640}}}), 640, 640);
  const std::string draw = R"mlir(
func.func @main(%x: tensor<8x64xf32>, %st: tensor<2xi64>) -> tensor<8x64xf32> {
  %r = kiln.fusion loop(%x, %st) : (tensor<8x64xf32>, tensor<2xi64>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>, %s: tensor<2xi64>):
    %u, %n = kiln.rng_uniform %s : tensor<2xi64> -> tensor<8x64xf32>
    %y = kiln.mul %a, %u : tensor<8x64xf32>
    kiln.yield %y : tensor<8x64xf32>
  }
  return %r : tensor<8x64xf32>
}
)mlir";
  expectBothForms(draw,
                  {plainInputs({{DType::f32, {8, 64}}})[0], rngState(7, 11)},
                  512, 512);
}

/// GELU's backward as the bf16 step has it, smaller: two column sums (the
/// bias gradient and its square) and two full bf16 results, one of which
/// the planner may write over an input.
const char *kColumnFusion = R"mlir(
func.func @main(%b: tensor<48xf32>, %x: tensor<64x48xbf16>, %g: tensor<64x48xbf16>) -> (tensor<48xf32>, tensor<48xf32>, tensor<64x48xbf16>, tensor<64x48xbf16>) {
  %r:4 = kiln.fusion multi_output(%b, %x, %g) : (tensor<48xf32>, tensor<64x48xbf16>, tensor<64x48xbf16>) -> (tensor<48xf32>, tensor<48xf32>, tensor<64x48xbf16>, tensor<64x48xbf16>) {
  ^bb0(%bb: tensor<48xf32>, %xx: tensor<64x48xbf16>, %gg: tensor<64x48xbf16>):
    %bc = kiln.broadcast_in_dim %bb, dims = [1] : tensor<48xf32> -> tensor<64x48xf32>
    %xw = kiln.convert %xx : tensor<64x48xbf16> -> tensor<64x48xf32>
    %h = kiln.add %xw, %bc : tensor<64x48xf32>
    %t = kiln.tanh %h : tensor<64x48xf32>
    %gw = kiln.convert %gg : tensor<64x48xbf16> -> tensor<64x48xf32>
    %d = kiln.mul %gw, %t : tensor<64x48xf32>
    %s = kiln.reduce sum %d, dims = [0] : tensor<64x48xf32> -> tensor<48xf32>
    %sq = kiln.mul %s, %s : tensor<48xf32>
    %dn = kiln.convert %d : tensor<64x48xf32> -> tensor<64x48xbf16>
    %hn = kiln.convert %h : tensor<64x48xf32> -> tensor<64x48xbf16>
    kiln.yield %s, %sq, %dn, %hn : tensor<48xf32>, tensor<48xf32>, tensor<64x48xbf16>, tensor<64x48xbf16>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<48xf32>, tensor<48xf32>, tensor<64x48xbf16>, tensor<64x48xbf16>
}
)mlir";

TEST(CpuColumnBlocks, OnlyTheBlocksColumnLoopsAreParallel) {
  ParsedModule parsed = parseModule(kColumnFusion);
  ASSERT_TRUE(parsed.module);
  mlir::Operation *fusion = nullptr;
  parsed.module->walk([&](FusionOp f) { fusion = f; });
  ASSERT_TRUE(fusion);
  compiler::cpu::loadKernelDialects(*parsed.context);
  mlir::OpBuilder b(parsed.context.get());
  mlir::OwningOpRef<mlir::ModuleOp> kernels =
      mlir::ModuleOp::create(b.getUnknownLoc());
  ASSERT_TRUE(succeeded(compiler::cpu::emitOpKernel(fusion, *kernels, "k")));
  // Tagged: the accumulators' initialisation, the accumulating pass's
  // column loop and the column results' loop; not the rows around them.
  int tagged = 0, loops = 0;
  kernels->walk([&](mlir::scf::ForOp loop) {
    ++loops;
    if (loop->hasAttr(compiler::cpu::kParallelLoopAttr)) {
      ++tagged;
      EXPECT_TRUE(loop.getBody()->getOps<mlir::scf::ForOp>().empty())
          << "a parallel column loop holds no loop";
    }
  });
  EXPECT_EQ(tagged, 3);
  EXPECT_GT(loops, tagged);
  ASSERT_TRUE(compiler::cpu::lowerKernelsToLLVMDialect(*kernels).ok());
  // Each tagged loop's back-edge now lists its access group as parallel;
  // no other branch does, and the tag is gone.
  int annotated = 0;
  kernels->walk([&](mlir::LLVM::BrOp br) {
    EXPECT_FALSE(br->hasAttr(compiler::cpu::kParallelLoopAttr));
    if (auto a = br.getLoopAnnotationAttr())
      annotated += !a.getParallelAccesses().empty();
  });
  EXPECT_EQ(annotated, tagged);
}

TEST(CpuColumnBlocks, AFullResultWrittenOverItsInputMatchesTheReference) {
  // The inputs given, so the planner may put a bf16 result in the buffer
  // of the input it reads at its own point; the block loop, declared
  // parallel, vectorises without an alias check.
  expectMatchesReferenceOn(cpuPrograms(), kColumnFusion,
                           plainInputs({{DType::f32, {48}},
                                        {DType::bf16, {64, 48}},
                                        {DType::bf16, {64, 48}}}),
                           /*scale=*/64, InputPassing::given);
}

} // namespace
} // namespace kiln::testing
