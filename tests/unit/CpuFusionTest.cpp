// Every kiln.fusion the CPU backend can emit becomes ONE kernel
// (compiler/cpu/FusionPlanner.cpp, FusionEmitter.cpp): loop fusions with data movement inside,
// reduction fusions with epilogues and sibling reduces, softmax and layer
// norm built by the pipeline. Each case is compared with the reference
// evaluator and must compile to exactly one kernel thunk; the negative twin
// (a reduce result read at a larger shape) must fall back to op-by-op
// kernels and still compute the right values.
#include "CpuFusionSupport.h"

#include "compiler/cpu/CodeGen.h"
#include "compiler/cpu/KernelEmitter.h"

#include "absl/strings/str_cat.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace kiln::testing {
namespace {

TEST(CpuFusion, LoopFusionWithBroadcastAndTranspose) {
  expectOneKernel(R"mlir(
func.func @main(%x: tensor<6x5xf32>, %b: tensor<6xf32>) -> tensor<5x6xf32> {
  %r = kiln.fusion loop(%x, %b) : (tensor<6x5xf32>, tensor<6xf32>) -> tensor<5x6xf32> {
  ^bb0(%a: tensor<6x5xf32>, %v: tensor<6xf32>):
    %t = kiln.transpose %a, perm = [1, 0] : tensor<6x5xf32> -> tensor<5x6xf32>
    %vb = kiln.broadcast_in_dim %v, dims = [1] : tensor<6xf32> -> tensor<5x6xf32>
    %s = kiln.mul %t, %vb : tensor<5x6xf32>
    %e = kiln.exp %s : tensor<5x6xf32>
    kiln.yield %e : tensor<5x6xf32>
  }
  return %r : tensor<5x6xf32>
}
)mlir",
                  randomInputs({{DType::f32, {6, 5}}, {DType::f32, {6}}}), 8);
}

TEST(CpuFusion, LoopFusionWithReshapeSliceIotaPadConcatenate) {
  // Two results of one shape; every data-movement op maps the output index
  // back to its operand's; a non-splat constant is a small table.
  expectOneKernel(
      R"mlir(
func.func @main(%x: tensor<4x6xf32>, %y: tensor<2x3xi32>, %p: tensor<f32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %r:2 = kiln.fusion loop(%x, %y, %p) : (tensor<4x6xf32>, tensor<2x3xi32>, tensor<f32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  ^bb0(%a: tensor<4x6xf32>, %b: tensor<2x3xi32>, %pv: tensor<f32>):
    %rs = kiln.reshape %a : tensor<4x6xf32> -> tensor<3x8xf32>
    %sl = kiln.slice %a, start = [1, 0], limit = [4, 6], strides = [1, 1] : tensor<4x6xf32> -> tensor<3x6xf32>
    %pd = kiln.pad %sl, %pv, low = [0, 1], high = [0, 1] : tensor<3x6xf32>, tensor<f32> -> tensor<3x8xf32>
    %io = kiln.iota dim = 1 : tensor<3x8xf32>
    %bc = kiln.convert %b : tensor<2x3xi32> -> tensor<2x3xf32>
    %one = kiln.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
    %cc = kiln.concatenate %bc, %one, dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
    %cc2 = kiln.concatenate %cc, %cc, %io, dim = 1 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x8xf32>) -> tensor<3x14xf32>
    %cs = kiln.slice %cc2, start = [0, 0], limit = [3, 14], strides = [1, 2] : tensor<3x14xf32> -> tensor<3x7xf32>
    %cp = kiln.pad %cs, %pv, low = [0, 0], high = [0, 1] : tensor<3x7xf32>, tensor<f32> -> tensor<3x8xf32>
    %s = kiln.add %rs, %pd : tensor<3x8xf32>
    %t = kiln.mul %s, %io : tensor<3x8xf32>
    %u = kiln.sub %t, %cp : tensor<3x8xf32>
    kiln.yield %s, %u : tensor<3x8xf32>, tensor<3x8xf32>
  }
  return %r#0, %r#1 : tensor<3x8xf32>, tensor<3x8xf32>
}
)mlir",
      randomInputs(
          {{DType::f32, {4, 6}}, {DType::i32, {2, 3}}, {DType::f32, {}}}));
}

TEST(CpuFusion, WidenedChunksConcatenatedThroughThePipelineAreOneKernel) {
  // kiln-fuse-elementwise moves converts of fewer elements than their
  // consumer into it when they are read only through a concatenation or a
  // pad (attention's chunk outputs, kiln-autocast's widened products): the
  // kernel reads the 16-bit chunks where they are.
  expectOneKernel(R"mlir(
func.func @main(%a: tensor<2x8xbf16>, %b: tensor<2x8xbf16>, %c: tensor<1x8xbf16>, %z: tensor<f32>) -> tensor<4x8xf32> {
  %wa = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %wb = kiln.convert %b : tensor<2x8xbf16> -> tensor<2x8xf32>
  %wc = kiln.convert %c : tensor<1x8xbf16> -> tensor<1x8xf32>
  %cc = kiln.concatenate %wa, %wb, dim = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %pc = kiln.pad %wc, %z, low = [1, 0], high = [2, 0] : tensor<1x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %s = kiln.add %cc, %pc : tensor<4x8xf32>
  %e = kiln.exp %s : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
)mlir",
                  randomInputs({{DType::bf16, {2, 8}},
                                {DType::bf16, {2, 8}},
                                {DType::bf16, {1, 8}},
                                {DType::f32, {}}},
                               /*seed=*/3, /*specials=*/false),
                  8);
}

