// The basic layers: Linear (PyTorch layout, weight [out, in]), Conv1D (the
// Hugging Face GPT-2 projection, weight [in, out]), Embedding, LayerNorm,
// RMSNorm, Dropout and GELU. Parameters are initialised on the host from an
// InitContext (a seeded generator and the parameter dtype), so building a
// model runs no graph and is the same on every backend; models that need
// their own initialisation (GPT-2) overwrite it with the same context.
#ifndef KILN_FRONTENDS_NN_LAYERS_H
#define KILN_FRONTENDS_NN_LAYERS_H

#include "frontends/nn/Module.h"

#include <random>
#include <vector>

namespace kiln::nn {

/// Where initial parameter values come from: a seeded host generator (so a
/// seed gives the same model everywhere) and the parameters' dtype. With
/// `draw` false, normal() and uniform() leave their tensors zero (a model
/// only planned: large host tensors are mapped pages never touched).
class InitContext {
public:
  explicit InitContext(uint64_t seed = 0, DType dtype = DType::f32,
                       bool draw = true)
      : rng_(seed), dtype_(dtype), draw_(draw) {}
  DType dtype() const { return dtype_; }
  /// shape → a parameter of normal(mean, std) values.
  Tensor normal(const Shape &shape, double mean, double std);
  /// shape → a parameter of uniform [lo, hi) values.
  Tensor uniform(const Shape &shape, double lo, double hi);
  /// shape → a parameter filled with `value`.
  Tensor full(const Shape &shape, double value);

private:
  std::mt19937_64 rng_;
  DType dtype_;
  bool draw_;
};

class Linear;
class Dropout;

/// A learned projection [..., in] → [..., out] (Linear or Conv1D) that can
/// carry a LoRA branch (Hu et al., as PEFT's LoraLayer): y = base(x) +
/// lora_B(lora_A(lora_dropout(x))) * scaling (alpha / r), where lora_A [r, in]
/// starts as PyTorch's Linear does and lora_B [out, r] at zero, so an adapted
/// model starts as its base. The branch's modules are children named
/// lora_A, lora_B and lora_dropout, so parameter names are PEFT's
/// (`...c_attn.lora_A.weight`). frontends/nn/Lora.h applies and saves them.
class Projection : public Module {
public:
  virtual int64_t in_features() const = 0;
  virtual int64_t out_features() const = 0;
  /// Adds the LoRA branch of rank `r` whose output is multiplied by
  /// `scaling` (PEFT's alpha / r, or alpha / sqrt(r) with use_rslora);
  /// once: kiln::Error on a second call.
  void add_lora(int64_t r, double scaling, double dropout, InitContext &init,
                Generator *generator);
  bool has_lora() const { return lora_A_ != nullptr; }
  int64_t lora_r() const;
  double lora_scaling() const { return loraScaling_; }
  /// The branch's change to the weight, in the weight's layout: B A * s
  /// ([out, in]) for Linear, its transpose for Conv1D ([in, out]);
  /// kiln::Error without a branch.
  Tensor lora_delta() const;
  /// The base weight (Linear [out, in], Conv1D [in, out]).
  virtual const Tensor &base_weight() const = 0;

protected:
  /// `y` (the base projection of `x`) plus the branch's output, if any.
  Tensor add_lora_output(const Tensor &x, const Tensor &y) const;
  /// The branch's first half, lora_A(lora_dropout(x)) [..., r], which every
  /// part of a split projection shares (one dropout mask, as PEFT's one
  /// branch draws); undefined without a branch.
  Tensor lora_low(const Tensor &x) const;
  /// `y` (output features [start, start + size) of the base projection)
  /// plus the same features of the branch's output, from `low`.
  Tensor add_lora_rows(const Tensor &low, const Tensor &y, int64_t start,
                       int64_t size) const;
  /// Whether base_weight() is [in, out] (Conv1D) rather than [out, in].
  virtual bool weight_is_in_out() const = 0;

private:
  std::shared_ptr<Linear> lora_A_, lora_B_;
  std::shared_ptr<Dropout> loraDropout_;
  double loraScaling_ = 0;
};

/// y = x Wᵀ + b over the last dimension; weight [out, in], bias [out].
/// Initialised as PyTorch does: uniform(±1/sqrt(in)).
class Linear : public Projection {
public:
  Linear(int64_t in, int64_t out, InitContext &init, bool bias = true);
  /// Initialised as Hugging Face's _init_weights does for most models:
  /// weight normal(0, std), zero bias.
  Linear(int64_t in, int64_t out, InitContext &init, bool bias, double std);
  /// [..., in] → [..., out].
  Tensor forward(const Tensor &x) const;
  Tensor operator()(const Tensor &x) const { return forward(x); }
  /// forward(x) cut along its features into parts of `sizes` (summing to
  /// out), each computed by its own product with its rows of the weight
  /// (and of the bias and lora_B), as forward(x).slice would give it. A
  /// fused projection's parts (Phi-3's qkv_proj and gate_up_proj) are then
  /// products of their own: the whole result is never written and copied
  /// apart, and under a memory budget each part is a product the
  /// rematerializer may recompute, where a slice copy was not.
  std::vector<Tensor> forward_split(const Tensor &x,
                                    const std::vector<int64_t> &sizes) const;
  int64_t in_features() const override { return weight.size(1); }
  int64_t out_features() const override { return weight.size(0); }
  const Tensor &base_weight() const override { return weight; }
  Tensor weight, bias;

protected:
  bool weight_is_in_out() const override { return false; }
};

/// y = x W + b with weight [in, out] (Hugging Face's Conv1D, GPT-2's
/// projections). Initialised normal(0, std), zero bias.
class Conv1D : public Projection {
public:
  Conv1D(int64_t in, int64_t out, InitContext &init, double std = 0.02);
  /// [..., in] → [..., out].
  Tensor forward(const Tensor &x) const;
  Tensor operator()(const Tensor &x) const { return forward(x); }
  int64_t in_features() const override { return weight.size(0); }
  int64_t out_features() const override { return weight.size(1); }
  const Tensor &base_weight() const override { return weight; }
  Tensor weight, bias;

protected:
  bool weight_is_in_out() const override { return true; }
};

/// A table of `num` vectors of size `dim`; weight [num, dim], normal(0, std).
/// It can carry a LoRA branch as PEFT's lora.Embedding does: each row gains
/// lora_embedding_Aᵀ[id] lora_embedding_Bᵀ · scaling, where
/// lora_embedding_A [r, num] starts at zero (so an adapted model starts as
/// its base) and lora_embedding_B [dim, r] normal(0, 1). The branch gives
/// every token its own r trainable numbers, which a frozen table cannot.
/// PEFT applies no dropout on it, and neither does this.
class Embedding : public Module {
public:
  Embedding(int64_t num, int64_t dim, InitContext &init, double std = 1.0);
  /// integer indices [...] → [..., dim] (plus the LoRA branch's rows); in
  /// training with noise set, the rows of indices [B, T] get NEFTune's
  /// noise.
  Tensor forward(const Tensor &indices) const;
  Tensor operator()(const Tensor &indices) const { return forward(indices); }
  /// NEFTune (the Trainer's neftune_noise_alpha): in training, each element
  /// of the [B, T, dim] rows moves by uniform noise in ±alpha / sqrt(T ·
  /// dim), drawn from `generator`. alpha 0: none.
  void set_noise(double alpha, Generator *generator);
  /// Adds the LoRA branch of rank `r` scaled by `scaling` (as
  /// Projection::add_lora), its parameters named as PEFT saves them
  /// (`...wte.lora_embedding_A`); kiln::Error on a second call.
  void add_lora(int64_t r, double scaling, InitContext &init);
  bool has_lora() const { return loraA_.defined(); }
  std::vector<Tensor> lookup_tables() const override { return {weight}; }
  /// The branch's change to the table, (B A)ᵀ · scaling [num, dim];
  /// kiln::Error without a branch.
  Tensor lora_delta() const;
  Tensor weight;
  /// The looked-up rows are multiplied by this, in the table's type
  /// (Gemma's sqrt(hidden_size), as its scaled word embedding does), and so
  /// is the LoRA branch's change to them (as PEFT scales it, so that a
  /// merged table gives the same rows); NEFTune's noise comes after, as
  /// transformers adds it to the module's output.
  double scale = 1;

private:
  Tensor loraA_, loraB_; // [r, num], [dim, r]
  double loraScaling_ = 0;
  double noiseAlpha_ = 0;
  Generator *noiseGenerator_ = nullptr;
};

/// Normalises the last dimension: weight (ones) and bias (zeros) of [dim].
class LayerNorm : public Module {
public:
  LayerNorm(int64_t dim, InitContext &init, double eps = 1e-5);
  /// [..., dim] → [..., dim].
  Tensor forward(const Tensor &x) const;
  Tensor operator()(const Tensor &x) const { return forward(x); }
  Tensor weight, bias;
  double eps;
};

/// Root-mean-square normalisation of the last dimension (Llama's
/// LlamaRMSNorm): x / sqrt(mean(x²) + eps) * weight, weight [dim] of ones.
/// With `unitOffset` (Gemma's GemmaRMSNorm) the scale is 1 + weight, weight
/// of zeros, applied before the result is rounded to x's type.
class RMSNorm : public Module {
public:
  RMSNorm(int64_t dim, InitContext &init, double eps = 1e-6,
          bool unitOffset = false);
  /// [..., dim] → [..., dim].
  Tensor forward(const Tensor &x) const;
  Tensor operator()(const Tensor &x) const { return forward(x); }
  Tensor weight;
  double eps;
  bool unitOffset;
};

/// Zeroes elements with probability p in training mode (identity in eval
/// mode or when p == 0), drawing from `generator` (default_generator() when
/// null), whose state is a device tensor.
class Dropout : public Module {
public:
  explicit Dropout(double p, Generator *generator = nullptr);
  Tensor forward(const Tensor &x) const;
  Tensor operator()(const Tensor &x) const { return forward(x); }
  double p;
  Generator *generator;
};

/// GELU with the tanh approximation (GPT-2's "gelu_new").
class GELU : public Module {
public:
  Tensor forward(const Tensor &x) const { return gelu(x); }
  Tensor operator()(const Tensor &x) const { return forward(x); }
};

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_LAYERS_H
