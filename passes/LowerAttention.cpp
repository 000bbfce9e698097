// kiln-lower-attention: writes kiln.fused_attention and its gradient out as
// primitive ops, in chunks of query rows, so that a backend without an
// attention kernel of its own never holds more than one chunk's scores
// ([B, H, rows, keys]) at a time and the probabilities are never kept from
// the forward to the backward pass: the gradient recomputes them.
//
// For each chunk of rows [r0, r1) (causal: keys [0, r1) only; with a
// window w: keys [r0 - w + 1, r1), the ones some row of the chunk sees):
//   1. q_c = q[:, :, r0:r1]; k_c, v_c = k, v [:, :, keys] (grouped-query
//      attention: the products see q as [B, Hkv, H / Hkv, rows, D], each
//      kv head's query heads as more rows of one product, so k and v are
//      never repeated per query head and a kv head's gradients are summed
//      by the products themselves; with equal chunks, q and dO are put in
//      chunk-major order once, so that q_c and dO_c are runs products read
//      in place);
//   2. s = scale · q_c k_cᵀ (capped at c · tanh(s / c) with a softcap c),
//      the causal mask (and the window's) as iota
//      comparisons, p = softmax(s) in f32 (or f64); with dropout, the
//      chunk's uniform values are one kiln.rng_uniform at the state's
//      counter + r0 · (values per row) / 4, which is exactly the op's recipe
//      (docs/IR.md), so chunking never changes a bit of the mask;
//   3. forward: o_c = dropout(p) v_c; the result is the chunks concatenated
//      (and, where something reads them, the row statistics: max + log sum);
//   4. gradient (from the scores; the forward's result and row statistics,
//      which a flash kernel reads instead, are not needed): dP = dropout'(dO_c
//      v_cᵀ), dS = p (dP − rowsum(p dP)) scale (times the cap's slope
//      1 − tanh²(s / c) with a softcap), dq_c = dS k_c, dk += dSᵀ q_c,
//      dv += dropout(p)ᵀ dO_c (padded to all keys, summed over chunks, the last
//      chunk first).
// Chunks hold rows so that one chunk's scores stay within max-chunk-bytes
// (and, with a window, about half a window of rows: see the constructor).
#include "passes/Passes.h"

#include "passes/TensorBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_LOWERATTENTIONPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Query rows [begin, end) and the keys they see, [firstKey, keys).
struct Chunk {
  int64_t begin, end, firstKey, keys;
  int64_t rows() const { return end - begin; }
};

/// A query or output gradient with its rows in chunk-major order, per
/// (value, rows per chunk): made once, after the value, and shared by a
/// forward op and its gradient, so that the value's only reader is one
/// transpose, which fuses into the kernel that makes the value.
using ChunkMajorForms = DenseMap<std::pair<Value, int64_t>, Value>;

/// The lowering of one attention op (forward or gradient).
class AttentionLowering {
public:
  template <typename AttentionOp>
  AttentionLowering(TensorBuilder &tb, AttentionOp op, int64_t maxChunkBytes,
                    ChunkMajorForms &forms)
      : tb_(tb), forms_(forms), state_(op.getRngState()),
        scale_(op.getScale().convertToDouble()), causal_(op.getCausal()),
        dropout_(op.getDropout().convertToDouble()), window_(op.getWindow()),
        softcap_(op.getSoftcap().convertToDouble()),
        element_(TensorBuilder::elementOf(op.getQuery())) {
    ArrayRef<int64_t> qs = TensorBuilder::shapeOf(op.getQuery());
    ArrayRef<int64_t> ks = TensorBuilder::shapeOf(op.getKey());
    b_ = qs[0], h_ = qs[1], t_ = qs[2], d_ = qs[3], hk_ = ks[1], s_ = ks[2];
    // Softmax and GEMMs in f32 for 16-bit types (f64 stays f64).
    compute_ = element_.getIntOrFloatBitWidth() < 32
                   ? Type(tb.builder().getF32Type())
                   : element_;
    int64_t rowBytes = b_ * h_ * s_ * (compute_.getIntOrFloatBitWidth() / 8);
    int64_t most =
        std::max<int64_t>(1, maxChunkBytes / std::max<int64_t>(1, rowBytes));
    // A chunk of r rows past the first window sees r + w - 1 keys, so the
    // products cost about T·(r + w) pairs; chunks of w / 2 rows (at least
    // a tile of 64) keep that within 1.5 times the window's T·w.
    if (window_ > 0 && window_ < t_)
      most = std::min(most, std::max<int64_t>(64, window_ / 2));
    int64_t rows = tiledChunkRows(t_, most);
    for (int64_t r0 = 0; r0 < t_; r0 += rows) {
      int64_t r1 = std::min(t_, r0 + rows);
      int64_t firstKey =
          window_ > 0 ? std::max<int64_t>(0, r0 - window_ + 1) : 0;
      chunks_.push_back({r0, r1, firstKey, causal_ ? r1 : s_});
    }
    // Grouped heads read a chunk's query rows as [B, Hkv, H / Hkv, rows, D]
    // (grouped()), which a slice of the rows of [B, H, T, D] is not: each
    // head's rows are a run of their own. In chunk-major order [chunks, B,
    // H, rows, D] a chunk is one run, which products read in place.
    if (hk_ != h_ && chunks_.size() > 1 && t_ % rows == 0)
      chunkRows_ = rows;
    q_ = tb.convert(chunkMajor(op.getQuery()), compute_);
    k_ = tb.convert(op.getKey(), compute_);
    v_ = tb.convert(op.getValue(), compute_);
  }

