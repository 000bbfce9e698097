// LoRA fine-tuning as Hugging Face's PEFT does it: low-rank branches on the
// projections and token embeddings a config names (Projection::add_lora,
// Embedding::add_lora), every other parameter
// frozen, so the compiled training step computes no base-weight gradients
// and the optimizer keeps no state for them; adapters saved in PEFT's
// layout (adapter_config.json + adapter_model.safetensors, which
// peft.PeftModel loads) and read back with the config checked; and the
// merged model (PEFT's merge_and_unload) as a plain state dict.
#ifndef KILN_FRONTENDS_NN_LORA_H
#define KILN_FRONTENDS_NN_LORA_H

#include "frontends/nn/AdapterConfig.h"
#include "frontends/nn/Layers.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::nn {

/// PEFT's default targets for a model type (gpt2: c_attn; llama: q_proj,
/// v_proj); empty for a type it has none for.
std::vector<std::string> default_lora_targets(const std::string &model_type);

/// `targets` with PEFT's "all-linear" (any case) expanded as PEFT expands
/// it: the last dotted part of every projection's name but lm_head's, in
/// the order the model holds them (gpt2: c_attn, c_proj, c_fc; llama:
/// q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj); other
/// lists as they are. adapter_config.json then lists the modules, as
/// PEFT's does.
std::vector<std::string> expand_lora_targets(Module &model,
                                             std::vector<std::string> targets);

/// The layer module `name` (dotted) lies in, as PEFT reads it for
/// layers_to_transform: the first all-digit part that follows one of
/// `patterns` (dotted names of layer lists, tried in order), or without
/// patterns any part but the first, and that is followed by another part
/// ("transformer.h.3.attn.c_attn" → 3, "model.layers.0.mlp.experts.5.up"
/// → 0); none where no part qualifies.
std::optional<int64_t>
lora_layer_index(const std::string &name,
                 const std::vector<std::string> &patterns = {});

/// Adds a LoRA branch, scaled by config.scaling(), to every projection and
/// embedding `config` targets and freezes every parameter that is not a
/// branch's (requires_grad false). The branches' initial values come from
/// `seed`; their dropout draws from `generator`. → the adapted modules' dotted
/// names. Throws kiln::Error naming the targets when none matches (as PEFT) or
/// when a matching module is not a Linear, Conv1D or Embedding.
std::vector<std::string> apply_lora(Module &model, const LoraConfig &config,
                                    uint64_t seed, Generator *generator);

/// The parameters that require grad (what an optimizer should update).
NamedTensors trainable_parameters(const Module &model);

/// Writes `dir`/adapter_config.json (PEFT's LoraConfig for a causal LM,
/// base_model_name_or_path = `base_model`) and adapter_model.safetensors
/// (every LoRA parameter as base_model.model.<name>), each atomically.
/// Throws kiln::Error when a file cannot be written.
void save_lora_adapter(const Module &model, const LoraConfig &config,
                       const std::string &dir, const std::string &base_model);

/// `dir`/adapter_config.json → its LoRA config (r, lora_alpha,
/// lora_dropout, use_rslora, target_modules, modules_to_save) and, in
/// `base_model`, its base_model_name_or_path ("" when null). Throws kiln::Error
/// naming the file when it is missing, malformed, not a LoRA config, out of
/// range or asks for a variant kiln does not build (DoRA, per-module ranks,
/// ...: parseAdapterConfigJson).
LoraConfig read_lora_adapter_config(const std::string &dir,
                                    std::string &base_model);

/// Throws kiln::Error naming `dir`/adapter_config.json when it is
/// missing or malformed, or when its r, lora_alpha, use_rslora,
/// target_modules (its "all-linear" expanded on `model`), modules_to_save,
/// layers_to_transform or layers_pattern differ from `config`.
void check_lora_adapter_config(const LoraConfig &config, const std::string &dir,
                               Module &model);

/// Reads `dir`'s adapter into `model`'s branches. Throws kiln::Error naming
/// the file when it is missing or malformed, when its settings differ from
/// `config` (check_lora_adapter_config), or when a branch has no tensor (or
/// a tensor no branch, such as DoRA's magnitude vector).
void load_lora_adapter(Module &model, const LoraConfig &config,
                       const std::string &dir);

/// `model`'s state dict with every branch folded into its projection's or
/// embedding's weight (W + B A * s in the weight's layout, s the branch's
/// scaling: alpha / r, or alpha / sqrt(r) under use_rslora) and the
/// branches' own parameters left out: the merged model, loadable without
/// PEFT. Throws kiln::Error when a branch is on an embedding tied to the
/// output layer (merged, it would change the head as well).
NamedTensors merged_state_dict(Module &model);

/// Why merged_state_dict would refuse `model` (a branch on an embedding
/// tied to the output layer), or nullopt: a trainer asks before training.
std::optional<std::string> lora_merge_refusal(Module &model);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_LORA_H
