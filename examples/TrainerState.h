// trainer_state.json, the Trainer's record of a run that each checkpoint
// folder holds. kiln writes one log entry a line, so that a run resuming
// from the folder carries the history over (as the Trainer's TrainerState
// does) by reading lines back, without a JSON writer that would reformat
// the entries; the reader takes text that may have been edited or torn.
#ifndef KILN_EXAMPLES_TRAINERSTATE_H
#define KILN_EXAMPLES_TRAINERSTATE_H

#include "examples/TrainerLog.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::train {

/// The file's name in a checkpoint folder (and beside the final model).
inline constexpr const char *kTrainerStateFile = "trainer_state.json";

/// The fields kiln writes: the Trainer's TrainerState less its callbacks'
/// states and hyperparameter search's.
struct TrainerState {
  int64_t global_step = 0;
  double epoch = 0;
  int64_t max_steps = 0;
  int64_t train_batch_size = 0;
  /// The run's intervals (the resolved counts) and epochs (rounded up).
  int64_t logging_steps = 0, eval_steps = 0, save_steps = 0;
  int64_t num_train_epochs = 0;
  /// The Trainer's estimate: 6 × input tokens × the non-embedding
  /// parameters, over every step so far.
  double total_flos = 0;
  /// --include_num_input_tokens_seen's count (0 without it).
  int64_t num_input_tokens_seen = 0;
  /// The best evaluation so far under --metric_for_best_model, its step
  /// and the checkpoint saved at that step (empty before one is).
  std::optional<double> best_metric;
  std::optional<int64_t> best_global_step;
  std::string best_model_checkpoint;
  /// Each a JSON object on one line (logEntryJson's, or read back).
  std::vector<std::string> log_history;
};

/// A log dict as a log_history entry: one line, values as the Trainer logs
/// them, null for NaN and infinities (which JSON lacks).
std::string logEntryJson(const LogDict &dict);

/// The text of trainer_state.json for `state`, its keys sorted as the
/// Trainer's json.dumps(sort_keys=True) writes them.
std::string trainerStateJson(const TrainerState &state);

/// The log_history entries of trainer_state.json's text as trainerStateJson
/// writes it, each an object on its own line; an error saying what is
/// wrong when the text is not in that layout or an entry is not a JSON
/// object.
absl::StatusOr<std::vector<std::string>> parseLogHistory(std::string_view text);

} // namespace kiln::train

#endif // KILN_EXAMPLES_TRAINERSTATE_H
