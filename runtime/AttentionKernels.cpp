// The flash attention kernels' parameter for a thunk, and their host run
// (AttentionKernels.h).
#include "runtime/AttentionKernels.h"

#include "absl/strings/str_cat.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace kiln::runtime {

namespace {

using flash::FlashConfig;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Runs `body(shared, x, y)` for every block of a (blocksX, blocksY) grid
/// on `pool`, each block with its own shared memory of `bytes` (filled
/// with garbage first, as the GPU's is).
template <class Body>
void forEachBlock(ThreadPool &pool, int64_t blocksX, int64_t blocksY,
                  int64_t bytes, const Body &body) {
  pool.parallelFor(blocksY, [&](int64_t y) {
    std::unique_ptr<char[]> raw(new char[bytes + 128]);
    char *shared =
        raw.get() + (128 - reinterpret_cast<uintptr_t>(raw.get()) % 128);
    for (int64_t x = 0; x < blocksX; ++x) {
      std::memset(shared, 0xA5, bytes);
      body(shared, x, y);
    }
  });
}

/// The three kernels for element type E and head dims up to D.
template <class E, int D> struct HostKernels {
  using C = FlashConfig<D>;
  static constexpr int kBytes = sizeof(E);

  static void forward(const flash::AttentionParams &p, ThreadPool &pool) {
    forEachBlock(
        pool, ceilDiv(p.queries, C::forwardRows), p.batch * p.heads,
        flash::ForwardShared<D, C::forwardRows, C::forwardKeys, kBytes>::bytes,
        [&](char *shared, int64_t x, int64_t y) {
          flash::attentionForward<E, D, C::forwardRows, C::forwardKeys>(
              p, flash::HostBlock{}, shared, x, y);
        });
  }
  /// The query side first: it leaves the row statistics the key side reads.
  static void gradient(const flash::AttentionParams &p, ThreadPool &pool) {
    forEachBlock(
        pool, ceilDiv(p.queries, C::queryRows), p.batch * p.heads,
        flash::QueryGradShared<D, C::queryRows, C::queryKeys, kBytes>::bytes,
        [&](char *shared, int64_t x, int64_t y) {
          flash::attentionQueryGrad<E, D, C::queryRows, C::queryKeys>(
              p, flash::HostBlock{}, shared, x, y);
        });
    forEachBlock(pool, ceilDiv(p.keys, C::keyValueKeys), p.batch * p.kvHeads,
                 flash::KeyValueGradShared<D, C::keyValueRows,
                                           C::keyValueKeys, kBytes>::bytes,
                 [&](char *shared, int64_t x, int64_t y) {
                   flash::attentionKeyValueGrad<E, D, C::keyValueRows,
                                                C::keyValueKeys>(
                       p, flash::HostBlock{}, shared, x, y);
                 });
  }
};

template <class E>
void run(bool gradient, const flash::AttentionParams &p, ThreadPool &pool) {
  if (p.headDim <= 64)
    gradient ? HostKernels<E, 64>::gradient(p, pool)
             : HostKernels<E, 64>::forward(p, pool);
  else
    gradient ? HostKernels<E, 128>::gradient(p, pool)
             : HostKernels<E, 128>::forward(p, pool);
}

} // namespace

flash::AttentionParams
attentionParams(const AttentionThunk &a,
                const std::function<void *(uint32_t slot)> &address) {
  auto pointer = [&](uint32_t slot) {
    return slot == kNoSlot ? nullptr : address(slot);
  };
  flash::AttentionParams p;
  p.query = pointer(a.query);
  p.key = pointer(a.key);
  p.value = pointer(a.value);
  p.resultGrad = pointer(a.resultGrad);
  p.result = pointer(a.result);
  p.rowStats = static_cast<float *>(pointer(a.rowStats));
  p.queryGrad = pointer(a.queryGrad);
  p.keyGrad = pointer(a.keyGrad);
  p.valueGrad = pointer(a.valueGrad);
  p.rngState = static_cast<const int64_t *>(pointer(a.rngState));
  flash::setShape(p, a.batch, a.heads, a.kvHeads, a.queries, a.keys, a.headDim,
                  a.scale, a.dropout, a.causal, a.window);
  return p;
}

absl::Status runAttentionOnHost(GemmType element, bool gradient,
                                flash::AttentionParams params,
                                ThreadPool &pool) {
  if (params.headDim % 8 != 0 || params.headDim > 128)
    return absl::InvalidArgumentError(absl::StrCat(
        "attention kernels: head dim ", params.headDim,
        " is not a multiple of 8 up to 128"));
  std::vector<float> deltas;
  if (gradient) {
    deltas.resize(flash::rowDeltaBytes(params) / sizeof(float));
    params.rowDeltas = deltas.data();
  }
  switch (element) {
  case GemmType::bf16:
    run<flash::HostBf16>(gradient, params, pool);
    break;
  case GemmType::f16:
    run<flash::HostF16>(gradient, params, pool);
    break;
  case GemmType::f32:
    run<float>(gradient, params, pool);
    break;
  }
  return absl::OkStatus();
}

} // namespace kiln::runtime
