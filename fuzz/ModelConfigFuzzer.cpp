// libFuzzer target: bytes → a model's config.json (frontends/nn/
// ModelConfig.h), read by both parsers (GPT-2's and Llama's) and by the
// model-type reader. Configs come with downloaded model folders; a bad one
// must be an error naming the file, and an accepted one must describe a
// model whose sizes kiln can multiply without overflow.
#include "FuzzInput.h"

#include "frontends/nn/ModelConfig.h"

#include <cmath>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::nn;
  std::string_view text = kiln::fuzz::asText(data, size);
  absl::StatusOr<GPT2Config> config = parseGPT2ConfigJson(text, "config.json");
  if (config.ok() && (config->n_embd % config->n_head != 0 ||
                      config->attn_pdrop >= 1 || config->vocab_size <= 0))
    std::abort(); // accepted a config the model refuses
  absl::StatusOr<LlamaConfig> llama = parseLlamaConfigJson(text, "config.json");
  // A RoPE scaling RotaryEmbedding can use: LongRoPE's factors one a
  // frequency (of the rotary dimensions, which a partial factor makes
  // fewer than the head's), a positive factor.
  auto badRope = [&](const RopeScaling &s) {
    return (s.kind == RopeScaling::Kind::longrope &&
            (int64_t(s.short_factor.size()) != llama->rotary_dim() / 2 ||
             int64_t(s.long_factor.size()) != llama->rotary_dim() / 2 ||
             !(s.attention_factor > 0))) ||
           (s.kind != RopeScaling::Kind::none && !(s.factor > 0));
  };
  if (llama.ok() &&
      (llama->num_attention_heads % llama->num_key_value_heads != 0 ||
       llama->head_dim <= 0 || llama->head_dim % 2 != 0 ||
       // RoPE turns pairs of the head's dimensions, at least one.
       llama->rotary_dim() < 2 || llama->rotary_dim() % 2 != 0 ||
       llama->rotary_dim() > llama->head_dim || llama->vocab_size <= 0 ||
       llama->attention_dropout >= 1 || llama->sliding_window < 0 ||
       llama->query_pre_attn_scalar < 0 || llama->local_rope_theta < 0 ||
       badRope(llama->rope_scaling) || badRope(llama->local_rope_scaling) ||
       // A cap divides the scores or logits: finite, and 0 for none.
       !(llama->attn_logit_softcapping >= 0) ||
       !std::isfinite(llama->attn_logit_softcapping) ||
       !(llama->final_logit_softcapping >= 0) ||
       !std::isfinite(llama->final_logit_softcapping)))
    std::abort(); // accepted a config LlamaForCausalLM refuses
  // Qwen's and Gemma 2's and 3's layer_types, when read or made, name every
  // layer (layer_window indexes them by layer); Gemma 2's and 3's always are.
  if (llama.ok() &&
      (!llama->sliding_layers.empty() || llama->model_type == "gemma3_text" ||
       llama->model_type == "gemma2") &&
      int64_t(llama->sliding_layers.size()) != llama->num_hidden_layers)
    std::abort();
  (void)readModelType(text, "config.json");
  return 0;
}
