// kiln-lower-cross-entropy: writes kiln.fused_linear_cross_entropy and its
// gradient out as primitive ops, in chunks of rows, so that a backend
// without a kernel of its own never holds more than one chunk's logits
// ([rows, V]) at a time, and nothing the size of the logits lives from the
// forward to the backward pass: the gradient recomputes them. For GPT-2's
// lm_head (V = 50257) the whole logits of one 512-token sample take 103 MB
// in f32; a chunk takes at most max-chunk-bytes.
//
// For each chunk of rows [r0, r1):
//   1. h_c = hidden[r0:r1], logits = h_c weightᵀ, lse = max + log(sum(exp(
//      logits − max))) per row (in f32 for 16-bit types), part by part
//      where the row splits into parts of at most 1024 (logSumExp);
//   2. forward: loss_c = lse − sum(onehot(labels_c) · logits), 0 where the
//      label is ignore_index; the result is the chunks concatenated;
//   3. gradient: dlogits = (softmax − onehot) · loss_grad_c (0 on ignored
//      rows), dh_c = dlogits weight, dweight += dlogitsᵀ h_c.
// Each chunk reads its inputs through a kiln.optimization_barrier with the
// previous chunk's result, so chunks run one after the other and the
// gradient's recomputation is never merged with the forward's.
//
// A training step's gradient usually comes from a mean: its loss_grad is
// one scalar broadcast to every row. Then dlogits = s · (softmax − onehot)
// and both gradients are s times what they are for a loss_grad of 1, so the
// forward computes those unit gradients while it has each chunk's logits
// (two more GEMMs per chunk), and the gradient op becomes two scalings: the
// lm_head takes three GEMMs over [N, V] in all, as without fusion, instead
// of four (the logits recomputed), at the cost of keeping [N, C] + [V, C]
// from the forward to the backward pass (Liger's fused linear
// cross-entropy does the same).
//
// A weight gradient nothing reads (a frozen lm_head: LoRA) is not computed:
// without it a chunk is one GEMM fewer and no [V, C] sum lives through the
// loss (Llama-3-8B's head: 2 GiB in f32, 4.3 TFLOP per step at batch 4 ×
// 1024); the chunks are then ordered by their hidden gradients instead.
//
// With vocab-multiple m > 1 and V not a multiple of m, the weight is padded
// with zero rows to the next multiple Vp (GPT-2's 50257 → 50304 for m =
// 64): GEMM libraries run a dimension of whole tiles several times faster.
// The padded logits are masked to −inf before the softmax, so their
// probabilities and gradients are exactly 0, the losses and the hidden
// gradient are unchanged, and the weight gradient's padded rows (zeros)
// are sliced off.
//
// With a soft cap c > 0 (Gemma 2's final_logit_softcapping) each product
// z becomes c · tanh(z / c) before the padding's mask, the logsumexp and
// the label's pick, and dlogits is multiplied by 1 − tanh²(z / c) before
// the two GEMMs of the gradients.
#include "passes/Passes.h"

#include "passes/TensorBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_LOWERCROSSENTROPYPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// The most logits a part of a row's logsumexp holds (logSumExp).
constexpr int64_t kLogSumExpPart = 1024;

/// The lowering of one loss op (forward or gradient).
class CrossEntropyLowering {
public:
  /// `weightGradient`: whether the weight's gradient is read (a frozen
  /// weight's is not computed; the gradients' second value is then null).
  template <typename LossOp>
  CrossEntropyLowering(TensorBuilder &tb, LossOp op, int64_t maxChunkBytes,
                       int64_t vocabMultiple, bool weightGradient = true)
      : tb_(tb), weightGradient_(weightGradient),
        ignoreIndex_(op.getIgnoreIndex()),
        softcap_(op.getSoftcap().convertToDouble()),
        element_(TensorBuilder::elementOf(op.getHidden())),
        labels_(op.getLabels()) {
    ArrayRef<int64_t> hs = TensorBuilder::shapeOf(op.getHidden());
    n_ = hs[0], c_ = hs[1], v_ = TensorBuilder::shapeOf(op.getWeight())[0];
    // Logits and softmax in f32 for 16-bit types (f64 stays f64).
    compute_ = element_.getIntOrFloatBitWidth() < 32
                   ? Type(tb.builder().getF32Type())
                   : element_;
    hidden_ = tb.convert(op.getHidden(), compute_);
    weight_ = tb.convert(op.getWeight(), compute_);
    int64_t m = std::max<int64_t>(1, vocabMultiple);
    paddedV_ = (v_ + m - 1) / m * m;
    weight_ = tb.padHigh(weight_, {paddedV_ - v_, 0});
    int64_t rowBytes = paddedV_ * (compute_.getIntOrFloatBitWidth() / 8);
    int64_t rows = tiledChunkRows(
        n_, std::max<int64_t>(1, maxChunkBytes / std::max<int64_t>(1, rowBytes)));
    for (int64_t r0 = 0; r0 < n_; r0 += rows)
      chunks_.push_back({r0, std::min(n_, r0 + rows)});
  }

