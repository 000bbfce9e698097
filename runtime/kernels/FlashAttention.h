// kiln's flash attention: kiln.fused_attention and kiln.fused_attention_grad
// (docs/IR.md §2.11) for 16-bit query, key and value, in tiles that stay in
// shared memory, so the [T, S] scores never reach device memory.
//
// One source, two targets. nvcc compiles the kernel bodies below for the
// GPU (runtime/cuda/FlashAttention.cu: a block of kFlashThreads threads,
// tensor-core products through WMMA); the host compiler compiles the same
// bodies with HostBlock (runtime/AttentionKernels.cpp), one thread whose
// barriers are no-ops and whose tile products are loops, so the tests
// check every index, mask and softmax step against the reference
// evaluator on a machine without a GPU. The rules that make
// that sound: state that outlives a barrier lives in shared memory, and all
// work is split with `for (x = thread(); x < n; x += threads())`.
//
// The algorithm (FlashAttention-2's, with its statistics kept in shared
// memory rather than registers so that WMMA's opaque fragment layout never
// matters). The [Rows][Keys] tiles (scores, dP, probabilities, dS) and the
// forward's output accumulator are stored transposed (key-major): in the
// row phases (softmax, dS) a warp's lanes own 32 consecutive query rows,
// so each step reads and writes 32 consecutive words, never one bank
// eight times; rowParts() threads share a row, each over its own keys,
// and combine their partial maxima and sums through shared memory.
// Masks: causal (key j <= query i) and, with it, a sliding window (j > i -
// window); each block of rows visits only the key blocks it sees, and each
// key block only the row blocks that see it.
// - forward, per block of query rows: for each block of keys, the scores
//   S = Q Kᵀ, an online softmax (running max m and sum l per row, the
//   accumulated output rescaled by exp(m_old - m_new)), the dropout mask,
//   and O += P V; at the end O / l.
// - forward, at the end, each row's log-sum-exp (max + log l) for the
//   gradient (FlashAttention-2's L).
// - gradient, query side, per block of query rows: delta = Σ_j p_j dP_j as
//   the dot product dO · O of each row (the forward's result is an
//   operand), then one sweep over the keys: P from the forward's
//   log-sum-exp, dS = p (dP - delta) scale and dQ += dS K. The deltas go to
//   a scratch buffer for the key side.
// - gradient, key side, per block of keys and kv head: over every query
//   head of the group and every query block that sees the keys, P and dS
//   again, dV += Pᵀ dO and dK += dSᵀ Q. No atomics: the result does not
//   depend on the schedule.
// Products take 16-bit inputs and accumulate in f32; P and dS are rounded
// to the input type before their products, as FlashAttention does. Each
// dropout uniform comes from the op's Philox recipe, one block for four
// consecutive keys.
#ifndef KILN_RUNTIME_CUDA_KERNELS_FLASHATTENTION_H
#define KILN_RUNTIME_CUDA_KERNELS_FLASHATTENTION_H

#include "runtime/kernels/FlashAttentionParts.h"