  /// The attention result, and its row statistics [B, H, T] (f32) when
  /// `withRowStats`.
  std::pair<Value, Value> forward(bool withRowStats) {
    SmallVector<Value> outputs, stats;
    for (const Chunk &c : chunks_) {
      Inputs in = tie(Value(), {outputs.empty() ? Value() : outputs.back()});
      Probabilities p = probabilities(in, c);
      outputs.push_back(groupedProduct(p.dropped, keyBlock(in.v, c), 2));
      if (withRowStats)
        stats.push_back(tb_.add(p.rowMax, tb_.log(p.rowSum)));
    }
    Value result =
        tb_.convert(headsOf(tb_.concatenate(outputs, rowDim())), element_);
    if (!withRowStats)
      return {result, Value()};
    return {result, tb_.convert(tb_.concatenate(stats, 2),
                                tb_.builder().getF32Type())};
  }

  /// The gradients of query, key and value for `resultGrad`.
  std::array<Value, 3> backward(Value resultGrad) {
    Value dO = tb_.convert(chunkMajor(resultGrad), compute_);
    SmallVector<Value> dq;
    Value dk, dv;
    // The last chunk first: under a causal mask (without a window) it
    // reaches every key, so its key and value gradients start the sums
    // unpadded (a GEMM's f32 result, not a pad kernel), each earlier
    // chunk's adds into a block of their rows (kiln-fuse-gemm-epilogue),
    // and the first chunk's, padded, is added by the kernel that joins q,
    // k and v.
    for (const Chunk &c : llvm::reverse(chunks_)) {
      // The incoming gradient (and the previous chunk's) joins the tie, so
      // the recomputation runs here, in the backward pass, one chunk after
      // the other.
      Inputs in = tie(dO, {dk, dv});
      Probabilities p = probabilities(in, c);
      Value dOc = queryRows(in.extra, c);
      Value vc = keyBlock(in.v, c), kc = keyBlock(in.k, c);
      Value dP = byQueryRow(dOc, vc, 3);
      if (p.keep)
        dP = dropped(p.keep, dP);
      Value rowsum = tb_.reduce(ReduceKind::sum, tb_.mul(p.probs, dP), {3});
      Value dS = tb_.mul(
          tb_.mul(p.probs, tb_.sub(dP, rowBroadcast(rowsum, dP))),
          tb_.splatLike(scale_, dP));
      if (p.capSlope)
        dS = tb_.mul(dS, p.capSlope);
      dq.push_back(groupedProduct(dS, kc, 2));
      dk = accumulate(dk, overQueryRows(dS, p.qc), c);
      dv = accumulate(dv, overQueryRows(p.dropped, dOc), c);
    }
    std::reverse(dq.begin(), dq.end());
    return {tb_.convert(headsOf(tb_.concatenate(dq, rowDim())), element_),
            tb_.convert(dk, element_), tb_.convert(dv, element_)};
  }

private:
  /// q, k, v and the rng state as one chunk reads them.
  struct Inputs {
    Value q, k, v, state, extra;
  };

