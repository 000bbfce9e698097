// adapter_config.json written and read; see AdapterConfig.h.
#include "frontends/nn/AdapterConfig.h"

#include "absl/strings/str_cat.h"
#include "frontends/nn/JsonText.h"
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

} // namespace

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
  if (std::optional<llvm::StringRef> type = root->getString("peft_type");
      type && *type != "LORA")
    return fail("a " + type->str() + " adapter, not LORA");

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
  config.modules_to_save = std::move(*saved);
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
    json.attribute("layers_pattern", nullptr);
    json.attribute("layers_to_transform", nullptr);
    number("lora_alpha", config.alpha);
    number("lora_dropout", config.dropout);
    json.attribute("modules_to_save", stringListOrNull(config.modules_to_save));
    json.attribute("peft_type", "LORA");
    json.attribute("r", config.r);
    json.attributeObject("rank_pattern", [] {});
    json.attribute("revision", nullptr);
    json.attribute("target_modules", stringListOrNull(config.target_modules));
    json.attribute("task_type", "CAUSAL_LM");
    json.attribute("use_dora", false);
    json.attribute("use_rslora", false);
  });
  return text + "\n";
}

} // namespace kiln::nn
