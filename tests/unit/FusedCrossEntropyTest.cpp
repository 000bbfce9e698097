// kiln.fused_linear_cross_entropy and its gradient: the reference
// evaluator's direct kernels against the loss written out with primitives
// (the one-hot composite the frontend's cross_entropy builds), ignored and
// out-of-range labels, kiln-lower-cross-entropy's chunked decomposition
// against the reference for every chunking (with the gradient recomputing
// the logits, and computed in the forward pass when its loss_grad is one
// broadcast scalar), the CPU backend against the reference, and the
// gradient against central finite differences in f64; each also with a
// soft cap on the logits (Gemma 2's), which bends logits of the inputs'
// size (up to ~10) at a cap of 1.5.
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

struct LossCase {
  int64_t rows = 7, width = 5, classes = 11;
  int64_t ignoreIndex = -100;
  const char *element = "f32";
  /// The logits' soft cap (0: none).
  double softcap = 0;

  /// The default shape in f64 with the cap `softcap`.
  static LossCase f64(double softcap) {
    LossCase c;
    c.element = "f64";
    c.softcap = softcap;
    return c;
  }

  std::string capAttr() const {
    return softcap == 0 ? std::string()
                        : llvm::formatv(", softcap = {0} : f64", softcap).str();
  }

  std::string hType() const {
    return llvm::formatv("tensor<{0}x{1}x{2}>", rows, width, element);
  }
  std::string wType() const {
    return llvm::formatv("tensor<{0}x{1}x{2}>", classes, width, element);
  }
  std::string lType() const { return llvm::formatv("tensor<{0}xi64>", rows); }
  std::string rType() const {
    return llvm::formatv("tensor<{0}x{1}>", rows, element);
  }

  /// @main(hidden, weight, labels) → per-row losses.
  std::string forwardModule() const {
    return llvm::formatv(
        R"(func.func @main(%h: {0}, %w: {1}, %y: {2}) -> {3} {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {{ignore_index = {4} : i64{6}} : {0}, {1}, {2} -> {3}
  return %l : {3}
})",
        hType(), wType(), lType(), rType(), ignoreIndex, "", capAttr());
  }

  /// @main(hidden, weight, labels, loss grad) → hidden and weight grads.
  std::string gradModule() const {
    return llvm::formatv(
        R"(func.func @main(%h: {0}, %w: {1}, %y: {2}, %g: {3}) -> ({0}, {1}) {
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {{ignore_index = {4} : i64{6}} : {0}, {1}, {2}, {3} -> {0}, {1}
  return %dh, %dw : {0}, {1}
})",
        hType(), wType(), lType(), rType(), ignoreIndex, "", capAttr());
  }

  /// @main(hidden, weight, labels, scale) → the losses and the gradients
  /// for loss_grad = scale on every row: what a mean's backward pass gives
  /// (the lowering then computes the gradients in the forward pass).
  std::string trainingModule() const {
    return llvm::formatv(
        R"(func.func @main(%h: {0}, %w: {1}, %y: {2}, %s: tensor<{5}>) -> ({3}, {0}, {1}) {
  %l = kiln.fused_linear_cross_entropy %h, %w, %y {{ignore_index = {4} : i64{6}} : {0}, {1}, {2} -> {3}
  %g = kiln.broadcast_in_dim %s, dims = [] : tensor<{5}> -> {3}
  %dh, %dw = kiln.fused_linear_cross_entropy_grad %h, %w, %y, %g {{ignore_index = {4} : i64{6}} : {0}, {1}, {2}, {3} -> {0}, {1}
  return %l, %dh, %dw : {3}, {0}, {1}
})",
        hType(), wType(), lType(), rType(), ignoreIndex, element, capAttr());
  }
  std::vector<HostTensor> trainingInputs(uint32_t seed) const {
    std::vector<HostTensor> in = inputs(false, seed);
    HostTensor scale(dtype(), {});
    scale.setDouble(0, 0.37);
    in.push_back(scale);
    return in;
  }

  DType dtype() const {
    return std::string(element) == "f64" ? DType::f64 : DType::f32;
  }
  /// Random hidden, weight, labels (row 1 ignored, row 3 out of range when
  /// there are enough rows) and, for the gradient, a loss gradient.
  std::vector<HostTensor> inputs(bool grad, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::vector<HostTensor> in;
    in.push_back(randomTensor(dtype(), {rows, width}, rng, 2, false));
    in.push_back(randomTensor(dtype(), {classes, width}, rng, 2, false));
    HostTensor labels(DType::i64, {rows});
    for (int64_t i = 0; i < rows; ++i)
      labels.setInt(i, static_cast<int64_t>(rng() % classes));
    if (rows > 1)
      labels.setInt(1, ignoreIndex);
    if (rows > 3)
      labels.setInt(3, classes + 2);
    in.push_back(labels);
    if (grad)
      in.push_back(randomTensor(dtype(), {rows}, rng, 1, false));
    return in;
  }
};

