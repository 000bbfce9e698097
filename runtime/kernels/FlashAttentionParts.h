// What kiln's flash attention kernels (runtime/kernels/FlashAttention.h)
// are built from, for the GPU and for the host twin alike: the kernels'
// parameter, tile sizes and shared-memory layouts, the dropout's Philox
// recipe, the 16-bit element types, the block (DeviceBlock on the GPU,
// HostBlock on the host: threads, barriers, tile products) and the pieces
// the three kernels share (loading and storing rows, masks, the row
// phases of the softmax).
#ifndef KILN_RUNTIME_KERNELS_FLASHATTENTIONPARTS_H
#define KILN_RUNTIME_KERNELS_FLASHATTENTIONPARTS_H

#include <stdint.h>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <type_traits>
#define KILN_FLASH_HD __host__ __device__
#define KILN_FLASH_FN __device__ __forceinline__
#else
#include <cmath>
#include <cstring>
#define KILN_FLASH_HD
#define KILN_FLASH_FN inline
#endif

namespace kiln::flash {

/// Threads per block of every flash attention kernel (four warps).
constexpr int kFlashThreads = 128;

/// The kernels' one parameter, passed by value (same layout on both
/// compilers: pointers, int64s, then 32-bit fields).
struct AttentionParams {
  const void *query = nullptr; ///< [B, H, T, D]
  const void *key = nullptr;   ///< [B, Hkv, S, D]
  const void *value = nullptr; ///< [B, Hkv, S, D]
  const void *resultGrad = nullptr; ///< gradient: [B, H, T, D]
  /// [B, H, T, D]: the forward writes it, the gradient reads it.
  void *result = nullptr;
  void *queryGrad = nullptr, *keyGrad = nullptr, *valueGrad = nullptr;
  /// [B, H, T] f32 log-sum-exps: the forward writes them (where not
  /// null), the gradient reads them.
  float *rowStats = nullptr;
  /// Gradient scratch: B·H·T deltas (f32), the query side's for the key
  /// side.
  float *rowDeltas = nullptr;
  /// [key, counter] of the dropout's Philox stream, read on the device so
  /// a replayed CUDA graph sees each step's state; null without dropout.
  const int64_t *rngState = nullptr;
  int64_t batch = 0, heads = 0, kvHeads = 0, queries = 0, keys = 0,
          headDim = 0;
  float scale = 1, dropout = 0, keepScale = 1;
  int32_t causal = 0;
  /// Causal only: query i sees keys (i - window, i]; 0: all keys up to i.
  int64_t window = 0;
};

/// Sets p's shape and attributes (keepScale from dropout); the pointers
/// are the caller's.
inline void setShape(AttentionParams &p, int64_t batch, int64_t heads,
                     int64_t kvHeads, int64_t queries, int64_t keys,
                     int64_t headDim, double scale, double dropout, bool causal,
                     int64_t window = 0) {
  p.batch = batch, p.heads = heads, p.kvHeads = kvHeads;
  p.queries = queries, p.keys = keys, p.headDim = headDim;
  p.scale = static_cast<float>(scale);
  p.dropout = static_cast<float>(dropout);
  p.keepScale = static_cast<float>(1.0 / (1.0 - dropout));
  p.causal = causal;
  p.window = window;
}

/// Bytes of the gradient's scratch (the deltas).
inline int64_t rowDeltaBytes(const AttentionParams &p) {
  return p.batch * p.heads * p.queries * int64_t(sizeof(float));
}

/// Tile sizes per kernel for head dimensions up to HeadDimMax (a multiple
/// of 16; smaller head dims are zero-padded in shared memory). Query and
/// key rows per block are multiples of 16 (WMMA's tile). Rows of 16-bit
/// tiles are padded by 8 elements and f32 rows by 4: still 16-byte rows
/// (WMMA's rule), and consecutive rows start in different banks.
template <int HeadDimMax> struct FlashConfig;
/// The key side's query tile is halved so that two blocks fit an SM
/// (90 KB of shared memory each, 125 KB with 64 rows: one block).
template <> struct FlashConfig<64> {
  static constexpr int forwardRows = 64, forwardKeys = 64;
  static constexpr int queryRows = 64, queryKeys = 64;
  static constexpr int keyValueRows = 32, keyValueKeys = 64;
};
/// The key side's query tile is halved so its shared memory (dK and dV in
/// f32) fits an sm_80 block (163 KB).
template <> struct FlashConfig<128> {
  static constexpr int forwardRows = 64, forwardKeys = 64;
  static constexpr int queryRows = 64, queryKeys = 64;
  static constexpr int keyValueRows = 32, keyValueKeys = 64;
};

KILN_FLASH_HD constexpr int64_t alignShared(int64_t bytes) {
  return (bytes + 127) / 128 * 128;
}

/// Threads that share a query row in the row phases of a kernel with
/// `Rows` rows per block; each takes Keys / rowParts consecutive keys.
template <int Rows> KILN_FLASH_HD constexpr int rowParts() {
  return kFlashThreads / Rows < 1 ? 1 : kFlashThreads / Rows;
}

/// Row strides and bytes of the tiles of a kernel with `Rows` query rows
/// and `Keys` key rows per block, for elements of `Bytes` bytes (2 on the
/// GPU; the host's f32 twin in the tests uses 4). The [Rows][Keys] tiles
/// are stored key-major: element (r, c) at [c * ld + r].
template <int D, int Rows, int Keys, int Bytes = 2> struct SharedLayout {
  static constexpr int ldInput = D + 8;     // [rows][D] input tiles
  static constexpr int ldScores = Rows + 4; // f32 [Keys][Rows]
  static constexpr int ldProbs = Rows + 8;  // [Keys][Rows] in the input type
  static constexpr int ldAcc = D + 4;       // f32 [rows][D]
  static constexpr int ldAccT = Rows + 4;   // f32 [D][Rows]: the output
  static constexpr int64_t queryTile = int64_t(Rows) * ldInput * Bytes;
  static constexpr int64_t keyTile = int64_t(Keys) * ldInput * Bytes;
  static constexpr int64_t scoreTile = int64_t(Keys) * ldScores * 4;
  static constexpr int64_t probTile = int64_t(Keys) * ldProbs * Bytes;
  static constexpr int64_t rowAcc = int64_t(Rows) * ldAcc * 4;
  static constexpr int64_t rowAccT = int64_t(D) * ldAccT * 4;
  static constexpr int64_t keyAcc = int64_t(Keys) * ldAcc * 4;
  static constexpr int64_t rowFloats = int64_t(Rows) * 4;
  /// One float per row and part: the row phases' partial results.
  static constexpr int64_t partFloats = int64_t(Rows) * rowParts<Rows>() * 4;
  static constexpr int keysPerPart = Keys / rowParts<Rows>();
  static_assert(keysPerPart % 4 == 0 && D % rowParts<Rows>() == 0,
                "a part's keys are whole Philox blocks; its output columns "
                "split D evenly");
};

/// Carves consecutive 128-byte-aligned tiles out of shared memory.
struct SharedCarver {
  char *base;
  int64_t offset = 0;
  template <class T> KILN_FLASH_FN T *take(int64_t bytes) {
    T *p = reinterpret_cast<T *>(base + offset);
    offset = alignShared(offset + bytes);
    return p;
  }
};

template <int D, int Rows, int Keys, int Bytes = 2> struct ForwardShared {
  using L = SharedLayout<D, Rows, Keys, Bytes>;
  static constexpr int64_t bytes =
      alignShared(L::queryTile) + 2 * alignShared(L::keyTile) +
      alignShared(L::scoreTile) + alignShared(L::probTile) +
      alignShared(L::rowAccT) + 2 * alignShared(L::rowFloats) +
      2 * alignShared(L::partFloats);
};
template <int D, int Rows, int Keys, int Bytes = 2> struct QueryGradShared {
  using L = SharedLayout<D, Rows, Keys, Bytes>;
  static constexpr int64_t bytes =
      2 * alignShared(L::queryTile) + 2 * alignShared(L::keyTile) +
      2 * alignShared(L::scoreTile) + alignShared(L::probTile) +
      alignShared(L::rowAcc) + 2 * alignShared(L::rowFloats) +
      alignShared(L::partFloats);
};
template <int D, int Rows, int Keys, int Bytes = 2>
struct KeyValueGradShared {
  using L = SharedLayout<D, Rows, Keys, Bytes>;
  static constexpr int64_t bytes =
      2 * alignShared(L::keyTile) + 2 * alignShared(L::queryTile) +
      2 * alignShared(L::scoreTile) + 2 * alignShared(L::probTile) +
      2 * alignShared(L::keyAcc) + 2 * alignShared(L::rowFloats);
};

//===--- Philox dropout (docs/IR.md §3) -----------------------------------===//

KILN_FLASH_FN uint32_t mulHigh(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return uint32_t((uint64_t(a) * b) >> 32);
#endif
}

/// Philox-4x32-10's four lanes, as named fields: an array would be
/// indexed through local memory where the compiler cannot unroll.
struct PhiloxLanes {
  uint32_t x0 = 0, x1 = 0, x2 = 0, x3 = 0;
};

/// Philox-4x32-10's four lanes at `counter` under `key`.
KILN_FLASH_FN PhiloxLanes philox(uint64_t key, uint64_t counter) {
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  uint32_t x0 = uint32_t(counter), x1 = uint32_t(counter >> 32), x2 = 0,
           x3 = 0;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint32_t hi0 = mulHigh(0xD2511F53u, x0), lo0 = 0xD2511F53u * x0;
    uint32_t hi1 = mulHigh(0xCD9E8D57u, x2), lo1 = 0xCD9E8D57u * x2;
    uint32_t y0 = hi1 ^ x1 ^ k0, y2 = hi0 ^ x3 ^ k1;
    x0 = y0;
    x1 = lo1;
    x2 = y2;
    x3 = lo0;
  }
  PhiloxLanes lanes;
  lanes.x0 = x0;
  lanes.x1 = x1;
  lanes.x2 = x2;
  lanes.x3 = x3;
  return lanes;
}

