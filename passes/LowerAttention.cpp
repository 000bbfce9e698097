// kiln-lower-attention: writes kiln.fused_attention and its gradient out as
// primitive ops, in chunks of query rows, so that a backend without an
// attention kernel of its own never holds more than one chunk's scores
// ([B, H, rows, keys]) at a time and the probabilities are never kept from
// the forward to the backward pass: the gradient recomputes them.
//
// For each chunk of rows [r0, r1) (causal: keys [0, r1) only):
//   1. q_c = q[:, :, r0:r1]; k_c, v_c = k, v [:, :, :keys] (grouped-query
//      attention repeats each kv head for its query heads);
//   2. s = scale · q_c k_cᵀ, the causal mask as an iota comparison, p =
//      softmax(s) in f32 (or f64); with dropout, the chunk's uniform values
//      are one kiln.rng_uniform at the state's counter + r0 · (values per
//      row) / 4, which is exactly the op's recipe (docs/IR.md), so chunking
//      never changes a bit of the mask;
//   3. forward: o_c = dropout(p) v_c; the result is the chunks concatenated
//      (and, where something reads them, the row statistics: max + log sum);
//   4. gradient (from the scores; the forward's result and row statistics,
//      which a flash kernel reads instead, are not needed): dP = dropout'(dO_c v_cᵀ), dS = p (dP − rowsum(p dP)) scale,
//      dq_c = dS k_c, dk += dSᵀ q_c, dv += dropout(p)ᵀ dO_c (padded to all
//      keys, summed over chunks, the last chunk first).
// Chunks hold rows so that one chunk's scores stay within max-chunk-bytes.
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

struct Chunk {
  int64_t begin, end, keys;
  int64_t rows() const { return end - begin; }
};

/// The lowering of one attention op (forward or gradient).
class AttentionLowering {
public:
  template <typename AttentionOp>
  AttentionLowering(TensorBuilder &tb, AttentionOp op, int64_t maxChunkBytes)
      : tb_(tb), state_(op.getRngState()),
        scale_(op.getScale().convertToDouble()), causal_(op.getCausal()),
        dropout_(op.getDropout().convertToDouble()),
        element_(TensorBuilder::elementOf(op.getQuery())) {
    ArrayRef<int64_t> qs = TensorBuilder::shapeOf(op.getQuery());
    ArrayRef<int64_t> ks = TensorBuilder::shapeOf(op.getKey());
    b_ = qs[0], h_ = qs[1], t_ = qs[2], d_ = qs[3], hk_ = ks[1], s_ = ks[2];
    // Softmax and GEMMs in f32 for 16-bit types (f64 stays f64).
    compute_ = element_.getIntOrFloatBitWidth() < 32
                   ? Type(tb.builder().getF32Type())
                   : element_;
    q_ = tb.convert(op.getQuery(), compute_);
    k_ = tb.convert(op.getKey(), compute_);
    v_ = tb.convert(op.getValue(), compute_);
    int64_t rowBytes = b_ * h_ * s_ * (compute_.getIntOrFloatBitWidth() / 8);
    int64_t rows = tiledChunkRows(
        t_, std::max<int64_t>(1, maxChunkBytes / std::max<int64_t>(1, rowBytes)));
    for (int64_t r0 = 0; r0 < t_; r0 += rows) {
      int64_t r1 = std::min(t_, r0 + rows);
      chunks_.push_back({r0, r1, causal_ ? r1 : s_});
    }
  }

  /// The attention result, and its row statistics [B, H, T] (f32) when
  /// `withRowStats`.
  std::pair<Value, Value> forward(bool withRowStats) {
    SmallVector<Value> outputs, stats;
    for (const Chunk &c : chunks_) {
      Inputs in = tie(Value(), {outputs.empty() ? Value() : outputs.back()});
      Probabilities p = probabilities(in, c);
      outputs.push_back(tb_.dot(p.dropped, keyBlock(in.v, c), {0, 1}, {0, 1},
                                {3}, {2}));
      if (withRowStats)
        stats.push_back(tb_.add(p.rowMax, tb_.log(p.rowSum)));
    }
    Value result = tb_.convert(tb_.concatenate(outputs, 2), element_);
    if (!withRowStats)
      return {result, Value()};
    return {result, tb_.convert(tb_.concatenate(stats, 2),
                                tb_.builder().getF32Type())};
  }

