// kiln.fused_attention and kiln.fused_attention_grad: the reference
// evaluator's direct kernels against the attention written out with
// primitives, kiln-lower-attention's chunked decomposition against the
// reference for every chunking (the dropout mask must not depend on it;
// the row statistics, the log-sum-exps, written out too),
// the CPU backend against the reference (several chunks, causal, sliding
// windows, grouped query heads, dropout, Gemma 2's soft cap on the
// scores), and the gradient against central
// finite differences in f64.
#include "CpuTestSupport.h"
#include "SoftcapText.h"

#include "compiler/Pipeline.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::compareTensors;
using testing::expectAllMatch;
using testing::parseModule;
using testing::randomTensor;

struct AttentionCase {
  int64_t batch = 2, heads = 4, queries = 8, headDim = 4, kvHeads = 2,
          keys = 8;
  bool causal = true;
  int64_t window = 0; // causal only
  double dropout = 0;
  double scale = 0.5;
  double softcap = 0; // the scores' cap (0: none)
  const char *element = "f32";

  std::string qType() const {
    return llvm::formatv("tensor<{0}x{1}x{2}x{3}x{4}>", batch, heads, queries,
                         headDim, element);
  }
  std::string kvType() const {
    return llvm::formatv("tensor<{0}x{1}x{2}x{3}x{4}>", batch, kvHeads, keys,
                         headDim, element);
  }
  std::string attrs() const {
    std::string windowAttr =
        window > 0 ? llvm::formatv(", window = {0} : i64", window).str() : "";
    if (softcap != 0)
      windowAttr += llvm::formatv(", softcap = {0} : f64", softcap).str();
    return llvm::formatv("{{{0}dropout = {1} : f64, scale = {2} : f64{3}}",
                         causal ? "causal, " : "", dropout, scale, windowAttr);
  }
  std::string rngOperand(const char *name) const {
    return dropout > 0 ? std::string(", rng = %") + name : "";
  }
  std::string rngType() const {
    return dropout > 0 ? ", tensor<2xi64>" : "";
  }

  std::string statsType() const {
    return llvm::formatv("tensor<{0}x{1}x{2}xf32>", batch, heads, queries);
  }

  /// @main(q, k, v, state) → the attention result (and, `withStats`, its
  /// row statistics).
  std::string forwardModule(bool withStats = false) const {
    return llvm::formatv(
        R"(func.func @main(%q: {0}, %k: {1}, %v: {1}, %s: tensor<2xi64>) -> ({0}{6}) {
  %o, %l = kiln.fused_attention %q, %k, %v{2} {3} : {0}, {1}, {1}{4} -> {0}, {5}
  return %o{7} : {0}{6}
})",
        qType(), kvType(), rngOperand("s"), attrs(), rngType(), statsType(),
        withStats ? ", " + statsType() : "", withStats ? ", %l" : "");
  }

  /// @main(q, k, v, dO, state) → the gradients of q, k and v (the gradient
  /// reads the forward's results, as in a training step).
  std::string gradModule() const {
    return llvm::formatv(
        R"(func.func @main(%q: {0}, %k: {1}, %v: {1}, %g: {0}, %s: tensor<2xi64>) -> ({0}, {1}, {1}) {
  %o, %l = kiln.fused_attention %q, %k, %v{2} {3} : {0}, {1}, {1}{4} -> {0}, {5}
  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %l, %g{2} {3} : {0}, {1}, {1}, {0}, {5}, {0}{4} -> {0}, {1}, {1}
  return %dq, %dk, %dv : {0}, {1}, {1}
})",
        qType(), kvType(), rngOperand("s"), attrs(), rngType(), statsType());
  }

  DType dtype() const {
    return std::string(element) == "f64" ? DType::f64 : DType::f32;
  }
  std::vector<HostTensor> inputs(bool grad, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::vector<HostTensor> in;
    in.push_back(randomTensor(dtype(), {batch, heads, queries, headDim}, rng,
                              2, false));
    in.push_back(
        randomTensor(dtype(), {batch, kvHeads, keys, headDim}, rng, 2, false));
    in.push_back(
        randomTensor(dtype(), {batch, kvHeads, keys, headDim}, rng, 2, false));
    if (grad)
      in.push_back(randomTensor(dtype(), {batch, heads, queries, headDim}, rng,
                                1, false));
    HostTensor state(DType::i64, {2});
    state.setInt(0, 1234 + seed);
    state.setInt(1, 77);
    in.push_back(state);
    return in;
  }
};