  /// The per-row losses [N].
  Value forward() {
    if (chunks_.empty())
      return tb_.splat(0, element_, {0});
    SmallVector<Value> losses;
    for (const Chunk &c : chunks_) {
      Inputs in = tie(Value(), losses.empty() ? Value() : losses.back());
      Logits l = logits(in, c);
      losses.push_back(rowLosses(l));
    }
    return tb_.convert(tb_.concatenate(losses, 0), element_);
  }

  /// The per-row losses [N] and the gradients of hidden and weight for a
  /// loss gradient of 1 on every row (see the file comment).
  std::array<Value, 3> forwardWithUnitGradients() {
    if (chunks_.empty())
      return {tb_.splat(0, element_, {0}), tb_.splat(0, compute_, {0, c_}),
              tb_.splat(0, compute_, {v_, c_})};
    SmallVector<Value> losses, dh;
    Value dw;
    for (const Chunk &c : chunks_) {
      Inputs in = tie(Value(), previous(dw, dh));
      Logits l = logits(in, c);
      losses.push_back(rowLosses(l));
      Value dlogits = capSlope(l, softmaxMinusTarget(l));
      dlogits = tb_.select(rowBroadcast(l.valid, dlogits), dlogits,
                           tb_.splatLike(0, dlogits));
      accumulateGradients(l, in, dlogits, dh, dw);
    }
    return {tb_.convert(tb_.concatenate(losses, 0), element_),
            tb_.concatenate(dh, 0), dw ? unpadded(dw) : Value()};
  }

  /// forwardWithUnitGradients()'s unit gradients times `scale` (0-d).
  std::array<Value, 2> scaleUnitGradients(Value dhUnit, Value dwUnit,
                                          Value scale) {
    Value s = tb_.convert(scale, compute_);
    auto times = [&](Value x) {
      return tb_.convert(
          tb_.mul(x, tb_.broadcast(s, TensorBuilder::shapeOf(x), {})),
          element_);
    };
    return {times(dhUnit), dwUnit ? times(dwUnit) : Value()};
  }

  /// The gradients of hidden and weight for `lossGrad` [N].
  std::array<Value, 2> backward(Value lossGrad) {
    if (chunks_.empty())
      return {tb_.splat(0, element_, {0, c_}),
              tb_.splat(0, element_, {v_, c_})};
    Value grad = tb_.convert(lossGrad, compute_);
    SmallVector<Value> dh;
    Value dw;
    for (const Chunk &c : chunks_) {
      // The incoming gradient (and the previous chunk's weight gradient)
      // joins the tie, so the recomputation runs here, in the backward
      // pass, one chunk after the other.
      Inputs in = tie(grad, previous(dw, dh));
      Logits l = logits(in, c);
      Value g = tb_.sliceDim(in.extra, 0, c.begin, c.end);
      g = tb_.select(l.valid, g, tb_.splatLike(0, g));
      Value dlogits = capSlope(l, softmaxMinusTarget(l));
      dlogits = tb_.mul(dlogits, rowBroadcast(g, dlogits));
      accumulateGradients(l, in, dlogits, dh, dw);
    }
    return {tb_.convert(tb_.concatenate(dh, 0), element_),
            dw ? tb_.convert(unpadded(dw), element_) : Value()};
  }

private:
  struct Chunk {
    int64_t begin, end;
  };
  /// hidden, weight and labels as one chunk reads them, and `extra`.
  struct Inputs {
    Value hidden, weight, labels, extra;
  };
  /// One chunk's rows, logits [rows, V] (padded columns −inf) and as the
  /// GEMM made them (padded columns 0), the logsumexp [rows], the one-hot
  /// of the labels and the valid rows.
  /// `part`: the length of the parts the logsumexp sums by (0: none).
  struct Logits {
    Value hidden, logits, products, logSumExp, onehot, valid;
    int64_t part = 0;
  };