  /// q, k, v, the state and `extra` through one kiln.optimization_barrier
  /// with `after`: a chunk computes only from these, so it cannot run
  /// before `after` exists (the previous chunk's results: chunks run one at
  /// a time), nor be merged with another chunk's or the forward pass's
  /// identical computation, nor have its dropout mask hoisted to the top.
  Inputs tie(Value extra, ArrayRef<Value> after) {
    SmallVector<Value> operands = {q_, k_, v_};
    if (state_)
      operands.push_back(state_);
    if (extra)
      operands.push_back(extra);
    for (Value v : after)
      if (v)
        operands.push_back(v);
    auto barrier = OptimizationBarrierOp::create(tb_.builder(), tb_.loc(),
                                                 ValueRange(operands), /*gradient_seed=*/false);
    Inputs in;
    unsigned i = 0;
    in.q = barrier.getResult(i++);
    in.k = barrier.getResult(i++);
    in.v = barrier.getResult(i++);
    if (state_)
      in.state = barrier.getResult(i++);
    if (extra)
      in.extra = barrier.getResult(i++);
    return in;
  }

  struct Probabilities {
    Value qc, probs, dropped;
    Value keep;           // null without dropout
    Value rowMax, rowSum; // [B, H, rows]: the softmax's max and sum
    Value capSlope;       // 1 − tanh²(s / c); null without a softcap
  };

  /// x [B, H, T, D] in chunk-major order ([chunks, B, H, rows, D]) when the
  /// chunks take it (chunkRows_), else x.
  Value chunkMajor(Value x) {
    if (!chunkRows_)
      return x;
    auto key = std::make_pair(x, chunkRows_);
    if (auto found = forms_.find(key); found != forms_.end())
      return found->second;
    OpBuilder builder(x.getContext());
    builder.setInsertionPointAfterValue(x);
    TensorBuilder after(builder, x.getLoc());
    Value split = after.reshape(x, {b_, h_, t_ / chunkRows_, chunkRows_, d_});
    return forms_[key] = after.transpose(split, {2, 0, 1, 3, 4});
  }

  /// Chunk c's query rows of q or the output gradient (as chunkMajor()
  /// left them): [B, H, rows, D], or in grouped() form from chunk-major
  /// order, one reshape of one slice (which products read in place: the
  /// pair is no kernel, see kiln-fuse-elementwise).
  Value queryRows(Value x, const Chunk &c) {
    if (!chunkRows_)
      return tb_.sliceDim(x, 2, c.begin, c.end);
    int64_t index = c.begin / chunkRows_;
    return tb_.reshape(tb_.sliceDim(x, 0, index, index + 1),
                       {b_, hk_, h_ / hk_, c.rows(), d_});
  }

  /// k or v rows [c.firstKey, c.keys): [B, Hkv, keys, D].
  Value keyBlock(Value x, const Chunk &c) {
    return tb_.sliceDim(x, 2, c.firstKey, c.keys);
  }

  /// A per-query-head value [B, H, rows, X] as [B, Hkv, H / Hkv, rows, X]:
  /// the query heads a kv head serves, one after the other (a reshape,
  /// since they are neighbours). Unchanged without grouped heads, or when
  /// already grouped (a chunk-major chunk).
  Value grouped(Value x) {
    ArrayRef<int64_t> shape = TensorBuilder::shapeOf(x);
    if (hk_ == h_ || shape.size() == 5) // a chunk-major chunk is grouped
      return x;
    return tb_.reshape(x, {b_, hk_, h_ / hk_, shape[2], shape[3]});
  }

  /// grouped()'s inverse: [B, Hkv, H / Hkv, rows, X] → [B, H, rows, X].
  Value headsOf(Value x) {
    if (hk_ == h_)
      return x;
    ArrayRef<int64_t> shape = TensorBuilder::shapeOf(x);
    return tb_.reshape(x, {b_, h_, shape[3], shape[4]});
  }

  /// The query rows' dim of a grouped() value.
  int64_t rowDim() const { return hk_ == h_ ? 2 : 3; }

