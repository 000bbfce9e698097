// adapter_config.json written and read; see AdapterConfig.h.
#include "frontends/nn/AdapterConfig.h"

#include "absl/strings/str_cat.h"
#include "frontends/nn/JsonText.h"
#include "frontends/nn/PythonRegex.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace kiln::nn {
namespace {

/// A JSON array of strings, or null when empty (as PEFT writes an unset
/// list).
llvm::json::Value stringListOrNull(const std::vector<std::string> &list) {
  if (list.empty())
    return nullptr;
  llvm::json::Array array;
  for (const std::string &s : list)
    array.push_back(s);
  return array;
}

/// `value` in the fewest significant digits that read back exactly, as
/// Python's json writes a float ("0.05", "16", "1e-05"); null for a NaN or
/// an infinity, which JSON lacks.
std::string shortestNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

/// The strings of `root[key]`: an array of strings, one string, or nothing
/// (absent or null); nullopt when it is anything else.
std::optional<std::vector<std::string>>
stringList(const llvm::json::Object &root, llvm::StringRef key) {
  std::vector<std::string> out;
  const llvm::json::Value *value = root.get(key);
  if (!value || value->kind() == llvm::json::Value::Null)
    return out;
  if (std::optional<llvm::StringRef> one = value->getAsString()) {
    out.push_back(one->str());
    return out;
  }
  const llvm::json::Array *list = value->getAsArray();
  if (!list)
    return std::nullopt;
  for (const llvm::json::Value &entry : *list) {
    std::optional<llvm::StringRef> s = entry.getAsString();
    if (!s)
      return std::nullopt;
    out.push_back(s->str());
  }
  return out;
}

/// What every refusal of a setting offers instead.
constexpr const char *kWhatKilnLoads =
    "kiln trains and loads plain LoRA adapters: one r and lora_alpha (scaled "
    "by alpha / r, or alpha / sqrt(r) with use_rslora) on every module "
    "target_modules names (in the layers layers_to_transform lists, if "
    "any), plus modules_to_save";

/// adapter_config.json keys that, once set, make PEFT build a model kiln
/// does not (other branches, other scalings, other modules adapted or
/// trained); each with what it means there. Loading such an adapter as
/// plain LoRA would run another model than the one it was trained as.
struct UnsupportedKey {
  const char *key;
  const char *meaning;
};
constexpr UnsupportedKey kUnsupportedKeys[] = {
    {"use_dora", "DoRA"},
    {"use_qalora", "QA-LoRA"},
    {"lora_bias", "a bias on lora_B"},
    {"rank_pattern", "ranks per module"},
    {"alpha_pattern", "lora_alpha per module"},
    {"exclude_modules", "modules left out of target_modules"},
    {"layer_replication", "layers repeated to deepen the model"},
    {"trainable_token_indices", "trainable token embedding rows"},
    {"target_parameters", "LoRA on bare parameters"},
    {"alora_invocation_tokens", "activated LoRA"},
    {"arrow_config", "Arrow routing"},
};

/// Whether `value` is PEFT's default for an optional setting: null, false,
/// or an empty list, object or string. (0 is set: layers_to_transform 0
/// names the first layer.)
bool isUnset(const llvm::json::Value &value) {
  using Kind = llvm::json::Value::Kind;
  switch (value.kind()) {
  case Kind::Null:
    return true;
  case Kind::Boolean:
    return !*value.getAsBoolean();
  case Kind::String:
    return value.getAsString()->empty();
  case Kind::Array:
    return value.getAsArray()->empty();
  case Kind::Object:
    return value.getAsObject()->empty();
  default:
    return false;
  }
}

/// `"key": value` as the file has it, cut short when long (a rank_pattern
/// may list every module).
std::string keyAndValue(llvm::StringRef key, const llvm::json::Value &value) {
  std::string text = llvm::formatv("{0}", value).str();
  if (text.size() > 80)
    text = text.substr(0, 77) + "...";
  return "\"" + key.str() + "\": " + text;
}

/// Why `root` describes an adapter kiln would load as another model than
/// PEFT builds, or nullopt.
std::optional<std::string> unsupportedSetting(const llvm::json::Object &root) {
  auto refuse = [](llvm::StringRef key, const llvm::json::Value &value,
                   const std::string &meaning, const char *supported) {
    return keyAndValue(key, value) + " (" + meaning + ") is not supported; " +
           supported;
  };
  // A string setting accepted as absent, null or one of its plain values.
  auto other = [&](llvm::StringRef key,
                   std::initializer_list<llvm::StringRef> accepted) {
    const llvm::json::Value *value = root.get(key);
    if (!value || value->kind() == llvm::json::Value::Null)
      return (const llvm::json::Value *)nullptr;
    std::optional<llvm::StringRef> s = value->getAsString();
    for (llvm::StringRef ok : accepted)
      if (s && *s == ok)
        return (const llvm::json::Value *)nullptr;
    return value;
  };
  if (const llvm::json::Value *type = other("peft_type", {"LORA"}))
    return refuse("peft_type", *type, "not a LoRA adapter", kWhatKilnLoads);
  if (const llvm::json::Value *task = other("task_type", {"CAUSAL_LM"}))
    return refuse("task_type", *task, "not a causal language model",
                  "kiln loads adapters on causal language models "
                  "(CAUSAL_LM)");
  if (const llvm::json::Value *bias = other("bias", {"none"}))
    return refuse("bias", *bias, "the base's biases trained and saved too",
                  kWhatKilnLoads);
  for (const UnsupportedKey &unsupported : kUnsupportedKeys)
    if (const llvm::json::Value *value = root.get(unsupported.key);
        value && !isUnset(*value))
      return refuse(unsupported.key, *value, unsupported.meaning,
                    kWhatKilnLoads);
  // Not checked, as they do not change the loaded model: init_lora_weights
  // and the LoftQ / EVA / CorDA configs (how new branches start),
  // fan_in_fan_out (PEFT sets it from the module type, warning when the
  // file says otherwise), megatron_* (the same maths on tensor-parallel
  // layers),
  // inference_mode, revision, runtime_config and the like.
  return std::nullopt;
}

} // namespace

