// Model configurations and their Hugging Face `config.json` parsers. A
// parser takes the file's text and returns a Status (naming the file) rather
// than throwing, so that it can be fuzzed (fuzz/ModelConfigFuzzer.cpp) and
// its errors reach users unchanged; nothing here builds a model.
#ifndef KILN_FRONTENDS_NN_MODELCONFIG_H
#define KILN_FRONTENDS_NN_MODELCONFIG_H

#include "support/HostTensor.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::nn {

/// The most layers a config (or kiln-train's --n_layer) may ask for. Each
/// layer is recorded as ops on the host every step, so 10^9 layers ran the
/// host out of memory (the process killed) before any message; the deepest
/// published transformers have a few hundred.
inline constexpr int64_t kMaxLayers = 4096;

/// The hyper-parameters of Hugging Face's GPT2Config that shape the model.
struct GPT2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  double resid_pdrop = 0.1;
  double embd_pdrop = 0.1;
  double attn_pdrop = 0.1;
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
  /// The parameters' dtype (f64 for gradient checks).
  DType dtype = DType::f32;
  /// Seeds the host generator of the initial weights.
  uint64_t init_seed = 0;
  /// false: random weights are left zero, never drawn, in memory that is
  /// never touched: a model that is planned, not trained (kilnc plan holds
  /// Llama-3-8B's weights this way on a host with less memory than they).
  bool draw_initial_values = true;
  /// Seeds the model's dropout generator.
  uint64_t dropout_seed = 0;

  /// Sets all three dropout probabilities.
  GPT2Config &with_dropout(double p) {
    resid_pdrop = embd_pdrop = attn_pdrop = p;
    return *this;
  }
};

/// A GPT-2 `config.json`'s text → the config (n_ctx is accepted for
/// n_positions); InvalidArgument naming `fileName` on bad JSON, a bad value
/// or an architecture kiln's GPT-2 does not implement (an activation other
/// than gelu_new, n_inner other than 4 n_embd, untied embeddings,
/// scale_attn_by_inverse_layer_idx).
absl::StatusOr<GPT2Config> parseGPT2ConfigJson(std::string_view text,
                                               std::string_view fileName);

/// How rotary embeddings stretch to longer contexts (Hugging Face's
/// rope_parameters / rope_scaling): none, "linear" (inverse frequencies
/// divided by factor) or "llama3" (Llama 3.1's: low frequencies divided by
/// factor, high ones kept, a smooth blend between).
struct RopeScaling {
  enum class Kind { none, linear, llama3, longrope };
  Kind kind = Kind::none;
  double factor = 1;
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  int64_t original_max_position_embeddings = 8192;
  /// LongRoPE (Phi-3.5, Phi-3's 128k models): each frequency divided by its
  /// short factor for a sequence of at most original_max_position_embeddings
  /// tokens, by its long factor past it (rotary_dim() / 2 of each), and cos
  /// and sin multiplied by attention_factor (given, else sqrt(1 + ln factor
  /// / ln original), factor being max_position_embeddings / original).
  std::vector<double> short_factor, long_factor;
  double attention_factor = 1;
};