TEST(CpuFusion, WidenedChunkPaddedOrJoinedAloneIsOneKernel) {
  // A pad or a concatenation no reader takes in (here: returned; in a
  // step, tied by a barrier) is a root of its own: the widening fuses into
  // it (attention's chunked key gradient padded to every key; the query
  // gradients' chunks joined), one kernel reading the 16-bit chunks.
  expectOneKernel(R"mlir(
func.func @main(%a: tensor<2x8xbf16>) -> tensor<5x8xf32> {
  %w = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %w, %z, low = [0, 0], high = [3, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<5x8xf32>
  return %p : tensor<5x8xf32>
}
)mlir",
                  randomInputs({{DType::bf16, {2, 8}}}, /*seed=*/5,
                               /*specials=*/false));
  expectOneKernel(R"mlir(
func.func @main(%a: tensor<2x8xbf16>, %b: tensor<3x8xbf16>) -> tensor<5x8xf32> {
  %wa = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %wb = kiln.convert %b : tensor<3x8xbf16> -> tensor<3x8xf32>
  %c = kiln.concatenate %wa, %wb, dim = 0 : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<5x8xf32>
  return %c : tensor<5x8xf32>
}
)mlir",
                  randomInputs({{DType::bf16, {2, 8}}, {DType::bf16, {3, 8}}},
                               /*seed=*/5, /*specials=*/false));
  // The last chunk's widened gradient added to the other chunks' f32 sum
  // before it is padded into a larger sum: the widening fuses through the
  // add, one kernel reading the 16-bit chunk.
  expectOneKernel(R"mlir(
func.func @main(%a: tensor<2x8xbf16>, %s: tensor<2x8xf32>, %o: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %w = kiln.convert %a : tensor<2x8xbf16> -> tensor<2x8xf32>
  %x = kiln.add %s, %w : tensor<2x8xf32>
  %z = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %x, %z, low = [1, 0], high = [2, 0] : tensor<2x8xf32>, tensor<f32> -> tensor<5x8xf32>
  %r = kiln.add %p, %o : tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}
)mlir",
                  randomInputs({{DType::bf16, {2, 8}},
                                {DType::f32, {2, 8}},
                                {DType::f32, {5, 8}}},
                               /*seed=*/7, /*specials=*/false));
}

TEST(CpuFusion, RotaryEmbeddingOfA16BitProjectionIsOneKernel) {
  // Llama's rotary embedding, x cos + rotate_half(x) sin with
  // rotate_half(x) = concatenate(-x[..., 4:], x[..., :4]), of a bf16
  // projection split into heads: the slices, read through a negation and
  // a concatenation, fuse in as pads and concatenations do, so the kernel
  // reads the 16-bit projection where it lies, with no f32 copy of the
  // heads and no copy of each half. In the cpu's forms and in the GPU's
  // (four elements an index).
  const char *rotary = R"mlir(
func.func @main(%p: tensor<3x8xbf16>, %cos: tensor<3x4xf32>, %sin: tensor<3x4xf32>) -> tensor<1x2x3x4xbf16> {
  %w = kiln.convert %p : tensor<3x8xbf16> -> tensor<3x8xf32>
  %r = kiln.reshape %w : tensor<3x8xf32> -> tensor<1x3x2x4xf32>
  %x = kiln.transpose %r, perm = [0, 2, 1, 3] : tensor<1x3x2x4xf32> -> tensor<1x2x3x4xf32>
  %x1 = kiln.slice %x, start = [0, 0, 0, 0], limit = [1, 2, 3, 2], strides = [1, 1, 1, 1] : tensor<1x2x3x4xf32> -> tensor<1x2x3x2xf32>
  %x2 = kiln.slice %x, start = [0, 0, 0, 2], limit = [1, 2, 3, 4], strides = [1, 1, 1, 1] : tensor<1x2x3x4xf32> -> tensor<1x2x3x2xf32>
  %n = kiln.neg %x2 : tensor<1x2x3x2xf32>
  %h = kiln.concatenate %n, %x1, dim = 3 : (tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x3x4xf32>
  %c = kiln.broadcast_in_dim %cos, dims = [2, 3] : tensor<3x4xf32> -> tensor<1x2x3x4xf32>
  %s = kiln.broadcast_in_dim %sin, dims = [2, 3] : tensor<3x4xf32> -> tensor<1x2x3x4xf32>
  %xc = kiln.mul %x, %c : tensor<1x2x3x4xf32>
  %hs = kiln.mul %h, %s : tensor<1x2x3x4xf32>
  %y = kiln.add %xc, %hs : tensor<1x2x3x4xf32>
  %b = kiln.convert %y : tensor<1x2x3x4xf32> -> tensor<1x2x3x4xbf16>
  return %b : tensor<1x2x3x4xbf16>
}
)mlir";
  auto inputs = randomInputs(
      {{DType::bf16, {3, 8}}, {DType::f32, {3, 4}}, {DType::f32, {3, 4}}},
      /*seed=*/11, /*specials=*/false);
  expectOneKernel(rotary, inputs);
  compiler::cpu::KernelTarget gpuForms;
  gpuForms.elementsPerIndex = 4;
  expectOneKernel(rotary, inputs, 1, gpuForms);
}

