// libFuzzer target: bytes → the JSON files a training job reads besides a
// model's config.json, each by its parser: a LoRA adapter's
// adapter_config.json (frontends/nn/AdapterConfig.h), a sharded model's
// model.safetensors.index.json (Safetensors.h), a DeepSpeed config
// (examples/DeepSpeedConfig.h) and a checkpoint's trainer_state.json, whose
// log history a resumed run carries over (examples/TrainerState.h). The
// first byte picks the file. Each comes from outside (downloaded, edited,
// torn by a crash): a bad one must be an error, and an accepted one must
// hold what the parser promises and survive being written back as kiln
// writes it.
#include "FuzzInput.h"

#include "examples/DeepSpeedConfig.h"
#include "examples/TrainerState.h"
#include "frontends/nn/AdapterConfig.h"
#include "frontends/nn/Safetensors.h"

#include <cmath>
#include <cstdlib>

namespace {

void adapterConfig(std::string_view text) {
  using namespace kiln::nn;
  absl::StatusOr<AdapterConfigFile> file =
      parseAdapterConfigJson(text, kAdapterConfigFile);
  if (!file.ok())
    return;
  const LoraConfig &lora = file->lora;
  if (lora.r < 1 || lora.r > kMaxLoraRank || !std::isfinite(lora.alpha) ||
      !(lora.dropout >= 0 && lora.dropout < 1) || lora.target_modules.empty())
    std::abort(); // accepted settings out of range
  for (int64_t layer : lora.layers_to_transform)
    if (layer < 0)
      std::abort();
  absl::StatusOr<AdapterConfigFile> again = parseAdapterConfigJson(
      adapterConfigJson(lora, file->base_model, false), "written back");
  if (!again.ok() || again->base_model != file->base_model ||
      again->lora.r != lora.r || again->lora.alpha != lora.alpha ||
      again->lora.dropout != lora.dropout ||
      again->lora.use_rslora != lora.use_rslora ||
      again->lora.target_modules != lora.target_modules ||
      again->lora.target_modules_is_regex != lora.target_modules_is_regex ||
      again->lora.modules_to_save != lora.modules_to_save ||
      again->lora.layers_to_transform != lora.layers_to_transform ||
      again->lora.layers_pattern != lora.layers_pattern)
    std::abort(); // what kiln writes does not read back the same
}

void safetensorsIndex(std::string_view text) {
  absl::StatusOr<std::map<std::string, std::string>> map =
      kiln::nn::parseSafetensorsIndex(text, kiln::nn::kSafetensorsIndexFile);
  if (!map.ok())
    return;
  for (const auto &[name, shard] : *map)
    if (shard.empty() || shard == "." || shard == ".." ||
        shard.find('/') != std::string::npos ||
        shard.find('\0') != std::string::npos)
      std::abort(); // a shard outside the model's folder
}

void deepSpeedConfig(std::string_view text) {
  using namespace kiln::train;
  absl::StatusOr<DeepSpeedConfig> config =
      parseDeepSpeedConfig(text, "ds.json");
  if (!config.ok())
    return;
  if (config->zeroStage < 0 || config->zeroStage > 2)
    std::abort(); // a stage kiln-train does not build
  for (const DeepSpeedValue &given : config->given)
    if (!std::isfinite(given.value) || given.flag.empty())
      std::abort(); // a value no flag could equal
  if (const auto &scaling = config->lossScaling)
    if (!(scaling->initScale > 0) || !std::isfinite(scaling->initScale) ||
        scaling->window < 1 || scaling->hysteresis < 1 ||
        !(scaling->minScale > 0) || !std::isfinite(scaling->minScale))
      std::abort(); // settings GradScaler refuses
  (void)deepSpeedMismatches(*config, {{"learning_rate", 5e-5}});
  if (!config->schedule)
    return;
  for (int64_t total : {1, 3, 1000}) {
    absl::StatusOr<std::function<double(int64_t)>> rates =
        deepSpeedLearningRates(*config->schedule, 5e-5, 0, total);
    if (!rates.ok())
      continue;
    for (int64_t step : {0, 1, 2, 3, 999, 1000, 1001, 5000}) {
      double rate = (*rates)(step);
      if (!std::isfinite(rate) || rate < 0)
        std::abort(); // a learning rate the optimizer cannot take
    }
  }
}

void trainerState(std::string_view text) {
  using namespace kiln::train;
  absl::StatusOr<std::vector<std::string>> history = parseLogHistory(text);
  if (!history.ok())
    return;
  TrainerState state;
  state.log_history = *history;
  absl::StatusOr<std::vector<std::string>> again =
      parseLogHistory(trainerStateJson(state));
  if (!again.ok() || *again != *history)
    std::abort(); // a resumed run's history would change as it is saved
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [mode, text] = kiln::fuzz::splitMode(data, size, 4);
  switch (mode) {
  case 0:
    adapterConfig(text);
    break;
  case 1:
    safetensorsIndex(text);
    break;
  case 2:
    deepSpeedConfig(text);
    break;
  default:
    trainerState(text);
    break;
  }
  return 0;
}