  /// What the next chunk waits for: the weight gradient so far, or without
  /// one the previous chunk's hidden gradient (null for the first chunk).
  static Value previous(Value dw, ArrayRef<Value> dh) {
    return dw ? dw : dh.empty() ? Value() : dh.back();
  }

  /// hidden, weight, labels and `extra` through one barrier with `after`
  /// (the previous chunk's result): see the file comment.
  Inputs tie(Value extra, Value after) {
    SmallVector<Value> operands = {hidden_, weight_, labels_};
    if (extra)
      operands.push_back(extra);
    if (after)
      operands.push_back(after);
    auto barrier = OptimizationBarrierOp::create(
        tb_.builder(), tb_.loc(), ValueRange(operands), /*gradient_seed=*/false);
    Inputs in{barrier.getResult(0), barrier.getResult(1), barrier.getResult(2),
              extra ? barrier.getResult(3) : Value()};
    return in;
  }

  /// logsumexp − the label's logit, 0 on ignored rows: [rows].
  Value rowLosses(const Logits &l) {
    Value loss = tb_.sub(l.logSumExp, pickedLogits(l));
    return tb_.select(l.valid, loss, tb_.splatLike(0, loss));
  }

  /// Each row's logsumexp: [rows].
  ///
  /// A row of Vp logits that splits into parts of at most kLogSumExpPart
  /// (a multiple of 128; l.part) is summed part by part: each part's max
  /// m_p and its sum s_p of exp(x − m_p), then per row M = max m_p and
  /// the sum Σ s_p exp(m_p − M). A part's two passes are one kernel that
  /// reads its logits once (a GPU warp holds a part of up to 1024 in
  /// registers: docs/CUDA-BACKEND.md, "Rows held by their lanes"; a CPU
  /// thread finds it in L1), where the row's max and its sum each read the
  /// whole row of 50304: GPT-2's chunks read their 16-bit logits twice
  /// instead of three times. (FlashAttention's online softmax combines
  /// blocks the same way.) The sum is grouped differently, so the result
  /// moves by f32 rounding.
  Value logSumExp(const Logits &l) {
    if (l.part == 0) {
      Value max = tb_.reduce(ReduceKind::max, l.logits, {1});
      Value exps = tb_.exp(tb_.sub(l.logits, rowBroadcast(max, l.logits)));
      Value sums = tb_.reduce(ReduceKind::sum, exps, {1});
      return tb_.add(tb_.log(sums), max);
    }
    SmallVector<int64_t> parts = partShape(l);
    Value x = tb_.reshape(l.logits, parts);
    Value partMax = tb_.reduce(ReduceKind::max, x, {2});
    Value partSum = tb_.reduce(
        ReduceKind::sum,
        tb_.exp(tb_.sub(x, tb_.broadcast(partMax, parts, {0, 1}))), {2});
    Value max = tb_.reduce(ReduceKind::max, partMax, {1});
    Value scaled = tb_.mul(
        partSum, tb_.exp(tb_.sub(partMax, tb_.broadcast(
                                              max, {parts[0], parts[1]}, {0}))));
    return tb_.add(tb_.log(tb_.reduce(ReduceKind::sum, scaled, {1})), max);
  }

  /// Each row's label's logit: [rows]. It is picked from the GEMM's
  /// products (the sum of the one-hot's selection), where a label out of
  /// range but within the padding picks 0, as one beyond it picks nothing;
  /// part by part where the logsumexp is, so that its sums join that kernel.
  Value pickedLogits(const Logits &l) {
    Value chosen =
        tb_.select(l.onehot, l.products, tb_.splatLike(0, l.products));
    if (l.part == 0)
      return tb_.reduce(ReduceKind::sum, chosen, {1});
    Value partPicked =
        tb_.reduce(ReduceKind::sum, tb_.reshape(chosen, partShape(l)), {2});
    return tb_.reduce(ReduceKind::sum, partPicked, {1});
  }

  /// [rows, Vp / part, part]: a chunk's logits in parts.
  static SmallVector<int64_t> partShape(const Logits &l) {
    ArrayRef<int64_t> shape = TensorBuilder::shapeOf(l.logits);
    return {shape[0], shape[1] / l.part, l.part};
  }

