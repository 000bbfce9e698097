// kiln's flash attention kernels (runtime/kernels/FlashAttention.h)
// run on the host (runtime/AttentionKernels.h: one thread per block, loop
// products, as the cpu executor runs attention thunks), against the reference
// evaluator's kiln.fused_attention and kiln.fused_attention_grad: bf16 and
// f16, head dims padded within a tile (8, 72) and whole (64, 128), causal
// and not, sliding windows (within a tile and across tiles, so that blocks
// of keys and of rows are skipped), more keys or queries than a tile holds
// (partial last tiles), grouped query heads and dropout. The GPU runs the same
// bodies with WMMA products (CudaFlashAttentionTest, on the GPU machine).
//
#include "FlashAttentionCases.h"

#include "runtime/CpuExecutor.h"
#include "runtime/AttentionKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace kiln {
namespace {

using flash::AttentionParams;
using testing::FlashCase;
using testing::tolerance;

/// The kernels' parameter for case `c` on inputs `in` (host pointers).
AttentionParams paramsFor(const FlashCase &c, std::vector<HostTensor> &in) {
  AttentionParams p;
  p.query = in[0].data();
  p.key = in[1].data();
  p.value = in[2].data();
  p.resultGrad = in[3].data();
  p.rngState = c.dropout > 0
                   ? reinterpret_cast<const int64_t *>(in[4].data())
                   : nullptr;
  flash::setShape(p, c.batch, c.heads, c.kvHeads, c.queries, c.keys, c.headDim,
                  c.scale, c.dropout, c.causal, c.window);
  return p;
}

runtime::GemmType gemmTypeOf(DType element) {
  return element == DType::bf16  ? runtime::GemmType::bf16
         : element == DType::f16 ? runtime::GemmType::f16
                                 : runtime::GemmType::f32;
}

/// The kernels' results for `c` (forward: {o, row stats}; gradient: {dq,
/// dk, dv}, from the forward kernel's o and row stats, as in a step).
std::vector<HostTensor> flashResults(const FlashCase &c,
                                     std::vector<HostTensor> &in, bool grad) {
  AttentionParams p = paramsFor(c, in);
  runtime::ThreadPool pool(2);
  auto run = [&](bool gradient) {
    absl::Status s =
        runtime::runAttentionOnHost(gemmTypeOf(c.element), gradient, p, pool);
    EXPECT_TRUE(s.ok()) << s;
  };
  std::vector<HostTensor> forward;
  forward.emplace_back(c.element, in[0].shape());
  forward.emplace_back(DType::f32,
                       std::vector<int64_t>{c.batch, c.heads, c.queries});
  p.result = forward[0].data();
  p.rowStats = reinterpret_cast<float *>(forward[1].data());
  run(false);
  if (!grad)
    return forward;
  std::vector<HostTensor> out;
  out.emplace_back(c.element, in[0].shape());
  out.emplace_back(c.element, in[1].shape());
  out.emplace_back(c.element, in[2].shape());
  p.queryGrad = out[0].data();
  p.keyGrad = out[1].data();
  p.valueGrad = out[2].data();
  run(true);
  return out;
}

/// The worst relative error of the kernels against the reference for `c`.
double worstError(const FlashCase &c, bool grad, uint32_t seed,
                  const FlashCase *referenceCase = nullptr) {
  std::vector<HostTensor> in = c.inputs(seed);
  std::vector<HostTensor> want =
      testing::referenceResults(referenceCase ? *referenceCase : c, in, grad);
  return testing::worstRelativeError(flashResults(c, in, grad), want);
}

/// `c` in its 16-bit type, and its f32 twin.
void expectMatchesReference(const FlashCase &c, uint32_t seed) {
  FlashCase twin = c;
  twin.element = DType::f32;
  for (const FlashCase *run : {&c, static_cast<const FlashCase *>(&twin)}) {
    for (bool grad : {false, true}) {
      double error = worstError(*run, grad, seed);
      EXPECT_LE(error, tolerance(run->element, grad))
          << run->name() << (grad ? ", gradient" : ", forward");
      if (getenv("KILN_FLASH_PRINT_ERRORS"))
        printf("%s%s: %.3g\n", run->name().c_str(), grad ? ", gradient" : "",
               error);
    }
  }
}

TEST(FlashAttentionHost, Gpt2ShapedHeadsMatchTheReference) {
  // Head dim 64, more rows than one 64-row tile: 70 (one whole, one partial).
  for (DType element : {DType::bf16, DType::f16})
    for (bool causal : {true, false}) {
      FlashCase c;
      c.element = element;
      c.causal = causal;
      c.heads = c.kvHeads = 2;
      expectMatchesReference(c, 1);
    }
}

TEST(FlashAttentionHost, Gpt2SequenceLengthWithDropoutMatchesTheReference) {
  // The GPU test's case: seq 512 is where the worst error over the RMS is
  // largest (FlashAttentionCases.h), so the host run holds the tolerances
  // at that length too.
  FlashCase c;
  c.batch = 1, c.heads = c.kvHeads = 3;
  c.queries = c.keys = 512;
  c.dropout = 0.1;
  expectMatchesReference(c, 11);
}

TEST(FlashAttentionHost, GroupedQueryHeadsWithDropoutMatchTheReference) {
  for (double dropout : {0.0, 0.2}) {
    FlashCase c;
    c.dropout = dropout;
    c.heads = 4, c.kvHeads = 2;
    c.queries = c.keys = 130;
    expectMatchesReference(c, 2);
  }
}

TEST(FlashAttentionHost, SlidingWindowsMatchTheReference) {
  // 200 rows in tiles of 64: a window of 2 (a row and the one before it;
  // with 1, each row's probability is exactly 1 and the query and key
  // gradients exactly 0, which a relative error cannot measure), 5 (within
  // a tile), 70 and 130 (row blocks that skip their first key blocks; key
  // blocks whose last seeing rows end before the last row block), with
  // grouped heads and dropout; and a window of 199, which masks only key 0
  // from row 199.
  const int64_t windows[] = {2, 5, 70, 130, 199};
  for (int64_t window : windows) {
    FlashCase c;
    c.window = window;
    c.batch = 1, c.heads = 4, c.kvHeads = 2;
    c.queries = c.keys = 200;
    c.dropout = window == 70 ? 0.1 : 0.0;
    c.element = window == 130 ? DType::f16 : DType::bf16;
    expectMatchesReference(c, 20 + uint32_t(window));
  }
}

TEST(FlashAttentionHost, MoreKeysThanQueriesWithoutCausalMask) {
  FlashCase c;
  c.causal = false;
  c.queries = 33, c.keys = 100;
  c.dropout = 0.1;
  expectMatchesReference(c, 3);
}

TEST(FlashAttentionHost, HeadDimsPaddedWithinATile) {
  // 8 and 72 are zero-padded to the 64 and 128 tiles; 128 fills its tile.
  for (int64_t headDim : {8, 72, 128}) {
    FlashCase c;
    c.headDim = headDim;
    c.batch = 1, c.heads = 2, c.kvHeads = 1;
    c.queries = c.keys = headDim == 8 ? 20 : 80;
    c.element = headDim == 72 ? DType::f16 : DType::bf16;
    c.dropout = 0.1;
    expectMatchesReference(c, 4);
  }
}

TEST(FlashAttentionHost, TheCpuBackendRunsAttentionThunksEndToEnd) {
  // f32 attention and its gradient through the whole pipeline with bf16
  // products and the attention kernel on: kiln-autocast rounds q, k, v and
  // dO, the backend makes two attention thunks, the cpu executor runs them
  // on the host; the results against the reference's f32 ones.
  FlashCase c;
  c.element = DType::f32;
  c.heads = 4, c.kvHeads = 2;
  c.dropout = 0.1;
  PipelineOptions pipeline;
  pipeline.productType = DType::bf16;
  pipeline.attentionKernel = true;
  for (bool grad : {false, true})
    // The operands were rounded to bf16 here, not in the reference: one
    // more unit of rounding on each input.
    EXPECT_LE(testing::compiledError(
                  c, grad, 6, pipeline, {},
                  [](runtime::Executable exe) {
                    return runtime::loadCpuProgram(std::move(exe));
                  }),
              tolerance(DType::bf16, grad))
        << (grad ? "gradient" : "forward");
}

/// writeDropoutMask's mask for 7 causal keys (within `window` keys when
/// not 0) is written where a row sees a key, and only there, and applied
/// to a plain softmax attention gives the reference's result.
void expectDropoutMaskIsTheReferences(int64_t window) {
  FlashCase c;
  c.element = DType::f32;
  c.batch = 2, c.heads = 3, c.kvHeads = 3, c.queries = c.keys = 7;
  c.headDim = 8;
  c.dropout = 0.3;
  c.window = window;
  std::vector<HostTensor> in = c.inputs(8);
  AttentionParams p = paramsFor(c, in);
  const int64_t T = c.queries, S = c.keys, D = c.headDim;
  // -1 marks what the kernel leaves alone: the keys a row does not see.
  std::vector<float> mask(c.batch * c.heads * T * S, -1.0f);
  const flash::DropoutMask m = flash::DropoutMask::of(p);
  for (int64_t x = 0; x < flash::dropoutMaskItems(p) + 5; ++x)
    flash::writeDropoutMask(p, m, mask.data(), x); // past the end: no-op
  int64_t dropped = 0, seen = 0;
  for (int64_t e = 0; e < int64_t(mask.size()); ++e) {
    const int64_t i = e / S % T, j = e % S;
    if (j > i || (window > 0 && j <= i - window)) {
      ASSERT_EQ(mask[e], -1.0f) << "a hidden key written at " << e;
      continue;
    }
    ASSERT_TRUE(mask[e] == 0.0f || mask[e] == 1.0f) << "unwritten at " << e;
    dropped += mask[e] == 0.0f;
    ++seen;
  }
  EXPECT_GT(dropped, int64_t(0.15 * seen));
  EXPECT_LT(dropped, int64_t(0.45 * seen));

  const float *q = reinterpret_cast<const float *>(in[0].data());
  const float *k = reinterpret_cast<const float *>(in[1].data());
  const float *v = reinterpret_cast<const float *>(in[2].data());
  HostTensor got(DType::f32, in[0].shape());
  float *o = reinterpret_cast<float *>(got.data());
  for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
    for (int64_t i = 0; i < T; ++i) {
      const int64_t visible = c.causal ? std::min(i + 1, S) : S;
      const int64_t first =
          window > 0 ? std::max<int64_t>(0, i + 1 - window) : 0;
      std::vector<double> score(visible, -INFINITY);
      double top = -INFINITY, sum = 0;
      for (int64_t j = first; j < visible; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += double(q[(bh * T + i) * D + d]) * k[(bh * S + j) * D + d];
        score[j] = dot * c.scale;
        top = std::max(top, score[j]);
      }
      for (double &e : score)
        sum += (e = std::exp(e - top));
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = first; j < visible; ++j)
          acc += score[j] / sum * mask[(bh * T + i) * S + j] /
                 (1 - c.dropout) * v[(bh * S + j) * D + d];
        o[(bh * T + i) * D + d] = float(acc);
      }
    }
  std::vector<HostTensor> want = testing::referenceResults(c, in, false);
  ASSERT_FALSE(want.empty());
  EXPECT_LE(testing::relativeError(got, want[0]), 1e-5);
}

