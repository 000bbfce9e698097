// The basic layers and host-side initialisation; see Layers.h.
#include "frontends/nn/Layers.h"

#include <cmath>

namespace kiln::nn {
namespace {

/// [..., in] x W[in, out] as one 2-d GEMM: flattening the leading
/// dimensions gives the backends a plain matrix product.
Tensor project(const Tensor &x, const Tensor &w, int64_t in, int64_t out,
               const char *layer) {
  if (x.dim() < 1 || x.size(-1) != in)
    throw Error(std::string(layer) + ": expected input [..., " +
                std::to_string(in) + "], got " + x.str());
  Shape outShape = x.shape();
  outShape.back() = out;
  return x.reshape({-1, in}).matmul(w).reshape(outShape);
}

void checkLoraRank(int64_t r) {
  if (r < 1)
    throw Error("add_lora: r must be positive, got " + std::to_string(r));
}

/// PEFT's order for every LoRA branch: the base's result widened to the
/// adapters' type (f32 over a 16-bit base), the branch's `delta` added,
/// and the sum rounded back to the base's type.
Tensor plusLoraDelta(const Tensor &base, const Tensor &delta) {
  return as_type(as_type(base, delta.dtype()) + delta, base.dtype());
}

} // namespace

Tensor InitContext::normal(const Shape &shape, double mean, double std) {
  HostTensor t(dtype_, shape);
  std::normal_distribution<double> dist(mean, std);
  for (int64_t i = 0; draw_ && i < t.numElements(); ++i)
    t.setDouble(i, dist(rng_));
  return Tensor::from_host(std::move(t), /*requires_grad=*/true);
}

Tensor InitContext::uniform(const Shape &shape, double lo, double hi) {
  HostTensor t(dtype_, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; draw_ && i < t.numElements(); ++i)
    t.setDouble(i, dist(rng_));
  return Tensor::from_host(std::move(t), /*requires_grad=*/true);
}

Tensor InitContext::full(const Shape &shape, double value) {
  HostTensor t(dtype_, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, value);
  return Tensor::from_host(std::move(t), /*requires_grad=*/true);
}

Linear::Linear(int64_t in, int64_t out, InitContext &init, bool hasBias) {
  double bound = 1.0 / std::sqrt(static_cast<double>(in));
  weight = register_parameter("weight", init.uniform({out, in}, -bound, bound));
  if (hasBias)
    bias = register_parameter("bias", init.uniform({out}, -bound, bound));
}

Linear::Linear(int64_t in, int64_t out, InitContext &init, bool hasBias,
               double std) {
  weight = register_parameter("weight", init.normal({out, in}, 0.0, std));
  if (hasBias)
    bias = register_parameter("bias", init.full({out}, 0.0));
}

Tensor Linear::forward(const Tensor &x) const {
  Tensor y = project(x, weight.transpose(0, 1), weight.size(1), weight.size(0),
                     "Linear");
  return add_lora_output(x, bias.defined() ? y + bias : y);
}

std::vector<Tensor> Linear::forward_split(
    const Tensor &x, const std::vector<int64_t> &sizes) const {
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size <= 0)
      throw Error("Linear::forward_split: every part needs a feature");
    total += size;
  }
  if (total != out_features())
    throw Error("Linear::forward_split: parts of " + std::to_string(total) +
                " features for " + std::to_string(out_features()));
  const Tensor low = lora_low(x);
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t size : sizes) {
    Tensor y = project(x, weight.slice(0, start, start + size).transpose(0, 1),
                       in_features(), size, "Linear");
    if (bias.defined())
      y = y + bias.slice(0, start, start + size);
    parts.push_back(add_lora_rows(low, y, start, size));
    start += size;
  }
  return parts;
}

void Projection::add_lora(int64_t r, double scaling, double dropout,
                          InitContext &init, Generator *generator) {
  if (has_lora())
    throw Error("add_lora: the projection already has a LoRA branch");
  checkLoraRank(r);
  // PEFT's init: lora_A as nn.Linear (kaiming_uniform(a=sqrt(5)), that is
  // uniform(±1/sqrt(in))), lora_B zero.
  lora_A_ = register_module(
      "lora_A", std::make_shared<Linear>(in_features(), r, init, false));
  lora_B_ = register_module(
      "lora_B", std::make_shared<Linear>(r, out_features(), init, false));
  {
    NoGradGuard noGrad; // an initial value, not a step to differentiate
    lora_B_->weight.assign_(Tensor::zeros({out_features(), r}, init.dtype()));
  }
  loraDropout_ = register_module("lora_dropout",
                                 std::make_shared<Dropout>(dropout, generator));
  loraScaling_ = scaling;
}

int64_t Projection::lora_r() const {
  return has_lora() ? lora_A_->weight.size(0) : 0;
}

Tensor Projection::lora_delta() const {
  if (!has_lora())
    throw Error("lora_delta: the projection has no LoRA branch");
  Tensor delta = lora_B_->weight.matmul(lora_A_->weight) * loraScaling_;
  return weight_is_in_out() ? delta.transpose(0, 1) : delta;
}

Tensor Projection::add_lora_output(const Tensor &x, const Tensor &y) const {
  if (!has_lora())
    return y;
  return plusLoraDelta(y, lora_B_->forward(lora_low(x)) * loraScaling_);
}

Tensor Projection::lora_low(const Tensor &x) const {
  if (!has_lora())
    return Tensor();
  // The input in the adapters' type (f32 over a 16-bit base), as PEFT.
  return lora_A_->forward(
      loraDropout_->forward(as_type(x, lora_A_->weight.dtype())));
}

