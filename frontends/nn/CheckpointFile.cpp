// Checkpoint files read and parsed without a model; see CheckpointFile.h.
#include "frontends/nn/CheckpointFile.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <cmath>

namespace kiln::nn {
namespace {

bool startsWith(const std::string &s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

absl::Status badKey(const std::string &path, const std::string &key,
                    const char *what) {
  return absl::InvalidArgumentError(
      absl::StrCat("'", path, "': metadata '", key, "' ", what));
}

/// A metadata integer in [0, 2^63): the step and step counts.
absl::StatusOr<int64_t> countOf(const std::map<std::string, std::string> &meta,
                                const std::string &key,
                                const std::string &path) {
  auto it = meta.find(key);
  int64_t value = 0;
  if (it == meta.end() || !absl::SimpleAtoi(it->second, &value) || value < 0)
    return badKey(path, key, "is missing or not an integer >= 0");
  return value;
}

} // namespace

absl::StatusOr<SafetensorsData> read_checkpoint_file(const std::string &path) {
  SafetensorsReadOptions options;
  options.requireChecksum = true;
  absl::StatusOr<SafetensorsData> file = loadSafetensors(path, options);
  if (!file.ok())
    return file.status();
  auto format = file->metadata.find(kCheckpointFormatKey);
  if (format == file->metadata.end() || format->second != kCheckpointFormat)
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "': not a kiln checkpoint (metadata '",
        kCheckpointFormatKey, "' is '",
        format == file->metadata.end() ? std::string() : format->second,
        "')"));
  return file;
}

absl::StatusOr<CheckpointContents>
parseCheckpointContents(SafetensorsData file, const std::string &path) {
  const std::map<std::string, std::string> &meta = file.metadata;
  CheckpointContents out;
  absl::StatusOr<int64_t> step = countOf(meta, "kiln.step", path);
  if (!step.ok())
    return step.status();
  out.step = *step;
  if (auto name = meta.find("kiln.optimizer");
      name != meta.end() && !name->second.empty()) {
    CheckpointOptimizer optimizer;
    optimizer.name = name->second;
    absl::StatusOr<int64_t> count =
        countOf(meta, "kiln.optimizer.step_count", path);
    if (!count.ok())
      return count.status();
    optimizer.stepCount = *count;
    auto lr = meta.find("kiln.optimizer.lr");
    if (lr == meta.end() || !absl::SimpleAtod(lr->second, &optimizer.lr) ||
        !std::isfinite(optimizer.lr))
      return badKey(path, "kiln.optimizer.lr", "is missing or not a number");
    out.optimizer = std::move(optimizer);
  }
  if (auto scope = meta.find(kCheckpointModelKey); scope != meta.end()) {
    if (scope->second != kCheckpointTrainableOnly)
      return badKey(path, kCheckpointModelKey,
                    "must be \"trainable\" where present");
    out.trainableOnly = true;
  }
  const std::string optimizerPrefix = kCheckpointOptimizerPrefix;
  const std::string rngPrefix = kCheckpointRngPrefix;
  for (NamedTensor &t : file.tensors) {
    if (startsWith(t.name, optimizerPrefix))
      out.optimizerState.emplace(t.name.substr(optimizerPrefix.size()),
                                 std::move(t.tensor));
    else if (startsWith(t.name, rngPrefix))
      out.rng.emplace(t.name.substr(rngPrefix.size()), std::move(t.tensor));
    else
      out.model.emplace(t.name, std::move(t.tensor));
  }
  if (!out.optimizer && !out.optimizerState.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "': it holds optimizer tensors but no optimizer name"));
  for (const auto &[key, value] : meta)
    if (!startsWith(key, "kiln."))
      out.metadata[key] = value;
  return out;
}

} // namespace kiln::nn
