// The reference kernels of kiln.fused_attention and kiln.fused_attention_grad
// (docs/IR.md): plain loops over (batch, head, query), products and sums in
// double, each result rounded once. The dropout values are those of
// kiln.rng_uniform: query row i draws a block of 4·ceil(B·H·S / 4) values
// at counter + i · that / 4, and element (b, h, i, j) takes the block's
// value (b·H + h)·S + j. The gradient recomputes probabilities and mask
// from the scores (not from the forward's results, which a kernel may read).
#include "ir/reference/Kernels.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::reference {
namespace {

struct Dims {
  int64_t batch, heads, queries, headDim, kvHeads, keys;
  int64_t q(int64_t b, int64_t h, int64_t i) const {
    return ((b * heads + h) * queries + i) * headDim;
  }
  int64_t kv(int64_t b, int64_t h, int64_t j) const {
    return ((b * kvHeads + h / (heads / kvHeads)) * keys + j) * headDim;
  }
  /// Random values per query row: 4 · ceil(B·H·S / 4).
  int64_t rowValues() const { return 4 * ((batch * heads * keys + 3) / 4); }
};

absl::StatusOr<Dims> dimsOf(const HostTensor &q, const HostTensor &k,
                            const HostTensor &v) {
  const auto &qs = q.shape(), &ks = k.shape();
  if (qs.size() != 4 || ks.size() != 4 || k.shape() != v.shape() ||
      qs[0] != ks[0] || qs[3] != ks[3] || ks[1] <= 0 || qs[1] % ks[1] != 0 ||
      ks[2] <= 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.fused_attention: bad operand shapes ", q.typeString(), ", ",
        k.typeString(), ", ", v.typeString()));
  return Dims{qs[0], qs[1], qs[2], qs[3], ks[1], ks[2]};
}

/// One query row's probabilities: p (softmax) and pd (after dropout).
class RowProbabilities {
public:
  RowProbabilities(const Dims &dims, const AttentionConfig &config)
      : dims_(dims), config_(config), p(dims.keys), pd(dims.keys),
        slopes(dims.keys, 1.0) {}

  /// The uniform values of query row i (dropout only).
  absl::Status drawRow(int64_t i) {
    if (config_.dropout <= 0)
      return absl::OkStatus();
    HostTensor state = *config_.rngState;
    uint64_t counter = static_cast<uint64_t>(state.getInt(1));
    state.setInt(1, static_cast<int64_t>(
                        counter + static_cast<uint64_t>(i) *
                                      static_cast<uint64_t>(dims_.rowValues() / 4)));
    auto values = evalRngUniform(state, DType::f32, {dims_.rowValues()});
    if (!values.ok())
      return values.status();
    random_ = std::move(values->first);
    return absl::OkStatus();
  }