TEST(CpuFusion, ReductionWithEpilogueAndSiblings) {
  // sum x and sum x*x in one pass, a row-shaped epilogue, a max over the
  // same rows, results of row shape and of keepdim shape.
  for (DType dtype : {DType::f32, DType::f16, DType::f64}) {
    std::string e(dtypeName(dtype));
    std::string src = absl::StrCat(R"mlir(
func.func @main(%x: tensor<5x3x40xE>) -> (tensor<5x3xE>, tensor<5x3x1xE>, tensor<5x3xE>) {
  %r:3 = kiln.fusion reduction(%x) : (tensor<5x3x40xE>) -> (tensor<5x3xE>, tensor<5x3x1xE>, tensor<5x3xE>) {
  ^bb0(%a: tensor<5x3x40xE>):
    %s = kiln.reduce sum %a, dims = [2] : tensor<5x3x40xE> -> tensor<5x3xE>
    %a2 = kiln.mul %a, %a : tensor<5x3x40xE>
    %s2 = kiln.reduce sum %a2, dims = [2] : tensor<5x3x40xE> -> tensor<5x3xE>
    %m = kiln.reduce max %a, dims = [2] : tensor<5x3x40xE> -> tensor<5x3xE>
    %n = kiln.constant dense<40.0> : tensor<5x3xE>
    %mean = kiln.div %s, %n : tensor<5x3xE>
    %ms = kiln.div %s2, %n : tensor<5x3xE>
    %mm = kiln.mul %mean, %mean : tensor<5x3xE>
    %var = kiln.sub %ms, %mm : tensor<5x3xE>
    %vk = kiln.reshape %var : tensor<5x3xE> -> tensor<5x3x1xE>
    kiln.yield %mean, %vk, %m : tensor<5x3xE>, tensor<5x3x1xE>, tensor<5x3xE>
  }
  return %r#0, %r#1, %r#2 : tensor<5x3xE>, tensor<5x3x1xE>, tensor<5x3xE>
}
)mlir");
    std::string source;
    for (char ch : src)
      source += ch == 'E' ? e : std::string(1, ch);
    SCOPED_TRACE(e);
    expectOneKernel(source, randomInputs({{dtype, {5, 3, 40}}}, 2, false),
                    /*scale=*/200);
  }
}

TEST(CpuFusion, ReductionOverOuterAndSeveralDims) {
  // Reduced dims that are not innermost, ints wrapping, and an input of the
  // row shape read beside the reduce.
  expectOneKernel(R"mlir(
func.func @main(%x: tensor<4x7x6xi32>, %y: tensor<7xi32>) -> tensor<7xi32> {
  %r = kiln.fusion reduction(%x, %y) : (tensor<4x7x6xi32>, tensor<7xi32>) -> tensor<7xi32> {
  ^bb0(%a: tensor<4x7x6xi32>, %b: tensor<7xi32>):
    %c = kiln.constant dense<100000> : tensor<4x7x6xi32>
    %m = kiln.mul %a, %c : tensor<4x7x6xi32>
    %s = kiln.reduce sum %m, dims = [2, 0] : tensor<4x7x6xi32> -> tensor<7xi32>
    %o = kiln.mul %s, %b : tensor<7xi32>
    kiln.yield %o : tensor<7xi32>
  }
  return %r : tensor<7xi32>
}
)mlir",
                  randomInputs({{DType::i32, {4, 7, 6}}, {DType::i32, {7}}}));
}

TEST(CpuFusion, ReductionToScalarWithFullShapedResult) {
  // Cross-entropy's batch mean: a full reduction (one row) whose reciprocal
  // scales the full-shaped operand.
  expectOneKernel(R"mlir(
func.func @main(%x: tensor<37xf32>) -> (tensor<37xf32>, tensor<f32>) {
  %r:2 = kiln.fusion reduction(%x) : (tensor<37xf32>) -> (tensor<37xf32>, tensor<f32>) {
  ^bb0(%a: tensor<37xf32>):
    %s = kiln.reduce sum %a, dims = [0] : tensor<37xf32> -> tensor<f32>
    %sb = kiln.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<37xf32>
    %d = kiln.div %a, %sb : tensor<37xf32>
    kiln.yield %d, %s : tensor<37xf32>, tensor<f32>
  }
  return %r#0, %r#1 : tensor<37xf32>, tensor<f32>
}
)mlir",
                  randomInputs({{DType::f32, {37}}}, 3, false), 80);
}