namespace kiln::flash {

//===--- Forward ----------------------------------------------------------===//

/// Query rows [queryBlock·Rows, +Rows) of head bh = b·H + h.
template <class E, int D, int Rows, int Keys, class Block>
KILN_FLASH_FN void attentionForward(const AttentionParams &p, const Block &blk,
                                    char *shared, int64_t queryBlock,
                                    int64_t bh) {
  using L = SharedLayout<D, Rows, Keys, int(sizeof(E))>;
  constexpr int parts = rowParts<Rows>(), perPart = L::keysPerPart;
  SharedCarver carve{shared};
  E *qs = carve.take<E>(L::queryTile);
  E *ks = carve.take<E>(L::keyTile);
  E *vs = carve.take<E>(L::keyTile);
  float *ss = carve.take<float>(L::scoreTile);
  E *ps = carve.take<E>(L::probTile);
  float *os = carve.take<float>(L::rowAccT); // the output, [D][Rows]
  float *rowMax = carve.take<float>(L::rowFloats);
  float *rowSum = carve.take<float>(L::rowFloats);
  float *partMax = carve.take<float>(L::partFloats);
  float *partSum = carve.take<float>(L::partFloats);

  const int64_t b = bh / p.heads, h = bh % p.heads;
  const int64_t g = h / (p.heads / p.kvHeads);
  const int64_t dim = p.headDim, first = queryBlock * Rows;
  const E *q = static_cast<const E *>(p.query) + bh * p.queries * dim;
  const int64_t kvOffset = (b * p.kvHeads + g) * p.keys * dim;
  const E *k = static_cast<const E *>(p.key) + kvOffset;
  const E *v = static_cast<const E *>(p.value) + kvOffset;
  const DropoutMask mask = DropoutMask::of(p);

  loadRows<D>(blk, qs, L::ldInput, q, dim, first, p.queries, Rows);
  for (int x = blk.thread(); x < D * L::ldAccT; x += blk.threads())
    os[x] = 0.0f;
  fill(blk, rowMax, Rows, -INFINITY);
  fill(blk, rowSum, Rows, 0.0f);
  const int64_t end = keyEnd(p, first, Rows);
  for (int64_t key0 = firstKeyBlock<Keys>(p, first); key0 < end; key0 += Keys) {
    blk.sync(); // the previous block's readers of ks, vs and ps are done
    loadRows<D>(blk, ks, L::ldInput, k, dim, key0, p.keys, Keys);
    loadRows<D>(blk, vs, L::ldInput, v, dim, key0, p.keys, Keys);
    blk.sync();
    blk.template gemm<E, false, true, true>(ss, L::ldScores, qs, L::ldInput,
                                            ks, L::ldInput, Rows, Keys, D,
                                            false);
    blk.sync();
    partialMaxima<Rows, Keys>(blk, p, ss, L::ldScores, first, key0, partMax);
    blk.sync();
    // The probabilities after dropout, each part's sum before it, and the
    // part's columns of the output rescaled to the new maximum.
    for (int x = blk.thread(); x < Rows * parts; x += blk.threads()) {
      const int r = x % Rows, part = x / Rows, c0 = part * perPart;
      const int64_t i = first + r, visible = visibleKeys(p, i) - key0;
      const int64_t seen = firstVisibleKey(p, i) - key0;
      const float newMax = tileMax<Rows>(rowMax, partMax, r);
      const float alpha = rescaleFactor(blk, rowMax[r], newMax);
      float sum = 0.0f;
      DropoutRow dropout(mask, bh, i);
      for (int c = c0; c < c0 + perPart; ++c) {
        float prob = 0.0f;
        if (c >= seen && c < visible) {
          prob = blk.exp(ss[c * L::ldScores + r] * p.scale - newMax);
          sum += prob;
          prob *= dropout.factor(key0 + c);
        }
        ps[c * L::ldProbs + r] = Element<E>::fromFloat(prob);
      }
      partSum[x] = sum;
      for (int c = part * (D / parts); c < (part + 1) * (D / parts); ++c)
        os[c * L::ldAccT + r] *= alpha;
    }
    blk.sync();
    // The row statistics, beside O += P V (which touches neither).
    for (int r = blk.thread(); r < Rows; r += blk.threads()) {
      const float newMax = tileMax<Rows>(rowMax, partMax, r);
      rowSum[r] = rowSum[r] * rescaleFactor(blk, rowMax[r], newMax) +
                  sumParts<Rows>(partSum, r);
      rowMax[r] = newMax;
    }
    blk.template gemm<E, true, false, true>(os, L::ldAccT, ps, L::ldProbs, vs,
                                            L::ldInput, Rows, D, Keys, true);
  }
  blk.sync();
  // The row statistics for the gradient: max + log sum of the scaled
  // scores, before dropout.
  for (int r = blk.thread(); r < Rows; r += blk.threads()) {
    const int64_t i = first + r;
    const float sum = rowSum[r];
    if (p.rowStats && i < p.queries)
      p.rowStats[bh * p.queries + i] =
          sum > 0.0f ? rowMax[r] + blk.log(sum) : 0.0f;
    rowSum[r] = sum > 0.0f ? 1.0f / sum : 0.0f;
  }
  blk.sync();
  storeRows<E, true>(blk, static_cast<E *>(p.result) + bh * p.queries * dim,
                     dim, first, p.queries, os, L::ldAccT, rowSum, Rows);
}

//===--- Gradient ---------------------------------------------------------===//

/// The tiles both gradient kernels hold: a block of query rows and their
/// result gradient, a block of keys and values, the scores and dP between
/// them (f32) and dS (the input type).
template <class E, int D, int Rows, int Keys> struct GradTiles {
  using L = SharedLayout<D, Rows, Keys, int(sizeof(E))>;
  E *qs, *dos, *ks, *vs;
  float *ss, *dps;
  E *dss;

  KILN_FLASH_FN explicit GradTiles(SharedCarver &carve)
      : qs(carve.take<E>(L::queryTile)), dos(carve.take<E>(L::queryTile)),
        ks(carve.take<E>(L::keyTile)), vs(carve.take<E>(L::keyTile)),
        ss(carve.take<float>(L::scoreTile)),
        dps(carve.take<float>(L::scoreTile)), dss(carve.take<E>(L::probTile)) {
  }
  /// Q and dO rows [first, +Rows) of the head at element `rowOffset`
  /// (no barrier).
  template <class Block>
  KILN_FLASH_FN void loadQueryRows(const Block &blk, const AttentionParams &p,
                                   int64_t rowOffset, int64_t first) const {
    loadRows<D>(blk, qs, L::ldInput,
                static_cast<const E *>(p.query) + rowOffset, p.headDim, first,
                p.queries, Rows);
    loadRows<D>(blk, dos, L::ldInput,
                static_cast<const E *>(p.resultGrad) + rowOffset, p.headDim,
                first, p.queries, Rows);
  }
  /// S = Q Kᵀ and dP = dO Vᵀ, key-major (no barrier).
  template <class Block>
  KILN_FLASH_FN void scoresAndGrads(const Block &blk) const {
    blk.template gemm<E, false, true, true>(ss, L::ldScores, qs, L::ldInput,
                                            ks, L::ldInput, Rows, Keys, D,
                                            false);
    blk.template gemm<E, false, true, true>(dps, L::ldScores, dos, L::ldInput,
                                            vs, L::ldInput, Rows, Keys, D,
                                            false);
  }
  /// dS into dss (and, when `dropped` is not null, the dropped
  /// probabilities there) for rows [first, +Rows) and keys [key0, +Keys)
  /// of head bh, from each row's log-sum-exp and delta; keys a row does
  /// not see get 0; both key-major. Four consecutive keys a step: one
  /// Philox block for their dropout. (No barrier.)
  template <class Block>
  KILN_FLASH_FN void scoreGradTile(const Block &blk, const AttentionParams &p,
                                   const DropoutMask &mask, int64_t bh,
                                   int64_t first, int64_t key0,
                                   const float *lse, const float *delta,
                                   E *dropped) const {
    for (int x = blk.thread(); x < Rows * Keys / 4; x += blk.threads()) {
      const int r = x % Rows, c0 = x / Rows * 4;
      const int64_t i = first + r, visible = visibleKeys(p, i) - key0;
      const int64_t seen = firstVisibleKey(p, i) - key0;
      DropoutRow dropout(mask, bh, i);
      for (int c = c0; c < c0 + 4; ++c) {
        ScoreGrad g{0.0f, 0.0f};
        if (c >= seen && c < visible)
          g = scoreGrad(blk, p, ss[c * L::ldScores + r],
                        dps[c * L::ldScores + r], lse[r], delta[r],
                        dropout.factor(key0 + c));
        if (dropped)
          dropped[c * L::ldProbs + r] = Element<E>::fromFloat(g.dropped);
        dss[c * L::ldProbs + r] = Element<E>::fromFloat(g.grad);
      }
    }
  }
};

//===--- Gradient, query side ---------------------------------------------===//

/// dQ for query rows [queryBlock·Rows, +Rows) of head bh, in one sweep over
/// the keys: each row's log-sum-exp is the forward's (p.rowStats), and its
/// delta = Σ_j p_j dP_j is dO · O, a dot product of two rows; the deltas go
/// to p.rowDeltas for the key side.
template <class E, int D, int Rows, int Keys, class Block>
KILN_FLASH_FN void attentionQueryGrad(const AttentionParams &p,
                                      const Block &blk, char *shared,
                                      int64_t queryBlock, int64_t bh) {
  using L = SharedLayout<D, Rows, Keys, int(sizeof(E))>;
  SharedCarver carve{shared};
  const GradTiles<E, D, Rows, Keys> tiles(carve);
  float *dqs = carve.take<float>(L::rowAcc);
  float *lse = carve.take<float>(L::rowFloats);
  float *delta = carve.take<float>(L::rowFloats);
  float *partDot = carve.take<float>(L::partFloats);
  constexpr int parts = rowParts<Rows>(), perPart = D / parts;

  const int64_t b = bh / p.heads, h = bh % p.heads;
  const int64_t g = h / (p.heads / p.kvHeads);
  const int64_t dim = p.headDim, first = queryBlock * Rows;
  const int64_t rowOffset = bh * p.queries * dim;
  const int64_t kvOffset = (b * p.kvHeads + g) * p.keys * dim;
  const E *k = static_cast<const E *>(p.key) + kvOffset;
  const E *v = static_cast<const E *>(p.value) + kvOffset;
  const E *o = static_cast<const E *>(p.result) + rowOffset;
  const DropoutMask mask = DropoutMask::of(p);

  tiles.loadQueryRows(blk, p, rowOffset, first);
  for (int x = blk.thread(); x < Rows * L::ldAcc; x += blk.threads())
    dqs[x] = 0.0f;
  blk.sync();
  // delta = dO · O, each part over its share of the head dimension.
  for (int x = blk.thread(); x < Rows * parts; x += blk.threads()) {
    const int r = x % Rows, c0 = x / Rows * perPart;
    const int64_t i = first + r;
    float dot = 0.0f;
    for (int c = c0; c < c0 + perPart && c < dim && i < p.queries; ++c)
      dot += Element<E>::toFloat(tiles.dos[r * L::ldInput + c]) *
             Element<E>::toFloat(o[i * dim + c]);
    partDot[x] = dot;
  }
  blk.sync();
  for (int r = blk.thread(); r < Rows; r += blk.threads()) {
    const int64_t i = first + r;
    const bool real = i < p.queries;
    lse[r] = real ? p.rowStats[bh * p.queries + i] : 0.0f;
    delta[r] = sumParts<Rows>(partDot, r);
    if (real)
      p.rowDeltas[bh * p.queries + i] = delta[r];
  }
  // dS = p (dP - delta) scale, dQ += dS K.
  const int64_t end = keyEnd(p, first, Rows);
  for (int64_t key0 = firstKeyBlock<Keys>(p, first); key0 < end; key0 += Keys) {
    blk.sync(); // the previous block's readers of ks, vs and dss are done
    loadRows<D>(blk, tiles.ks, L::ldInput, k, dim, key0, p.keys, Keys);
    loadRows<D>(blk, tiles.vs, L::ldInput, v, dim, key0, p.keys, Keys);
    blk.sync();
    tiles.scoresAndGrads(blk);
    blk.sync();
    tiles.scoreGradTile(blk, p, mask, bh, first, key0, lse, delta,
                        static_cast<E *>(nullptr));
    blk.sync();
    blk.template gemm<E, true, false>(dqs, L::ldAcc, tiles.dss, L::ldProbs,
                                      tiles.ks, L::ldInput, Rows, D, Keys,
                                      true);
  }
  blk.sync();
  storeRows(blk, static_cast<E *>(p.queryGrad) + rowOffset, dim, first,
            p.queries, dqs, L::ldAcc, static_cast<const float *>(nullptr),
            Rows);
}

//===--- Gradient, key side -----------------------------------------------===//

/// dK and dV for keys [keyBlock·Keys, +Keys) of kv head bg = b·Hkv + g,
/// summed over the group's query heads; reads the forward's row
/// statistics and the query side's deltas.
template <class E, int D, int Rows, int Keys, class Block>
KILN_FLASH_FN void attentionKeyValueGrad(const AttentionParams &p,
                                         const Block &blk, char *shared,
                                         int64_t keyBlock, int64_t bg) {
  using L = SharedLayout<D, Rows, Keys, int(sizeof(E))>;
  SharedCarver carve{shared};
  const GradTiles<E, D, Rows, Keys> tiles(carve);
  E *ps = carve.take<E>(L::probTile);
  float *dks = carve.take<float>(L::keyAcc);
  float *dvs = carve.take<float>(L::keyAcc);
  float *lse = carve.take<float>(L::rowFloats);
  float *delta = carve.take<float>(L::rowFloats);

  const int64_t b = bg / p.kvHeads, g = bg % p.kvHeads;
  const int64_t group = p.heads / p.kvHeads;
  const int64_t dim = p.headDim, key0 = keyBlock * Keys;
  const int64_t kvOffset = bg * p.keys * dim;
  const int64_t statsPerHead = p.queries;
  const DropoutMask mask = DropoutMask::of(p);

  loadRows<D>(blk, tiles.ks, L::ldInput,
              static_cast<const E *>(p.key) + kvOffset, dim, key0, p.keys,
              Keys);
  loadRows<D>(blk, tiles.vs, L::ldInput,
              static_cast<const E *>(p.value) + kvOffset, dim, key0, p.keys,
              Keys);
  for (int x = blk.thread(); x < Keys * L::ldAcc; x += blk.threads()) {
    dks[x] = 0.0f;
    dvs[x] = 0.0f;
  }
  // The query blocks that see the keys (causal: rows i >= key0; a window
  // ends them at lastRowSeeing).
  const int64_t firstRow = p.causal ? key0 / Rows * Rows : 0;
  const int64_t rowEnd = lastRowSeeing<Keys>(p, key0);
  for (int64_t hh = 0; hh < group; ++hh) {
    const int64_t bh = b * p.heads + g * group + hh;
    const int64_t rowOffset = bh * p.queries * dim;
    for (int64_t first = firstRow; first < rowEnd; first += Rows) {
      blk.sync(); // the previous block's readers of qs, dos, ps, dss are done
      tiles.loadQueryRows(blk, p, rowOffset, first);
      for (int r = blk.thread(); r < Rows; r += blk.threads()) {
        bool real = first + r < p.queries;
        lse[r] = real ? p.rowStats[bh * statsPerHead + first + r] : 0.0f;
        delta[r] = real ? p.rowDeltas[bh * statsPerHead + first + r] : 0.0f;
      }
      blk.sync();
      tiles.scoresAndGrads(blk);
      blk.sync();
      tiles.scoreGradTile(blk, p, mask, bh, first, key0, lse, delta, ps);
      blk.sync();
      // dV += Pdᵀ dO, dK += dSᵀ Q: the key-major tiles are Pdᵀ and dSᵀ.
      blk.template gemm<E, false, false>(dvs, L::ldAcc, ps, L::ldProbs,
                                         tiles.dos, L::ldInput, Keys, D, Rows,
                                         true);
      blk.template gemm<E, false, false>(dks, L::ldAcc, tiles.dss, L::ldProbs,
                                         tiles.qs, L::ldInput, Keys, D, Rows,
                                         true);
    }
  }
  blk.sync();
  storeRows(blk, static_cast<E *>(p.keyGrad) + kvOffset, dim, key0, p.keys,
            dks, L::ldAcc, static_cast<const float *>(nullptr), Keys);
  storeRows(blk, static_cast<E *>(p.valueGrad) + kvOffset, dim, key0, p.keys,
            dvs, L::ldAcc, static_cast<const float *>(nullptr), Keys);
}

} // namespace kiln::flash

#endif // KILN_RUNTIME_CUDA_KERNELS_FLASHATTENTION_H
