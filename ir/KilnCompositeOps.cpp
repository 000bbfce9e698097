// Verifiers of the fused composite ops (kiln.fused_attention,
// kiln.fused_linear_cross_entropy and their gradients). Their semantics are
// in docs/IR.md; the reference evaluator implements them directly
// (ir/reference/AttentionOps.cpp, LossOps.cpp) and kiln-lower-attention and
// kiln-lower-cross-entropy decompose them into primitives.
#include "ir/KilnDialect.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The checks both attention ops share: shapes of query [B, H, T, D] and
/// key/value [B, Hkv, S, D], one float element type, the attributes, and the
/// rng state present exactly when dropout is.
LogicalResult verifyAttentionOperands(Operation *op, Value query, Value key,
                                      Value value, Value rngState, double scale,
                                      bool causal, double dropout,
                                      int64_t window) {
  RankedTensorType q = typeOf(query), k = typeOf(key), v = typeOf(value);
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return op->emitOpError() << "expected query, key and value of rank 4 "
                                "([batch, heads, sequence, head_dim]), got "
                             << q << ", " << k << ", " << v;
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return op->emitOpError()
           << "expected query, key and value of one element type, got " << q
           << ", " << k << ", " << v;
  if (k.getShape() != v.getShape())
    return op->emitOpError() << "expected key and value of one shape, got "
                             << k << " and " << v;
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape();
  if (qs[0] != ks[0] || qs[3] != ks[3])
    return op->emitOpError()
           << "expected query and key to agree in batch and head_dim, got "
           << q << " and " << k;
  if (ks[1] == 0 ? qs[1] != 0 : qs[1] % ks[1] != 0)
    return op->emitOpError() << "expected the query heads (" << qs[1]
                             << ") to be a multiple of the key/value heads ("
                             << ks[1] << ")";
  if (ks[2] == 0)
    return op->emitOpError() << "expected at least one key, got " << k;
  if (causal && qs[2] != ks[2])
    return op->emitOpError()
           << "causal attention needs as many queries as keys, got " << qs[2]
           << " and " << ks[2];
  if (window < 0 || (window > 0 && !causal))
    return op->emitOpError()
           << "expected a window of 0 (none) or, with causal, at least 1 "
              "key, got "
           << window << (causal ? "" : " without causal");
  if (!std::isfinite(scale))
    return op->emitOpError() << "expected a finite scale, got " << scale;
  if (!(dropout >= 0 && dropout < 1))
    return op->emitOpError() << "expected dropout in [0, 1), got " << dropout;
  if ((dropout > 0) != static_cast<bool>(rngState))
    return op->emitOpError()
           << (dropout > 0 ? "dropout needs an rng state"
                           : "an rng state without dropout");
  if (rngState && typeOf(rngState).getShape() != ArrayRef<int64_t>{2})
    return op->emitOpError() << "rng state must be tensor<2xi64> ([key, "
                                "counter]), got "
                             << typeOf(rngState);
  return success();
}

LogicalResult expectType(Operation *op, StringRef what, Type actual,
                         Type expected) {
  if (actual == expected)
    return success();
  return op->emitOpError() << "expected " << what << " of type " << expected
                           << ", got " << actual;
}

int64_t randomValuesOf(Value query, Value key) {
  ArrayRef<int64_t> qs = typeOf(query).getShape(), ks = typeOf(key).getShape();
  int64_t perRow = qs[0] * qs[1] * ks[2];
  return qs[2] * 4 * ((perRow + 3) / 4);
}

/// hidden [N, C], weight [V, C] of one float type, labels [N].
LogicalResult verifyLinearCrossEntropyOperands(Operation *op, Value hidden,
                                               Value weight, Value labels) {
  RankedTensorType h = typeOf(hidden), w = typeOf(weight), l = typeOf(labels);
  if (h.getRank() != 2 || w.getRank() != 2 || l.getRank() != 1)
    return op->emitOpError() << "expected hidden [N, C], weight [V, C] and "
                                "labels [N], got "
                             << h << ", " << w << ", " << l;
  if (h.getElementType() != w.getElementType())
    return op->emitOpError()
           << "expected hidden and weight of one element type, got " << h
           << " and " << w;
  if (h.getDimSize(1) != w.getDimSize(1))
    return op->emitOpError() << "expected hidden and weight to agree in C, got "
                             << h << " and " << w;
  if (h.getDimSize(0) != l.getDimSize(0))
    return op->emitOpError() << "expected one label per hidden row, got " << h
                             << " and " << l;
  if (w.getDimSize(0) == 0)
    return op->emitOpError() << "expected at least one class, got " << w;
  return success();
}

