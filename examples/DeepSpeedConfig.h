// The Trainer's --deepspeed FILE: a DeepSpeed config, read as the Trainer
// reads one, so that the configs of the Trainer's documentation run as
// they are. What it says and kiln-train does:
// - zero_optimization.stage: 0 is plain data parallelism; stage 1 shards
//   the optimizer's state over the processes (nn::StateSharding::
//   by_parameter), stage 2 the averaged gradients too
//   (by_parameter_with_gradients). Stage 3 is refused.
// - Values the Trainer's flags also set (the batch sizes, accumulation,
//   clipping, the optimizer's hyperparameters, fp16 / bf16): "auto" takes
//   the flag's; any other value must equal it, else the run stops listing
//   each mismatch (transformers' HfTrainerDeepSpeedConfig does the same).
//   One left out takes the flag's too, where DeepSpeed would run its own
//   default (no clipping, say): a note names it.
// - fp16's loss-scaling settings and DeepSpeed's WarmupLR / WarmupDecayLR
//   schedulers are followed as DeepSpeed runs them.
// - Communication and memory tuning (bucket sizes, overlap_comm, offload,
//   stage 3's settings under stage 2, ...) and reporting (steps_per_print,
//   wall_clock_breakdown, monitors) do not change what a step computes:
//   read and listed in a note, not acted on.
// - Anything else (another optimizer or scheduler, a static loss scale,
//   16-bit gradient communication, an unknown key) is refused by name
//   rather than ignored.
// The Trainer's --fsdp asks for the same sharding in FSDP's words.
#ifndef KILN_EXAMPLES_DEEPSPEEDCONFIG_H
#define KILN_EXAMPLES_DEEPSPEEDCONFIG_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::train {

/// A value the config gives for something a Trainer flag sets.
struct DeepSpeedValue {
  /// Where it is in the config ("optimizer.params.lr") and the flag
  /// ("learning_rate"); booleans are 1 and 0.
  std::string key, flag;
  double value = 0;
  /// How the value prints: True / False, an int, or a float.
  bool boolean = false, integer = false;
};

/// fp16's dynamic loss scaling as DeepSpeed's DynamicLossScaler runs it
/// under ZeRO (the scale doubles after `window` clean steps).
struct DeepSpeedLossScaling {
  double initScale = 0;
  int64_t window = 1000;
  int64_t hysteresis = 1;
  bool consecutiveHysteresis = false;
  double minScale = 1;
};

/// The config's "scheduler": WarmupLR (warmup, then the maximum) or
/// WarmupDecayLR (warmup, then a linear decay to the minimum).
struct DeepSpeedSchedule {
  bool decay = false;
  /// warmup_type: "log" (DeepSpeed's default) or "linear".
  bool logWarmup = true;
  /// Absent: "auto" (0 and --learning_rate; the Trainer's warmup steps and
  /// its number of steps).
  std::optional<double> minLr, maxLr;
  std::optional<int64_t> warmupSteps, totalSteps;
  /// warmup_num_steps was given as a number, which must then equal the
  /// Trainer's (one left out takes DeepSpeed's 1000, unchecked).
  bool checkWarmup = false;
};

/// What kiln-train takes from a DeepSpeed config.
struct DeepSpeedConfig {
  int zeroStage = 0;
  std::vector<DeepSpeedValue> given;
  /// fp16's loss-scaling settings (absent: the config has no fp16 section;
  /// the Trainer's --fp16 then scales as PyTorch's GradScaler).
  std::optional<DeepSpeedLossScaling> lossScaling;
  std::optional<DeepSpeedSchedule> schedule;
  /// The settings read and not acted on (tuning and reporting), by key.
  std::vector<std::string> notActedOn;
  /// Settings the flags fill when "auto" that the config leaves out, with
  /// the default DeepSpeed would then run ("gradient_clipping (DeepSpeed's
  /// 0: no clipping)"): kiln-train takes the flags' and says so.
  std::vector<std::string> leftOut;
};

/// The config at `path`, or an error naming the file and the entry
/// kiln-train does not take.
absl::StatusOr<DeepSpeedConfig> readDeepSpeedConfig(const std::string &path);

/// readDeepSpeedConfig on a config's text; `what` names it in errors.
absl::StatusOr<DeepSpeedConfig> parseDeepSpeedConfig(std::string_view text,
                                                     std::string_view what);

/// The config's values against the Trainer's flags (name → value; a flag
/// missing from `flags` is not compared): "" when each matches, else the
/// list of mismatches, one a line, as the Trainer words them.
std::string deepSpeedMismatches(const DeepSpeedConfig &config,
                                const std::map<std::string, double> &flags);

/// The schedule's learning rate for each optimizer step (0-based: the
/// rate of step s + 1, as nn::LambdaLR asks) over `baseLr`, with the
/// Trainer's "auto" values: `baseLr` the maximum, `warmupSteps` and
/// `totalSteps` the run's. An error when a given step count differs from
/// the run's (as the Trainer checks them) or a rate cannot be expressed
/// over `baseLr`.
absl::StatusOr<std::function<double(int64_t)>>
deepSpeedLearningRates(const DeepSpeedSchedule &schedule, double baseLr,
                       int64_t warmupSteps, int64_t totalSteps);

/// The Trainer's --fsdp options (space- or comma-separated, as the Trainer
/// splits them) → the ZeRO stage they amount to: "shard_grad_op" (the
/// optimizer's state and the gradients sharded, the parameters not) is
/// stage 2, "no_shard" stage 0; nothing for "", "False" or "false". Adds a
/// line to `notes` for "auto_wrap" (kiln shards whole parameters: there
/// is nothing to wrap). An error names what is not built: full_shard and
/// hybrid_shard (sharded parameters), offload, an unknown option, two
/// strategies.
absl::StatusOr<std::optional<int>>
fsdpZeroStage(const std::string &options, std::vector<std::string> &notes);

} // namespace kiln::train

#endif // KILN_EXAMPLES_DEEPSPEEDCONFIG_H