absl::StatusOr<llvm::Regex> lora_target_regex(const std::string &pattern) {
  absl::StatusOr<llvm::Regex> regex = python_fullmatch_regex(pattern);
  if (!regex.ok())
    return absl::InvalidArgumentError(
        "target_modules '" + pattern +
        "' (one string: PEFT's regular expression, matched against each "
        "module's whole name) " +
        std::string(regex.status().message()));
  return regex;
}

absl::StatusOr<AdapterConfigFile>
parseAdapterConfigJson(std::string_view text, std::string_view what) {
  auto fail = [&](const std::string &message) {
    return absl::InvalidArgumentError(std::string(what) + ": " + message);
  };
  absl::StatusOr<llvm::json::Value> parsed = parseJsonText(text);
  if (!parsed.ok())
    return fail(std::string(parsed.status().message()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return fail("not a JSON object");
  if (std::optional<std::string> why = unsupportedSetting(*root))
    return fail(*why);

  AdapterConfigFile file;
  LoraConfig &config = file.lora;
  std::optional<int64_t> r = root->getInteger("r");
  std::optional<double> alpha = root->getNumber("lora_alpha");
  if (!r || *r < 1 || *r > kMaxLoraRank || !alpha || !std::isfinite(*alpha))
    return fail(absl::StrCat("no integer \"r\" in [1, ", kMaxLoraRank,
                             "] or finite number \"lora_alpha\""));
  config.r = *r;
  config.alpha = *alpha;
  config.dropout = 0;
  if (const llvm::json::Value *dropout = root->get("lora_dropout");
      dropout && dropout->kind() != llvm::json::Value::Null) {
    std::optional<double> p = dropout->getAsNumber();
    if (!p || !(*p >= 0 && *p < 1))
      return fail("\"lora_dropout\" must be a number in [0, 1)");
    config.dropout = *p;
  }
  if (const llvm::json::Value *rslora = root->get("use_rslora");
      rslora && rslora->kind() != llvm::json::Value::Null) {
    std::optional<bool> on = rslora->getAsBoolean();
    if (!on)
      return fail("\"use_rslora\" must be true or false");
    config.use_rslora = *on;
  }
  std::optional<std::vector<std::string>> targets =
      stringList(*root, "target_modules");
  std::optional<std::vector<std::string>> saved =
      stringList(*root, "modules_to_save");
  if (!targets || !saved)
    return fail("\"target_modules\" and \"modules_to_save\" are module "
                "names: a string or a list of strings");
  if (targets->empty())
    return fail("no \"target_modules\"");
  config.target_modules = std::move(*targets);
  // One string is PEFT's regular expression, but for its "all-linear".
  std::optional<llvm::StringRef> one = root->getString("target_modules");
  config.target_modules_is_regex =
      one && !one->equals_insensitive(kAllLinearTargets);
  if (config.target_modules_is_regex) {
    if (absl::Status status = lora_target_regex(one->str()).status();
        !status.ok())
      return fail(std::string(status.message()));
  }
  config.modules_to_save = std::move(*saved);
  // PEFT's one index or list of them; null or [] is every layer.
  if (const llvm::json::Value *layers = root->get("layers_to_transform");
      layers && layers->kind() != llvm::json::Value::Null) {
    const llvm::json::Array *list = layers->getAsArray();
    llvm::json::Array one;
    if (!list) {
      one.push_back(*layers);
      list = &one;
    }
    for (const llvm::json::Value &index : *list) {
      std::optional<int64_t> layer = index.getAsInteger();
      if (!layer || *layer < 0)
        return fail("\"layers_to_transform\" must be a layer index or a "
                    "list of them (integers from 0)");
      config.layers_to_transform.push_back(*layer);
    }
  }
  std::optional<std::vector<std::string>> patterns =
      stringList(*root, "layers_pattern");
  if (!patterns)
    return fail("\"layers_pattern\" must be a name or a list of names");
  // PEFT reads a pattern as a regular expression; the layer lists of the
  // models kiln builds have plain names, which are all kiln matches.
  for (const std::string &pattern : *patterns)
    if (pattern.empty() ||
        pattern.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") !=
            std::string::npos)
      return fail("\"layers_pattern\" '" + pattern +
                  "': kiln matches layer lists by their plain dotted names "
                  "(\"h\", \"layers\"), not regular expressions");
  config.layers_pattern = std::move(*patterns);
  if (config.target_modules_is_regex &&
      (!config.layers_to_transform.empty() || !config.layers_pattern.empty()))
    return fail("\"layers_to_transform\" and \"layers_pattern\" cannot be "
                "used when \"target_modules\" is a string (a regular "
                "expression), as in PEFT");
  file.base_model =
      root->getString("base_model_name_or_path").value_or("").str();
  return file;
}

std::string adapterConfigJson(const LoraConfig &config,
                              const std::string &base_model,
                              bool fan_in_fan_out) {
  // Keys sorted, two-space indents and numbers in their shortest form, as
  // PEFT's save_pretrained writes them (json.dumps: "lora_dropout": 0.05,
  // where llvm::json would print 0.050000000000000003).
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os, /*IndentSize=*/2);
  auto number = [&](llvm::StringRef key, double value) {
    json.attributeBegin(key);
    json.rawValue(shortestNumber(value));
    json.attributeEnd();
  };
  json.object([&] {
    json.attributeObject("alpha_pattern", [] {});
    json.attribute("base_model_name_or_path", base_model);
    json.attribute("bias", "none");
    json.attribute("fan_in_fan_out", fan_in_fan_out);
    json.attribute("inference_mode", true);
    json.attribute("init_lora_weights", true);
    json.attribute("layers_pattern", stringListOrNull(config.layers_pattern));
    if (config.layers_to_transform.empty())
      json.attribute("layers_to_transform", nullptr);
    else
      json.attribute("layers_to_transform",
                     llvm::json::Array(config.layers_to_transform));
    number("lora_alpha", config.alpha);
    number("lora_dropout", config.dropout);
    json.attribute("modules_to_save", stringListOrNull(config.modules_to_save));
    json.attribute("peft_type", "LORA");
    json.attribute("r", config.r);
    json.attributeObject("rank_pattern", [] {});
    json.attribute("revision", nullptr);
    if (config.target_modules_is_regex && config.target_modules.size() == 1)
      json.attribute("target_modules", config.target_modules.front());
    else
      json.attribute("target_modules", stringListOrNull(config.target_modules));
    json.attribute("task_type", "CAUSAL_LM");
    json.attribute("use_dora", false);
    json.attribute("use_rslora", config.use_rslora);
  });
  return text + "\n";
}

} // namespace kiln::nn
