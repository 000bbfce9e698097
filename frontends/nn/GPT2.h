// GPT-2 (Radford et al. 2019) with Hugging Face's parameter names, layouts
// and initialisation, so `model.safetensors` files from the Hub load by name:
// transformer.wte/wpe (embeddings), transformer.h.{i} blocks of ln_1,
// attn.c_attn / attn.c_proj (Conv1D, weight [in, out]), ln_2, mlp.c_fc /
// mlp.c_proj, then transformer.ln_f; lm_head.weight is tied to wte (one
// tensor, saved once). Attention is causal through an iota comparison, so no
// mask tensor is stored or fed. Dropout draws from the model's own
// Generator, whose state is a device tensor (checkpointed with the model).
#ifndef KILN_FRONTENDS_NN_GPT2_H
#define KILN_FRONTENDS_NN_GPT2_H

#include "frontends/nn/CausalLM.h"
#include "frontends/nn/Layers.h"
#include "frontends/nn/ModelConfig.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::nn {

/// A Hugging Face GPT-2 `config.json` → the config (n_ctx is accepted for
/// n_positions). Throws kiln::Error naming the file on a bad file or on an
/// architecture this model does not implement (an activation other than
/// gelu_new, n_inner other than 4 n_embd, untied embeddings,
/// scale_attn_by_inverse_layer_idx).
GPT2Config load_gpt2_config(const std::string &path);

/// Multi-head causal self-attention: c_attn [C, 3C] → q, k, v heads,
/// softmax(q kᵀ / sqrt(d) masked to j ≤ i) v, c_proj [C, C].
class CausalSelfAttention : public Module {
public:
  CausalSelfAttention(const GPT2Config &config, InitContext &init,
                      Generator *generator);
  /// [B, T, C] → [B, T, C].
  Tensor forward(const Tensor &x) const;

  std::shared_ptr<Conv1D> c_attn, c_proj;
  std::shared_ptr<Dropout> attn_dropout, resid_dropout;
  int64_t n_head;
};

/// The feed-forward block: c_fc [C, 4C], GELU, c_proj [4C, C], dropout.
class MLP : public Module {
public:
  MLP(const GPT2Config &config, InitContext &init, Generator *generator);
  /// [B, T, C] → [B, T, C].
  Tensor forward(const Tensor &x) const;

  std::shared_ptr<Conv1D> c_fc, c_proj;
  std::shared_ptr<Dropout> dropout;
};

/// A pre-LN transformer block: x + attn(ln_1(x)), then + mlp(ln_2(x)).
class Block : public Module {
public:
  Block(const GPT2Config &config, InitContext &init, Generator *generator);
  /// [B, T, C] → [B, T, C].
  Tensor forward(const Tensor &x) const;

  std::shared_ptr<LayerNorm> ln_1, ln_2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<MLP> mlp;
};

/// Embeddings, the blocks and the final layer norm (HF's GPT2Model).
class GPT2Model : public Module {
public:
  GPT2Model(const GPT2Config &config, InitContext &init, Generator *generator);
  /// input ids [B, T] (i32 or i64) → hidden states [B, T, C].
  Tensor forward(const Tensor &input_ids) const;

  std::shared_ptr<Embedding> wte, wpe;
  std::shared_ptr<Dropout> drop;
  std::vector<std::shared_ptr<Block>> h;
  std::shared_ptr<LayerNorm> ln_f;
  int64_t n_positions;
};

/// GPT-2 with its language-modelling head (tied to the token embedding).
class GPT2LMHeadModel : public CausalLM {
public:
  explicit GPT2LMHeadModel(const GPT2Config &config);
  /// Out of line: the key function that emits the vtable (with its type
  /// info) in GPT2.cpp only, so programs built without RTTI share it.
  ~GPT2LMHeadModel() override;

  /// input ids [B, T] → logits [B, T, vocab].
  Tensor forward(const Tensor &input_ids) const override;
  /// The mean next-token cross-entropy as Hugging Face computes it: logits
  /// at positions 0..T-2 against labels at 1..T-1 (labels of -100 are
  /// ignored) → a 0-d tensor. The head and the loss are one fused op
  /// (linear_cross_entropy), so the [B, T, vocab] logits are never stored.
  Tensor loss(const Tensor &input_ids, const Tensor &labels) const override;
  /// The same from logits already computed by forward().
  static Tensor loss_from_logits(const Tensor &logits, const Tensor &labels);

  const GPT2Config &config() const { return config_; }
  Generator &generator() override { return *generator_; }
  Embedding &input_embeddings() override { return *transformer->wte; }
  std::string model_type() const override { return "gpt2"; }
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t max_positions() const override { return config_.n_positions; }
  bool positions_bounded() const override { return true; }
  std::string describe() const override;

  std::shared_ptr<GPT2Model> transformer;

private:
  GPT2Config config_;
  std::unique_ptr<Generator> generator_;
};

/// Loads a Hugging Face GPT-2 safetensors file (GPT2LMHeadModel's or
/// GPT2Model's, whose names lack "transformer.") into `model` by parameter
/// name; the causal-mask buffers HF once saved ("attn.bias",
/// "attn.masked_bias") are skipped as HF skips them. Throws kiln::Error on a
/// corrupt file or a shape mismatch; with `strict`, also on missing or
/// unexpected keys, else returns them.
LoadResult load_hf_gpt2(GPT2LMHeadModel &model, const std::string &path,
                        bool strict = true);

/// The weights of a Hugging Face model folder → `model`: `dir`/
/// model.safetensors, or the shards that model.safetensors.index.json's
/// weight_map names (each loaded as load_hf_gpt2 does). Throws kiln::Error
/// naming the file on a malformed index, a shard the index names that is
/// absent, or a parameter no file holds (or a name no parameter takes).
void load_hf_gpt2_folder(GPT2LMHeadModel &model, const std::string &dir);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_GPT2_H
