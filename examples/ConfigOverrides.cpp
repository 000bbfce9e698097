// run_clm.py's --config_overrides (see ConfigOverrides.h).
#include "examples/ConfigOverrides.h"
#include "examples/Models.h"

#include "frontends/nn/ModelConfig.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <vector>

namespace kiln::train {

namespace {

/// `word` as the JSON type of `old` (transformers reads it as the
/// attribute's Python type); nullopt when it is not one.
std::optional<llvm::json::Value> asTypeOf(const llvm::json::Value &old,
                                          const std::string &word) {
  using Kind = llvm::json::Value::Kind;
  char *end = nullptr;
  if (old.getAsInteger() || old.kind() == Kind::Null) {
    long long n = std::strtoll(word.c_str(), &end, 10);
    if (word.empty() || *end)
      return std::nullopt;
    return llvm::json::Value(int64_t(n));
  }
  if (old.kind() == Kind::Number) {
    double x = std::strtod(word.c_str(), &end);
    if (word.empty() || *end)
      return std::nullopt;
    return llvm::json::Value(x);
  }
  if (old.kind() == Kind::Boolean) {
    std::string lower;
    for (char c : word)
      lower += char(std::tolower((unsigned char)c));
    if (lower == "true" || lower == "1" || lower == "y" || lower == "yes")
      return llvm::json::Value(true);
    if (lower == "false" || lower == "0" || lower == "n" || lower == "no")
      return llvm::json::Value(false);
    return std::nullopt;
  }
  if (old.kind() == Kind::String)
    return llvm::json::Value(word);
  return std::nullopt; // objects (rope_parameters) are not overridable
}

} // namespace

std::string applyConfigOverrides(const std::string &overrides, TrainArgs &a) {
  if (!a.modelNameOrPath.empty() || !a.configName.empty())
    return "--config_overrides changes the config of a model trained from "
           "scratch; it cannot be used with --model_name_or_path or "
           "--config_name (as run_clm.py)";
  // The flags' config, with a placeholder vocabulary when the tokenizer's
  // is meant (0), which no override may then need.
  ModelSpec spec = modelSpec(a, a.vocabSize ? a.vocabSize : 1);
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(configJson(spec, std::nullopt, std::nullopt));
  if (!json)
    return "internal: the flags' config is not JSON: " +
           llvm::toString(json.takeError());
  llvm::json::Object &config = *json->getAsObject();
  bool vocabularyGiven = false;
  for (absl::string_view item : absl::StrSplit(overrides, ',')) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty())
      return "--config_overrides: expected key=value pairs separated by "
             "commas, got '" +
             std::string(item) + "'";
    // The family, and the special tokens' ids the tokenizer decides.
    static const std::set<std::string> fixed = {"model_type", "architectures",
                                                "bos_token_id", "eos_token_id"};
    const llvm::json::Value *old = config.get(kv[0]);
    if (!old || fixed.count(kv[0])) {
      std::vector<std::string> fields;
      for (const auto &entry : config)
        if (!fixed.count(entry.first.str()))
          fields.push_back(entry.first.str());
      std::sort(fields.begin(), fields.end());
      return "--config_overrides: " + kv[0] + " is not a field of kiln's " +
             spec.type + " config that overrides change (" +
             absl::StrJoin(fields, ", ") + ")";
    }
    std::optional<llvm::json::Value> value = asTypeOf(*old, kv[1]);
    if (!value)
      return "--config_overrides: " + kv[0] + "=" + kv[1] +
             " is not a value of the field's type";
    // Fields kiln's config.json holds twice (GPT-2's n_ctx beside
    // n_positions; Llama's rope_theta inside rope_parameters too, which
    // the reader prefers): an override sets both.
    if (kv[0] == "n_ctx" || kv[0] == "n_positions") {
      config["n_ctx"] = *value;
      config["n_positions"] = *value;
    }
    if (llvm::json::Object *rope = config.getObject("rope_parameters");
        rope && kv[0] == "rope_theta")
      (*rope)["rope_theta"] = *value;
    config[kv[0]] = std::move(*value);
    vocabularyGiven |= kv[0] == "vocab_size";
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(config));
  const char *name = "--config_overrides";
  if (spec.type == "llama") {
    absl::StatusOr<nn::LlamaConfig> c = nn::parseLlamaConfigJson(text, name);
    if (!c.ok())
      return std::string(c.status().message());
    a.llamaConfig = *c;
    a.nLayer = c->num_hidden_layers, a.nEmbd = c->hidden_size;
    a.nHead = c->num_attention_heads;
    a.nPositions = c->max_position_embeddings;
    if (vocabularyGiven)
      a.vocabSize = c->vocab_size;
  } else {
    absl::StatusOr<nn::GPT2Config> c = nn::parseGPT2ConfigJson(text, name);
    if (!c.ok())
      return std::string(c.status().message());
    a.gpt2Config = *c;
    a.nLayer = c->n_layer, a.nEmbd = c->n_embd, a.nHead = c->n_head;
    a.nPositions = c->n_positions;
    if (vocabularyGiven)
      a.vocabSize = c->vocab_size;
  }
  return "";
}

} // namespace kiln::train
