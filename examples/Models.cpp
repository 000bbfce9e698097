// GPT-2 and Llama for kiln-train; see Models.h.
#include "examples/Models.h"

#include "examples/TrainerLog.h"

#include "frontends/nn/GPT2.h"
#include "frontends/nn/Llama.h"

#include <cmath>

namespace kiln::train {
namespace {

/// The config taken (a folder's or --config_overrides', --dropout already
/// folded in), else one of the n_* flags' shape and --dropout.
nn::GPT2Config gpt2Config(const TrainArgs &a, int64_t vocabSize) {
  nn::GPT2Config c;
  if (a.gpt2Config) {
    c = *a.gpt2Config;
  } else {
    c.n_positions = a.nPositions;
    c.n_embd = a.nEmbd;
    c.n_layer = a.nLayer;
    c.n_head = a.nHead;
    c.with_dropout(a.dropout);
  }
  c.vocab_size = vocabSize;
  return c;
}

/// A Llama of the n_* flags' shape: as many key/value heads as query heads
/// and Llama's MLP width, 8/3 of the hidden size (rounded up to a multiple
/// of 16), unless the flags are transformers' LlamaConfig() defaults.
nn::LlamaConfig llamaConfigFromFlags(const TrainArgs &a) {
  nn::LlamaConfig c;
  c.hidden_size = a.nEmbd;
  c.num_hidden_layers = a.nLayer;
  c.num_attention_heads = c.num_key_value_heads = a.nHead;
  c.head_dim = a.nEmbd / a.nHead;
  c.max_position_embeddings = a.nPositions;
  if (a.nEmbd != nn::LlamaConfig().hidden_size)
    c.intermediate_size = (8 * a.nEmbd / 3 + 15) / 16 * 16;
  // transformers' attention_dropout is 0; --dropout given sets it.
  if (a.given.count("dropout"))
    c.attention_dropout = a.dropout;
  return c;
}

// LongRoPE's two lists: "short_factor": [...], "long_factor": [...].
std::string longRopeFactors(const nn::RopeScaling &s) {
  auto list = [](const std::vector<double> &factors) {
    std::string text = "[";
    for (size_t i = 0; i < factors.size(); ++i)
      text += (i ? ", " : "") + pythonFloat(factors[i]);
    return text + "]";
  };
  return "\"short_factor\": " + list(s.short_factor) +
         ", \"long_factor\": " + list(s.long_factor);
}

std::string ropeJson(const nn::LlamaConfig &c) {
  const nn::RopeScaling &s = c.rope_scaling;
  std::string theta = "\"rope_theta\": " + pythonFloat(c.rope_theta);
  if (c.partial_rotary_factor != 1)
    theta +=
        ", \"partial_rotary_factor\": " + pythonFloat(c.partial_rotary_factor);
  if (s.kind == nn::RopeScaling::Kind::none)
    return "{" + theta + ", \"rope_type\": \"default\"}";
  std::string json = "{" + theta + ", \"factor\": " + pythonFloat(s.factor);
  if (s.kind == nn::RopeScaling::Kind::longrope)
    return json + ", \"attention_factor\": " + pythonFloat(s.attention_factor) +
           ", " + longRopeFactors(s) +
           ", \"original_max_position_embeddings\": " +
           std::to_string(s.original_max_position_embeddings) +
           ", \"rope_type\": \"longrope\"}";
  if (s.kind == nn::RopeScaling::Kind::linear)
    return json + ", \"rope_type\": \"linear\"}";
  return json + ", \"low_freq_factor\": " + pythonFloat(s.low_freq_factor) +
         ", \"high_freq_factor\": " + pythonFloat(s.high_freq_factor) +
         ", \"original_max_position_embeddings\": " +
         std::to_string(s.original_max_position_embeddings) +
         ", \"rope_type\": \"llama3\"}";
}

std::string idOrNull(std::optional<int32_t> id) {
  return id ? std::to_string(*id) : "null";
}

std::string gpt2Json(const nn::GPT2Config &c, std::optional<int32_t> eos) {
  auto num = [](double v) { return pythonFloat(v); };
  // GPT2Config uses the end-of-text token for both.
  std::string special = idOrNull(eos);
  return "{\n  \"model_type\": \"gpt2\",\n  \"architectures\": "
         "[\"GPT2LMHeadModel\"],\n  \"activation_function\": \"gelu_new\",\n"
         "  \"vocab_size\": " +
         std::to_string(c.vocab_size) +
         ",\n  \"n_positions\": " + std::to_string(c.n_positions) +
         ",\n  \"n_ctx\": " + std::to_string(c.n_positions) +
         ",\n  \"n_embd\": " + std::to_string(c.n_embd) +
         ",\n  \"n_layer\": " + std::to_string(c.n_layer) +
         ",\n  \"n_head\": " + std::to_string(c.n_head) +
         ",\n  \"resid_pdrop\": " + num(c.resid_pdrop) +
         ",\n  \"embd_pdrop\": " + num(c.embd_pdrop) +
         ",\n  \"attn_pdrop\": " + num(c.attn_pdrop) +
         ",\n  \"layer_norm_epsilon\": " + num(c.layer_norm_epsilon) +
         ",\n  \"initializer_range\": " + num(c.initializer_range) +
         ",\n  \"bos_token_id\": " + special +
         ",\n  \"eos_token_id\": " + special +
         ",\n  \"tie_word_embeddings\": true\n}\n";
}

// transformers' class for a Llama-family model_type.
std::string architecture(const std::string &modelType) {
  if (modelType == "mistral")
    return "MistralForCausalLM";
  if (modelType == "qwen2")
    return "Qwen2ForCausalLM";
  if (modelType == "qwen3")
    return "Qwen3ForCausalLM";
  if (modelType == "phi3")
    return "Phi3ForCausalLM";
  if (modelType == "gemma")
    return "GemmaForCausalLM";
  if (modelType == "gemma2")
    return "Gemma2ForCausalLM";
  if (modelType == "gemma3_text")
    return "Gemma3ForCausalLM";
  return "LlamaForCausalLM";
}

// `"layer_types": [...]` from c.sliding_layers.
std::string layerTypesJson(const nn::LlamaConfig &c) {
  std::string json = ",\n  \"layer_types\": [";
  for (size_t i = 0; i < c.sliding_layers.size(); ++i)
    json +=
        std::string(i ? ", " : "") +
        (c.sliding_layers[i] ? "\"sliding_attention\"" : "\"full_attention\"");
  return json + "]";
}

// The keys a family adds to Llama's config.json: Mistral's window; Qwen's
// window switch, window, layer count and layer_types (when read); Phi-3's
// window, dropouts and partial rotary factor; Gemma 2's and Gemma 3's attention
// scale, window, layer_types and soft caps, and Gemma 3's local RoPE (in
// transformers 4's spelling: rope_parameters has both).
std::string familyJson(const nn::LlamaConfig &c) {
  auto size = [](std::optional<int64_t> v) {
    return v && *v > 0 ? std::to_string(*v) : std::string("null");
  };
  auto cap = [](double v) { return v > 0 ? pythonFloat(v) : "null"; };
  const bool gemma3 = c.model_type == "gemma3_text";
  if (gemma3 || c.model_type == "gemma2")
    return ",\n  \"hidden_activation\": \"gelu_pytorch_tanh\"" +
           std::string(",\n  \"query_pre_attn_scalar\": ") +
           // An int to Gemma3TextConfig, which checks the type.
           (c.query_pre_attn_scalar == std::floor(c.query_pre_attn_scalar)
                ? std::to_string(int64_t(c.query_pre_attn_scalar))
                : pythonFloat(c.query_pre_attn_scalar)) +
           ",\n  \"sliding_window\": " + size(c.sliding_window) +
           (c.sliding_window_pattern
                ? ",\n  \"sliding_window_pattern\": " +
                      std::to_string(*c.sliding_window_pattern)
                : std::string()) +
           layerTypesJson(c) +
           (gemma3 ? ",\n  \"rope_local_base_freq\": " +
                         pythonFloat(c.local_rope_theta)
                   : std::string()) +
           ",\n  \"attn_logit_softcapping\": " + cap(c.attn_logit_softcapping) +
           ",\n  \"final_logit_softcapping\": " +
           cap(c.final_logit_softcapping);
  if (c.model_type == "mistral")
    return ",\n  \"sliding_window\": " + size(c.sliding_window);
  if (c.model_type == "phi3")
    return ",\n  \"sliding_window\": " + size(c.sliding_window) +
           // Phi-4-mini's, at the top level where transformers 4 reads it.
           (c.partial_rotary_factor != 1
                ? ",\n  \"partial_rotary_factor\": " +
                      pythonFloat(c.partial_rotary_factor)
                : std::string()) +
           ",\n  \"resid_pdrop\": " + pythonFloat(c.resid_pdrop) +
           ",\n  \"embd_pdrop\": " + pythonFloat(c.embd_pdrop) +
           ",\n  \"original_max_position_embeddings\": " +
           std::to_string(c.original_max_position_embeddings);
  if (c.model_type != "qwen2" && c.model_type != "qwen3")
    return "";
  std::string json =
      std::string(",\n  \"use_sliding_window\": ") +
      (c.sliding_window > 0 ? "true" : "false") +
      ",\n  \"sliding_window\": " + size(c.qwen_sliding_window) +
      ",\n  \"max_window_layers\": " + std::to_string(c.max_window_layers);
  return c.sliding_layers.empty() ? json : json + layerTypesJson(c);
}

std::string llamaJson(const nn::LlamaConfig &c, std::optional<int32_t> bos,
                      std::optional<int32_t> eos) {
  auto num = [](double v) { return pythonFloat(v); };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  // RoPE in both of transformers' spellings: rope_parameters (5.x) and
  // rope_theta + rope_scaling (4.x, which ignores the former).
  std::string rope = ropeJson(c);
  // Gemma 3's: one for each layer type.
  std::string ropeParameters =
      c.model_type == "gemma3_text"
          ? "{\"full_attention\": " + rope + ", \"sliding_attention\": " +
                ropeJson(nn::local_rope_config(c)) + "}"
          : rope;
  // transformers 4's Phi-3 takes exactly these three keys for longrope.
  std::string scaling =
      c.rope_scaling.kind == nn::RopeScaling::Kind::none ? "null"
      : c.rope_scaling.kind == nn::RopeScaling::Kind::longrope
          ? "{\"type\": \"longrope\", " + longRopeFactors(c.rope_scaling) + "}"
          : rope;
  // A list of stop tokens from the config it was read from stays a list.
  std::string eosJson = idOrNull(eos);
  if (!c.eos_token_ids.empty()) {
    eosJson = "[";
    for (size_t i = 0; i < c.eos_token_ids.size(); ++i)
      eosJson += (i ? ", " : "") + std::to_string(c.eos_token_ids[i]);
    eosJson += "]";
  }
  // Mistral's and Qwen's configs are Llama's with a window (and their own
  // classes).
  std::string window = familyJson(c);
  return "{\n  \"model_type\": \"" + c.model_type +
         "\",\n  \"architectures\": [\"" + architecture(c.model_type) + "\"]" +
         ",\n  \"hidden_act\": \"" +
         (c.hidden_act == nn::LlamaConfig::Activation::gelu_tanh
              ? "gelu_pytorch_tanh"
              : "silu") +
         "\",\n  \"vocab_size\": " + std::to_string(c.vocab_size) +
         ",\n  \"hidden_size\": " + std::to_string(c.hidden_size) +
         ",\n  \"intermediate_size\": " + std::to_string(c.intermediate_size) +
         ",\n  \"num_hidden_layers\": " + std::to_string(c.num_hidden_layers) +
         ",\n  \"num_attention_heads\": " +
         std::to_string(c.num_attention_heads) +
         ",\n  \"num_key_value_heads\": " +
         std::to_string(c.num_key_value_heads) +
         ",\n  \"head_dim\": " + std::to_string(c.head_dim) +
         ",\n  \"max_position_embeddings\": " +
         std::to_string(c.max_position_embeddings) +
         ",\n  \"rms_norm_eps\": " + num(c.rms_norm_eps) +
         ",\n  \"rope_theta\": " + num(c.rope_theta) +
         ",\n  \"rope_scaling\": " + scaling +
         ",\n  \"rope_parameters\": " + ropeParameters +
         ",\n  \"attention_bias\": " + flag(c.attention_bias) +
         ",\n  \"attention_dropout\": " + num(c.attention_dropout) +
         ",\n  \"mlp_bias\": " + flag(c.mlp_bias) +
         ",\n  \"initializer_range\": " + num(c.initializer_range) +
         ",\n  \"pretraining_tp\": 1" + ",\n  \"pad_token_id\": " +
         (c.pad_token_id ? std::to_string(*c.pad_token_id) : "null") +
         ",\n  \"bos_token_id\": " + idOrNull(bos) +
         ",\n  \"eos_token_id\": " + eosJson +
         ",\n  \"tie_word_embeddings\": " + flag(c.tie_word_embeddings) +
         window + "\n}\n";
}

} // namespace

ModelSpec modelSpec(const TrainArgs &a, int64_t vocabSize) {
  ModelSpec spec;
  spec.type = a.modelType;
  if (spec.type == "llama") {
    spec.llama = a.llamaConfig ? *a.llamaConfig : llamaConfigFromFlags(a);
    spec.llama.vocab_size = vocabSize;
    spec.llama.init_seed = spec.llama.dropout_seed = a.seed;
  } else {
    spec.gpt2 = gpt2Config(a, vocabSize);
    spec.gpt2.init_seed = spec.gpt2.dropout_seed = a.seed;
  }
  spec.labelSmoothing = a.labelSmoothingFactor;
  spec.neftuneNoiseAlpha = a.neftuneNoiseAlpha;
  return spec;
}

std::unique_ptr<nn::CausalLM> buildModel(const ModelSpec &spec) {
  std::unique_ptr<nn::CausalLM> model;
  const bool llama = spec.type == "llama";
  try {
    if (llama)
      model = std::make_unique<nn::LlamaForCausalLM>(spec.llama);
    else
      model = std::make_unique<nn::GPT2LMHeadModel>(spec.gpt2);
  } catch (const std::bad_alloc &) {
    // The weights are allocated as the layers are built: a config too
    // large for the machine fails here, before any step.
    int64_t layers = llama ? spec.llama.num_hidden_layers : spec.gpt2.n_layer;
    int64_t width = llama ? spec.llama.hidden_size : spec.gpt2.n_embd;
    throw Error("building the " + spec.type + " model (" +
                std::to_string(layers) + " layers of width " +
                std::to_string(width) +
                ") ran out of host memory: its weights do not fit in this "
                "machine's memory");
  }
  model->set_label_smoothing(spec.labelSmoothing);
  model->set_neftune_noise_alpha(spec.neftuneNoiseAlpha);
  return model;
}

void loadPretrained(const ModelSpec &spec, nn::CausalLM &model,
                    const std::string &dir) {
  // buildModel(spec) made `model`, so its class is the spec's.
  if (spec.type == "llama")
    nn::load_hf_llama_folder(static_cast<nn::LlamaForCausalLM &>(model), dir);
  else
    nn::load_hf_gpt2_folder(static_cast<nn::GPT2LMHeadModel &>(model), dir);
}

std::string configJson(const ModelSpec &spec,
                       const data::Tokenizer &tokenizer) {
  return configJson(spec, tokenizer.bosId(), tokenizer.eosId());
}

std::string configJson(const ModelSpec &spec, std::optional<int32_t> bos,
                       std::optional<int32_t> eos) {
  if (spec.type == "llama")
    return llamaJson(spec.llama, bos, eos);
  return gpt2Json(spec.gpt2, eos);
}

} // namespace kiln::train