TEST(CpuFusion, SoftmaxThroughThePipelineIsOneKernel) {
  expectOneKernel(softmaxSource(9, 130),
                  randomInputs({{DType::f32, {9, 130}}}, 4), 300);
}

TEST(CpuFusion, LayerNormThroughThePipelineIsOneKernel) {
  expectOneKernel(
      layerNormSource(7, 96),
      randomInputs(
          {{DType::f32, {7, 96}}, {DType::f32, {96}}, {DType::f32, {96}}}, 5,
          false),
      300);
}

TEST(CpuFusion, ReduceReadAtALargerShapeFallsBackOpByOp) {
  // The row sums are read transposed at the full shape: one kernel would
  // recompute each sum per element, so the fusion runs op by op.
  std::string source = R"mlir(
func.func @main(%x: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %r = kiln.fusion reduction(%x) : (tensor<6x6xf32>) -> tensor<6x6xf32> {
  ^bb0(%a: tensor<6x6xf32>):
    %s = kiln.reduce sum %a, dims = [1] : tensor<6x6xf32> -> tensor<6xf32>
    %sb = kiln.broadcast_in_dim %s, dims = [1] : tensor<6xf32> -> tensor<6x6xf32>
    %d = kiln.sub %a, %sb : tensor<6x6xf32>
    kiln.yield %d : tensor<6x6xf32>
  }
  return %r : tensor<6x6xf32>
}
)mlir";
  ParsedModule parsed = parseModule(source);
  mlir::Operation *fusion = onlyFusion(parsed);
  ASSERT_TRUE(fusion);
  EXPECT_FALSE(compiler::cpu::hasKernel(fusion));
  Compiled c = compileAndRun(source, randomInputs({{DType::f32, {6, 6}}}, 6));
  EXPECT_GT(c.stats.opKernels, 1);
  expectValues(c, 20);
}

TEST(CpuFusion, InPlaceOnlyWhereAnInputIsReadAtTheOutputIndex) {
  ParsedModule parsed = parseModule(R"mlir(
func.func @main(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %r = kiln.fusion loop(%x, %y) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>):
    %t = kiln.transpose %b, perm = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
    %s = kiln.add %a, %t : tensor<4x4xf32>
    kiln.yield %s : tensor<4x4xf32>
  }
  %q = kiln.fusion reduction(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %m = kiln.reduce max %a, dims = [1] : tensor<4x4xf32> -> tensor<4xf32>
    %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<4xf32> -> tensor<4x4xf32>
    %d = kiln.sub %a, %mb : tensor<4x4xf32>
    kiln.yield %d : tensor<4x4xf32>
  }
  return %r, %q : tensor<4x4xf32>, tensor<4x4xf32>
}
)mlir");
  ASSERT_TRUE(parsed.module);
  std::vector<mlir::Operation *> fusions;
  parsed.module->walk([&](FusionOp f) { fusions.push_back(f); });
  ASSERT_EQ(fusions.size(), 2u);
  using compiler::cpu::mayWriteResultOverOperand;
  EXPECT_TRUE(mayWriteResultOverOperand(fusions[0], 0, 0));
  EXPECT_FALSE(mayWriteResultOverOperand(fusions[0], 0, 1)); // transposed
  EXPECT_TRUE(compiler::cpu::hasKernel(fusions[1]));
  EXPECT_TRUE(mayWriteResultOverOperand(fusions[1], 0, 0)); // row-local
}

/// `src` with every `@T@` replaced by `t`.
std::string substituted(std::string src, const std::string &t) {
  for (size_t at = src.find("@T@"); at != std::string::npos;
       at = src.find("@T@", at + t.size()))
    src.replace(at, 3, t);
  return src;
}