/// The hyper-parameters of Hugging Face's LlamaConfig that shape the model
/// (Llama 2 and 3, and configs of the same architecture: Mistral's).
struct LlamaConfig {
  /// config.json's model_type, kept when it is saved: "llama"; "mistral"
  /// (Llama's architecture with attention over a sliding window of keys);
  /// "qwen2" (biases on the query, key and value projections); "qwen3"
  /// (an RMSNorm over each query and key head before RoPE); "phi3" (fused
  /// projections, dropout on each block's outputs); "gemma" (the
  /// differences gemma_style names, and a GELU MLP); "gemma2" (Gemma's, with
  /// sandwich_norms, query_pre_attn_scalar, every other layer sliding and
  /// soft caps on the scores and logits); "gemma3_text" (Gemma's, with
  /// Qwen3's per-head norms, sandwich_norms, query_pre_attn_scalar, and
  /// sliding layers with their own RoPE).
  std::string model_type = "llama";
  /// Mistral's, Phi-3's or Gemma 3's sliding_window, or Qwen's when
  /// use_sliding_window: a
  /// query of a sliding layer (layer_window()) sees the last this many
  /// positions, itself included; 0 (null in the file, or Qwen's
  /// use_sliding_window false): every earlier position.
  int64_t sliding_window = 0;
  /// Qwen's max_window_layers and the window it names even when off
  /// (written back as read).
  int64_t max_window_layers = 28;
  std::optional<int64_t> qwen_sliding_window;
  /// layer_types as read, true for "sliding_attention": Qwen's (empty when
  /// the file has none: layers from max_window_layers on slide) and Gemma
  /// 3's (made from sliding_window_pattern when the file has none: every
  /// layer but each pattern-th).
  std::vector<bool> sliding_layers;
  /// Gemma 3's sliding_window_pattern when the file gives one (written
  /// back beside layer_types for transformers 4's configs).
  std::optional<int64_t> sliding_window_pattern;
  /// The window of layer `layer`'s attention, as transformers masks it:
  /// sliding_window on every layer of Mistral and Phi-3, on Qwen's,
  /// Gemma 2's and Gemma 3's sliding layers only; 0 for none.
  int64_t layer_window(int64_t layer) const;
  /// Gemma 3's sliding layers turn queries and keys by their own RoPE
  /// (rope_local_base_freq, or rope_parameters' "sliding_attention"): its
  /// theta and scaling; local_rope_theta 0: every layer uses rope_theta's.
  double local_rope_theta = 0;
  RopeScaling local_rope_scaling;
  /// Whether layer `layer` turns by the local RoPE.
  bool uses_local_rope(int64_t layer) const;
  /// Whether sliding_layers names layer `layer` "sliding_attention".
  bool listed_sliding(int64_t layer) const;
  /// Gemma 3's query_pre_attn_scalar: attention scores scaled by its
  /// inverse square root rather than head_dim's (0: head_dim's).
  double query_pre_attn_scalar = 0;
  /// Gemma 2's soft caps (also read from a Gemma 3 config that sets them):
  /// the attention's scores become cap · tanh(scores / cap) before the mask
  /// and the softmax, and the head's logits the same with their own cap;
  /// 0: none.
  double attn_logit_softcapping = 0;
  double final_logit_softcapping = 0;
  /// Gemma 2's and Gemma 3's four norms a layer: post_attention_layernorm
  /// normalises the attention's output before its residual add, and
  /// pre_feedforward_ and post_feedforward_layernorm wrap the MLP the same way.
  bool sandwich_norms = false;
  int64_t vocab_size = 32000;
  int64_t hidden_size = 4096;
  int64_t intermediate_size = 11008;
  int64_t num_hidden_layers = 32;
  int64_t num_attention_heads = 32;
  /// Grouped-query attention: key/value heads (divides the query heads).
  int64_t num_key_value_heads = 32;
  /// hidden_size / num_attention_heads unless config.json says otherwise.
  int64_t head_dim = 128;
  /// Phi-4-mini's partial_rotary_factor: RoPE turns the first rotary_dim()
  /// dimensions of each query and key head and passes the rest through.
  double partial_rotary_factor = 1;
  /// int(head_dim · partial_rotary_factor), as transformers computes it:
  /// the dimensions RoPE turns (head_dim unless partial).
  int64_t rotary_dim() const;
  int64_t max_position_embeddings = 2048;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000;
  RopeScaling rope_scaling;
  double attention_dropout = 0;
  /// Biases on q_proj, k_proj, v_proj and o_proj (Llama's and Qwen3's
  /// attention_bias).
  bool attention_bias = false;
  /// Biases on q_proj, k_proj and v_proj only (Qwen2's, always).
  bool qkv_bias = false;
  /// q_norm and k_norm: RMSNorm over head_dim on each query and key head
  /// before RoPE (Qwen3).
  bool qk_norm = false;
  /// Phi-3's fused projections: self_attn.qkv_proj [(H + 2·Hkv)·D, C] (the
  /// query, key and value rows one after another) for q/k/v_proj, and
  /// mlp.gate_up_proj [2·I, C] (gate rows, then up rows) for gate/up_proj.
  bool fused_projections = false;
  /// Phi-3's dropout on the attention's and the MLP's outputs before each
  /// residual add; its embd_pdrop (which transformers' Phi-3 never applies)
  /// and original_max_position_embeddings are kept to be written back.
  double resid_pdrop = 0;
  double embd_pdrop = 0;
  int64_t original_max_position_embeddings = 0;
  bool mlp_bias = false;
  bool tie_word_embeddings = false;
  /// The MLP's activation: Llama's silu (SwiGLU) or Gemma's tanh-
  /// approximated GELU (GeGLU: config.json's gelu_pytorch_tanh, and the
  /// "gelu" its early configs say, which transformers reads as the same).
  enum class Activation { silu, gelu_tanh };
  Activation hidden_act = Activation::silu;
  /// Gemma's differences from Llama besides the activation: every RMSNorm
  /// scales by 1 + weight (weights start at zero), and the embeddings are
  /// multiplied by sqrt(hidden_size) in the table's type. Gemma ties the
  /// head to the embedding (by default) and does not scale it.
  bool gemma_style = false;
  double initializer_range = 0.02;
  /// config.json's eos_token_id when it is a list (Llama 3 Instruct's stop
  /// tokens: <|end_of_text|>, <|eom_id|>, <|eot_id|>), written back as a
  /// list when the model is saved; empty for a single id.
  std::vector<int64_t> eos_token_ids;
  /// config.json's pad_token_id, written back as read (null when absent:
  /// Phi3Config's default, 32000, would not fit a smaller vocabulary).
  std::optional<int64_t> pad_token_id;
  /// The parameters' dtype (f64 for gradient checks).
  DType dtype = DType::f32;
  /// Seeds the host generator of the initial weights.
  uint64_t init_seed = 0;
  /// false: random weights are left zero, never drawn, in memory that is
  /// never touched: a model that is planned, not trained (kilnc plan holds
  /// Llama-3-8B's weights this way on a host with less memory than they).
  bool draw_initial_values = true;
  /// Seeds the model's dropout generator (attention and LoRA dropout).
  uint64_t dropout_seed = 0;
};

