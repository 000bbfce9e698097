// libFuzzer target: bytes → a model's config.json (frontends/nn/
// ModelConfig.h). Configs come with downloaded model folders; a bad one must
// be an error naming the file, and an accepted one must describe a model
// whose sizes kiln can multiply without overflow.
#include "FuzzInput.h"

#include "frontends/nn/ModelConfig.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  absl::StatusOr<kiln::nn::GPT2Config> config =
      kiln::nn::parseGPT2ConfigJson(kiln::fuzz::asText(data, size),
                                    "config.json");
  if (config.ok() && (config->n_embd % config->n_head != 0 ||
                      config->attn_pdrop >= 1 || config->vocab_size <= 0))
    std::abort(); // accepted a config the model refuses
  return 0;
}