TEST(CpuFusion, DropoutWithRngIsOneKernel) {
  // GPT-2's dropout: rng_uniform inside the fusion (bit-exact, per element
  // index), states derived inside (a non-splat [0, n] offset, a chained
  // draw) and returned as small results stored once. 64x512 is split over
  // two threads, so the state results come from the range that starts at 0.
  // Also in the GPU's forms, four elements an index sharing one Philox block
  // (the reshaped draw %w included), and eight sharing two.
  compiler::cpu::KernelTarget fourPerIndex, eightPerIndex;
  fourPerIndex.elementsPerIndex = 4;
  eightPerIndex.elementsPerIndex = 8;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    std::string e(dtypeName(dtype));
    SCOPED_TRACE(e);
    std::string source = substituted(R"mlir(
func.func @main(%s: tensor<2xi64>, %x: tensor<64x512x@T@>) -> (tensor<64x512x@T@>, tensor<64x512x@T@>, tensor<2xi64>, tensor<2xi64>, tensor<32768x@T@>) {
  %r:5 = kiln.fusion loop(%s, %x) : (tensor<2xi64>, tensor<64x512x@T@>) -> (tensor<64x512x@T@>, tensor<64x512x@T@>, tensor<2xi64>, tensor<2xi64>, tensor<32768x@T@>) {
  ^bb0(%st: tensor<2xi64>, %a: tensor<64x512x@T@>):
    %off = kiln.constant dense<[0, 8192]> : tensor<2xi64>
    %st1 = kiln.add %st, %off : tensor<2xi64>
    %u, %n1 = kiln.rng_uniform %st1 : tensor<2xi64> -> tensor<64x512x@T@>
    %p = kiln.constant dense<0.1> : tensor<64x512x@T@>
    %keep = kiln.compare GE, %u, %p : tensor<64x512x@T@>
    %k = kiln.constant dense<1.25> : tensor<64x512x@T@>
    %ak = kiln.mul %a, %k : tensor<64x512x@T@>
    %z = kiln.constant dense<0.0> : tensor<64x512x@T@>
    %y = kiln.select %keep, %ak, %z : tensor<64x512xi1>, tensor<64x512x@T@>
    %v, %n2 = kiln.rng_uniform %n1 : tensor<2xi64> -> tensor<64x512x@T@>
    %w = kiln.reshape %v : tensor<64x512x@T@> -> tensor<32768x@T@>
    kiln.yield %y, %u, %n1, %n2, %w : tensor<64x512x@T@>, tensor<64x512x@T@>, tensor<2xi64>, tensor<2xi64>, tensor<32768x@T@>
  }
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<64x512x@T@>, tensor<64x512x@T@>, tensor<2xi64>, tensor<2xi64>, tensor<32768x@T@>
}
)mlir",
                                     e);
    std::mt19937 rng(21);
    std::vector<HostTensor> inputs = {
        rngState(0x123456789abcdefLL, -5000 /* wraps */),
        randomTensor(dtype, {64, 512}, rng, 4, false)};
    expectOneKernel(source, inputs, /*scale=*/0);
    expectOneKernel(source, inputs, /*scale=*/0, fourPerIndex);
    expectOneKernel(source, inputs, /*scale=*/0, eightPerIndex);
  }
}

TEST(CpuFusion, LayerNormWithDropoutIsOneKernel) {
  // A reduction fusion drawing the dropout mask of its operand (GPT-2's
  // embedding dropout + layer norm), the uniforms and the state returned.
  std::string source = R"mlir(
func.func @main(%s: tensor<2xi64>, %x: tensor<6x5x40xf32>) -> (tensor<6x5x40xf32>, tensor<6x5xf32>, tensor<6x5x40xf32>, tensor<2xi64>) {
  %r:4 = kiln.fusion multi_output(%s, %x) : (tensor<2xi64>, tensor<6x5x40xf32>) -> (tensor<6x5x40xf32>, tensor<6x5xf32>, tensor<6x5x40xf32>, tensor<2xi64>) {
  ^bb0(%st: tensor<2xi64>, %a: tensor<6x5x40xf32>):
    %u, %n = kiln.rng_uniform %st : tensor<2xi64> -> tensor<6x5x40xf32>
    %p = kiln.constant dense<0.1> : tensor<6x5x40xf32>
    %keep = kiln.compare GE, %u, %p : tensor<6x5x40xf32>
    %z = kiln.constant dense<0.0> : tensor<6x5x40xf32>
    %d = kiln.select %keep, %a, %z : tensor<6x5x40xi1>, tensor<6x5x40xf32>
    %sum = kiln.reduce sum %d, dims = [2] : tensor<6x5x40xf32> -> tensor<6x5xf32>
    %c = kiln.constant dense<40.0> : tensor<6x5xf32>
    %mean = kiln.div %sum, %c : tensor<6x5xf32>
    %mb = kiln.broadcast_in_dim %mean, dims = [0, 1] : tensor<6x5xf32> -> tensor<6x5x40xf32>
    %y = kiln.sub %d, %mb : tensor<6x5x40xf32>
    kiln.yield %y, %mean, %u, %n : tensor<6x5x40xf32>, tensor<6x5xf32>, tensor<6x5x40xf32>, tensor<2xi64>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<6x5x40xf32>, tensor<6x5xf32>, tensor<6x5x40xf32>, tensor<2xi64>
}
)mlir";
  std::mt19937 rng(22);
  expectOneKernel(source,
                  {rngState(7, 1LL << 40),
                   randomTensor(DType::f32, {6, 5, 40}, rng, 4, false)},
                  /*scale=*/100);
}

