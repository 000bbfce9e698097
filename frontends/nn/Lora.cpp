// LoRA adapters: applying, saving, loading and merging; see Lora.h.
#include "frontends/nn/Lora.h"

#include "frontends/nn/CausalLM.h"
#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/ModelConfig.h"
#include "frontends/nn/Safetensors.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace kiln::nn {
namespace {

bool isLoraParameter(const std::string &name) {
  return name.find(".lora_A.") != std::string::npos ||
         name.find(".lora_B.") != std::string::npos ||
         absl::EndsWith(name, ".lora_embedding_A") ||
         absl::EndsWith(name, ".lora_embedding_B");
}

/// PEFT's rule: the target is the whole name or its last dotted parts.
bool matchesTarget(const std::string &name, const std::string &target) {
  return name == target || absl::EndsWith(name, "." + target);
}

/// Whether module `name` is one of modules_to_save's `wanted`: PEFT's
/// _set_trainable tests a plain suffix, so "norm" also names every
/// "input_layernorm" (unlike the targets' rule above).
bool isModuleToSave(const std::string &name, const std::string &wanted) {
  return !name.empty() && absl::EndsWith(name, wanted);
}

/// Whether module `name` gets a branch: PEFT's check_target_module_exists.
/// Under a regular expression (`regex`, set when the config's targets are
/// one), a module whose whole name it matches. Under a list, a module a
/// target names whole; one whose name ends with "." + a target, unless
/// layers_to_transform leaves its layer out (PEFT applies the layers to
/// that form only).
bool isLoraTarget(const std::string &name, const LoraConfig &config,
                  const std::optional<llvm::Regex> &regex) {
  if (regex)
    return regex->match(name);
  const std::vector<std::string> &targets = config.target_modules;
  if (std::count(targets.begin(), targets.end(), name))
    return true;
  bool ends = std::any_of(targets.begin(), targets.end(),
                          [&](const std::string &target) {
                            return absl::EndsWith(name, "." + target);
                          });
  if (!ends || config.layers_to_transform.empty())
    return ends;
  std::optional<int64_t> layer = lora_layer_index(name, config.layers_pattern);
  return layer && std::count(config.layers_to_transform.begin(),
                             config.layers_to_transform.end(), *layer);
}

/// Whether `param` (a parameter's dotted name) belongs to one of the
/// config's modules_to_save, directly or through a submodule, as
/// apply_lora unfreezes every parameter under a module to save.
bool isSavedModuleParameter(const std::string &param,
                            const LoraConfig &config) {
  for (size_t dot = param.find('.'); dot != std::string::npos;
       dot = param.find('.', dot + 1)) {
    std::string module = param.substr(0, dot);
    for (const std::string &wanted : config.modules_to_save)
      if (isModuleToSave(module, wanted))
        return true;
  }
  return false;
}

/// The tensors an adapter file holds: the LoRA branches and the parameters
/// of the modules trained whole.
bool isAdapterParameter(const std::string &param, const LoraConfig &config) {
  return isLoraParameter(param) || isSavedModuleParameter(param, config);
}

/// The weight a LoRA branch on `module` adapts (a projection's or an
/// embedding's), or null for a module that cannot carry one.
const Tensor *adaptableWeight(Module *module) {
  if (auto *projection = dynamic_cast<Projection *>(module))
    return &projection->base_weight();
  if (auto *table = dynamic_cast<Embedding *>(module))
    return &table->weight;
  return nullptr;
}

/// The token embedding when it is also the output layer (one tied weight:
/// the model has no lm_head module of its own), else null.
const Module *tiedInputEmbedding(Module &model) {
  auto modules = model.named_modules();
  bool headTied = std::none_of(modules.begin(), modules.end(),
                               [](auto &m) { return m.first == "lm_head"; });
  auto *lm = dynamic_cast<CausalLM *>(&model);
  return headTied && lm ? &lm->input_embeddings() : nullptr;
}

void writeText(const std::string &path, const std::string &text) {
  if (absl::Status status = writeTextAtomically(path, text); !status.ok())
    throw Error("cannot write " + path + ": " + std::string(status.message()));
}

} // namespace

std::vector<std::string> default_lora_targets(const std::string &model_type) {
  if (model_type == "gpt2")
    return {"c_attn"};
  // PEFT's targets for each; it has none for Phi-3 (whose q, k and v are
  // one qkv_proj), so there the user names them.
  if (isLlamaFamily(model_type) && model_type != "phi3")
    return {"q_proj", "v_proj"};
  return {};
}