  /// perQuery [B, H, rows, X] times kv [B, Hkv, Y, Z] contracted over
  /// `kvContract` (2 or 3) and X, in grouped() form: [B, Hkv, H / Hkv, rows,
  /// kv's other dim]. A kv head's query heads and their rows are the rows of
  /// one product, which reads k or v once for them all (repeating each kv
  /// head per query head would be a copy: products read operands as they
  /// lie). Chunks' products are joined in this form, so that each joins
  /// the concatenation (and the widening from 16 bits with it) as it is.
  Value groupedProduct(Value perQuery, Value kv, int64_t kvContract) {
    return tb_.dot(grouped(perQuery), kv, {0, 1}, {0, 1}, {rowDim() + 1},
                   {kvContract});
  }

  /// groupedProduct() as [B, H, rows, kv's other dim].
  Value byQueryRow(Value perQuery, Value kv, int64_t kvContract) {
    return headsOf(groupedProduct(perQuery, kv, kvContract));
  }

  /// a [B, H, rows, keys] and b [B, H, rows, D] contracted over their query
  /// rows: the key or value gradient [B, Hkv, keys, D], summed over each kv
  /// head's query heads within the product.
  Value overQueryRows(Value a, Value b) {
    if (hk_ == h_)
      return tb_.dot(a, b, {0, 1}, {0, 1}, {2}, {2});
    return tb_.dot(grouped(a), grouped(b), {0, 1}, {0, 1}, {2, 3}, {2, 3});
  }

  /// sum + x, x padded to all keys (the first chunk starts the sum).
  Value accumulate(Value sum, Value x, const Chunk &c) {
    Value full = tb_.pad(x, {0, 0, c.firstKey, 0}, {0, 0, s_ - c.keys, 0});
    return sum ? tb_.add(sum, full) : full;
  }

  /// [B, H, rows] → [B, H, rows, keys] like `like`.
  Value rowBroadcast(Value x, Value like) {
    return tb_.broadcast(x, TensorBuilder::shapeOf(like), {0, 1, 2});
  }

  /// x where kept, scaled by 1 / (1 - p); 0 where dropped.
  Value dropped(Value keep, Value x) {
    return tb_.select(keep, tb_.mul(x, tb_.splatLike(1.0 / (1.0 - dropout_), x)),
                      tb_.splatLike(0, x));
  }

  /// The chunk's keep mask [B, H, rows, keys] from the op's recipe: query
  /// row i's values start at counter + i · (values per row) / 4.
  Value keepMask(Value rngState, const Chunk &c) {
    int64_t perRow = b_ * h_ * s_, drawn = 4 * ((perRow + 3) / 4);
    Value state = c.begin == 0 ? rngState
                               : tb_.add(rngState, tb_.i64Vector(
                                                       {0, c.begin * (drawn / 4)}));
    Value u = tb_.rngUniform(state, {c.rows(), drawn}).first;
    u = tb_.slice(u, {0, 0}, {c.rows(), perRow});
    u = tb_.reshape(u, {c.rows(), b_, h_, s_});
    u = tb_.sliceDim(u, 3, c.firstKey, c.keys);
    u = tb_.transpose(u, {1, 2, 0, 3});
    return tb_.compare(ComparisonDirection::GE, u,
                       tb_.splatLike(static_cast<float>(dropout_), u));
  }

