// The reference kernels of kiln.fused_linear_cross_entropy and its gradient
// (docs/IR.md): per row, the logits hidden_i · weight_j in double, the
// logsumexp and the picked logit, each result rounded once. The gradient
// recomputes each row's logits and probabilities. A soft cap c > 0 makes
// each logit c · tanh(z / c), and the gradient of z the capped logit's
// times 1 − tanh²(z / c).
#include "ir/reference/Kernels.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <vector>

namespace kiln::reference {
namespace {

struct Dims {
  int64_t rows, width, classes;
};

absl::StatusOr<Dims> dimsOf(const HostTensor &hidden, const HostTensor &weight,
                            const HostTensor &labels) {
  const auto &h = hidden.shape(), &w = weight.shape(), &l = labels.shape();
  if (h.size() != 2 || w.size() != 2 || l.size() != 1 || h[1] != w[1] ||
      h[0] != l[0] || w[0] <= 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.fused_linear_cross_entropy: bad operand shapes ",
        hidden.typeString(), ", ", weight.typeString(), ", ",
        labels.typeString()));
  return Dims{h[0], h[1], w[0]};
}

/// One row's logits (capped when softcap > 0), their logsumexp, and the
/// derivative of each capped logit by its product (1 without a cap).
struct RowLogits {
  std::vector<double> logits, slopes;
  double logSumExp = 0;
  double softcap = 0;

  void compute(const HostTensor &hidden, const HostTensor &weight,
               const Dims &dims, int64_t i) {
    slopes.assign(dims.classes, 1.0);
    logits.assign(dims.classes, 0.0);
    double max = -INFINITY;
    for (int64_t j = 0; j < dims.classes; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < dims.width; ++c)
        dot += hidden.getDouble(i * dims.width + c) *
               weight.getDouble(j * dims.width + c);
      if (softcap > 0) {
        const double t = std::tanh(dot / softcap);
        dot = softcap * t;
        slopes[j] = 1 - t * t;
      }
      logits[j] = dot;
      max = std::max(max, dot);
    }
    double sum = 0;
    for (double l : logits)
      sum += std::exp(l - max);
    logSumExp = max + std::log(sum);
  }
};

} // namespace

absl::StatusOr<HostTensor> evalFusedLinearCrossEntropy(const HostTensor &hidden,
                                                       const HostTensor &weight,
                                                       const HostTensor &labels,
                                                       int64_t ignoreIndex,
                                                       double softcap) {
  absl::StatusOr<Dims> dims = dimsOf(hidden, weight, labels);
  if (!dims.ok())
    return dims.status();
  absl::StatusOr<HostTensor> loss =
      HostTensor::create(hidden.dtype(), {dims->rows});
  if (!loss.ok())
    return loss.status();
  RowLogits row;
  row.softcap = softcap;
  for (int64_t i = 0; i < dims->rows; ++i) {
    int64_t label = labels.getInt(i);
    if (label == ignoreIndex) {
      loss->setDouble(i, 0.0);
      continue;
    }
    row.compute(hidden, weight, *dims, i);
    // A label outside the classes picks none (as the one-hot composite).
    double picked =
        label >= 0 && label < dims->classes ? row.logits[label] : 0.0;
    loss->setDouble(i, row.logSumExp - picked);
  }
  return loss;
}

absl::StatusOr<std::array<HostTensor, 2>> evalFusedLinearCrossEntropyGrad(
    const HostTensor &hidden, const HostTensor &weight,
    const HostTensor &labels, const HostTensor &lossGrad, int64_t ignoreIndex,
    double softcap) {
  absl::StatusOr<Dims> dims = dimsOf(hidden, weight, labels);
  if (!dims.ok())
    return dims.status();
  if (lossGrad.shape() != labels.shape())
    return absl::InvalidArgumentError(absl::StrCat(
        "kiln.fused_linear_cross_entropy_grad: loss_grad ",
        lossGrad.typeString(), " does not match labels ",
        labels.typeString()));
  std::vector<double> dh(hidden.numElements()), dw(weight.numElements());
  RowLogits row;
  row.softcap = softcap;
  for (int64_t i = 0; i < dims->rows; ++i) {
    int64_t label = labels.getInt(i);
    if (label == ignoreIndex)
      continue;
    row.compute(hidden, weight, *dims, i);
    double g = lossGrad.getDouble(i);
    for (int64_t j = 0; j < dims->classes; ++j) {
      double dlogit =
          g * row.slopes[j] *
          (std::exp(row.logits[j] - row.logSumExp) - (j == label ? 1.0 : 0.0));
      for (int64_t c = 0; c < dims->width; ++c) {
        dh[i * dims->width + c] += dlogit * weight.getDouble(j * dims->width + c);
        dw[j * dims->width + c] += dlogit * hidden.getDouble(i * dims->width + c);
      }
    }
  }
  absl::StatusOr<HostTensor> gh = HostTensor::create(hidden.dtype(), hidden.shape());
  absl::StatusOr<HostTensor> gw = HostTensor::create(weight.dtype(), weight.shape());
  if (!gh.ok() || !gw.ok())
    return !gh.ok() ? gh.status() : gw.status();
  for (size_t k = 0; k < dh.size(); ++k)
    gh->setDouble(static_cast<int64_t>(k), dh[k]);
  for (size_t k = 0; k < dw.size(); ++k)
    gw->setDouble(static_cast<int64_t>(k), dw[k]);
  return std::array<HostTensor, 2>{*std::move(gh), *std::move(gw)};
}

} // namespace kiln::reference
