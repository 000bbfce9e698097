// A training checkpoint file read and taken apart without a model: the
// checksum and format checked (read_checkpoint_file), then its tensors split
// by owner and its scalars parsed and range-checked (parseCheckpointContents).
// Nothing here knows the model or the optimizer, so a damaged or hostile
// file is refused before anything is touched, and the fuzz target
// (fuzz/CheckpointFuzzer.cpp) reaches every check without building a model.
#ifndef KILN_FRONTENDS_NN_CHECKPOINTFILE_H
#define KILN_FRONTENDS_NN_CHECKPOINTFILE_H

#include "frontends/nn/Safetensors.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kiln::nn {

/// The metadata key naming the format, and the format save_checkpoint writes.
inline constexpr const char *kCheckpointFormatKey = "kiln.format";
inline constexpr const char *kCheckpointFormat = "kiln-checkpoint-1";
/// Name prefixes of optimizer state and generator state tensors.
inline constexpr const char *kCheckpointOptimizerPrefix = "optimizer.";
inline constexpr const char *kCheckpointRngPrefix = "rng.";
/// Metadata of a checkpoint that holds the trainable parameters only (a
/// LoRA run's adapters; its frozen base is the model it started from).
inline constexpr const char *kCheckpointModelKey = "kiln.model";
inline constexpr const char *kCheckpointTrainableOnly = "trainable";

/// The optimizer part of a checkpoint.
struct CheckpointOptimizer {
  std::string name;
  int64_t stepCount = 0;
  double lr = 0;
};

/// A checkpoint's contents, split by owner, with its scalars parsed.
struct CheckpointContents {
  /// The training step the checkpoint was taken after (≥ 0).
  int64_t step = 0;
  /// Set when the file holds optimizer state.
  std::optional<CheckpointOptimizer> optimizer;
  /// The model's trainable parameters only (kiln.model = "trainable").
  bool trainableOnly = false;
  /// Tensors by name, the owner's prefix removed.
  std::map<std::string, HostTensor> model, optimizerState, rng;
  /// The user's metadata (keys not starting with "kiln.").
  std::map<std::string, std::string> metadata;
};

/// A checkpoint file → its contents, its checksum verified and its format
/// checked; an error Status naming the file when it is missing, truncated,
/// corrupt or not a kiln checkpoint. Nothing else is touched.
absl::StatusOr<SafetensorsData> read_checkpoint_file(const std::string &path);

/// What read_checkpoint_file returned → its contents; InvalidArgument naming
/// `path` and the key when a scalar is missing, not a number or out of range.
absl::StatusOr<CheckpointContents>
parseCheckpointContents(SafetensorsData file, const std::string &path);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_CHECKPOINTFILE_H