TEST(FlashAttentionHost, TheDropoutMaskTensorIsTheReferencesDropout) {
  // The mask cuDNN's attention reads (writeDropoutMask, 1 kept, 0 dropped)
  // applied to a plain f64 softmax attention gives the reference's result:
  // it is the op's dropout, element for element. 3 heads of 7 keys: a
  // Philox block of four uniforms spans two heads' keys. Causal, then
  // within a window of 3 keys.
  for (int64_t window : {0, 3}) {
    SCOPED_TRACE("window " + std::to_string(window));
    expectDropoutMaskIsTheReferences(window);
  }
}

TEST(FlashAttentionHost, TheComparisonSeesAWrongMask) {
  // The same kernels against the reference without dropout, and without
  // the causal mask: the errors must be far beyond the tolerance, so a
  // kernel that ignored either would fail the cases above.
  FlashCase c;
  c.heads = c.kvHeads = 1;
  c.dropout = 0.2;
  FlashCase noDropout = c;
  noDropout.dropout = 0;
  FlashCase noMask = c;
  noMask.causal = false;
  FlashCase windowed = c;
  windowed.window = 20;
  for (bool grad : {false, true}) {
    EXPECT_GT(worstError(c, grad, 5, &noDropout),
              4 * tolerance(DType::bf16, grad));
    EXPECT_GT(worstError(c, grad, 5, &noMask),
              4 * tolerance(DType::bf16, grad));
    // A window the kernels ignore, and one they apply where none is.
    EXPECT_GT(worstError(windowed, grad, 5, &c),
              4 * tolerance(DType::bf16, grad));
    EXPECT_GT(worstError(c, grad, 5, &windowed),
              4 * tolerance(DType::bf16, grad));
  }
}

} // namespace
} // namespace kiln