/// GPT-2's attention as primitives: scores, scale (with a soft cap c > 0,
/// then c · tanh(s / c)), causal select (and, with a window, a second
/// select for keys j <= i - window), softmax, product; q, k, v [2, 3, 5, 4]
/// f64, scale 0.7.
std::string attentionAsPrimitives(int64_t window, double softcap = 0) {
  std::string cap =
      softcap == 0
          ? "  %s = kiln.mul %s0, %cb : tensor<2x3x5x5xf64>\n"
          : "  %sr = kiln.mul %s0, %cb : tensor<2x3x5x5xf64>\n" +
                testing::softcapAsPrimitives("%sr", "%s", "tensor<2x3x5x5xf64>",
                                             "f64", softcap);
  std::string windowMask =
      window == 0
          ? "  %w = kiln.select %future, %lowb, %s : "
            "tensor<2x3x5x5xi1>, tensor<2x3x5x5xf64>\n"
          : llvm::formatv(
                R"(  %future0 = kiln.select %future, %lowb, %s : tensor<2x3x5x5xi1>, tensor<2x3x5x5xf64>
  %wc = kiln.constant dense<{0}> : tensor<i64>
  %wb = kiln.broadcast_in_dim %wc, dims = [] : tensor<i64> -> tensor<2x3x5x5xi64>
  %reach = kiln.add %j, %wb : tensor<2x3x5x5xi64>
  %old = kiln.compare LE, %reach, %i : tensor<2x3x5x5xi64>
  %w = kiln.select %old, %lowb, %future0 : tensor<2x3x5x5xi1>, tensor<2x3x5x5xf64>
)",
                window)
                .str();
  return R"(
func.func @main(%q: tensor<2x3x5x4xf64>, %k: tensor<2x3x5x4xf64>, %v: tensor<2x3x5x4xf64>, %st: tensor<2xi64>) -> tensor<2x3x5x4xf64> {
  %s0 = kiln.dot_general %q, %k, batch = [0, 1] x [0, 1], contract = [3] x [3] : tensor<2x3x5x4xf64>, tensor<2x3x5x4xf64> -> tensor<2x3x5x5xf64>
  %c = kiln.constant dense<0.7> : tensor<f64>
  %cb = kiln.broadcast_in_dim %c, dims = [] : tensor<f64> -> tensor<2x3x5x5xf64>
)" + cap +
         R"(  %i = kiln.iota dim = 2 : tensor<2x3x5x5xi64>
  %j = kiln.iota dim = 3 : tensor<2x3x5x5xi64>
  %future = kiln.compare GT, %j, %i : tensor<2x3x5x5xi64>
  %low = kiln.constant dense<-1.0e300> : tensor<f64>
  %lowb = kiln.broadcast_in_dim %low, dims = [] : tensor<f64> -> tensor<2x3x5x5xf64>
)" + windowMask +
         R"(  %max = kiln.reduce max %w, dims = [3] : tensor<2x3x5x5xf64> -> tensor<2x3x5xf64>
  %maxb = kiln.broadcast_in_dim %max, dims = [0, 1, 2] : tensor<2x3x5xf64> -> tensor<2x3x5x5xf64>
  %d = kiln.sub %w, %maxb : tensor<2x3x5x5xf64>
  %e = kiln.exp %d : tensor<2x3x5x5xf64>
  %sum = kiln.reduce sum %e, dims = [3] : tensor<2x3x5x5xf64> -> tensor<2x3x5xf64>
  %sumb = kiln.broadcast_in_dim %sum, dims = [0, 1, 2] : tensor<2x3x5xf64> -> tensor<2x3x5x5xf64>
  %p = kiln.div %e, %sumb : tensor<2x3x5x5xf64>
  %o = kiln.dot_general %p, %v, batch = [0, 1] x [0, 1], contract = [3] x [2] : tensor<2x3x5x5xf64>, tensor<2x3x5x4xf64> -> tensor<2x3x5x4xf64>
  return %o : tensor<2x3x5x4xf64>
})";
}

TEST(FusedAttention, ReferenceMatchesAttentionWrittenWithPrimitives) {
  // Causal, then within windows of 1 (each query sees itself only) and 2;
  // and with scores capped at 1.5 (the inputs' scores reach a few units).
  for (double softcap : {0.0, 1.5})
    for (int64_t window : {0, 1, 2}) {
      SCOPED_TRACE(softcap);
      AttentionCase c;
      c.batch = 2, c.heads = c.kvHeads = 3, c.queries = c.keys = 5;
      c.headDim = 4, c.scale = 0.7, c.element = "f64", c.window = window;
      c.softcap = softcap;
      auto fused = parseModule(c.forwardModule());
      auto plain = parseModule(attentionAsPrimitives(window, softcap));
      ASSERT_TRUE(fused.module && plain.module) << "window " << window;
      std::vector<HostTensor> in = c.inputs(false, 1);
      expectAllMatch(testing::evaluateMain(*fused.module, in),
                     testing::evaluateMain(*plain.module, in), 1,
                     "fused vs primitives, window " + std::to_string(window));
    }
}

/// `source` after kiln-lower-attention with `chunkBytes` per chunk.
testing::ParsedModule lowered(const std::string &source, int64_t chunkBytes) {
  return testing::loweredBy(source, createLowerAttentionPass({chunkBytes}),
                            [](mlir::Operation *op) {
                              return mlir::isa<FusedAttentionOp, FusedAttentionGradOp>(op);
                            });
}