TEST(CpuFusion, LayerNormSavingItsStatisticsIsOneKernel) {
  // GPT-2's layer norm in a training step, as kiln-fuse-reductions leaves
  // it: the statistics' fusion returns x - mean and the reciprocal
  // deviation, which the backward also reads reshaped from [B, T, 1] to
  // [B, T], and the normalization is a loop fusion reading that reshape.
  // The reshape had kept the normalization a second kernel re-reading
  // x - mean; kiln-fuse-siblings copies it into the merge.
  std::string source = R"mlir(
func.func @main(%x: tensor<4x8x96xf32>, %w: tensor<96xf32>, %b: tensor<96xf32>) -> (tensor<4x8x96xf32>, tensor<4x8xf32>, tensor<32x96xbf16>) {
  %st:2 = kiln.fusion reduction(%x) : (tensor<4x8x96xf32>) -> (tensor<4x8x96xf32>, tensor<4x8x1xf32>) {
  ^bb0(%a: tensor<4x8x96xf32>):
    %s = kiln.reduce sum %a, dims = [2] : tensor<4x8x96xf32> -> tensor<4x8xf32>
    %c = kiln.constant dense<96.0> : tensor<4x8xf32>
    %mean = kiln.div %s, %c : tensor<4x8xf32>
    %mb = kiln.broadcast_in_dim %mean, dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8x96xf32>
    %xc = kiln.sub %a, %mb : tensor<4x8x96xf32>
    %sq = kiln.mul %xc, %xc : tensor<4x8x96xf32>
    %v = kiln.reduce sum %sq, dims = [2] : tensor<4x8x96xf32> -> tensor<4x8xf32>
    %v1 = kiln.reshape %v : tensor<4x8xf32> -> tensor<4x8x1xf32>
    %c1 = kiln.constant dense<96.0> : tensor<4x8x1xf32>
    %var = kiln.div %v1, %c1 : tensor<4x8x1xf32>
    %eps = kiln.constant dense<1.0e-5> : tensor<4x8x1xf32>
    %ve = kiln.add %var, %eps : tensor<4x8x1xf32>
    %r = kiln.rsqrt %ve : tensor<4x8x1xf32>
    kiln.yield %xc, %r : tensor<4x8x96xf32>, tensor<4x8x1xf32>
  }
  %r2 = kiln.reshape %st#1 : tensor<4x8x1xf32> -> tensor<4x8xf32>
  %out = kiln.fusion loop(%w, %b, %r2, %st#0) : (tensor<96xf32>, tensor<96xf32>, tensor<4x8xf32>, tensor<4x8x96xf32>) -> tensor<32x96xbf16> {
  ^bb0(%ww: tensor<96xf32>, %bw: tensor<96xf32>, %rs: tensor<4x8xf32>, %xc: tensor<4x8x96xf32>):
    %wb = kiln.broadcast_in_dim %ww, dims = [2] : tensor<96xf32> -> tensor<4x8x96xf32>
    %bb = kiln.broadcast_in_dim %bw, dims = [2] : tensor<96xf32> -> tensor<4x8x96xf32>
    %rb = kiln.broadcast_in_dim %rs, dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8x96xf32>
    %n = kiln.mul %xc, %rb : tensor<4x8x96xf32>
    %y = kiln.mul %n, %wb : tensor<4x8x96xf32>
    %z = kiln.add %y, %bb : tensor<4x8x96xf32>
    %zb = kiln.convert %z : tensor<4x8x96xf32> -> tensor<4x8x96xbf16>
    %zr = kiln.reshape %zb : tensor<4x8x96xbf16> -> tensor<32x96xbf16>
    kiln.yield %zr : tensor<32x96xbf16>
  }
  return %st#0, %r2, %out : tensor<4x8x96xf32>, tensor<4x8xf32>, tensor<32x96xbf16>
}
)mlir";
  expectOneKernel(source,
                  randomInputs({{DType::f32, {4, 8, 96}},
                                {DType::f32, {96}},
                                {DType::f32, {96}}},
                               9, false),
                  /*scale=*/300);
}

/// The kernel func emitted for the (only) fusion in `source`.
mlir::func::FuncOp emitOnlyFusion(ParsedModule &parsed) {
  mlir::Operation *fusion = onlyFusion(parsed);
  if (!fusion || !compiler::cpu::hasKernel(fusion))
    return {};
  compiler::cpu::loadKernelDialects(*parsed.context);
  mlir::OpBuilder b(parsed.context.get());
  auto kernels = mlir::ModuleOp::create(b.getUnknownLoc());
  parsed.module->push_back(kernels);
  if (failed(compiler::cpu::emitOpKernel(fusion, kernels, "k")))
    return {};
  return kernels.lookupSymbol<mlir::func::FuncOp>("k");
}

/// Column-blocked kernels keep partial sums in a stack array and carry no
/// parallel-loop annotation; row kernels have neither.
bool isColumnBlocked(mlir::func::FuncOp kernel) {
  bool alloca = false;
  kernel.walk([&](mlir::LLVM::AllocaOp) { alloca = true; });
  return alloca && !kernel->hasAttr(compiler::cpu::detail::kParallelAttr);
}

TEST(CpuFusion, OuterReductionsAreColumnBlocked) {
  using compiler::cpu::detail::outerReduction;
  auto split = outerReduction({512, 3072}, {0});
  ASSERT_TRUE(split);
  EXPECT_EQ(split->rows, 512);
  EXPECT_EQ(split->columns, 3072);
  split = outerReduction({4, 1, 32, 768}, {0, 2});
  ASSERT_TRUE(split);
  EXPECT_EQ(split->rows, 128);
  EXPECT_EQ(split->columns, 768);
  EXPECT_FALSE(outerReduction({4, 7, 6}, {0, 2}));  // a reduced dim inside
  EXPECT_FALSE(outerReduction({512, 768}, {1}));    // row reduction
  EXPECT_FALSE(outerReduction({1, 768}, {0}));      // nothing to sum
  EXPECT_FALSE(outerReduction({512, 768}, {0, 1})); // a full reduction
}