/// The dropout of the probabilities (b·H + h, i, j): query row i's values
/// are a block of R = 4·ceil(B·H·S / 4) uniforms at counter + i·R/4, and
/// (b, h, i, j) takes the block's element (b·H + h)·S + j.
struct DropoutMask {
  uint64_t key = 0, counter = 0;
  int64_t rowGroups = 0, keys = 0;
  float threshold = 0, keepScale = 1;
  bool on = false;

  KILN_FLASH_FN static DropoutMask of(const AttentionParams &p) {
    DropoutMask m;
    m.on = p.dropout > 0 && p.rngState;
    if (m.on) {
      m.key = uint64_t(p.rngState[0]);
      m.counter = uint64_t(p.rngState[1]);
    }
    m.rowGroups = (p.batch * p.heads * p.keys + 3) / 4;
    m.keys = p.keys;
    m.threshold = p.dropout;
    m.keepScale = p.keepScale;
    return m;
  }
};

/// The dropout factors of one query row of one head, read left to right:
/// 0 when dropped, 1 / (1 - p) when kept, 1 without dropout. One Philox
/// block serves four consecutive elements, so it is computed when the
/// element leaves the last block's group.
struct DropoutRow {
  const DropoutMask &mask;
  int64_t base, counter;
  int64_t group = -1;
  PhiloxLanes lanes;