TEST(FusedAttention, LoweringMatchesReferenceForEveryChunking) {
  // f64 end to end: the decomposition and the direct kernel differ only by
  // rounding, and the dropout mask must be identical whatever the chunks.
  // Windows of 3 keys: chunks past the first start their keys later.
  // Causal with a soft cap too.
  for (int64_t window : {-1, 0, 3, 100})
    for (double dropout : {0.0, 0.3}) {
      AttentionCase c;
      c.causal = window >= 0, c.dropout = dropout, c.element = "f64";
      c.window = window == 100 ? 0 : std::max<int64_t>(window, 0);
      c.softcap = window == 100 ? 1.5 : 0;
      c.keys = c.causal ? c.queries : 6;
      int64_t rowBytes = c.batch * c.heads * c.keys * 8;
      for (int64_t rows : {1, 3, 8}) {
        std::string what =
            llvm::formatv("causal {0}, window {1}, dropout {2}, "
                          "softcap {4}, {3} rows per chunk",
                          c.causal, c.window, dropout, rows, c.softcap);
        testing::expectRewriteKeepsResults(
            c.forwardModule(true),
            *lowered(c.forwardModule(true), rows * rowBytes).module,
            c.inputs(false, rows), 100, "forward, " + what);
        testing::expectRewriteKeepsResults(
            c.gradModule(), *lowered(c.gradModule(), rows * rowBytes).module,
            c.inputs(true, rows), 100, "gradient, " + what);
      }
    }
}

TEST(FusedAttention, CpuBackendMatchesReference) {
  // A row of scores takes 2·4·16·4 = 512 bytes: chunks of 1 and 4 rows (16
  // and 4 chunks: the grouped queries in chunk-major order, read in place),
  // of 6, 6 and 4 rows (unequal: each chunk's rows copied, then grouped),
  // and one chunk.
  for (int64_t chunkBytes :
       {int64_t{300}, int64_t{2048}, int64_t{3072}, int64_t{64} << 20})
    // not causal, causal, windowed, causal with a soft cap
    for (int64_t window : {-1, 0, 5, 100})
      for (double dropout : {0.0, 0.1}) {
        AttentionCase c;
        c.causal = window >= 0, c.dropout = dropout;
        c.window = window == 100 ? 0 : std::max<int64_t>(window, 0);
        c.softcap = window == 100 ? 1.5 : 0;
        c.queries = c.keys = 16, c.headDim = 8;
        PipelineOptions options;
        options.attentionChunkBytes = chunkBytes;
        testing::ProgramFactory cpu = testing::cpuPrograms(options);
        // Sums over 16 keys and 8 head dims.
        testing::expectMatchesReferenceOn(cpu, c.forwardModule(true),
                                          c.inputs(false, 7), 16);
        testing::expectMatchesReferenceOn(cpu, c.gradModule(),
                                          c.inputs(true, 8), 64);
      }
}

TEST(FusedAttention, GradientMatchesFiniteDifferences) {
  // Causal, then within a window of 2 keys; each with scores capped at 1.5.
  for (double softcap : {0.0, 1.5})
    for (int64_t window : {0, 2}) {
      SCOPED_TRACE("window " + std::to_string(window));
      SCOPED_TRACE(softcap);
      AttentionCase c;
      c.batch = 1, c.heads = 2, c.kvHeads = 1, c.queries = c.keys = 4;
      c.headDim = 3, c.dropout = 0.25, c.element = "f64", c.window = window;
      c.softcap = softcap;
      auto fwd = parseModule(c.forwardModule());
      auto grad = parseModule(c.gradModule());
      ASSERT_TRUE(fwd.module && grad.module);
      std::vector<HostTensor> in = c.inputs(true, 5);
      const HostTensor &weights = in[3]; // L = Σ o · weights
      std::vector<HostTensor> fwdIn = {in[0], in[1], in[2], in[4]};
      std::vector<HostTensor> grads = testing::evaluateMain(*grad.module, in);
      ASSERT_EQ(grads.size(), 3u);
      int kept = testing::expectGradientsMatchFiniteDifferences(
          *fwd.module, fwdIn, weights, grads);
      EXPECT_GT(kept, 20); // the gradients are not trivially zero
    }
}

// The cap changes the result (the negative twin: the same scores
// uncapped), and a negative cap is refused by the verifier.
TEST(FusedAttention, SoftcapChangesTheResultAndIsVerified) {
  AttentionCase capped, plain;
  capped.element = plain.element = "f64";
  capped.scale = plain.scale = 2;
  capped.softcap = 1.5;
  auto a = parseModule(capped.forwardModule());
  auto b = parseModule(plain.forwardModule());
  ASSERT_TRUE(a.module && b.module);
  std::vector<HostTensor> in = capped.inputs(false, 4);
  HostTensor withCap = testing::evaluateMain(*a.module, in)[0];
  HostTensor without = testing::evaluateMain(*b.module, in)[0];
  double largest = 0;
  for (int64_t i = 0; i < withCap.numElements(); ++i)
    largest = std::max(largest,
                       std::fabs(withCap.getDouble(i) - without.getDouble(i)));
  EXPECT_GT(largest, 0.1);
  AttentionCase negative;
  negative.softcap = -1;
  EXPECT_FALSE(parseModule(negative.forwardModule()).module);
}

} // namespace
} // namespace kiln