  /// The part length a row's logsumexp is summed by (logSumExp): the
  /// largest multiple of 128 up to kLogSumExpPart that divides the padded
  /// vocabulary into at least two parts, each holding a real logit (the
  /// padding shorter than a part: no part's max is −inf, where x − m_p
  /// would be NaN); 0 for none.
  int64_t logSumExpPart() const {
    for (int64_t part = kLogSumExpPart; part >= 128; part -= 128)
      if (paddedV_ % part == 0 && paddedV_ / part >= 2 &&
          paddedV_ - v_ < part)
        return part;
    return 0;
  }

  /// softmax(logits) − onehot(labels): [rows, V]. The probabilities are
  /// exp(logits − logsumexp), not exps / sums: the exps are then read by
  /// their row sum alone and fuse into it, and the gradient recomputes its
  /// exp from the logits (from the 16-bit product, under kiln-autocast)
  /// instead of reading a stored [rows, V] f32 tensor.
  Value softmaxMinusTarget(const Logits &l) {
    Value probs = tb_.exp(
        tb_.sub(l.logits, rowBroadcast(l.logSumExp, l.logits)));
    Value target = tb_.select(l.onehot, tb_.splatLike(1, probs),
                              tb_.splatLike(0, probs));
    return tb_.sub(probs, target);
  }

  /// The gradient by the products of `dlogits`, the gradient by the
  /// logits: times the cap's slope 1 − tanh²(z / c) = 1 − (capped / c)²
  /// (unchanged without a cap).
  Value capSlope(const Logits &l, Value dlogits) {
    if (softcap_ == 0)
      return dlogits;
    Value ratio = tb_.div(l.products, tb_.splatLike(softcap_, l.products));
    Value slope = tb_.sub(tb_.splatLike(1, ratio), tb_.mul(ratio, ratio));
    return tb_.mul(dlogits, slope);
  }

  /// The chunk's hidden gradient (appended to `dh`) and its weight
  /// gradient (added to `dw`, which the first chunk starts).
  void accumulateGradients(const Logits &l, const Inputs &in, Value dlogits,
                           SmallVector<Value> &dh, Value &dw) {
    dh.push_back(tb_.dot(dlogits, in.weight, {}, {}, {1}, {0}));
    if (!weightGradient_)
      return;
    Value dwc = tb_.dot(dlogits, l.hidden, {}, {}, {0}, {0});
    dw = dw ? tb_.add(dw, dwc) : dwc;
  }

  /// A weight gradient [Vp, C] without its padded rows: [V, C].
  Value unpadded(Value dw) {
    return paddedV_ == v_ ? dw : tb_.sliceDim(dw, 0, 0, v_);
  }

  /// [rows] → [rows, V] like `like`.
  Value rowBroadcast(Value x, Value like) {
    return tb_.broadcast(x, TensorBuilder::shapeOf(like), {0});
  }

  Logits logits(const Inputs &in, const Chunk &c) {
    Logits l;
    l.hidden = tb_.sliceDim(in.hidden, 0, c.begin, c.end);
    l.logits = l.products = tb_.dot(l.hidden, in.weight, {}, {}, {1}, {1});
    if (softcap_ > 0) {
      // Capped logits: what the padding's mask, the pick and the softmax
      // read (a padded column's product 0 stays 0).
      Value cap = tb_.splatLike(softcap_, l.products);
      l.logits = l.products = tb_.mul(cap, tb_.tanh(tb_.div(l.products, cap)));
    }
    ArrayRef<int64_t> shape = TensorBuilder::shapeOf(l.logits);
    if (paddedV_ != v_) {
      // Padded columns are −inf: exp gives 0, and the max ignores them.
      Type i64 = tb_.builder().getI64Type();
      Value real = tb_.compare(ComparisonDirection::LT, tb_.iota(i64, shape, 1),
                               tb_.splat(static_cast<double>(v_), i64, shape));
      l.logits = tb_.select(
          real, l.logits,
          tb_.splatLike(-std::numeric_limits<double>::infinity(), l.logits));
    }
    l.part = logSumExpPart();
    l.logSumExp = logSumExp(l);
    Value labels = tb_.sliceDim(in.labels, 0, c.begin, c.end);
    Type index = TensorBuilder::elementOf(labels);
    l.onehot = tb_.compare(ComparisonDirection::EQ, tb_.iota(index, shape, 1),
                           tb_.broadcast(labels, shape, {0}));
    l.valid = tb_.compare(
        ComparisonDirection::NE, labels,
        tb_.splat(static_cast<double>(ignoreIndex_), index, {c.end - c.begin}));
    return l;
  }