/// A soft cap divides the logits: 0 (none) or a finite positive number.
LogicalResult verifySoftcap(Operation *op, double softcap) {
  if (softcap == 0 || (softcap > 0 && std::isfinite(softcap)))
    return success();
  return op->emitOpError() << "expected softcap 0 (none) or a finite "
                              "positive number, got "
                           << softcap;
}

} // namespace

LogicalResult FusedLinearCrossEntropyOp::verify() {
  if (failed(verifyLinearCrossEntropyOperands(*this, getHidden(), getWeight(),
                                              getLabels())) ||
      failed(verifySoftcap(*this, getSoftcap().convertToDouble())))
    return failure();
  RankedTensorType h = typeOf(getHidden());
  return expectType(*this, "loss",
                    getLoss().getType(),
                    RankedTensorType::get({h.getDimSize(0)},
                                          h.getElementType()));
}

LogicalResult FusedLinearCrossEntropyGradOp::verify() {
  if (failed(verifyLinearCrossEntropyOperands(*this, getHidden(), getWeight(),
                                              getLabels())) ||
      failed(verifySoftcap(*this, getSoftcap().convertToDouble())))
    return failure();
  RankedTensorType h = typeOf(getHidden());
  if (failed(expectType(*this, "loss_grad", getLossGrad().getType(),
                        RankedTensorType::get({h.getDimSize(0)},
                                              h.getElementType()))) ||
      failed(expectType(*this, "hidden_grad", getHiddenGrad().getType(),
                        getHidden().getType())))
    return failure();
  return expectType(*this, "weight_grad", getWeightGrad().getType(),
                    getWeight().getType());
}

RankedTensorType FusedAttentionOp::rowStatsType(Value query) {
  auto q = cast<RankedTensorType>(query.getType());
  return RankedTensorType::get(q.getShape().drop_back(),
                               Float32Type::get(query.getContext()));
}

LogicalResult FusedAttentionOp::verify() {
  if (failed(verifyAttentionOperands(
          *this, getQuery(), getKey(), getValue(), getRngState(),
          getScale().convertToDouble(), getCausal(),
          getDropout().convertToDouble(), getWindow())) ||
      failed(verifySoftcap(*this, getSoftcap().convertToDouble())))
    return failure();
  if (failed(expectType(*this, "result", getResult().getType(),
                        getQuery().getType())))
    return failure();
  return expectType(*this, "row_stats", getRowStats().getType(),
                    rowStatsType(getQuery()));
}

int64_t FusedAttentionOp::randomValuesDrawn() {
  return randomValuesOf(getQuery(), getKey());
}

LogicalResult FusedAttentionGradOp::verify() {
  if (failed(verifyAttentionOperands(
          *this, getQuery(), getKey(), getValue(), getRngState(),
          getScale().convertToDouble(), getCausal(),
          getDropout().convertToDouble(), getWindow())) ||
      failed(verifySoftcap(*this, getSoftcap().convertToDouble())))
    return failure();
  Operation *op = *this;
  if (failed(expectType(op, "result", getResult().getType(),
                        getQuery().getType())) ||
      failed(expectType(op, "row_stats", getRowStats().getType(),
                        FusedAttentionOp::rowStatsType(getQuery()))) ||
      failed(expectType(op, "result_grad", getResultGrad().getType(),
                        getQuery().getType())) ||
      failed(expectType(op, "query_grad", getQueryGrad().getType(),
                        getQuery().getType())) ||
      failed(expectType(op, "key_grad", getKeyGrad().getType(),
                        getKey().getType())))
    return failure();
  return expectType(op, "value_grad", getValueGrad().getType(),
                    getValue().getType());
}

int64_t FusedAttentionGradOp::randomValuesDrawn() {
  return randomValuesOf(getQuery(), getKey());
}

} // namespace kiln