/// A Llama-family (Llama, Mistral, Qwen, Phi-3, Gemma) `config.json`'s text →
/// the config. Reads both of Hugging Face's spellings of RoPE settings
/// (rope_theta + rope_scaling, and the newer rope_parameters); InvalidArgument
/// naming `fileName` on bad JSON, a bad value or what kiln's Llama does not
/// implement (hidden_act other than silu, or Gemma's gelu_pytorch_tanh,
/// pretraining_tp > 1, a rope type other than default, linear, llama3 and
/// longrope, a partial_rotary_factor outside Phi-3's configs or one that leaves
/// an odd rotary part, heads that do not divide). A Gemma config's absent keys
/// take GemmaConfig's defaults (head_dim 256, a tied head, gelu_pytorch_tanh).
absl::StatusOr<LlamaConfig> parseLlamaConfigJson(std::string_view text,
                                                 std::string_view fileName);

/// transformers' `torch_dtype` words → the storage type: auto and float32
/// → f32, bfloat16 → bf16, float16 → f16; nullopt for any other word.
std::optional<DType> parse_torch_dtype(std::string_view word);
/// The word parse_torch_dtype reads for `dtype` ("float32" for f32).
std::string_view torch_dtype_name(DType dtype);

/// The model_type values whose architecture is kiln's Llama (llama, mistral,
/// qwen2, qwen3, phi3, gemma, gemma2, gemma3_text).
bool isLlamaFamily(std::string_view modelType);
/// Every model_type kiln implements, for messages: "gpt2, llama, ...".
std::string_view implementedModelTypes();
/// The message for a config.json's model_type kiln does not implement:
/// "model_type 'bert' is not one kiln implements (gemma, ...)", and what
/// to use instead where there is something (Gemma 3's text models for an
/// image-text gemma3 folder).
std::string unimplementedModelType(std::string_view modelType);

/// A config.json's "model_type" ("gpt2", "llama", "mistral", ...); an empty
/// string when the file has none, InvalidArgument naming the file when it is
/// not JSON.
absl::StatusOr<std::string> readModelType(std::string_view text,
                                          std::string_view fileName);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_MODELCONFIG_H
