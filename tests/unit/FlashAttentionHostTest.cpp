// kiln's flash attention kernels (runtime/cuda/kernels/FlashAttention.h)
// run on the host, one thread per block (HostBlock), against the reference
// evaluator's kiln.fused_attention and kiln.fused_attention_grad: bf16 and
// f16, head dims padded within a tile (8, 72) and whole (64, 128), causal
// and not, more keys or queries than a tile holds (partial last tiles),
// grouped query heads and dropout. The GPU runs the same bodies with WMMA
// products (CudaBackendTest's FlashAttention cases, on the GPU machine).
//
#include "FlashAttentionCases.h"

#include "runtime/cuda/kernels/FlashAttention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

namespace kiln {
namespace {

using flash::AttentionParams;
using testing::FlashCase;
using testing::relativeError;
using testing::tolerance;
using flash::FlashConfig;
using flash::HostBf16;
using flash::HostBlock;
using flash::HostF16;

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
  flash::setShape(p, c.batch, c.heads, c.kvHeads, c.queries, c.keys,
                  c.headDim, c.scale, c.dropout, c.causal);
  return p;
}

/// Runs `body` over every block of a (blocksX, blocksY) grid with fresh
/// shared memory (filled with garbage, as on the GPU) of `bytes`.
template <class Body>
void forEachBlock(int64_t blocksX, int64_t blocksY, int64_t bytes, Body body) {
  std::unique_ptr<char[]> raw(new char[bytes + 128]);
  char *shared = raw.get() + (128 - reinterpret_cast<uintptr_t>(raw.get()) % 128);
  for (int64_t y = 0; y < blocksY; ++y)
    for (int64_t x = 0; x < blocksX; ++x) {
      std::memset(shared, 0xA5, bytes);
      body(shared, x, y);
    }
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The three kernels on the host for head dims up to D.
template <class E, int D> struct HostFlash {
  using C = FlashConfig<D>;
  static constexpr int kBytes = sizeof(E);
  static void forward(const AttentionParams &p) {
    forEachBlock(ceilDiv(p.queries, C::forwardRows), p.batch * p.heads,
                 flash::ForwardShared<D, C::forwardRows, C::forwardKeys, kBytes>::bytes,
                 [&](char *shared, int64_t x, int64_t y) {
                   flash::attentionForward<E, D, C::forwardRows,
                                           C::forwardKeys>(p, HostBlock{},
                                                           shared, x, y);
                 });
  }
  static void backward(const AttentionParams &p) {
    forEachBlock(
        ceilDiv(p.queries, C::queryRows), p.batch * p.heads,
        flash::QueryGradShared<D, C::queryRows, C::queryKeys, kBytes>::bytes,
        [&](char *shared, int64_t x, int64_t y) {
          flash::attentionQueryGrad<E, D, C::queryRows, C::queryKeys>(
              p, HostBlock{}, shared, x, y);
        });
    forEachBlock(
        ceilDiv(p.keys, C::keyValueKeys), p.batch * p.kvHeads,
        flash::KeyValueGradShared<D, C::keyValueRows, C::keyValueKeys,
                                  kBytes>::bytes,
        [&](char *shared, int64_t x, int64_t y) {
          flash::attentionKeyValueGrad<E, D, C::keyValueRows,
                                       C::keyValueKeys>(p, HostBlock{}, shared,
                                                        x, y);
        });
  }
};

template <class E>
void runOnHost(const FlashCase &c, AttentionParams &p, bool grad) {
  if (c.headDim <= 64)
    grad ? HostFlash<E, 64>::backward(p) : HostFlash<E, 64>::forward(p);
  else
    grad ? HostFlash<E, 128>::backward(p) : HostFlash<E, 128>::forward(p);
}

/// The kernels' results for `c` (forward: {o}; gradient: {dq, dk, dv}).
std::vector<HostTensor> flashResults(const FlashCase &c,
                                     std::vector<HostTensor> &in, bool grad) {
  AttentionParams p = paramsFor(c, in);
  std::vector<HostTensor> out;
  std::vector<float> stats(flash::rowStatsBytes(p) / sizeof(float), NAN);
  if (grad) {
    out.emplace_back(c.element, in[0].shape());
    out.emplace_back(c.element, in[1].shape());
    out.emplace_back(c.element, in[2].shape());
    p.queryGrad = out[0].data();
    p.keyGrad = out[1].data();
    p.valueGrad = out[2].data();
    p.rowStats = stats.data();
  } else {
    out.emplace_back(c.element, in[0].shape());
    p.result = out[0].data();
  }
  if (c.element == DType::bf16)
    runOnHost<HostBf16>(c, p, grad);
  else if (c.element == DType::f16)
    runOnHost<HostF16>(c, p, grad);
  else
    runOnHost<float>(c, p, grad);
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

TEST(FlashAttentionHost, GroupedQueryHeadsWithDropoutMatchTheReference) {
  for (double dropout : {0.0, 0.2}) {
    FlashCase c;
    c.dropout = dropout;
    c.heads = 4, c.kvHeads = 2;
    c.queries = c.keys = 130;
    expectMatchesReference(c, 2);
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
  for (bool grad : {false, true}) {
    EXPECT_GT(worstError(c, grad, 5, &noDropout),
              4 * tolerance(DType::bf16, grad));
    EXPECT_GT(worstError(c, grad, 5, &noMask),
              4 * tolerance(DType::bf16, grad));
  }
}

} // namespace
} // namespace kiln
