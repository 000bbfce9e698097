// A model of a config.json's family; see AutoModel.h.
#include "frontends/nn/AutoModel.h"

#include "frontends/nn/GPT2.h"
#include "frontends/nn/Llama.h"
#include "frontends/nn/ModelConfig.h"

#include "absl/strings/str_cat.h"

namespace kiln::nn {

absl::StatusOr<std::unique_ptr<CausalLM>>
causal_lm_from_config(std::string_view text, std::string_view fileName,
                      const ModelBuild &build) {
  absl::StatusOr<std::string> type = readModelType(text, fileName);
  if (!type.ok())
    return type.status();
  if (isLlamaFamily(*type)) {
    absl::StatusOr<LlamaConfig> config = parseLlamaConfigJson(text, fileName);
    if (!config.ok())
      return config.status();
    config->dtype = build.dtype;
    config->draw_initial_values = build.draw_initial_values;
    return std::unique_ptr<CausalLM>(
        std::make_unique<LlamaForCausalLM>(*config));
  }
  if (!type->empty() && *type != "gpt2")
    return absl::InvalidArgumentError(absl::StrCat(
        "'", std::string(fileName), "': ", unimplementedModelType(*type)));
  absl::StatusOr<GPT2Config> config = parseGPT2ConfigJson(text, fileName);
  if (!config.ok())
    return config.status();
  config->dtype = build.dtype;
  config->draw_initial_values = build.draw_initial_values;
  return std::unique_ptr<CausalLM>(std::make_unique<GPT2LMHeadModel>(*config));
}

} // namespace kiln::nn
