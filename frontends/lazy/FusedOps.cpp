// Ops recorded as one fused node rather than built from primitives, because
// a backend runs them without materializing their largest intermediates
// (docs/IR.md, "Fused composites"): scaled_dot_product_attention. Their
// gradients are fused nodes too (Autograd.cpp); kiln-lower-attention writes
// both out chunk by chunk where a backend has no kernel of its own.
#include "frontends/lazy/Node.h"

#include <cmath>

namespace kiln {

using namespace lazy;

Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key,
                                    const Tensor &value, double dropout_p,
                                    bool is_causal, std::optional<double> scale,
                                    Generator *generator) {
  auto fail = [&](const std::string &why) {
    return Error("scaled_dot_product_attention: " + why + " (query " +
                 query.str() + ", key " + key.str() + ", value " + value.str() +
                 ")");
  };
  if (!query.defined() || !key.defined() || !value.defined())
    throw Error("scaled_dot_product_attention: undefined tensor");
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
  attrs.scale = scale ? *scale : 1.0 / std::sqrt(double(query.size(3)));
  if (!std::isfinite(attrs.scale))
    throw fail("scale must be finite");
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

} // namespace kiln