TEST(FusedCrossEntropy, ReferenceMatchesTheOneHotComposite) {
  for (double softcap : {0.0, 1.5}) {
    SCOPED_TRACE(softcap);
    // What the frontend's cross_entropy(h · wᵀ) builds, per row: logsumexp
    // minus the one-hot pick, 0 where the label is ignored; with a cap, of
    // the logits c · tanh(z / c).
    std::string cap =
        softcap == 0
            ? std::string("  %x = kiln.add %z, %z0 : tensor<7x11xf64>\n")
            : testing::softcapAsPrimitives("%z", "%x", "tensor<7x11xf64>",
                                           "f64", softcap);
    std::string primitives =
        R"(
func.func @main(%h: tensor<7x5xf64>, %w: tensor<11x5xf64>, %y: tensor<7xi64>) -> tensor<7xf64> {
  %z = kiln.dot_general %h, %w, batch = [] x [], contract = [1] x [1] : tensor<7x5xf64>, tensor<11x5xf64> -> tensor<7x11xf64>
  %zero0 = kiln.constant dense<0.0> : tensor<f64>
  %z0 = kiln.broadcast_in_dim %zero0, dims = [] : tensor<f64> -> tensor<7x11xf64>
)" + cap +
        R"(  %max = kiln.reduce max %x, dims = [1] : tensor<7x11xf64> -> tensor<7xf64>
  %maxb = kiln.broadcast_in_dim %max, dims = [0] : tensor<7xf64> -> tensor<7x11xf64>
  %d = kiln.sub %x, %maxb : tensor<7x11xf64>
  %e = kiln.exp %d : tensor<7x11xf64>
  %sum = kiln.reduce sum %e, dims = [1] : tensor<7x11xf64> -> tensor<7xf64>
  %log = kiln.log %sum : tensor<7xf64>
  %lse = kiln.add %log, %max : tensor<7xf64>
  %i = kiln.iota dim = 1 : tensor<7x11xi64>
  %yb = kiln.broadcast_in_dim %y, dims = [0] : tensor<7xi64> -> tensor<7x11xi64>
  %hot = kiln.compare EQ, %i, %yb : tensor<7x11xi64>
  %zero = kiln.constant dense<0.0> : tensor<f64>
  %zb = kiln.broadcast_in_dim %zero, dims = [] : tensor<f64> -> tensor<7x11xf64>
  %pick = kiln.select %hot, %x, %zb : tensor<7x11xi1>, tensor<7x11xf64>
  %picked = kiln.reduce sum %pick, dims = [1] : tensor<7x11xf64> -> tensor<7xf64>
  %loss = kiln.sub %lse, %picked : tensor<7xf64>
  %ign = kiln.constant dense<-100> : tensor<i64>
  %ignb = kiln.broadcast_in_dim %ign, dims = [] : tensor<i64> -> tensor<7xi64>
  %valid = kiln.compare NE, %y, %ignb : tensor<7xi64>
  %z7 = kiln.broadcast_in_dim %zero, dims = [] : tensor<f64> -> tensor<7xf64>
  %r = kiln.select %valid, %loss, %z7 : tensor<7xi1>, tensor<7xf64>
  return %r : tensor<7xf64>
})";
    LossCase c = LossCase::f64(softcap);
    auto fused = parseModule(c.forwardModule());
    auto plain = parseModule(primitives);
    ASSERT_TRUE(fused.module && plain.module);
    std::vector<HostTensor> in = c.inputs(false, 1);
    std::vector<HostTensor> direct = testing::evaluateMain(*fused.module, in);
    expectAllMatch(direct, testing::evaluateMain(*plain.module, in), 1,
                   "fused vs primitives");
    ASSERT_EQ(direct.size(), 1u);
    EXPECT_EQ(direct[0].getDouble(1), 0.0) << "the ignored row";
    EXPECT_GT(direct[0].getDouble(3), 0.0) << "an out-of-range label: the lse";
  }
}

/// `source` after kiln-lower-cross-entropy with `chunkBytes` per chunk and
/// the vocabulary padded to a multiple of `vocabMultiple`.
testing::ParsedModule lowered(const std::string &source, int64_t chunkBytes,
                              int64_t vocabMultiple = 1) {
  return testing::loweredBy(source,
                            createLowerCrossEntropyPass(
                                {chunkBytes, vocabMultiple}),
                            [](mlir::Operation *op) {
                              return mlir::isa<FusedLinearCrossEntropyOp, FusedLinearCrossEntropyGradOp>(op);
                            });
}

