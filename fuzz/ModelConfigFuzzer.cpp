// libFuzzer target: bytes → a model's config.json (frontends/nn/
// ModelConfig.h), read by both parsers (GPT-2's and Llama's) and by the
// model-type reader. Configs come with downloaded model folders; a bad one
// must be an error naming the file, and an accepted one must describe a
// model whose sizes kiln can multiply without overflow.
#include "FuzzInput.h"

#include "frontends/nn/ModelConfig.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::nn;
  std::string_view text = kiln::fuzz::asText(data, size);
  absl::StatusOr<GPT2Config> config = parseGPT2ConfigJson(text, "config.json");
  if (config.ok() && (config->n_embd % config->n_head != 0 ||
                      config->attn_pdrop >= 1 || config->vocab_size <= 0))
    std::abort(); // accepted a config the model refuses
  absl::StatusOr<LlamaConfig> llama = parseLlamaConfigJson(text, "config.json");
  if (llama.ok() &&
      (llama->num_attention_heads % llama->num_key_value_heads != 0 ||
       llama->head_dim <= 0 || llama->head_dim % 2 != 0 ||
       llama->vocab_size <= 0 || llama->attention_dropout >= 1 ||
       llama->sliding_window < 0 ||
       (llama->rope_scaling.kind == RopeScaling::Kind::longrope &&
        (int64_t(llama->rope_scaling.short_factor.size()) !=
             llama->head_dim / 2 ||
         int64_t(llama->rope_scaling.long_factor.size()) !=
             llama->head_dim / 2 ||
         !(llama->rope_scaling.attention_factor > 0))) ||
       (llama->rope_scaling.kind != RopeScaling::Kind::none &&
        !(llama->rope_scaling.factor > 0))))
    std::abort(); // accepted a config LlamaForCausalLM refuses
  // Qwen's layer_types, when read, name every layer (layer_window indexes
  // them by layer).
  if (llama.ok() && !llama->qwen_sliding_layers.empty() &&
      int64_t(llama->qwen_sliding_layers.size()) != llama->num_hidden_layers)
    std::abort();
  (void)readModelType(text, "config.json");
  return 0;
}
