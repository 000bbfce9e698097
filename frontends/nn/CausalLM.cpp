// The causal-LM loss and Hugging Face folder loading shared by the models;
// see CausalLM.h.
#include "frontends/nn/CausalLM.h"

#include "frontends/nn/Safetensors.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace kiln::nn {

CausalLM::~CausalLM() = default;

namespace {

/// labels != -100 (the loss's ignore index).
Tensor labelled(const Tensor &labels) {
  return labels.ne(Tensor::full({}, -100.0, labels.dtype()));
}

/// The mean of `values` over the rows `valid` marks.
Tensor masked_mean(const Tensor &values, const Tensor &valid) {
  Tensor weight = valid.to(values.dtype());
  return (values * weight).sum() / weight.sum();
}

} // namespace

void CausalLM::set_label_smoothing(double eps) {
  if (!(eps >= 0 && eps < 1))
    throw Error("label smoothing must be in [0, 1), got " +
                std::to_string(eps));
  labelSmoothing_ = eps;
}

Tensor causal_lm_loss(const Tensor &hidden, const Tensor &head_weight,
                      const Tensor &labels, double label_smoothing,
                      double softcap) {
  if (hidden.dim() != 3 || labels.dim() != 2 ||
      labels.size(0) != hidden.size(0) || labels.size(1) != hidden.size(1))
    throw Error("causal LM loss: expected hidden states [B, T, C] and "
                "labels [B, T], got " +
                hidden.str() + " and " + labels.str());
  const int64_t t = hidden.size(1);
  Tensor rows = hidden.slice(1, 0, t - 1).reshape({-1, hidden.size(2)});
  Tensor shiftedLabels = labels.slice(1, 1, t).reshape({-1});
  // In f32 over a 16-bit model, as transformers widens the logits for its
  // loss (the products still read the 16-bit values under kiln-autocast).
  Tensor input = compute_value(rows), weight = compute_value(head_weight);
  if (softcap > 0 && label_smoothing != 0)
    throw Error("causal LM loss: label smoothing over capped logits needs "
                "the logits (causal_lm_loss_from_logits)");
  Tensor loss =
      linear_cross_entropy(input, weight, shiftedLabels, -100, softcap);
  if (label_smoothing == 0)
    return loss;
  // A row's -(1/V) Σ_j log p_j is lse - mean_j z_j and its loss lse - z_y,
  // so the smoothed loss is the loss + eps · (z_y - mean_j z_j); with
  // z = h · Wᵀ that is h · (W_y - mean_j W_j): a gather of the labels'
  // rows, never the [rows, V] logits.
  Tensor valid = labelled(shiftedLabels);
  Tensor safeLabels =
      where(valid, shiftedLabels, Tensor::zeros({}, shiftedLabels.dtype()));
  Tensor direction = embedding(weight, safeLabels) - weight.mean({0});
  Tensor margin = (input * direction).sum({1});
  return loss + label_smoothing * masked_mean(margin, valid);
}

Tensor causal_lm_loss_from_logits(const Tensor &logits, const Tensor &labels,
                                  double label_smoothing) {
  if (logits.dim() != 3 || labels.dim() != 2 ||
      labels.size(0) != logits.size(0) || labels.size(1) != logits.size(1))
    throw Error("causal LM loss: expected logits [B, T, V] and labels "
                "[B, T], got " +
                logits.str() + " and " + labels.str());
  const int64_t t = logits.size(1), v = logits.size(2);
  Tensor shiftedLogits =
      compute_value(logits.slice(1, 0, t - 1).reshape({-1, v}));
  Tensor shiftedLabels = labels.slice(1, 1, t).reshape({-1});
  Tensor loss = cross_entropy(shiftedLogits, shiftedLabels, -100);
  if (label_smoothing == 0)
    return loss;
  Tensor uniform = -shiftedLogits.log_softmax(1).mean({1});
  return (1 - label_smoothing) * loss +
         label_smoothing * masked_mean(uniform, labelled(shiftedLabels));
}

LoadResult load_hf_safetensors(Module &model, const std::string &path,
                               bool strict, const HfNameMap &rename) {
  absl::StatusOr<SafetensorsData> file = loadSafetensors(path);
  if (!file.ok())
    throw Error(std::string(file.status().message()));
  std::map<std::string, HostTensor> state;
  for (NamedTensor &t : file->tensors)
    if (std::optional<std::string> name = rename(t.name))
      state.emplace(std::move(*name), std::move(t.tensor));
  return model.load_state_dict(state, strict);
}

void load_hf_folder(Module &model, const std::string &dir,
                    const HfNameMap &rename) {
  namespace fs = std::filesystem;
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / kSafetensorsIndexFile;
  std::error_code ec;
  if (fs::is_regular_file(single, ec)) {
    load_hf_safetensors(model, single.string(), /*strict=*/true, rename);
    return;
  }
  std::ifstream in(index, std::ios::binary);
  if (!in)
    throw Error(dir + " has neither model.safetensors nor "
                      "model.safetensors.index.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  absl::StatusOr<std::map<std::string, std::string>> map =
      parseSafetensorsIndex(text, index.string());
  if (!map.ok())
    throw Error(std::string(map.status().message()));
  std::set<std::string> shards;
  for (const auto &[name, shard] : *map)
    shards.insert(shard);
  // A parameter is loaded when some shard holds it: the keys every shard
  // lacks are the missing ones.
  std::set<std::string> missing;
  for (const auto &[name, tensor] : model.named_parameters())
    missing.insert(name);
  for (const std::string &shard : shards) {
    fs::path path = fs::path(dir) / shard;
    if (!fs::is_regular_file(path, ec))
      throw Error(index.string() + " names the shard " + shard +
                  ", which is not in " + dir);
    LoadResult loaded =
        load_hf_safetensors(model, path.string(), /*strict=*/false, rename);
    if (!loaded.unexpectedKeys.empty())
      throw Error(path.string() + ": " + loaded.unexpectedKeys[0] +
                  " is not a parameter of the model");
    std::set<std::string> lacks(loaded.missingKeys.begin(),
                                loaded.missingKeys.end());
    for (auto it = missing.begin(); it != missing.end();)
      it = lacks.count(*it) ? std::next(it) : missing.erase(it);
  }
  if (!missing.empty())
    throw Error(index.string() + ": no shard holds " + *missing.begin() +
                (missing.size() > 1
                     ? " (and " + std::to_string(missing.size() - 1) +
                           " more parameters)"
                     : std::string()));
}

} // namespace kiln::nn
