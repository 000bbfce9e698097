// adapter_config.json, PEFT's file for a LoRA adapter's settings: the text
// kiln writes (which peft.PeftModel reads) and the text it reads back from
// an adapter folder that may come from anywhere, range-checked so that an
// accepted file describes adapters kiln can build. The file alone:
// frontends/nn/Lora.h applies, saves, loads and merges the adapters.
#ifndef KILN_FRONTENDS_NN_ADAPTERCONFIG_H
#define KILN_FRONTENDS_NN_ADAPTERCONFIG_H

#include "absl/status/statusor.h"
#include "frontends/nn/PythonRegex.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::nn {

/// PEFT's LoraConfig, the fields that shape the adapters.
struct LoraConfig {
  int64_t r = 8;
  double alpha = 16;
  double dropout = 0.05;
  /// PEFT's use_rslora (rank-stabilised LoRA, Kalajdzievski 2023): the
  /// branch is scaled by alpha / sqrt(r) instead of alpha / r.
  bool use_rslora = false;
  /// Module names as PEFT matches them: a module whose dotted name is a
  /// target or ends with "." + target.
  std::vector<std::string> target_modules;
  /// PEFT's target_modules given as one string (other than "all-linear"):
  /// target_modules then holds that one Python regular expression, and a
  /// module is a target when it matches its whole dotted name
  /// (re.fullmatch). kiln reads the part of Python's syntax such patterns
  /// use (classes, groups, alternatives, repeats: PythonRegex.h) and
  /// refuses the rest by name (named groups, inline flags, lookarounds,
  /// \\A, ...). layers_to_transform and layers_pattern are refused beside
  /// it, as PEFT refuses them.
  bool target_modules_is_regex = false;
  /// PEFT's modules_to_save: modules trained whole beside the adapters,
  /// matched as targets are, saved with them in adapter_model.safetensors
  /// under their own names. A small base's output LayerNorm (GPT-2's ln_f)
  /// is the common case: with it frozen, a frozen tied head bounds every
  /// logit and the adapters cannot make an answer confident.
  std::vector<std::string> modules_to_save;
  /// PEFT's layers_to_transform: only the target modules in these layers
  /// are adapted (a module's layer as lora_layer_index reads it from its
  /// name); empty: every layer. PEFT's single index is a list of one.
  std::vector<int64_t> layers_to_transform;
  /// PEFT's layers_pattern: the dotted names of the layer lists whose
  /// index counts for layers_to_transform (GPT-2's "h", Llama's "layers");
  /// empty: the first numbered segment after another segment.
  std::vector<std::string> layers_pattern;

  /// The factor on every branch's output, as PEFT's LoraLayer.scaling.
  double scaling() const {
    return alpha / (use_rslora ? std::sqrt(double(r)) : double(r));
  }
};

/// PEFT's shorthand for every Linear and Conv1D projection but the output
/// layer (target_modules "all-linear", in any case).
inline constexpr const char *kAllLinearTargets = "all-linear";

/// PEFT's file names and key prefix.
inline constexpr const char *kAdapterConfigFile = "adapter_config.json";
inline constexpr const char *kAdapterWeightsFile = "adapter_model.safetensors";
inline constexpr const char *kPeftKeyPrefix = "base_model.model.";

/// The largest rank an adapter_config.json may ask for. Published adapters
/// use 4 to 256; a rank past the width of every model is a damaged file,
/// which would otherwise become an allocation of r × width floats.
inline constexpr int64_t kMaxLoraRank = 1 << 16;

/// What an adapter_config.json holds for kiln: the LoRA settings and the
/// base model's name or path ("" when null or absent).
struct AdapterConfigFile {
  LoraConfig lora;
  std::string base_model;
};

/// adapter_config.json's text → its settings. Fails, naming `what`, on text
/// that is not a JSON object, an r that is not an integer in [1,
/// kMaxLoraRank], a lora_alpha that is not a finite number, a lora_dropout
/// outside [0, 1), a use_rslora that is not a boolean, target_modules that
/// are absent or empty, or one string that is not a regular expression
/// kiln reads (with layers_to_transform or layers_pattern beside it), a
/// module list holding something other than strings, layers_to_transform
/// other than indices from 0, or a layers_pattern that is not a plain
/// dotted name. Also fails, naming the key
/// and its value, on a setting that would make PEFT build another model than
/// kiln's plain LoRA: a peft_type other than LORA, a task_type other than
/// CAUSAL_LM, a bias other than "none", or any of use_dora, use_qalora,
/// lora_bias, rank_pattern, alpha_pattern, exclude_modules, layer_replication,
/// trainable_token_indices, target_parameters, alora_invocation_tokens and
/// arrow_config set. Keys that do not change the model (inference_mode,
/// revision, init_lora_weights, fan_in_fan_out, which PEFT sets from the
/// module type, ...) are accepted and ignored.
absl::StatusOr<AdapterConfigFile> parseAdapterConfigJson(std::string_view text,
                                                         std::string_view what);

/// `pattern`, target_modules given as one string, as the regular
/// expression whose match(name) is PEFT's re.fullmatch(pattern, name)
/// (frontends/nn/PythonRegex.h), or why kiln cannot read it as Python's re
/// does, naming the pattern.
absl::StatusOr<llvm::Regex> lora_target_regex(const std::string &pattern);

/// The text of an adapter_config.json for `config` on `base_model`, as PEFT
/// writes one for a causal LM, use_rslora included (`fan_in_fan_out` when
/// the adapted projections store their weights [in, out], as GPT-2's Conv1D
/// does).
std::string adapterConfigJson(const LoraConfig &config,
                              const std::string &base_model,
                              bool fan_in_fan_out);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_ADAPTERCONFIG_H
