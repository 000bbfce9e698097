// Training checkpoints as one safetensors file: the model's state dict under
// its own names (so the model part also loads as a Hugging Face file), the
// optimizer's state under "optimizer.<param>.<state>", each generator's
// device state under "rng.<name>", and the step, the optimizer's kind, step
// count and learning rate in the metadata, together with kiln's checksum.
// Saving is atomic (a failed save leaves the previous file untouched);
// loading requires the checksum, checks every name and shape before
// changing anything, and throws kiln::Error with the file's name and what is
// wrong. Reading and restoring are also offered apart, so a caller choosing
// among several files (CheckpointFolder.h) can tell a damaged file, which it
// skips, from one that does not fit the model, which is the user's error.
#ifndef KILN_FRONTENDS_NN_CHECKPOINT_H
#define KILN_FRONTENDS_NN_CHECKPOINT_H

#include "frontends/nn/CheckpointFile.h"
#include "frontends/nn/Module.h"
#include "frontends/nn/Optimizer.h"
#include "frontends/nn/Safetensors.h"

#include "absl/status/statusor.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln::nn {

/// Generators to checkpoint, by name ("dropout" → &model.generator()).
using NamedGenerators = std::vector<std::pair<std::string, Generator *>>;

/// The scalars of a checkpoint besides its tensors.
struct CheckpointState {
  /// The training step the checkpoint was taken after.
  int64_t step = 0;
  /// Free-form strings saved with it (keys must not start with "kiln.").
  std::map<std::string, std::string> metadata;
};

/// Which parameters a checkpoint holds: all, or only those that require
/// grad (a LoRA run's adapters: its frozen base, often most of the model,
/// is the pretrained model it started from and is loaded from there).
enum class CheckpointScope { whole_model, trainable_only };

/// `tensors`' values in host memory, by reference, for saveSafetensors:
/// every pending one computed first (one forced sync at most), then each
/// one's host data as it is, with no copy. `tensors` must outlive the
/// references (and not change before the save).
std::vector<NamedTensorRef> host_data_refs(const NamedTensors &tensors);

/// model (+ optimizer, generators, state) → an atomically written file at
/// `path`. Pending tensors are synced first (call after kiln::step() to
/// avoid a forced sync). Throws kiln::Error when writing fails.
void save_checkpoint(const std::string &path, const Module &model,
                     const Optimizer *optimizer,
                     const NamedGenerators &generators,
                     const CheckpointState &state = {},
                     CheckpointScope scope = CheckpointScope::whole_model);

/// A file written by save_checkpoint → the model's parameters, the
/// optimizer's state, step count and learning rate, and the generators'
/// states are restored, then kiln::step() makes them device data (so the
/// next training step hits the graph cache) → the step and metadata.
/// Throws kiln::Error (naming the file) on a corrupt file, a missing or
/// unexpected tensor, a shape mismatch or another optimizer kind; nothing
/// is changed then. A trainable-only file leaves the frozen parameters as
/// they are (the caller loaded them) and may lack only those.
CheckpointState load_checkpoint(const std::string &path, Module &model,
                                Optimizer *optimizer,
                                const NamedGenerators &generators);

/// As load_checkpoint(path, ...), on contents read by read_checkpoint_file
/// (`path` names them in errors).
CheckpointState load_checkpoint(SafetensorsData file, const std::string &path,
                                Module &model, Optimizer *optimizer,
                                const NamedGenerators &generators);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_CHECKPOINT_H
