// Training checkpoints over safetensors; see Checkpoint.h. Every check runs
// before the first assign_, so a rejected file leaves the training state as
// it was.
#include "frontends/nn/Checkpoint.h"

#include "frontends/nn/Safetensors.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::nn {
namespace {

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string exactDouble(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

} // namespace

std::vector<NamedTensorRef> host_data_refs(const NamedTensors &tensors) {
  // A sync for one tensor runs every pending computation, so after this
  // loop none runs again while references are taken.
  for (const auto &[name, tensor] : tensors)
    (void)tensor.host_data();
  std::vector<NamedTensorRef> refs;
  refs.reserve(tensors.size());
  for (const auto &[name, tensor] : tensors)
    refs.push_back({name, &tensor.host_data()});
  return refs;
}

void save_checkpoint(const std::string &path, const Module &model,
                     const Optimizer *optimizer,
                     const NamedGenerators &generators,
                     const CheckpointState &state, CheckpointScope scope) {
  const bool trainableOnly = scope == CheckpointScope::trainable_only;
  // The tensors are written from where they live (host_data), so the save
  // holds no second copy of the model and its optimizer state; `held`
  // keeps each alive until the file is written.
  NamedTensors held;
  for (const auto &[name, tensor] : model.state_dict()) {
    if (trainableOnly && !tensor.requires_grad())
      continue;
    if (startsWith(name, kCheckpointOptimizerPrefix) ||
        startsWith(name, kCheckpointRngPrefix))
      throw Error("save_checkpoint: parameter name '" + name +
                  "' clashes with the checkpoint's reserved prefixes");
    held.push_back({name, tensor});
  }
  std::map<std::string, std::string> meta;
  for (const auto &[key, value] : state.metadata) {
    if (startsWith(key, "kiln."))
      throw Error("save_checkpoint: metadata key '" + key + "' is reserved");
    meta[key] = value;
  }
  meta[kCheckpointFormatKey] = kCheckpointFormat;
  meta["kiln.step"] = std::to_string(state.step);
  if (trainableOnly)
    meta[kCheckpointModelKey] = kCheckpointTrainableOnly;
  if (optimizer) {
    for (const auto &[name, tensor] : optimizer->state())
      held.push_back({kCheckpointOptimizerPrefix + name, tensor});
    meta["kiln.optimizer"] = optimizer->name();
    meta["kiln.optimizer.step_count"] = std::to_string(optimizer->step_count());
    meta["kiln.optimizer.lr"] = exactDouble(optimizer->lr());
  }
  for (const auto &[name, generator] : generators)
    held.push_back({kCheckpointRngPrefix + name, generator->state()});
  if (absl::Status s = saveSafetensors(path, host_data_refs(held), meta);
      !s.ok())
    throw Error("save_checkpoint: " + std::string(s.message()));
}

CheckpointState load_checkpoint(const std::string &path, Module &model,
                                Optimizer *optimizer,
                                const NamedGenerators &generators) {
  absl::StatusOr<SafetensorsData> file = read_checkpoint_file(path);
  if (!file.ok())
    throw Error("load_checkpoint: " + std::string(file.status().message()));
  return load_checkpoint(std::move(*file), path, model, optimizer, generators);
}

CheckpointState load_checkpoint(SafetensorsData file, const std::string &path,
                                Module &model, Optimizer *optimizer,
                                const NamedGenerators &generators) {
  auto fail = [&](const std::string &message) {
    return Error("load_checkpoint: '" + path + "': " + message);
  };

  // 1. Parse, then check everything that can be checked against the model
  //    without changing state.
  absl::StatusOr<CheckpointContents> contents =
      parseCheckpointContents(std::move(file), path);
  if (!contents.ok())
    throw Error("load_checkpoint: " + std::string(contents.status().message()));
  if (optimizer) {
    if (!contents->optimizer)
      throw fail("it holds no optimizer state");
    if (contents->optimizer->name != optimizer->name())
      throw fail("it holds the state of optimizer '" +
                 contents->optimizer->name + "', not of " + optimizer->name());
    try {
      optimizer->check_state(contents->optimizerState);
    } catch (const Error &e) {
      throw fail(e.what());
    }
  }
  for (const auto &[name, generator] : generators) {
    auto it = contents->rng.find(name);
    if (it == contents->rng.end())
      throw fail("no state for generator '" + name + "'");
    if (it->second.dtype() != DType::i64 ||
        it->second.shape() != generator->state().shape())
      throw fail("generator '" + name + "' state has type " +
                 it->second.typeString());
  }
  LoadResult keys;
  try {
    keys = model.check_state_dict(contents->model);
  } catch (const Error &e) {
    throw fail(e.what());
  }
  if (contents->trainableOnly) {
    // Frozen parameters are the caller's to load; trainable ones must be
    // here.
    std::map<std::string, bool> trainable;
    for (const auto &[name, tensor] : model.named_parameters())
      trainable[name] = tensor.requires_grad();
    std::vector<std::string> missing;
    for (const std::string &k : keys.missingKeys)
      if (trainable[k])
        missing.push_back(k);
    keys.missingKeys = std::move(missing);
  }
  if (!keys.missingKeys.empty() || !keys.unexpectedKeys.empty()) {
    std::string list;
    for (const std::string &k : keys.missingKeys)
      list += " missing '" + k + "'";
    for (const std::string &k : keys.unexpectedKeys)
      list += " unexpected '" + k + "'";
    throw fail("model parameters do not match:" + list);
  }

  // 2. Restore.
  model.load_state_dict(contents->model, /*strict=*/!contents->trainableOnly);
  if (optimizer) {
    optimizer->load_state(contents->optimizerState,
                          contents->optimizer->stepCount);
    optimizer->set_lr(contents->optimizer->lr);
  }
  for (const auto &[name, generator] : generators) {
    Tensor state = generator->state();
    state.assign_(Tensor::from_host(contents->rng.at(name)));
  }
  // Make the restored values device data now, so the next training step's
  // graph is the one the cache already holds.
  step();
  return CheckpointState{contents->step, std::move(contents->metadata)};
}

} // namespace kiln::nn