  /// Fills p and pd for (b, h, i) of the row drawRow(i) drew.
  void compute(const HostTensor &q, const HostTensor &k, int64_t b, int64_t h,
               int64_t i) {
    // Keys [first, visible) are visible to query i.
    int64_t visible = config_.causal ? i + 1 : dims_.keys;
    int64_t first =
        config_.window > 0 ? std::max<int64_t>(0, i + 1 - config_.window) : 0;
    auto seen = [&](int64_t j) { return j >= first && j < visible; };
    double max = -INFINITY;
    for (int64_t j = 0; j < dims_.keys; ++j) {
      p[j] = -INFINITY;
      if (!seen(j))
        continue;
      double dot = 0;
      for (int64_t d = 0; d < dims_.headDim; ++d)
        dot += q.getDouble(dims_.q(b, h, i) + d) *
               k.getDouble(dims_.kv(b, h, j) + d);
      p[j] = config_.scale * dot;
      if (config_.softcap > 0) {
        const double t = std::tanh(p[j] / config_.softcap);
        p[j] = config_.softcap * t;
        slopes[j] = 1 - t * t;
      }
      max = std::max(max, p[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < dims_.keys; ++j)
      sum += p[j] = seen(j) ? std::exp(p[j] - max) : 0.0;
    logSumExp = max + std::log(sum);
    for (int64_t j = 0; j < dims_.keys; ++j) {
      p[j] /= sum;
      pd[j] = p[j] * keepScale(b, h, j);
    }
  }

  /// 1 / (1 - p) where element (b, h, j) of the row is kept, 0 where it is
  /// dropped; 1 without dropout.
  double keepScale(int64_t b, int64_t h, int64_t j) const {
    if (config_.dropout <= 0)
      return 1.0;
    double u = random_.getDouble((b * dims_.heads + h) * dims_.keys + j);
    return u >= static_cast<double>(static_cast<float>(config_.dropout))
               ? 1.0 / (1.0 - config_.dropout)
               : 0.0;
  }

private:
  const Dims &dims_;
  const AttentionConfig &config_;
  HostTensor random_;

public:
  std::vector<double> p, pd;
  /// d(capped score) / d(scaled score): 1 − tanh², or 1 without a cap.
  std::vector<double> slopes;
  double logSumExp = 0;
};

/// [B, H, T] of query [B, H, T, D].
std::vector<int64_t> rowStatsShape(const HostTensor &q) {
  return {q.shape().begin(), q.shape().end() - 1};
}

absl::Status checkConfig(const AttentionConfig &config) {
  if (config.dropout > 0 && !config.rngState)
    return absl::InvalidArgumentError(
        "kiln.fused_attention: dropout without an rng state");
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::array<HostTensor, 2>>
evalFusedAttention(const HostTensor &q, const HostTensor &k,
                   const HostTensor &v, const AttentionConfig &config) {
  absl::StatusOr<Dims> dims = dimsOf(q, k, v);
  if (!dims.ok())
    return dims.status();
  if (absl::Status s = checkConfig(config); !s.ok())
    return s;
  absl::StatusOr<HostTensor> out = HostTensor::create(q.dtype(), q.shape());
  if (!out.ok())
    return out.status();
  absl::StatusOr<HostTensor> stats = HostTensor::create(DType::f32, rowStatsShape(q));
  if (!stats.ok())
    return stats.status();
  RowProbabilities row(*dims, config);
  for (int64_t i = 0; i < dims->queries; ++i) {
    if (absl::Status s = row.drawRow(i); !s.ok())
      return s;
    for (int64_t b = 0; b < dims->batch; ++b)
      for (int64_t h = 0; h < dims->heads; ++h) {
        row.compute(q, k, b, h, i);
        stats->setDouble((b * dims->heads + h) * dims->queries + i,
                         row.logSumExp);
        for (int64_t d = 0; d < dims->headDim; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < dims->keys; ++j)
            acc += row.pd[j] * v.getDouble(dims->kv(b, h, j) + d);
          out->setDouble(dims->q(b, h, i) + d, acc);
        }
      }
  }
  return std::array<HostTensor, 2>{*std::move(out), *std::move(stats)};
}

absl::StatusOr<std::array<HostTensor, 3>>
evalFusedAttentionGrad(const HostTensor &q, const HostTensor &k,
                       const HostTensor &v, const HostTensor &result,
                       const HostTensor &rowStats, const HostTensor &resultGrad,
                       const AttentionConfig &config) {
  absl::StatusOr<Dims> dims = dimsOf(q, k, v);
  if (!dims.ok())
    return dims.status();
  if (absl::Status s = checkConfig(config); !s.ok())
    return s;
  if (resultGrad.shape() != q.shape() || result.shape() != q.shape() ||
      rowStats.shape() != rowStatsShape(q))
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.fused_attention_grad: result ", result.typeString(),
        ", row_stats ", rowStats.typeString(), " or result_grad ",
        resultGrad.typeString(), " does not match query ", q.typeString()));
  std::vector<double> dq(q.numElements()), dk(k.numElements()),
      dv(v.numElements()), dp(dims->keys);
  RowProbabilities row(*dims, config);
  for (int64_t i = 0; i < dims->queries; ++i) {
    if (absl::Status s = row.drawRow(i); !s.ok())
      return s;
    for (int64_t b = 0; b < dims->batch; ++b)
      for (int64_t h = 0; h < dims->heads; ++h) {
        row.compute(q, k, b, h, i);
        int64_t qi = dims->q(b, h, i);
        // dP = dropout'(dO vᵀ); dS = P ∘ (dP − rowsum(P ∘ dP)).
        double rowsum = 0;
        for (int64_t j = 0; j < dims->keys; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < dims->headDim; ++d)
            dot += resultGrad.getDouble(qi + d) *
                   v.getDouble(dims->kv(b, h, j) + d);
          dp[j] = dot * row.keepScale(b, h, j);
          rowsum += row.p[j] * dp[j];
        }
        for (int64_t j = 0; j < dims->keys; ++j) {
          int64_t kj = dims->kv(b, h, j);
          double ds =
              row.p[j] * (dp[j] - rowsum) * row.slopes[j] * config.scale;
          for (int64_t d = 0; d < dims->headDim; ++d) {
            dq[qi + d] += ds * k.getDouble(kj + d);
            dk[kj + d] += ds * q.getDouble(qi + d);
            dv[kj + d] += row.pd[j] * resultGrad.getDouble(qi + d);
          }
        }
      }
  }
  auto rounded = [](const HostTensor &like,
                    const std::vector<double> &values)
      -> absl::StatusOr<HostTensor> {
    absl::StatusOr<HostTensor> t = HostTensor::create(like.dtype(), like.shape());
    if (!t.ok())
      return t.status();
    for (size_t i = 0; i < values.size(); ++i)
      t->setDouble(static_cast<int64_t>(i), values[i]);
    return t;
  };
  absl::StatusOr<HostTensor> gq = rounded(q, dq), gk = rounded(k, dk),
                             gv = rounded(v, dv);
  if (!gq.ok() || !gk.ok() || !gv.ok())
    return !gq.ok() ? gq.status() : !gk.ok() ? gk.status() : gv.status();
  return std::array<HostTensor, 3>{*std::move(gq), *std::move(gk),
                                   *std::move(gv)};
}

} // namespace kiln::reference