/// The forward, gradient and training modules of `c`, lowered with
/// `chunkBytes` and `vocabMultiple`, keep the reference's results on inputs
/// drawn from `seed`.
void expectLoweringsKeepResults(const LossCase &c, int64_t chunkBytes,
                                int64_t vocabMultiple, uint32_t seed,
                                const std::string &what) {
  testing::expectRewriteKeepsResults(
      c.forwardModule(),
      *lowered(c.forwardModule(), chunkBytes, vocabMultiple).module,
      c.inputs(false, seed), 100, "forward, " + what);
  testing::expectRewriteKeepsResults(
      c.gradModule(),
      *lowered(c.gradModule(), chunkBytes, vocabMultiple).module,
      c.inputs(true, seed), 100, "gradient, " + what);
  testing::expectRewriteKeepsResults(
      c.trainingModule(),
      *lowered(c.trainingModule(), chunkBytes, vocabMultiple).module,
      c.trainingInputs(seed), 100, "training, " + what);
}

TEST(FusedCrossEntropy, LoweringMatchesReferenceForEveryChunking) {
  for (double softcap : {0.0, 1.5}) {
    SCOPED_TRACE(softcap);
    LossCase c = LossCase::f64(softcap);
    int64_t rowBytes = c.classes * 8;
    for (int64_t rows : {1, 2, 3, 7, 100}) {
      expectLoweringsKeepResults(c, rows * rowBytes, /*vocabMultiple=*/1, rows,
                                 llvm::formatv("{0} rows per chunk", rows));
    }
  }
}

TEST(FusedCrossEntropy, GradientsInTheForwardPassMatchReference) {
  for (double softcap : {0.0, 1.5}) {
    SCOPED_TRACE(softcap);
    LossCase c = LossCase::f64(softcap);
    int64_t rowBytes = c.classes * 8;
    for (int64_t rows : {1, 3, 100}) {
      std::vector<HostTensor> in = c.trainingInputs(rows);
      auto direct = parseModule(c.trainingModule());
      auto chunked = lowered(c.trainingModule(), rows * rowBytes);
      // No gradient op recomputes logits: every GEMM is in the forward part,
      // three per chunk.
      int gemms = 0;
      chunked.module->walk([&](DotGeneralOp) { ++gemms; });
      int64_t chunks = (c.rows + rows - 1) / rows;
      EXPECT_EQ(gemms, 3 * std::min<int64_t>(chunks, c.rows)) << rows;
      expectAllMatch(testing::evaluateMain(*chunked.module, in),
                     testing::evaluateMain(*direct.module, in), 100,
                     llvm::formatv("{0} rows per chunk", rows));
    }
  }
}

// A vocabulary padded to whole GEMM tiles (11 classes → 16 or 64 rows of
// weight; 11 → 11 with multiple 1, the negative twin): the padded logits
// are masked out, so losses and both gradients keep their values for every
// chunking, and the weight gradient keeps its 11 rows.
TEST(FusedCrossEntropy, PaddedVocabularyKeepsLossesAndGradients) {
  for (double softcap : {0.0, 1.5}) {
    SCOPED_TRACE(softcap);
    LossCase c = LossCase::f64(softcap);
    for (int64_t multiple : {1, 16, 64}) {
      int64_t padded = (c.classes + multiple - 1) / multiple * multiple;
      int64_t rowBytes = padded * 8;
      for (int64_t rows : {1, 3, 100}) {
        std::string what =
            llvm::formatv("multiple {0}, {1} rows per chunk", multiple, rows);
        auto forward = lowered(c.forwardModule(), rows * rowBytes, multiple);
        int pads = 0;
        forward.module->walk([&](PadOp) { ++pads; });
        EXPECT_EQ(pads, multiple == 1 ? 0 : 1) << what;
        expectLoweringsKeepResults(c, rows * rowBytes, multiple, rows, what);
      }
    }
  }
}