  KILN_FLASH_FN DropoutRow(const DropoutMask &m, int64_t bh, int64_t i)
      : mask(m), base(bh * m.keys), counter(i * m.rowGroups) {}
  KILN_FLASH_FN float factor(int64_t j) {
    if (!mask.on)
      return 1.0f;
    int64_t element = base + j;
    if (element / 4 != group) {
      group = element / 4;
      lanes = philox(mask.key, mask.counter + uint64_t(counter + group));
    }
    return keepFactor(mask, laneBits(lanes, int(element % 4)));
  }
  /// Lane `lane` (0-3) of a Philox block.
  KILN_FLASH_FN static uint32_t laneBits(const PhiloxLanes &lanes, int lane) {
    return lane == 0   ? lanes.x0
           : lane == 1 ? lanes.x1
           : lane == 2 ? lanes.x2
                       : lanes.x3;
  }
  /// 1 / (1 - p) when the uniform drawn from `bits` is kept, else 0.
  KILN_FLASH_FN static float keepFactor(const DropoutMask &m, uint32_t bits) {
    float u = float(bits >> 8) * (1.0f / 16777216.0f);
    return u >= m.threshold ? m.keepScale : 0.0f;
  }
};

//===--- 16-bit element types ---------------------------------------------===//

/// toFloat / fromFloat per element type: the CUDA types on the device,
/// bit-exact stand-ins (round to nearest even) on the host.
template <class E> struct Element;