  TensorBuilder &tb_;
  bool weightGradient_;
  int64_t ignoreIndex_;
  double softcap_;
  Type element_, compute_;
  int64_t n_, c_, v_;
  /// V rounded up to the vocab-multiple: the weight's rows as padded.
  int64_t paddedV_;
  Value hidden_, weight_, labels_;
  std::vector<Chunk> chunks_;
};

/// A loss gradient that is one 0-d value broadcast to every row.
bool isUniform(Value lossGrad) {
  auto broadcast = lossGrad.getDefiningOp<BroadcastInDimOp>();
  return broadcast &&
         cast<RankedTensorType>(broadcast.getOperand().getType()).getRank() == 0;
}

/// Each gradient op with a uniform loss gradient, paired with the forward
/// op earlier in its block that has its operands (at most one pair each).
SmallVector<std::pair<FusedLinearCrossEntropyOp, FusedLinearCrossEntropyGradOp>>
uniformGradientPairs(ArrayRef<Operation *> ops) {
  SmallVector<std::pair<FusedLinearCrossEntropyOp, FusedLinearCrossEntropyGradOp>>
      pairs;
  DenseSet<Operation *> paired;
  for (Operation *op : ops) {
    auto grad = dyn_cast<FusedLinearCrossEntropyGradOp>(op);
    if (!grad || !isUniform(grad.getLossGrad()))
      continue;
    for (Operation *other : ops) {
      auto fwd = dyn_cast<FusedLinearCrossEntropyOp>(other);
      if (fwd && !paired.contains(fwd) && fwd->getBlock() == grad->getBlock() &&
          fwd->isBeforeInBlock(grad) && fwd.getHidden() == grad.getHidden() &&
          fwd.getWeight() == grad.getWeight() &&
          fwd.getLabels() == grad.getLabels() &&
          fwd.getIgnoreIndex() == grad.getIgnoreIndex() &&
          fwd.getSoftcap() == grad.getSoftcap()) {
        paired.insert(fwd);
        pairs.push_back({fwd, grad});
        break;
      }
    }
  }
  return pairs;
}

struct LowerCrossEntropyPass
    : public impl::LowerCrossEntropyPassBase<LowerCrossEntropyPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<FusedLinearCrossEntropyOp, FusedLinearCrossEntropyGradOp>(op))
        ops.push_back(op);
    });
    // Ops erased with their pair below; never dereferenced once erased.
    DenseSet<Operation *> lowered;
    for (auto [fwd, grad] : uniformGradientPairs(ops)) {
      OpBuilder builder(fwd);
      TensorBuilder tb(builder, fwd->getLoc());
      CrossEntropyLowering lowering(tb, fwd, maxChunkBytes, vocabMultiple,
                                    !grad.getWeightGrad().use_empty());
      auto [loss, dhUnit, dwUnit] = lowering.forwardWithUnitGradients();
      fwd.getLoss().replaceAllUsesWith(loss);
      builder.setInsertionPoint(grad);
      auto scale = grad.getLossGrad().getDefiningOp<BroadcastInDimOp>();
      std::array<Value, 2> grads =
          lowering.scaleUnitGradients(dhUnit, dwUnit, scale.getOperand());
      grad.getHiddenGrad().replaceAllUsesWith(grads[0]);
      if (grads[1])
        grad.getWeightGrad().replaceAllUsesWith(grads[1]);
      lowered.insert(fwd);
      lowered.insert(grad);
      fwd->erase();
      grad->erase();
      numLowered += 2;
      ++numGradientsInForward;
    }
    for (Operation *op : ops) {
      if (lowered.contains(op))
        continue;
      OpBuilder builder(op);
      TensorBuilder tb(builder, op->getLoc());
      if (auto fwd = dyn_cast<FusedLinearCrossEntropyOp>(op)) {
        CrossEntropyLowering lowering(tb, fwd, maxChunkBytes, vocabMultiple);
        fwd.getLoss().replaceAllUsesWith(lowering.forward());
      } else {
        auto grad = cast<FusedLinearCrossEntropyGradOp>(op);
        CrossEntropyLowering lowering(tb, grad, maxChunkBytes, vocabMultiple,
                                      !grad.getWeightGrad().use_empty());
        std::array<Value, 2> grads = lowering.backward(grad.getLossGrad());
        grad.getHiddenGrad().replaceAllUsesWith(grads[0]);
        if (grads[1])
          grad.getWeightGrad().replaceAllUsesWith(grads[1]);
      }
      op->erase();
      ++numLowered;
    }
  }
};

} // namespace
} // namespace kiln