  /// The gradients of query, key and value for `resultGrad`.
  std::array<Value, 3> backward(Value resultGrad) {
    Value dO = tb_.convert(resultGrad, compute_);
    SmallVector<Value> dq;
    Value dk, dv;
    // The last chunk first: under a causal mask it reaches every key, so
    // its key and value gradients start the sums unpadded (a GEMM's f32
    // result, not a pad kernel), each earlier chunk's adds into a block of
    // their rows (kiln-fuse-gemm-epilogue), and the first chunk's, padded,
    // is added by the kernel that joins q, k and v.
    for (const Chunk &c : llvm::reverse(chunks_)) {
      // The incoming gradient (and the previous chunk's) joins the tie, so
      // the recomputation runs here, in the backward pass, one chunk after
      // the other.
      Inputs in = tie(dO, {dk, dv});
      Probabilities p = probabilities(in, c);
      Value dOc = tb_.sliceDim(in.extra, 2, c.begin, c.end);
      Value vc = keyBlock(in.v, c), kc = keyBlock(in.k, c);
      Value dP = tb_.dot(dOc, vc, {0, 1}, {0, 1}, {3}, {3});
      if (p.keep)
        dP = dropped(p.keep, dP);
      Value rowsum = tb_.reduce(ReduceKind::sum, tb_.mul(p.probs, dP), {3});
      Value dS = tb_.mul(
          tb_.mul(p.probs, tb_.sub(dP, rowBroadcast(rowsum, dP))),
          tb_.splatLike(scale_, dP));
      dq.push_back(tb_.dot(dS, kc, {0, 1}, {0, 1}, {3}, {2}));
      Value dkc = tb_.dot(dS, p.qc, {0, 1}, {0, 1}, {2}, {2});
      Value dvc = tb_.dot(p.dropped, dOc, {0, 1}, {0, 1}, {2}, {2});
      dk = accumulate(dk, perKvHead(dkc), c);
      dv = accumulate(dv, perKvHead(dvc), c);
    }
    std::reverse(dq.begin(), dq.end());
    return {tb_.convert(tb_.concatenate(dq, 2), element_),
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
  };

  /// k or v rows [0, c.keys), with each kv head repeated for its query
  /// heads: [B, H, keys, D].
  Value keyBlock(Value x, const Chunk &c) {
    x = tb_.sliceDim(x, 2, 0, c.keys);
    if (hk_ == h_)
      return x;
    int64_t group = h_ / hk_;
    Value wide = tb_.broadcast(x, {b_, hk_, group, c.keys, d_}, {0, 1, 3, 4});
    return tb_.reshape(wide, {b_, h_, c.keys, d_});
  }

  /// A per-query-head gradient [B, H, keys, D] summed over each kv head's
  /// group: [B, Hkv, keys, D].
  Value perKvHead(Value x) {
    if (hk_ == h_)
      return x;
    ArrayRef<int64_t> shape = TensorBuilder::shapeOf(x);
    Value grouped =
        tb_.reshape(x, {b_, hk_, h_ / hk_, shape[2], d_});
    return tb_.reduce(ReduceKind::sum, grouped, {2});
  }

  /// sum + x, x padded to all keys (the first chunk starts the sum).
  Value accumulate(Value sum, Value x, const Chunk &c) {
    Value full = tb_.padHigh(x, {0, 0, s_ - c.keys, 0});
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
    u = tb_.sliceDim(u, 3, 0, c.keys);
    u = tb_.transpose(u, {1, 2, 0, 3});
    return tb_.compare(ComparisonDirection::GE, u,
                       tb_.splatLike(static_cast<float>(dropout_), u));
  }

  Probabilities probabilities(const Inputs &in, const Chunk &c) {
    Probabilities out;
    out.qc = tb_.sliceDim(in.q, 2, c.begin, c.end);
    Value s = tb_.dot(out.qc, keyBlock(in.k, c), {0, 1}, {0, 1}, {3}, {3});
    s = tb_.mul(s, tb_.splatLike(scale_, s));
    ArrayRef<int64_t> shape = TensorBuilder::shapeOf(s);
    if (causal_) {
      Type i64 = tb_.builder().getIntegerType(64);
      Value query = tb_.iota(i64, shape, 2);
      if (c.begin != 0)
        query = tb_.add(query, tb_.splat(c.begin, i64, shape));
      Value future =
          tb_.compare(ComparisonDirection::GT, tb_.iota(i64, shape, 3), query);
      double lowest = compute_.isF64() ? std::numeric_limits<double>::lowest()
                                       : std::numeric_limits<float>::lowest();
      s = tb_.select(future, tb_.splatLike(lowest, s), s);
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
  Value state_;
  double scale_;
  bool causal_;
  double dropout_;
  Type element_, compute_;
  int64_t b_, h_, t_, d_, hk_, s_;
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
    for (Operation *op : llvm::reverse(ops)) {
      OpBuilder builder(op);
      TensorBuilder tb(builder, op->getLoc());
      if (auto fwd = dyn_cast<FusedAttentionOp>(op)) {
        // Read only by gradients, now written out: nothing to compute.
        if (fwd->use_empty()) {
          op->erase();
          continue;
        }
        AttentionLowering lowering(tb, fwd, maxChunkBytes);
        auto [result, rowStats] =
            lowering.forward(!fwd.getRowStats().use_empty());
        fwd.getResult().replaceAllUsesWith(result);
        if (rowStats)
          fwd.getRowStats().replaceAllUsesWith(rowStats);
      } else {
        auto grad = cast<FusedAttentionGradOp>(op);
        AttentionLowering lowering(tb, grad, maxChunkBytes);
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
  return typeOk && headDim % 8 == 0 && headDim <= 128;
}

} // namespace kiln
