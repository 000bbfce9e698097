// Training checkpoints over safetensors; see Checkpoint.h. Every check runs
// before the first assign_, so a rejected file leaves the training state as
// it was.
#include "frontends/nn/Checkpoint.h"

#include "frontends/nn/Safetensors.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::nn {
namespace {

constexpr const char *kFormatKey = "kiln.format";
constexpr const char *kFormat = "kiln-checkpoint-1";
const std::string kOptimizerPrefix = "optimizer.";
const std::string kRngPrefix = "rng.";

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string exactDouble(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

/// A metadata integer, or kiln::Error naming the key.
int64_t metadataInt(const std::map<std::string, std::string> &meta,
                    const std::string &key, const std::string &path) {
  auto it = meta.find(key);
  char *end = nullptr;
  long long value =
      it == meta.end() ? 0 : std::strtoll(it->second.c_str(), &end, 10);
  if (it == meta.end() || it->second.empty() || *end != '\0')
    throw Error("load_checkpoint: '" + path + "': metadata '" + key +
                "' is missing or not an integer");
  return value;
}

} // namespace

void save_checkpoint(const std::string &path, const Module &model,
                     const Optimizer *optimizer,
                     const NamedGenerators &generators,
                     const CheckpointState &state) {
  std::vector<NamedTensor> tensors;
  for (const auto &[name, tensor] : model.state_dict()) {
    if (startsWith(name, kOptimizerPrefix) || startsWith(name, kRngPrefix))
      throw Error("save_checkpoint: parameter name '" + name +
                  "' clashes with the checkpoint's reserved prefixes");
    tensors.push_back({name, tensor.to_host()});
  }
  std::map<std::string, std::string> meta;
  for (const auto &[key, value] : state.metadata) {
    if (startsWith(key, "kiln."))
      throw Error("save_checkpoint: metadata key '" + key + "' is reserved");
    meta[key] = value;
  }
  meta[kFormatKey] = kFormat;
  meta["kiln.step"] = std::to_string(state.step);
  if (optimizer) {
    for (const auto &[name, tensor] : optimizer->state())
      tensors.push_back({kOptimizerPrefix + name, tensor.to_host()});
    meta["kiln.optimizer"] = optimizer->name();
    meta["kiln.optimizer.step_count"] = std::to_string(optimizer->step_count());
    meta["kiln.optimizer.lr"] = exactDouble(optimizer->lr());
  }
  for (const auto &[name, generator] : generators)
    tensors.push_back({kRngPrefix + name, generator->state().to_host()});

  if (absl::Status s = saveSafetensors(path, tensors, meta); !s.ok())
    throw Error("save_checkpoint: " + std::string(s.message()));
}

absl::StatusOr<SafetensorsData> read_checkpoint_file(const std::string &path) {
  SafetensorsReadOptions options;
  options.requireChecksum = true;
  absl::StatusOr<SafetensorsData> file = loadSafetensors(path, options);
  if (!file.ok())
    return file.status();
  auto format = file->metadata.find(kFormatKey);
  if (format == file->metadata.end() || format->second != kFormat)
    return absl::InvalidArgumentError(
        "'" + path + "': not a kiln checkpoint (metadata '" + kFormatKey +
        "' is '" +
        (format == file->metadata.end() ? std::string() : format->second) +
        "')");
  return file;
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
  std::map<std::string, std::string> &meta = file.metadata;
  auto fail = [&](const std::string &message) {
    return Error("load_checkpoint: '" + path + "': " + message);
  };

  // 1. Split the tensors by owner and check everything that can be checked
  //    without changing state.
  std::map<std::string, HostTensor> modelState, optimizerState, rngState;
  for (NamedTensor &t : file.tensors) {
    if (startsWith(t.name, kOptimizerPrefix))
      optimizerState.emplace(t.name.substr(kOptimizerPrefix.size()),
                             std::move(t.tensor));
    else if (startsWith(t.name, kRngPrefix))
      rngState.emplace(t.name.substr(kRngPrefix.size()), std::move(t.tensor));
    else
      modelState.emplace(t.name, std::move(t.tensor));
  }
  CheckpointState out;
  out.step = metadataInt(meta, "kiln.step", path);
  int64_t optimizerSteps = 0;
  if (optimizer) {
    if (meta["kiln.optimizer"].empty())
      throw fail("it holds no optimizer state");
    if (meta["kiln.optimizer"] != optimizer->name())
      throw fail("it holds the state of optimizer '" + meta["kiln.optimizer"] +
                 "', not of " + optimizer->name());
    optimizerSteps = metadataInt(meta, "kiln.optimizer.step_count", path);
    try {
      optimizer->check_state(optimizerState);
    } catch (const Error &e) {
      throw fail(e.what());
    }
  }
  for (const auto &[name, generator] : generators) {
    auto it = rngState.find(name);
    if (it == rngState.end())
      throw fail("no state for generator '" + name + "'");
    if (it->second.dtype() != DType::i64 ||
        it->second.shape() != generator->state().shape())
      throw fail("generator '" + name + "' state has type " +
                 it->second.typeString());
  }
  LoadResult keys;
  try {
    keys = model.check_state_dict(modelState);
  } catch (const Error &e) {
    throw fail(e.what());
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
  model.load_state_dict(modelState);
  if (optimizer) {
    optimizer->load_state(optimizerState, optimizerSteps);
    optimizer->set_lr(std::strtod(meta["kiln.optimizer.lr"].c_str(), nullptr));
  }
  for (const auto &[name, generator] : generators) {
    Tensor state = generator->state();
    state.assign_(Tensor::from_host(rngState.at(name)));
  }
  // Make the restored values device data now, so the next training step's
  // graph is the one the cache already holds.
  step();
  for (const auto &[key, value] : file.metadata)
    if (!startsWith(key, "kiln."))
      out.metadata[key] = value;
  return out;
}

} // namespace kiln::nn