// Rows whose logits split into parts of whole 128s (256 classes → 2 parts
// of 128, 384 → 3, 250 padded to 256 → 2 with 6 padded logits in the
// last): the logsumexp is summed part by part (each part's max and sum,
// then their combination), which moves the losses and gradients by
// rounding only; 11 classes (the negative twin) keep one pass per row.
TEST(FusedCrossEntropy, LogSumExpInPartsMatchesReference) {
  struct Split {
    int64_t classes, multiple, parts;
  };
  for (Split split : {Split{256, 1, 2}, Split{384, 1, 3}, Split{250, 64, 2},
                      Split{11, 1, 0}}) {
    LossCase c;
    c.element = "f64", c.rows = 9, c.classes = split.classes;
    int64_t padded =
        (c.classes + split.multiple - 1) / split.multiple * split.multiple;
    int64_t rowBytes = padded * 8;
    for (int64_t rows : {2, 100}) {
      std::string what = llvm::formatv("{0} classes, {1} rows per chunk",
                                       c.classes, rows);
      auto forward = lowered(c.forwardModule(), rows * rowBytes, split.multiple);
      // The parts: a reshape of each chunk's logits to [rows, parts, part].
      int partReshapes = 0;
      forward.module->walk([&](ReshapeOp r) {
        auto shape = r.getType().getShape();
        partReshapes += shape.size() == 3 && shape[1] == split.parts &&
                        shape[1] * shape[2] == padded;
      });
      EXPECT_EQ(partReshapes > 0, split.parts > 0) << what;
      expectLoweringsKeepResults(c, rows * rowBytes, split.multiple, rows,
                                 what);
    }
  }
}

TEST(FusedCrossEntropy, CpuBackendMatchesReference) {
  // 250 classes padded to 256: the logsumexp in two parts of 128.
  for (int64_t classes : {37, 250})
    for (int64_t chunkBytes : {int64_t{200}, int64_t{64} << 20})
      for (double softcap : {0.0, 1.5}) {
        SCOPED_TRACE(classes);
        SCOPED_TRACE(softcap);
        LossCase c;
        c.rows = 24, c.width = 16, c.classes = classes;
        c.softcap = softcap;
        PipelineOptions options;
        options.lossChunkBytes = chunkBytes;
        // Padded to a multiple of 64 classes with the small chunks; not padded
        // with one chunk.
        options.lossVocabMultiple = chunkBytes == 200 ? 64 : 1;
        testing::ProgramFactory cpu = testing::cpuPrograms(options);
        // Sums over 37 classes and 16 widths (and 24 rows for the weight's):
        // within 1e-5 relative here (AMD EPYC); 4e-5 leaves room for another
        // CPU's summation order, and is still far below a wrong term's error.
        testing::expectMatchesReferenceOn(cpu, c.forwardModule(),
                                          c.inputs(false, 7), 4);
        testing::expectMatchesReferenceOn(cpu, c.gradModule(),
                                          c.inputs(true, 8), 4);
        testing::expectMatchesReferenceOn(cpu, c.trainingModule(),
                                          c.trainingInputs(9), 4);
      }
}

TEST(FusedCrossEntropy, GradientMatchesFiniteDifferences) {
  for (double softcap : {0.0, 1.5}) {
    SCOPED_TRACE(softcap);
    LossCase c;
    c.rows = 4, c.width = 3, c.classes = 5, c.element = "f64";
    c.softcap = softcap;
    auto fwd = parseModule(c.forwardModule());
    auto grad = parseModule(c.gradModule());
    ASSERT_TRUE(fwd.module && grad.module);
    std::vector<HostTensor> in = c.inputs(true, 5);
    const HostTensor &weights = in[3]; // L = Σ loss · weights
    std::vector<HostTensor> fwdIn = {in[0], in[1], in[2]};
    std::vector<HostTensor> grads = testing::evaluateMain(*grad.module, in);
    ASSERT_EQ(grads.size(), 2u);
    int kept = testing::expectGradientsMatchFiniteDifferences(
        *fwd.module, fwdIn, weights, grads);
    // Row 1 is ignored (its hidden gradient is 0); the rest is not.
    EXPECT_GT(kept, 20);
  }
}

// The cap is in the op: the uncapped reference differs from the capped one
// (the inputs' logits reach past the cap), and a negative cap is refused
// by the verifier.
TEST(FusedCrossEntropy, SoftcapChangesTheLossAndIsVerified) {
  LossCase capped, plain;
  capped.element = plain.element = "f64";
  capped.softcap = 1.5;
  auto a = parseModule(capped.forwardModule());
  auto b = parseModule(plain.forwardModule());
  ASSERT_TRUE(a.module && b.module);
  std::vector<HostTensor> in = capped.inputs(false, 3);
  std::vector<HostTensor> withCap = testing::evaluateMain(*a.module, in);
  std::vector<HostTensor> without = testing::evaluateMain(*b.module, in);
  double largest = 0;
  for (int64_t i = 0; i < capped.rows; ++i)
    largest = std::max(
        largest, std::fabs(withCap[0].getDouble(i) - without[0].getDouble(i)));
  EXPECT_GT(largest, 0.1);
  LossCase negative;
  negative.softcap = -1;
  EXPECT_FALSE(parseModule(negative.forwardModule()).module);
}

} // namespace
} // namespace kiln