#if defined(__CUDACC__)
template <> struct Element<__nv_bfloat16> {
  static KILN_FLASH_FN float toFloat(__nv_bfloat16 x) {
    return __bfloat162float(x);
  }
  static KILN_FLASH_FN __nv_bfloat16 fromFloat(float x) {
    return __float2bfloat16_rn(x);
  }
};
template <> struct Element<__half> {
  static KILN_FLASH_FN float toFloat(__half x) { return __half2float(x); }
  static KILN_FLASH_FN __half fromFloat(float x) { return __float2half_rn(x); }
};
#else
struct HostBf16 {
  uint16_t bits;
};
struct HostF16 {
  uint16_t bits;
};
template <> struct Element<HostBf16> {
  static float toFloat(HostBf16 x) {
    uint32_t u = uint32_t(x.bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static HostBf16 fromFloat(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if (std::isnan(x))
      return {uint16_t((u >> 16) | 0x40)};
    u += 0x7FFFu + ((u >> 16) & 1u);
    return {uint16_t(u >> 16)};
  }
};
/// The f32 twin: the same kernels with nothing rounded to 16 bits, which
/// the tests hold to the reference at f32 precision.
template <> struct Element<float> {
  static float toFloat(float x) { return x; }
  static float fromFloat(float x) { return x; }
};
template <> struct Element<HostF16> {
  static float toFloat(HostF16 x) {
    _Float16 h;
    std::memcpy(&h, &x.bits, 2);
    return float(h);
  }
  static HostF16 fromFloat(float x) {
    _Float16 h = static_cast<_Float16>(x);
    HostF16 out;
    std::memcpy(&out.bits, &h, 2);
    return out;
  }
};
#endif

//===--- The block: threads, barriers and tile products -------------------===//

#if defined(__CUDACC__)
/// A block of kFlashThreads GPU threads; tile products on tensor cores.
struct DeviceBlock {
  KILN_FLASH_FN int thread() const { return threadIdx.x; }
  KILN_FLASH_FN int threads() const { return blockDim.x; }
  KILN_FLASH_FN void sync() const { __syncthreads(); }
  KILN_FLASH_FN float exp(float x) const { return __expf(x); }
  KILN_FLASH_FN float log(float x) const { return __logf(x); }
  KILN_FLASH_FN void copy16(void *dst, const void *src) const {
    *reinterpret_cast<uint4 *>(dst) = *reinterpret_cast<const uint4 *>(src);
  }
  KILN_FLASH_FN void zero16(void *dst) const {
    *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
  }
  /// C[M×N] (+)= A[M×K] · B[K×N] over the block's warps, one 16×16 tile of
  /// C at a time. A is row-major (A[i·lda + k]) or, with ACol, the
  /// transpose of a row-major [K][M] tile (A[k·lda + i]); B likewise
  /// (BCol: B[n·ldb + k]), and C (CCol: C[j·ldc + i], the transpose
  /// stored). M, N, K are multiples of 16; no barrier inside.
  template <class E, bool ACol, bool BCol, bool CCol = false>
  KILN_FLASH_FN void gemm(float *c, int ldc, const E *a, int lda, const E *b,
                          int ldb, int m, int n, int k,
                          bool accumulate) const {
    using namespace nvcuda;
    using ALayout =
        typename std::conditional<ACol, wmma::col_major, wmma::row_major>::type;
    using BLayout =
        typename std::conditional<BCol, wmma::col_major, wmma::row_major>::type;
    constexpr wmma::layout_t CLayout =
        CCol ? wmma::mem_col_major : wmma::mem_row_major;
    int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    int tilesN = n / 16, tiles = (m / 16) * tilesN;
    for (int t = warp; t < tiles; t += warps) {
      int tm = t / tilesN, tn = t % tilesN;
      float *cp = CCol ? c + tn * 16 * ldc + tm * 16 : c + tm * 16 * ldc + tn * 16;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      if (accumulate)
        wmma::load_matrix_sync(acc, cp, ldc, CLayout);
      else
        wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < k; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, E, ALayout> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, E, BLayout> fb;
        wmma::load_matrix_sync(
            fa, ACol ? a + kk * lda + tm * 16 : a + tm * 16 * lda + kk, lda);
        wmma::load_matrix_sync(
            fb, BCol ? b + tn * 16 * ldb + kk : b + kk * ldb + tn * 16, ldb);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(cp, acc, ldc, CLayout);
    }
  }
};
#else
/// One host thread standing in for a block: the same kernel bodies run
/// sequentially, barriers are no-ops, tile products are plain loops (f32
/// sums of exact 16-bit products, as the tensor cores form them).
struct HostBlock {
  int thread() const { return 0; }
  int threads() const { return 1; }
  void sync() const {}
  float exp(float x) const { return std::exp(x); }
  float log(float x) const { return std::log(x); }
  void copy16(void *dst, const void *src) const { std::memcpy(dst, src, 16); }
  void zero16(void *dst) const { std::memset(dst, 0, 16); }
  template <class E, bool ACol, bool BCol, bool CCol = false>
  void gemm(float *c, int ldc, const E *a, int lda, const E *b, int ldb, int m,
            int n, int k, bool accumulate) const {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float &out = CCol ? c[j * ldc + i] : c[i * ldc + j];
        float sum = accumulate ? out : 0.0f;
        for (int kk = 0; kk < k; ++kk)
          sum += Element<E>::toFloat(ACol ? a[kk * lda + i] : a[i * lda + kk]) *
                 Element<E>::toFloat(BCol ? b[j * ldb + kk] : b[kk * ldb + j]);
        out = sum;
      }
  }
};
#endif

//===--- Shared pieces of the three kernels -------------------------------===//

/// dst[r][0, D) = rows first + r of src ([*, headDim] row-major), r <
/// count; rows past `total` and columns past headDim are zero. 16 bytes
/// a step: headDim is a multiple of 8 (16-bit elements).
template <int D, class E, class Block>
KILN_FLASH_FN void loadRows(const Block &blk, E *dst, int ld, const E *src,
                            int64_t headDim, int64_t first, int64_t total,
                            int count) {
  constexpr int perCopy = 16 / int(sizeof(E)), chunks = D / perCopy;
  for (int x = blk.thread(); x < count * chunks; x += blk.threads()) {
    int r = x / chunks, c = (x % chunks) * perCopy;
    E *d = dst + r * ld + c;
    if (first + r < total && c < headDim)
      blk.copy16(d, src + (first + r) * headDim + c);
    else
      blk.zero16(d);
  }
}

/// rows first + r of dst ([*, headDim]) = acc[r][0, headDim) · rowScale[r]
/// (or · 1 when rowScale is null), for rows below `total`; with
/// AccTransposed, acc holds element (r, c) at [c * ld + r].
template <class E, bool AccTransposed = false, class Block>
KILN_FLASH_FN void storeRows(const Block &blk, E *dst, int64_t headDim,
                             int64_t first, int64_t total, const float *acc,
                             int ld, const float *rowScale, int count) {
  for (int64_t x = blk.thread(); x < count * headDim; x += blk.threads()) {
    int r = int(x / headDim), c = int(x % headDim);
    if (first + r >= total)
      continue;
    float v = (AccTransposed ? acc[c * ld + r] : acc[r * ld + c]) *
              (rowScale ? rowScale[r] : 1.0f);
    dst[(first + r) * headDim + c] = Element<E>::fromFloat(v);
  }
}

template <class Block>
KILN_FLASH_FN void fill(const Block &blk, float *dst, int count, float value) {
  for (int x = blk.thread(); x < count; x += blk.threads())
    dst[x] = value;
}

/// Keys [firstVisibleKey, visibleKeys) are visible to query row i: all S
/// keys, or j <= i when causal, and j > i - window with a window; none for
/// a padding row past T.
KILN_FLASH_FN int64_t visibleKeys(const AttentionParams &p, int64_t i) {
  if (i >= p.queries)
    return 0;
  return p.causal && i + 1 < p.keys ? i + 1 : p.keys;
}
KILN_FLASH_FN int64_t firstVisibleKey(const AttentionParams &p, int64_t i) {
  return p.window > 0 && i >= p.window ? i - p.window + 1 : 0;
}

/// One past the last key a block of query rows [first, first + rows) sees.
KILN_FLASH_FN int64_t keyEnd(const AttentionParams &p, int64_t first,
                             int64_t rows) {
  return p.causal && first + rows < p.keys ? first + rows : p.keys;
}

/// The first block of `Keys` keys that row `first` (the block of rows'
/// first, which sees the earliest keys) sees: 0 without a window.
template <int Keys>
KILN_FLASH_FN int64_t firstKeyBlock(const AttentionParams &p, int64_t first) {
  return firstVisibleKey(p, first) / Keys * Keys;
}

/// One past the last query row that sees a key of the block [key0, key0 +
/// Keys): every row without a window, row key0 + Keys - 1 + window - 1
/// with one.
template <int Keys>
KILN_FLASH_FN int64_t lastRowSeeing(const AttentionParams &p, int64_t key0) {
  if (p.window <= 0)
    return p.queries;
  const int64_t end = key0 + Keys + p.window - 1;
  return end < p.queries ? end : p.queries;
}

/// For a visible score s (its dP = dp) of a row with log-sum-exp lse and
/// delta, and the element's dropout factor: the probability after dropout
/// (what multiplies dO into dV) and dS = p (dP · factor - delta) · scale.
struct ScoreGrad {
  float dropped, grad;
};
template <class Block>
KILN_FLASH_FN ScoreGrad scoreGrad(const Block &blk, const AttentionParams &p,
                                  float s, float dp, float lse, float delta,
                                  float factor) {
  float prob = blk.exp(s * p.scale - lse);
  return {prob * factor, prob * (dp * factor - delta) * p.scale};
}

/// Query rows times Philox blocks a row: the work items of
/// writeDropoutMask.
KILN_FLASH_FN int64_t dropoutMaskItems(const AttentionParams &p) {
  return p.queries * ((p.batch * p.heads * p.keys + 3) / 4);
}

/// The dropout of (b·H + h, i, j) as a tensor, for an attention library
/// that takes the mask as an input (cuDNN): mask[((b·H + h)·T + i)·S + j]
/// is 1 where the element is kept, 0 where it is dropped (the library
/// scales by 1 / (1 - p)). Keys row i does not see (causal, window) are left
/// alone: the caller zeroes the buffer once, so they never hold a NaN for
/// the library to multiply a masked probability by, and half of a causal
/// mask is never written. Work item x < dropoutMaskItems(p) is query row
/// i = x / R and Philox block g = x % R of the row (R blocks a row): the
/// block's four uniforms are the row's elements 4g .. 4g + 3 in
/// DropoutRow's numbering (b·H + h)·S + j, so one block may end one head's
/// keys and start the next head's.
template <class E>
KILN_FLASH_FN void writeDropoutMask(const AttentionParams &p,
                                    const DropoutMask &m, E *mask,
                                    int64_t x) {
  const int64_t groups = m.rowGroups, elements = p.batch * p.heads * p.keys;
  if (x >= p.queries * groups)
    return;
  const int64_t i = x / groups, g = x % groups, visible = visibleKeys(p, i),
                firstVisible = firstVisibleKey(p, i);
  PhiloxLanes lanes;
  if (m.on)
    lanes = philox(m.key, m.counter + uint64_t(i * groups + g));
  for (int lane = 0; lane < 4; ++lane) {
    const int64_t element = 4 * g + lane;
    if (element >= elements)
      break;
    const int64_t bh = element / p.keys, j = element % p.keys;
    if (j >= visible || j < firstVisible)
      continue;
    const bool kept =
        !m.on ||
        DropoutRow::keepFactor(m, DropoutRow::laneBits(lanes, lane)) != 0.0f;
    mask[(bh * p.queries + i) * p.keys + j] =
        Element<E>::fromFloat(kept ? 1.0f : 0.0f);
  }
}

//===--- Row phases -------------------------------------------------------===//
// Work item x of a row phase is row x % Rows, part x / Rows: consecutive
// threads take consecutive rows of the key-major tiles, so a warp's reads
// and writes are 32 consecutive words.

/// partMax[part·Rows + r] = the largest scaled score of row r among the
/// part's visible keys of the tile at key0 (-inf when it sees none). The
/// scores are key-major with stride ld. No barrier.
template <int Rows, int Keys, class Block>
KILN_FLASH_FN void partialMaxima(const Block &blk, const AttentionParams &p,
                                 const float *ss, int ld, int64_t first,
                                 int64_t key0, float *partMax) {
  constexpr int parts = rowParts<Rows>(), perPart = Keys / parts;
  for (int x = blk.thread(); x < Rows * parts; x += blk.threads()) {
    const int r = x % Rows, c0 = x / Rows * perPart;
    const int64_t visible = visibleKeys(p, first + r) - key0;
    const int64_t seen = firstVisibleKey(p, first + r) - key0;
    float m = -INFINITY;
    const int start =
        seen > c0 ? int(seen < c0 + perPart ? seen : c0 + perPart) : c0;
    for (int c = start; c < c0 + perPart && c < visible; ++c)
      m = fmaxf(m, ss[c * ld + r] * p.scale);
    partMax[x] = m;
  }
}

/// Row r's running maximum once the tile's parts are seen.
template <int Rows>
KILN_FLASH_FN float tileMax(const float *rowMax, const float *partMax, int r) {
  float m = rowMax[r];
  for (int q = 0; q < rowParts<Rows>(); ++q)
    m = fmaxf(m, partMax[q * Rows + r]);
  return m;
}

/// Σ over the parts of row r.
template <int Rows>
KILN_FLASH_FN float sumParts(const float *parts, int r) {
  float sum = 0.0f;
  for (int q = 0; q < rowParts<Rows>(); ++q)
    sum += parts[q * Rows + r];
  return sum;
}

/// exp(oldMax - newMax): what a row's running sums are rescaled by; 1 while
/// the row has seen no key (its maximum still -inf).
template <class Block>
KILN_FLASH_FN float rescaleFactor(const Block &blk, float oldMax,
                                  float newMax) {
  return newMax == -INFINITY ? 1.0f : blk.exp(oldMax - newMax);
}

} // namespace kiln::flash

#endif // KILN_RUNTIME_KERNELS_FLASHATTENTIONPARTS_H