TEST(CpuFusion, ColumnSumsWithEpiloguesAndFullResults) {
  // Layer norm's gamma/beta gradients over [B, T, C] (C = 700: one block of
  // 512 columns and a partial one), a column epilogue, a full result read
  // in the accumulating pass, and a bias broadcast along the rows.
  std::string source = R"mlir(
func.func @main(%dy: tensor<4x33x700xf32>, %xh: tensor<4x33x700xf32>, %b: tensor<700xf32>) -> (tensor<700xf32>, tensor<700xf32>, tensor<700xf32>, tensor<4x33x700xf32>) {
  %r:4 = kiln.fusion multi_output(%dy, %xh, %b) : (tensor<4x33x700xf32>, tensor<4x33x700xf32>, tensor<700xf32>) -> (tensor<700xf32>, tensor<700xf32>, tensor<700xf32>, tensor<4x33x700xf32>) {
  ^bb0(%a: tensor<4x33x700xf32>, %x: tensor<4x33x700xf32>, %v: tensor<700xf32>):
    %vb = kiln.broadcast_in_dim %v, dims = [2] : tensor<700xf32> -> tensor<4x33x700xf32>
    %ab = kiln.add %a, %vb : tensor<4x33x700xf32>
    %p = kiln.mul %ab, %x : tensor<4x33x700xf32>
    %g = kiln.reduce sum %p, dims = [0, 1] : tensor<4x33x700xf32> -> tensor<700xf32>
    %s = kiln.reduce sum %a, dims = [1, 0] : tensor<4x33x700xf32> -> tensor<700xf32>
    %m = kiln.reduce max %x, dims = [0, 1] : tensor<4x33x700xf32> -> tensor<700xf32>
    %gg = kiln.mul %g, %g : tensor<700xf32>
    %sm = kiln.add %s, %m : tensor<700xf32>
    kiln.yield %g, %gg, %sm, %p : tensor<700xf32>, tensor<700xf32>, tensor<700xf32>, tensor<4x33x700xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<700xf32>, tensor<700xf32>, tensor<700xf32>, tensor<4x33x700xf32>
}
)mlir";
  ParsedModule parsed = parseModule(source);
  ASSERT_TRUE(parsed.module);
  mlir::func::FuncOp kernel = emitOnlyFusion(parsed);
  ASSERT_TRUE(kernel);
  EXPECT_TRUE(isColumnBlocked(kernel));
  expectOneKernel(source,
                  randomInputs({{DType::f32, {4, 33, 700}},
                                {DType::f32, {4, 33, 700}},
                                {DType::f32, {700}}},
                               23, false),
                  /*scale=*/300);
}

TEST(CpuFusion, ColumnSumReadBackAtTheFullShape) {
  // A full result reading the column sums (x - mean over the rows) needs a
  // second pass over the block; integer and f16 sums too.
  for (DType dtype : {DType::f32, DType::f16, DType::i32}) {
    std::string e(dtypeName(dtype));
    SCOPED_TRACE(e);
    std::string source = substituted(R"mlir(
func.func @main(%x: tensor<300x600x@T@>) -> (tensor<300x600x@T@>, tensor<600x@T@>) {
  %r:2 = kiln.fusion reduction(%x) : (tensor<300x600x@T@>) -> (tensor<300x600x@T@>, tensor<600x@T@>) {
  ^bb0(%a: tensor<300x600x@T@>):
    %s = kiln.reduce sum %a, dims = [0] : tensor<300x600x@T@> -> tensor<600x@T@>
    %sb = kiln.broadcast_in_dim %s, dims = [1] : tensor<600x@T@> -> tensor<300x600x@T@>
    %d = kiln.sub %a, %sb : tensor<300x600x@T@>
    kiln.yield %d, %s : tensor<300x600x@T@>, tensor<600x@T@>
  }
  return %r#0, %r#1 : tensor<300x600x@T@>, tensor<600x@T@>
}
)mlir",
                                     e);
    ParsedModule parsed = parseModule(source);
    ASSERT_TRUE(parsed.module);
    mlir::func::FuncOp kernel = emitOnlyFusion(parsed);
    ASSERT_TRUE(kernel);
    EXPECT_TRUE(isColumnBlocked(kernel));
    expectOneKernel(source, randomInputs({{dtype, {300, 600}}}, 24, false),
                    /*scale=*/dtype == DType::f16 ? 2000 : 600);
  }
}