  Probabilities probabilities(const Inputs &in, const Chunk &c) {
    Probabilities out;
    out.qc = queryRows(in.q, c);
    Value s = byQueryRow(out.qc, keyBlock(in.k, c), 3);
    s = tb_.mul(s, tb_.splatLike(scale_, s));
    if (softcap_ > 0) {
      Value cap = tb_.splatLike(softcap_, s);
      Value t = tb_.tanh(tb_.div(s, cap));
      s = tb_.mul(cap, t);
      out.capSlope = tb_.sub(tb_.splatLike(1, t), tb_.mul(t, t));
    }
    ArrayRef<int64_t> shape = TensorBuilder::shapeOf(s);
    if (causal_) {
      Type i64 = tb_.builder().getIntegerType(64);
      Value query = tb_.iota(i64, shape, 2);
      if (c.begin != 0)
        query = tb_.add(query, tb_.splat(c.begin, i64, shape));
      Value key = tb_.iota(i64, shape, 3);
      if (c.firstKey != 0)
        key = tb_.add(key, tb_.splat(c.firstKey, i64, shape));
      double lowest = compute_.isF64() ? std::numeric_limits<double>::lowest()
                                       : std::numeric_limits<float>::lowest();
      Value masked = tb_.splatLike(lowest, s);
      s = tb_.select(tb_.compare(ComparisonDirection::GT, key, query), masked,
                     s);
      if (window_ > 0) {
        // Past the window: key j <= i - w, i.e. j + w <= i.
        Value reach = tb_.add(key, tb_.splat(window_, i64, shape));
        s = tb_.select(tb_.compare(ComparisonDirection::LE, reach, query),
                       masked, s);
      }
    }
    Value max = tb_.reduce(ReduceKind::max, s, {3});
    Value e = tb_.exp(tb_.sub(s, rowBroadcast(max, s)));
    Value sum = tb_.reduce(ReduceKind::sum, e, {3});
    out.rowMax = max;
    out.rowSum = sum;
    out.probs = tb_.div(e, rowBroadcast(sum, e));
    out.dropped = out.probs;
    if (dropout_ > 0) {
      out.keep = keepMask(in.state, c);
      out.dropped = dropped(out.keep, out.probs);
    }
    return out;
  }

  TensorBuilder &tb_;
  ChunkMajorForms &forms_;
  Value state_;
  double scale_;
  bool causal_;
  double dropout_;
  int64_t window_;
  double softcap_;
  Type element_, compute_;
  int64_t b_, h_, t_, d_, hk_, s_;
  /// Rows per chunk when q and the output gradient are read in chunk-major
  /// order (chunkMajor()), else 0.
  int64_t chunkRows_ = 0;
  Value q_, k_, v_;
  std::vector<Chunk> chunks_;
};

struct LowerAttentionPass
    : public impl::LowerAttentionPassBase<LowerAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (!isa<FusedAttentionOp, FusedAttentionGradOp>(op))
        return;
      if (keepKernelAttention && fitsAttentionKernel(op))
        ++numKept;
      else
        ops.push_back(op);
    });
    // Gradients first: once they are written out, a forward op's row
    // statistics are computed only where something else still reads them.
    ChunkMajorForms forms;
    for (Operation *op : llvm::reverse(ops)) {
      OpBuilder builder(op);
      TensorBuilder tb(builder, op->getLoc());
      if (auto fwd = dyn_cast<FusedAttentionOp>(op)) {
        // Read only by gradients, now written out: nothing to compute.
        if (fwd->use_empty()) {
          op->erase();
          continue;
        }
        AttentionLowering lowering(tb, fwd, maxChunkBytes, forms);
        auto [result, rowStats] =
            lowering.forward(!fwd.getRowStats().use_empty());
        fwd.getResult().replaceAllUsesWith(result);
        if (rowStats)
          fwd.getRowStats().replaceAllUsesWith(rowStats);
      } else {
        auto grad = cast<FusedAttentionGradOp>(op);
        AttentionLowering lowering(tb, grad, maxChunkBytes, forms);
        std::array<Value, 3> grads = lowering.backward(grad.getResultGrad());
        for (auto [result, value] : llvm::zip(grad.getResults(), grads))
          result.replaceAllUsesWith(value);
      }
      op->erase();
      ++numLowered;
    }
  }
};

} // namespace

bool fitsAttentionKernel(Operation *op, bool sixteenBit) {
  if (!isa<FusedAttentionOp, FusedAttentionGradOp>(op))
    return false;
  auto query = cast<RankedTensorType>(op->getOperand(0).getType());
  Type element = query.getElementType();
  bool typeOk = sixteenBit ? (element.isBF16() || element.isF16())
                           : element.isF32();
  int64_t headDim = query.getShape().back();
  // A soft cap is in no kernel's arithmetic (kiln's flash kernels, cuDNN's
  // graphs): written out in chunks.
  auto fwd = dyn_cast<FusedAttentionOp>(op);
  llvm::APFloat softcap =
      fwd ? fwd.getSoftcap() : cast<FusedAttentionGradOp>(op).getSoftcap();
  return typeOk && headDim % 8 == 0 && headDim <= 128 && softcap.isZero();
}

} // namespace kiln
