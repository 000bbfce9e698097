// The Llama family (Llama 2 and 3 and their shape: Mistral, Qwen2, Qwen3,
// Phi-3, Gemma)
// with Hugging Face's parameter names and layouts, so LlamaForCausalLM's
// (MistralForCausalLM's, Qwen2ForCausalLM's, ...) safetensors load by
// name: model.embed_tokens, model.layers.{i} of input_layernorm (RMSNorm),
// self_attn.{q,k,v,o}_proj (Linear, weight [out, in]), post_attention_
// layernorm and mlp.{gate,up,down}_proj (SwiGLU), then model.norm and an
// lm_head that is its own tensor unless tie_word_embeddings. Qwen2 adds
// biases to q/k/v_proj, Qwen3 self_attn.{q,k}_norm (RMSNorm per head),
// Phi-3 fuses q/k/v_proj into qkv_proj and gate/up_proj into gate_up_proj
// and drops out each block's outputs; Gemma scales its embeddings by
// sqrt(hidden_size), its RMSNorms by 1 + weight, and gates its MLP with a
// GELU. Queries and keys turn by rotary position
// embeddings (RoPE, with Llama 3.1's frequency scaling); keys and values may
// have fewer heads than queries (grouped-query attention, which the fused
// attention op takes as is). The cos/sin tables are computed on the host, as
// transformers computes them, once per sequence length, and fed as device data.
#ifndef KILN_FRONTENDS_NN_LLAMA_H
#define KILN_FRONTENDS_NN_LLAMA_H

#include "frontends/nn/CausalLM.h"
#include "frontends/nn/Layers.h"
#include "frontends/nn/ModelConfig.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::nn {

/// A Llama `config.json` → the config; throws kiln::Error naming the file
/// (see parseLlamaConfigJson).
LlamaConfig load_llama_config(const std::string &path);

/// The inverse frequencies of RoPE (rotary_dim() / 2 of them: head_dim / 2
/// unless partial) for a sequence of `seqLen` tokens, in f32 as transformers
/// computes them: 1 / theta^(2i / rotary_dim), then the config's scaling
/// (linear: divided by factor; llama3: wavelengths beyond original_max /
/// low_freq_factor divided by factor, those below original_max /
/// high_freq_factor kept, a linear blend between; longrope: divided by the
/// short factors, or by the long ones when seqLen is past original_max). seqLen
/// 0: the frequencies transformers starts from (longrope's short ones).
std::vector<float> rope_inverse_frequencies(const LlamaConfig &config,
                                            int64_t seqLen = 0);
/// `config` with its sliding layers' RoPE (Gemma 3's local_rope_theta and
/// local_rope_scaling) as rope_theta and rope_scaling.
LlamaConfig local_rope_config(const LlamaConfig &config);

/// Rotary position embeddings: x [..., T, D] turned by the angles of
/// positions 0..T-1 (cos and sin [T, R], rotate-half layout, R = D unless a
/// partial rotary factor turns only x's first R dimensions).
class RotaryEmbedding {
public:
  explicit RotaryEmbedding(const LlamaConfig &config);
  /// cos and sin [T, rotary_dim] for positions 0..T-1 (device data, made
  /// once per T).
  const std::pair<Tensor, Tensor> &tables(int64_t t) const;
  /// x·cos + rotate_half(x)·sin, where rotate_half(x) = [-x₂, x₁] for x's
  /// halves x₁, x₂ along the last dimension; with narrower tables, that of
  /// x's first R dimensions, the rest of x after it unchanged.
  static Tensor apply(const Tensor &x, const std::pair<Tensor, Tensor> &table);

private:
  LlamaConfig config_;
  DType dtype_;
  mutable std::map<int64_t, std::pair<Tensor, Tensor>> tables_;
};

/// Causal self-attention with RoPE and grouped-query heads:
/// q_proj [H·D, C], k_proj and v_proj [Hkv·D, C], o_proj [C, H·D]; over a
/// sliding window of keys where the config gives layer `layer` one.
class LlamaAttention : public Module {
public:
  LlamaAttention(const LlamaConfig &config, int64_t layer, InitContext &init,
                 Generator *generator);
  /// [B, T, C] → [B, T, C].
  Tensor forward(const Tensor &x, const std::pair<Tensor, Tensor> &rope) const;