Tensor Projection::add_lora_rows(const Tensor &low, const Tensor &y,
                                 int64_t start, int64_t size) const {
  if (!has_lora())
    return y;
  Tensor rows = lora_B_->weight.slice(0, start, start + size);
  return plusLoraDelta(y, project(low, rows.transpose(0, 1), low.size(-1),
                                  size, "lora_B") *
                              loraScaling_);
}

Conv1D::Conv1D(int64_t in, int64_t out, InitContext &init, double std) {
  weight = register_parameter("weight", init.normal({in, out}, 0.0, std));
  bias = register_parameter("bias", init.full({out}, 0.0));
}

Tensor Conv1D::forward(const Tensor &x) const {
  return add_lora_output(
      x, project(x, weight, weight.size(0), weight.size(1), "Conv1D") + bias);
}

Embedding::Embedding(int64_t num, int64_t dim, InitContext &init, double std) {
  weight = register_parameter("weight", init.normal({num, dim}, 0.0, std));
}

Tensor Embedding::forward(const Tensor &indices) const {
  // Rows in the stored type: a 16-bit table gives 16-bit activations.
  Tensor rows = embedding(weight, indices);
  if (scale != 1)
    rows = rows * scale;
  if (has_lora()) {
    Tensor low = embedding(loraA_.transpose(0, 1), indices); // [..., r]
    Shape shape = low.shape();
    shape.back() = loraB_.size(0);
    Tensor delta = low.reshape({-1, loraA_.size(0)})
                       .matmul(loraB_.transpose(0, 1))
                       .reshape(shape) *
                   loraScaling_;
    rows = plusLoraDelta(rows, scale != 1 ? delta * scale : delta);
  }
  if (noiseAlpha_ == 0 || !is_training() || rows.dim() != 3)
    return rows;
  // transformers' neftune_post_forward_hook: the magnitude scales with the
  // padded sequence and the width, not the real tokens.
  double magnitude =
      noiseAlpha_ / std::sqrt(double(rows.size(1)) * double(rows.size(2)));
  Tensor u = Tensor::rand(rows.shape(), DType::f32, noiseGenerator_);
  return rows + ((u * 2.0 - 1.0) * magnitude).to(rows.dtype());
}

void Embedding::add_lora(int64_t r, double scaling, InitContext &init) {
  if (has_lora())
    throw Error("add_lora: the embedding already has a LoRA branch");
  checkLoraRank(r);
  // PEFT's init for embeddings: A zero, B normal(0, 1).
  loraA_ = register_parameter("lora_embedding_A",
                              init.full({r, weight.size(0)}, 0.0));
  loraB_ = register_parameter("lora_embedding_B",
                              init.normal({weight.size(1), r}, 0.0, 1.0));
  loraScaling_ = scaling;
}

Tensor Embedding::lora_delta() const {
  if (!has_lora())
    throw Error("lora_delta: the embedding has no LoRA branch");
  return loraB_.matmul(loraA_).transpose(0, 1) * loraScaling_;
}

void Embedding::set_noise(double alpha, Generator *generator) {
  if (!(alpha >= 0) || !std::isfinite(alpha))
    throw Error("NEFTune: the noise alpha must be a non-negative number, "
                "got " +
                std::to_string(alpha));
  noiseAlpha_ = alpha;
  noiseGenerator_ = generator;
}

LayerNorm::LayerNorm(int64_t dim, InitContext &init, double eps) : eps(eps) {
  weight = register_parameter("weight", init.full({dim}, 1.0));
  bias = register_parameter("bias", init.full({dim}, 0.0));
}

Tensor LayerNorm::forward(const Tensor &x) const {
  // A 16-bit input is normalised in f32 and the result rounded once, as
  // PyTorch's layer norm kernels do.
  const DType wide = compute_type(x.dtype());
  return as_type(layer_norm(as_type(x, wide), as_type(weight, wide),
                            as_type(bias, wide), eps),
                 x.dtype());
}

RMSNorm::RMSNorm(int64_t dim, InitContext &init, double eps, bool unitOffset)
    : eps(eps), unitOffset(unitOffset) {
  weight = register_parameter("weight", init.full({dim}, unitOffset ? 0 : 1));
}

Tensor RMSNorm::forward(const Tensor &x) const {
  if (x.dim() < 1 || x.size(-1) != weight.size(0))
    throw Error("RMSNorm: expected input [..., " +
                std::to_string(weight.size(0)) + "], got " + x.str());
  // transformers' LlamaRMSNorm: the statistic and the scaling in f32, the
  // result rounded to the input's type before the weight multiplies it.
  Tensor wide = as_type(x, compute_type(x.dtype()));
  Tensor meanSquare = (wide * wide).mean({-1}, /*keepdim=*/true);
  Tensor normed = wide * (meanSquare + eps).rsqrt();
  // Gemma's: (1 + weight) in f32 scales before the rounding.
  if (unitOffset)
    return as_type(normed * (as_type(weight, normed.dtype()) + 1.0), x.dtype());
  return as_type(normed, x.dtype()) * as_type(weight, x.dtype());
}

Dropout::Dropout(double p, Generator *generator) : p(p), generator(generator) {
  if (p < 0 || p >= 1)
    throw Error("Dropout: probability must be in [0, 1), got " +
                std::to_string(p));
}

Tensor Dropout::forward(const Tensor &x) const {
  if (!is_training() || p == 0)
    return x;
  return dropout(x, p, /*training=*/true, generator);
}

} // namespace kiln::nn