std::vector<std::string> expand_lora_targets(Module &model,
                                             std::vector<std::string> targets) {
  if (targets.size() != 1 ||
      !absl::EqualsIgnoreCase(targets.front(), kAllLinearTargets))
    return targets;
  std::vector<std::string> expanded;
  for (auto &[name, module] : model.named_modules()) {
    std::string last = name.substr(name.rfind('.') + 1);
    // A LoRA branch's own lora_A and lora_B (when the model has branches
    // already) are not the base's projections.
    if (!dynamic_cast<Projection *>(module) || name == "lm_head" ||
        last == "lora_A" || last == "lora_B")
      continue;
    if (std::find(expanded.begin(), expanded.end(), last) == expanded.end())
      expanded.push_back(last);
  }
  return expanded;
}

std::optional<int64_t>
lora_layer_index(const std::string &name,
                 const std::vector<std::string> &patterns) {
  std::vector<std::string> parts = absl::StrSplit(name, '.');
  auto digits = [&](size_t k) {
    return k + 1 < parts.size() && !parts[k].empty() && parts[k].size() < 10 &&
           std::all_of(parts[k].begin(), parts[k].end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  // PEFT's regex, lazily: `.*?\.[^.]*\.(\d+)\.`, a numbered part after
  // any part but the first, followed by another; with patterns,
  // `(?:^|.*?\.)PATTERN\.(\d+)\.`, each pattern in turn.
  if (patterns.empty()) {
    for (size_t k = 2; k < parts.size(); ++k)
      if (digits(k))
        return std::stoll(parts[k]);
    return std::nullopt;
  }
  for (const std::string &pattern : patterns) {
    std::vector<std::string> want = absl::StrSplit(pattern, '.');
    for (size_t k = 0; k + want.size() < parts.size(); ++k)
      if (std::equal(want.begin(), want.end(), parts.begin() + k) &&
          digits(k + want.size()))
        return std::stoll(parts[k + want.size()]);
  }
  return std::nullopt;
}

std::vector<std::string> apply_lora(Module &model, const LoraConfig &config,
                                    uint64_t seed, Generator *generator) {
  if (config.target_modules.empty())
    throw Error("apply_lora: no target modules");
  std::optional<llvm::Regex> regex;
  if (config.target_modules_is_regex) {
    absl::StatusOr<llvm::Regex> compiled =
        lora_target_regex(config.target_modules.front());
    if (!compiled.ok())
      throw Error("apply_lora: " + std::string(compiled.status().message()));
    regex = std::move(*compiled);
  }
  std::vector<std::pair<std::string, Module *>> targets;
  for (auto &[name, module] : model.named_modules()) {
    if (!isLoraTarget(name, config, regex))
      continue;
    if (!adaptableWeight(module))
      throw Error("apply_lora: " + name +
                  " matches the target modules but is not a Linear or "
                  "Conv1D projection or an Embedding");
    targets.emplace_back(name, module);
  }
  auto modules = model.named_modules();
  // PEFT trains a copy of a tied embedding as a module to save, leaving the
  // head as it was; kiln's one tied weight cannot do that. (A LoRA branch
  // on it is fine: it changes the input rows only, as PEFT's does.)
  const Module *tiedEmbedding = tiedInputEmbedding(model);
  bool loraOnTiedHead =
      tiedEmbedding && std::count(config.target_modules.begin(),
                                  config.target_modules.end(), "lm_head");
  if (targets.empty() && loraOnTiedHead)
    throw Error("apply_lora: lm_head is tied to the input embeddings in "
                "this model (one weight, no module of its own); LoRA on it "
                "is not supported");
  if (targets.empty() && regex)
    throw Error("apply_lora: no module's name in the base model matches "
                "target_modules '" +
                config.target_modules.front() + "' whole");
  if (targets.empty())
    throw Error("apply_lora: target modules {" +
                absl::StrJoin(config.target_modules, ", ") +
                "} not found in the base model");
  std::vector<Module *> saved;
  for (const std::string &wanted : config.modules_to_save) {
    size_t before = saved.size();
    for (auto &[name, module] : modules) {
      if (!isModuleToSave(name, wanted))
        continue;
      if (module == tiedEmbedding)
        throw Error("apply_lora: " + name +
                    " is tied to the output layer in this model; training "
                    "it as a module to save is not supported");
      saved.push_back(module);
    }
    if (saved.size() == before)
      throw Error("apply_lora: modules to save {" + wanted +
                  "} not found in the base model");
  }
  // Frozen first: the modules to save and the branches added next are the
  // only trainable tensors.
  for (auto &[name, param] : model.named_parameters())
    param.requires_grad_(false);
  for (Module *module : saved)
    for (auto &[name, param] : module->named_parameters())
      param.requires_grad_(true);
  // The adapters train: f32 master weights over a base stored in 16 bits.
  InitContext init(
      seed, compute_type(adaptableWeight(targets.front().second)->dtype()));
  // PEFT's LoraLayer.scaling, computed as it computes it (alpha / r, or
  // alpha / sqrt(r) under use_rslora), so the factor is its to the bit.
  const double scaling = config.scaling();
  std::vector<std::string> names;
  for (auto &[name, module] : targets) {
    if (auto *projection = dynamic_cast<Projection *>(module))
      projection->add_lora(config.r, scaling, config.dropout, init, generator);
    else
      static_cast<Embedding *>(module)->add_lora(config.r, scaling, init);
    names.push_back(name);
  }
  return names;
}

NamedTensors trainable_parameters(const Module &model) {
  NamedTensors out;
  for (auto &entry : model.named_parameters())
    if (entry.second.requires_grad())
      out.push_back(entry);
  return out;
}

void save_lora_adapter(const Module &model, const LoraConfig &config,
                       const std::string &dir, const std::string &base_model) {
  NamedTensors adapters;
  for (auto &[name, param] : model.named_parameters())
    if (isAdapterParameter(name, config))
      adapters.push_back({kPeftKeyPrefix + name, param});
  if (adapters.empty())
    throw Error("save_lora_adapter: the model has no LoRA branches");
  absl::Status saved =
      saveSafetensors(dir + "/" + kAdapterWeightsFile, host_data_refs(adapters),
                      {{"format", "pt"}});
  if (!saved.ok())
    throw Error("save_lora_adapter: " + std::string(saved.message()));
  // GPT-2's projections are Conv1D, [in, out]: PEFT's fan_in_fan_out.
  bool fanInFanOut = false;
  for (auto &[name, module] : const_cast<Module &>(model).named_modules())
    if (auto *c = dynamic_cast<Conv1D *>(module); c && c->has_lora())
      fanInFanOut = true;
  writeText(dir + "/" + kAdapterConfigFile,
            adapterConfigJson(config, base_model, fanInFanOut));
}

LoraConfig read_lora_adapter_config(const std::string &dir,
                                    std::string &base_model) {
  const std::string path = dir + "/" + kAdapterConfigFile;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot read the adapter's config");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  absl::StatusOr<AdapterConfigFile> file = parseAdapterConfigJson(text, path);
  if (!file.ok())
    throw Error(std::string(file.status().message()));
  base_model = std::move(file->base_model);
  return std::move(file->lora);
}

void check_lora_adapter_config(const LoraConfig &config, const std::string &dir,
                               Module &model) {
  const std::string configPath = dir + "/" + kAdapterConfigFile;
  std::string baseModel;
  LoraConfig saved = read_lora_adapter_config(dir, baseModel);
  // A hand-written "all-linear" names the modules PEFT expands it to.
  if (!saved.target_modules_is_regex)
    saved.target_modules = expand_lora_targets(model, saved.target_modules);
  auto rslora = [](const LoraConfig &c) {
    return c.use_rslora ? ", use_rslora" : "";
  };
  if (saved.r != config.r || saved.alpha != config.alpha ||
      saved.use_rslora != config.use_rslora)
    throw Error(absl::StrCat(configPath, ": the adapter has r ", saved.r,
                             ", lora_alpha ", saved.alpha, rslora(saved),
                             "; this model's LoRA has r ", config.r,
                             ", lora_alpha ", config.alpha, rslora(config)));
  auto differ = [&](const std::vector<std::string> &adapter,
                    const std::vector<std::string> &model,
                    const std::string &what, const std::string &after) {
    std::set<std::string> theirs(adapter.begin(), adapter.end()),
        ours(model.begin(), model.end());
    if (theirs != ours)
      throw Error(configPath + ": the adapter " + what + " {" +
                  absl::StrJoin(theirs, ", ") + "}" + after +
                  "; this model's LoRA " + what + " {" +
                  absl::StrJoin(ours, ", ") + "}");
  };
  if (saved.target_modules_is_regex != config.target_modules_is_regex) {
    auto targets = [](const LoraConfig &c) {
      return c.target_modules_is_regex
                 ? "the modules matching '" + c.target_modules.front() + "'"
                 : "{" + absl::StrJoin(c.target_modules, ", ") + "}";
    };
    throw Error(configPath + ": the adapter targets " + targets(saved) +
                "; this model's LoRA targets " + targets(config));
  }
  differ(saved.target_modules, config.target_modules, "targets", "");
  differ(saved.modules_to_save, config.modules_to_save, "trains",
         " whole (modules_to_save)");
  auto layers = [](const LoraConfig &c) {
    std::vector<std::string> names;
    for (int64_t layer : c.layers_to_transform)
      names.push_back(std::to_string(layer));
    return names;
  };
  differ(layers(saved), layers(config), "layers (layers_to_transform)", "");
  differ(saved.layers_pattern, config.layers_pattern,
         "layer lists (layers_pattern)", "");
}

void load_lora_adapter(Module &model, const LoraConfig &config,
                       const std::string &dir) {
  check_lora_adapter_config(config, dir, model);
  const std::string weightsPath = dir + "/" + kAdapterWeightsFile;
  absl::StatusOr<SafetensorsData> file = loadSafetensors(weightsPath);
  if (!file.ok())
    throw Error(std::string(file.status().message()));
  std::map<std::string, HostTensor> state;
  const std::string prefix = kPeftKeyPrefix;
  for (NamedTensor &t : file->tensors) {
    std::string name = t.name.rfind(prefix, 0) == 0
                           ? t.name.substr(prefix.size())
                           : t.name;
    // DoRA's config key may have been edited away; its tensor remains.
    if (absl::StrContains(name, "lora_magnitude_vector"))
      throw Error(weightsPath + ": " + t.name +
                  " is DoRA's magnitude vector; DoRA (use_dora) is not "
                  "supported, kiln loads plain LoRA adapters");
    // PEFT's save_embedding_layers: an adapter on an embedding or the
    // output layer carries that layer's whole base weight, which PEFT
    // loads over the base's (a vocabulary trained or resized with it).
    if (absl::string_view module = name;
        absl::ConsumeSuffix(&module, ".base_layer.weight")) {
      const std::string branch = absl::StrCat(module, ".lora_");
      bool adapted = false;
      for (const auto &[param, tensor] : model.named_parameters())
        adapted = adapted ||
                  (isLoraParameter(param) && absl::StartsWith(param, branch));
      if (!adapted)
        throw Error(weightsPath + ": " + t.name +
                    " is the base weight of a module without a LoRA branch "
                    "here");
      state.emplace(absl::StrCat(module, ".weight"), std::move(t.tensor));
      continue;
    }
    if (!isAdapterParameter(name, config))
      throw Error(weightsPath + ": " + t.name +
                  " is not a LoRA tensor or one of a module to save");
    state.emplace(std::move(name), std::move(t.tensor));
  }
  std::set<std::string> wanted;
  for (auto &[name, param] : model.named_parameters())
    if (isAdapterParameter(name, config))
      wanted.insert(name);
  for (const std::string &name : wanted)
    if (!state.count(name))
      throw Error(weightsPath + ": no tensor for " + name);
  LoadResult loaded = model.load_state_dict(state, /*strict=*/false);
  if (!loaded.unexpectedKeys.empty())
    throw Error(weightsPath + ": " + loaded.unexpectedKeys.front() +
                " is not a LoRA parameter of this model");
}

std::optional<std::string> lora_merge_refusal(Module &model) {
  const Module *tied = tiedInputEmbedding(model);
  for (auto &[name, module] : model.named_modules())
    if (auto *e = dynamic_cast<Embedding *>(module);
        e && e == tied && e->has_lora())
      // The branch changes the input rows only; folded into a table that
      // is also the output layer it would change the head too (PEFT's
      // merge_and_unload does, and warns).
      return "the LoRA branch on " + name +
             " cannot be merged: that table is also the output layer in "
             "this model, so merging would change the output layer too; "
             "use the adapter folder instead";
  return std::nullopt;
}

NamedTensors merged_state_dict(Module &model) {
  if (std::optional<std::string> why = lora_merge_refusal(model))
    throw Error(*why);
  std::map<std::string, Tensor> merged;
  for (auto &[name, module] : model.named_modules()) {
    if (auto *p = dynamic_cast<Projection *>(module); p && p->has_lora())
      merged[name + ".weight"] =
          compute_value(p->base_weight()).detach() + p->lora_delta();
    if (auto *e = dynamic_cast<Embedding *>(module); e && e->has_lora())
      merged[name + ".weight"] =
          compute_value(e->weight).detach() + e->lora_delta();
  }
  // A base stored in 16 bits merges as the model computed it: widened.
  NamedTensors out;
  for (auto &[name, param] : model.named_parameters()) {
    if (isLoraParameter(name))
      continue;
    auto it = merged.find(name);
    out.emplace_back(name, it == merged.end() ? compute_value(param).detach()
                                              : it->second);
  }
  return out;
}

} // namespace kiln::nn
