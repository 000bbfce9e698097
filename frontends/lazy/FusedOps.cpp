// Ops recorded as one fused node rather than built from primitives, because
// a backend runs them without materializing their largest intermediates
// (docs/IR.md, "Fused composites"): scaled_dot_product_attention (and
// sliding_window_attention) and linear_cross_entropy. Their gradients are fused
// nodes too (Autograd.cpp); kiln-lower-attention and kiln-lower-cross-entropy
// write both out chunk by chunk where a backend has no kernel of its own.
#include "frontends/lazy/Node.h"

#include <cmath>

namespace kiln {

using namespace lazy;

namespace {

/// scaled_dot_product_attention with a window (0: none; else >= 1, causal)
/// and a cap on the scores (0: none).
Tensor attentionOp(const Tensor &query, const Tensor &key, const Tensor &value,
                   double dropout_p, bool is_causal, int64_t window,
                   std::optional<double> scale, Generator *generator,
                   const char *name, double softcap = 0) {
  auto fail = [&](const std::string &why) {
    return Error(std::string(name) + ": " + why + " (query " + query.str() +
                 ", key " + key.str() + ", value " + value.str() + ")");
  };
  if (!query.defined() || !key.defined() || !value.defined())
    throw Error(std::string(name) + ": undefined tensor");
  if (query.dim() != 4 || key.dim() != 4 || value.dim() != 4)
    throw fail("expected [batch, heads, sequence, head_dim] tensors");
  if (!isFloat(query.dtype()) || key.dtype() != query.dtype() ||
      value.dtype() != query.dtype())
    throw fail("expected float tensors of one dtype");
  if (key.shape() != value.shape() || key.size(0) != query.size(0) ||
      key.size(3) != query.size(3))
    throw fail("key and value must match each other and query's batch and "
               "head_dim");
  if (key.size(1) == 0 || query.size(1) % key.size(1) != 0)
    throw fail("query heads must be a multiple of key/value heads");
  if (key.size(2) == 0)
    throw fail("expected at least one key");
  if (is_causal && query.size(2) != key.size(2))
    throw fail("causal attention needs as many queries as keys");
  if (!(dropout_p >= 0 && dropout_p < 1))
    throw fail("dropout_p must be in [0, 1), got " + std::to_string(dropout_p));
  AttentionAttrs attrs;
  attrs.causal = is_causal;
  attrs.dropout = dropout_p;
  // A window that every query's keys fit in masks nothing: plain causal,
  // one graph (and one kernel) for both.
  attrs.window = window < key.size(2) ? window : 0;
  attrs.scale = scale ? *scale : 1.0 / std::sqrt(double(query.size(3)));
  if (!std::isfinite(attrs.scale))
    throw fail("scale must be finite");
  if (!(softcap >= 0) || !std::isfinite(softcap))
    throw fail("softcap must be 0 (none) or a finite positive number");
  attrs.softcap = softcap;
  NodePtr state;
  if (dropout_p > 0) {
    // As kiln.fused_attention draws: T rows of 4·ceil(B·H·S / 4) values.
    int64_t perRow = query.size(0) * query.size(1) * key.size(2);
    int64_t values = query.size(2) * 4 * ((perRow + 3) / 4);
    state = nodeOf((generator ? *generator : default_generator())
                       .take_state(values));
  }
  return opResult(attention(nodeOf(query), nodeOf(key), nodeOf(value), state,
                            attrs),
                  {&query, &key, &value});
}

} // namespace

Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key,
                                    const Tensor &value, double dropout_p,
                                    bool is_causal, std::optional<double> scale,
                                    Generator *generator) {
  return attentionOp(query, key, value, dropout_p, is_causal, /*window=*/0,
                     scale, generator, "scaled_dot_product_attention");
}

Tensor sliding_window_attention(const Tensor &query, const Tensor &key,
                                const Tensor &value, int64_t window,
                                double dropout_p, std::optional<double> scale,
                                Generator *generator) {
  if (window < 1)
    throw Error("sliding_window_attention: the window must be at least 1 "
                "key, got " +
                std::to_string(window));
  return attentionOp(query, key, value, dropout_p, /*is_causal=*/true, window,
                     scale, generator, "sliding_window_attention");
}

Tensor softcapped_attention(const Tensor &query, const Tensor &key,
                            const Tensor &value, double softcap, int64_t window,
                            double dropout_p, std::optional<double> scale,
                            Generator *generator) {
  if (!(softcap > 0))
    throw Error("softcapped_attention: the cap must be positive, got " +
                std::to_string(softcap));
  if (window < 0)
    throw Error("softcapped_attention: the window must be 0 (none) or at "
                "least 1 key, got " +
                std::to_string(window));
  return attentionOp(query, key, value, dropout_p, /*is_causal=*/true, window,
                     scale, generator, "softcapped_attention", softcap);
}

Tensor linear_cross_entropy(const Tensor &input, const Tensor &weight,
                            const Tensor &targets, int64_t ignore_index,
                            double softcap) {
  if (!input.defined() || !weight.defined() || !targets.defined())
    throw Error("linear_cross_entropy: undefined tensor");
  if (input.dim() != 2 || weight.dim() != 2 || targets.dim() != 1 ||
      input.size(1) != weight.size(1) || input.size(0) != targets.size(0) ||
      weight.size(0) == 0 || !isFloat(input.dtype()) ||
      weight.dtype() != input.dtype() ||
      (targets.dtype() != DType::i32 && targets.dtype() != DType::i64))
    throw Error("linear_cross_entropy: expected float input [N, C], weight "
                "[V, C] of its dtype and integer targets [N], got " +
                input.str() + ", " + weight.str() + " and " + targets.str());
  checkHostIndices("linear_cross_entropy", targets, weight.size(0), "target",
                   ignore_index);
  if (!(softcap >= 0) || !std::isfinite(softcap))
    throw Error("linear_cross_entropy: softcap must be 0 (none) or a finite "
                "positive number, got " +
                std::to_string(softcap));
  Tensor rows =
      opResult(linearCrossEntropy(nodeOf(input), nodeOf(weight),
                                  nodeOf(targets), ignore_index, softcap),
               {&input, &weight, &targets});
  // The mean over the rows whose target is not ignored (NaN when every
  // target is, as PyTorch's mean reduction).
  Tensor ignore =
      Tensor::full({}, static_cast<double>(ignore_index), targets.dtype());
  Tensor valid = targets.ne(ignore).to(input.dtype());
  return rows.sum() / valid.sum();
}

} // namespace kiln