TEST(CpuFusion, StandaloneOuterReductionsMatchReference) {
  // The GPT-2 bias-gradient shape [512, 3072] (split over two threads),
  // [B, T, C] over two dims with unit dims, 5000 columns on one thread (two
  // full blocks and a partial one), every kind.
  struct Case {
    std::vector<int64_t> shape;
    std::string dims;
  };
  for (const Case &c :
       {Case{{512, 3072}, "[0]"}, Case{{4, 1, 33, 700}, "[0, 2]"},
        Case{{3, 5000}, "[0]"}})
    for (DType dtype : {DType::f32, DType::bf16, DType::i64})
      for (std::string kind : {"sum", "max", "min", "prod"}) {
        std::string e(dtypeName(dtype));
        SCOPED_TRACE(e + " " + kind + " " + c.dims);
        std::string in = "tensor<", out = "tensor<";
        for (size_t d = 0; d < c.shape.size(); ++d) {
          in += std::to_string(c.shape[d]) + "x";
          if (c.dims.find(std::to_string(d)) == std::string::npos)
            out += std::to_string(c.shape[d]) + "x";
        }
        in += e + ">";
        out += e + ">";
        std::string source = "func.func @main(%x: " + in + ") -> " + out +
                             " {\n  %r = kiln.reduce " + kind +
                             " %x, dims = " + c.dims + " : " + in + " -> " +
                             out + "\n  return %r : " + out + "\n}\n";
        std::mt19937 rng(25);
        // Products stay finite and away from rounding cliffs near 1.
        double range = kind == "prod" ? 1.002 : 4;
        HostTensor x = randomTensor(dtype, c.shape, rng, range, false);
        if (kind == "prod" && isFloat(dtype))
          for (int64_t i = 0; i < x.numElements(); ++i)
            x.setDouble(i, 1 + x.getDouble(i) / 1000);
        expectMatchesReference(source, {x}, /*scale=*/600);
      }
}

} // namespace
} // namespace kiln::testing

namespace kiln::testing {
namespace {

TEST(CpuFusion, RowUnrollMatchesTheReference) {
  // FusionKernelOptions::rowUnroll, the GPU's form for threads without
  // lanes, here on the cpu: a layer norm's weight-gradient partials (sums
  // of x * dy over dims [0, 2] in f64 and in f32, 32 points a row: 8 an
  // iteration, their stores after their loads) beside a full bf16 result
  // stored while reducing, and rows of 12 points (4 an iteration) and of
  // 3 (not unrolled). Each matches the reference and the one-point loop
  // nest (within the tolerance: the accumulating adds carry `reassoc`,
  // so LLVM may order them as it likes in either form).
  compiler::cpu::KernelTarget plain, unrolled;
  plain.storeWhileReducing = unrolled.storeWhileReducing = true;
  unrolled.rowUnroll = 8;
  struct Case {
    std::vector<int64_t> shape;
    std::string dims, kept;
  };
  for (const Case &c :
       {Case{{16, 8, 2, 24}, "[0, 2]", "8x24"},
        Case{{5, 7, 12}, "[2]", "5x7"}, Case{{5, 7, 3}, "[2]", "5x7"}}) {
    std::string t = "tensor<";
    for (int64_t d : c.shape)
      absl::StrAppend(&t, d, "x");
    std::string source = R"mlir(
func.func @main(%x: @T@f32>, %dy: @T@f32>) -> (tensor<@K@xf64>, tensor<@K@xf32>, @T@bf16>) {
  %p = kiln.mul %x, %dy : @T@f32>
  %w = kiln.convert %p : @T@f32> -> @T@f64>
  %s = kiln.reduce sum %w, dims = @D@ : @T@f64> -> tensor<@K@xf64>
  %s32 = kiln.reduce sum %p, dims = @D@ : @T@f32> -> tensor<@K@xf32>
  %two = kiln.constant dense<2.0> : @T@f32>
  %y = kiln.mul %x, %two : @T@f32>
  %z = kiln.add %y, %dy : @T@f32>
  %h = kiln.convert %z : @T@f32> -> @T@bf16>
  return %s, %s32, %h : tensor<@K@xf64>, tensor<@K@xf32>, @T@bf16>
}
)mlir";
    for (auto [key, value] : {std::pair<std::string, std::string>{"@T@", t},
                              {"@D@", c.dims},
                              {"@K@", c.kept}})
      for (size_t at = source.find(key); at != std::string::npos;
           at = source.find(key, at + value.size()))
        source.replace(at, key.size(), value);
    SCOPED_TRACE(source);
    std::mt19937 rng(5);
    std::vector<HostTensor> inputs = {
        randomTensor(DType::f32, c.shape, rng, 4, false),
        randomTensor(DType::f32, c.shape, rng, 4, false)};
    Compiled a = compileAndRun(source, inputs, plain);
    Compiled b = compileAndRun(source, inputs, unrolled);
    expectValues(a, 1);
    expectValues(b, 1);
    ASSERT_EQ(a.actual.size(), b.actual.size());
    for (size_t i = 0; i < a.actual.size(); ++i)
      EXPECT_EQ(compareTensors(b.actual[i], a.actual[i], /*scale=*/1), "")
          << "result " << i;
  }
}

} // namespace
} // namespace kiln::testing
