// trainer_state.json written and its log history read back; see
// TrainerState.h.
#include "examples/TrainerState.h"

#include "support/JsonNesting.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace kiln::train {
namespace {

/// `text` as a JSON string, quotes and escapes included.
std::string jsonString(const std::string &text) {
  std::string out;
  llvm::raw_string_ostream(out) << llvm::json::Value(text);
  return out;
}

} // namespace

std::string logEntryJson(const LogDict &dict) {
  std::string out = "{";
  for (size_t i = 0; i < dict.size(); ++i)
    out +=
        (i ? ", \"" : "\"") + dict[i].first + "\": " +
        (std::isfinite(dict[i].second) ? logValue(dict[i].first, dict[i].second)
                                       : std::string("null"));
  return out + "}";
}

std::string trainerStateJson(const TrainerState &state) {
  std::string logs;
  for (const std::string &entry : state.log_history)
    logs += (logs.empty() ? "\n    " : ",\n    ") + entry;
  auto integer = [](int64_t value) { return std::to_string(value); };
  auto optional = [](const auto &value, auto text) {
    return value ? text(*value) : std::string("null");
  };
  // Sorted by key; log_history's entries one a line (parseLogHistory).
  const std::pair<const char *, std::string> fields[] = {
      {"best_global_step", optional(state.best_global_step, integer)},
      {"best_metric", optional(state.best_metric, pythonFloat)},
      {"best_model_checkpoint", state.best_model_checkpoint.empty()
                                    ? std::string("null")
                                    : jsonString(state.best_model_checkpoint)},
      {"epoch", pythonFloat(state.epoch)},
      {"eval_steps", integer(state.eval_steps)},
      {"global_step", integer(state.global_step)},
      {"is_hyper_param_search", "false"},
      {"is_local_process_zero", "true"},
      {"is_world_process_zero", "true"},
      {"log_history", "[" + logs + "\n  ]"},
      {"logging_steps", integer(state.logging_steps)},
      {"max_steps", integer(state.max_steps)},
      {"num_input_tokens_seen", integer(state.num_input_tokens_seen)},
      {"num_train_epochs", integer(state.num_train_epochs)},
      {"save_steps", integer(state.save_steps)},
      {"total_flos", pythonFloat(state.total_flos)},
      {"train_batch_size", integer(state.train_batch_size)},
      {"trial_name", "null"},
      {"trial_params", "null"}};
  std::string out = "{";
  for (const auto &[key, value] : fields)
    out += std::string(out.size() > 1 ? ",\n  \"" : "\n  \"") + key +
           "\": " + value;
  return out + "\n}\n";
}

absl::StatusOr<std::vector<std::string>>
parseLogHistory(std::string_view text) {
  auto fail = [](const std::string &why) {
    return absl::InvalidArgumentError(why);
  };
  std::vector<std::string> entries;
  bool inHistory = false, closed = false;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    absl::string_view entry = absl::StripAsciiWhitespace(line);
    // Keys are sorted, so others may follow the history: its end is "]" or
    // "],".
    if (!inHistory) {
      inHistory = absl::StartsWith(entry, "\"log_history\": [");
      closed = inHistory &&
               (absl::EndsWith(entry, "]") || absl::EndsWith(entry, "],"));
      if (closed)
        break;
      continue;
    }
    if (entry == "]" || entry == "],") {
      closed = true;
      break;
    }
    // "{...} ," too: the entry is what lies between the spaces, so that a
    // history saved again reads back the same.
    if (absl::ConsumeSuffix(&entry, ","))
      entry = absl::StripTrailingAsciiWhitespace(entry);
    if (jsonNestedTooDeeply(std::string_view(entry.data(), entry.size())))
      return fail("an entry nests too deeply");
    llvm::Expected<llvm::json::Value> value =
        llvm::json::parse(llvm::StringRef(entry.data(), entry.size()));
    if (!value)
      return fail(llvm::toString(value.takeError()));
    if (!value->getAsObject())
      return fail("a log_history entry is not an object");
    entries.emplace_back(entry);
  }
  if (!closed)
    return fail("no \"log_history\": [ ... ] as kiln writes it");
  return entries;
}

} // namespace kiln::train