  /// q/k/v_proj, or Phi-3's qkv_proj in their place (the others absent).
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, qkv_proj, o_proj;
  /// Qwen3's RMSNorm over each query and key head (absent otherwise).
  std::shared_ptr<RMSNorm> q_norm, k_norm;
  int64_t num_heads, num_key_value_heads, head_dim;
  /// The keys a query sees, itself included (0: all earlier ones).
  int64_t window;
  /// The scores' scale (Gemma 3's 1 / sqrt(query_pre_attn_scalar); absent:
  /// 1 / sqrt(head_dim)).
  std::optional<double> scale;
  /// Gemma 2's cap on the scores (0: none): an attribute of the fused op,
  /// which backends then write out in chunks (no attention kernel has it).
  double softcap;
  double dropout;
  Generator *generator;
};

/// SwiGLU: down_proj(silu(gate_proj(x)) * up_proj(x)), gate and up from
/// Phi-3's one gate_up_proj where the config fuses them; Gemma's GeGLU with
/// the tanh-approximated GELU in silu's place.
class LlamaMLP : public Module {
public:
  LlamaMLP(const LlamaConfig &config, InitContext &init);
  /// [B, T, C] → [B, T, C].
  Tensor forward(const Tensor &x) const;

  std::shared_ptr<Linear> gate_proj, up_proj, gate_up_proj, down_proj;
  LlamaConfig::Activation activation;
};

/// A pre-norm block: x + attn(norm(x)), then + mlp(norm(h)); with Phi-3's
/// resid_pdrop, each of the two added outputs dropped out first; with Gemma
/// 3's sandwich norms, each added output normed first (x + norm(attn(
/// norm(x))), then h + norm(mlp(norm(h)))).
class LlamaDecoderLayer : public Module {
public:
  LlamaDecoderLayer(const LlamaConfig &config, int64_t layer, InitContext &init,
                    Generator *generator);
  Tensor forward(const Tensor &x, const std::pair<Tensor, Tensor> &rope) const;

  std::shared_ptr<RMSNorm> input_layernorm, post_attention_layernorm;
  /// Gemma 3's (absent elsewhere).
  std::shared_ptr<RMSNorm> pre_feedforward_layernorm,
      post_feedforward_layernorm;
  std::shared_ptr<LlamaAttention> self_attn;
  std::shared_ptr<LlamaMLP> mlp;
  /// Phi-3's (absent elsewhere).
  std::shared_ptr<Dropout> resid_attn_dropout, resid_mlp_dropout;
  /// Turned by the model's local RoPE (Gemma 3's sliding layers).
  bool local_rope = false;
};

/// Embeddings, the decoder layers and the final norm (HF's LlamaModel).
class LlamaModel : public Module {
public:
  LlamaModel(const LlamaConfig &config, InitContext &init,
             Generator *generator);
  /// input ids [B, T] (i32 or i64) → hidden states [B, T, C].
  Tensor forward(const Tensor &input_ids) const;

  std::shared_ptr<Embedding> embed_tokens;
  std::vector<std::shared_ptr<LlamaDecoderLayer>> layers;
  std::shared_ptr<RMSNorm> norm;
  RotaryEmbedding rotary_emb;
  /// Gemma 3's sliding layers' (absent elsewhere).
  std::optional<RotaryEmbedding> local_rotary_emb;
};

/// Llama with its language-modelling head.
class LlamaForCausalLM : public CausalLM {
public:
  explicit LlamaForCausalLM(const LlamaConfig &config);
  ~LlamaForCausalLM() override;

  /// input ids [B, T] → logits [B, T, vocab].
  Tensor forward(const Tensor &input_ids) const override;
  /// The shifted next-token loss; the head and the loss are one fused op
  /// unless the head carries a LoRA branch.
  Tensor loss(const Tensor &input_ids, const Tensor &labels) const override;
  Generator &generator() override { return *generator_; }
  Embedding &input_embeddings() override { return *model->embed_tokens; }
  std::string model_type() const override { return config_.model_type; }
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t max_positions() const override {
    return config_.max_position_embeddings;
  }
  bool positions_bounded() const override { return false; }
  std::string describe() const override;
  const LlamaConfig &config() const { return config_; }
  /// The head's weight [V, C] (embed_tokens' when tied).
  const Tensor &head_weight() const;

  std::shared_ptr<LlamaModel> model;
  /// Absent when tie_word_embeddings (the embedding is the head).
  std::shared_ptr<Linear> lm_head;

private:
  LlamaConfig config_;
  std::unique_ptr<Generator> generator_;
};

/// The weights of a Hugging Face Llama folder (model.safetensors or its
/// shards, LlamaForCausalLM's or LlamaModel's names) → `model`; errors as
/// load_hf_folder's.
void load_hf_llama_folder(LlamaForCausalLM &model, const std::string &dir);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_LLAMA_H
