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
  return "{\n  \"global_step\": " + std::to_string(state.global_step) +
         ",\n  \"epoch\": " + pythonFloat(state.epoch) +
         ",\n  \"max_steps\": " + std::to_string(state.max_steps) +
         ",\n  \"train_batch_size\": " +
         std::to_string(state.train_batch_size) +
         (state.best_metric
              ? ",\n  \"best_metric\": " + pythonFloat(*state.best_metric) +
                    ",\n  \"best_model_checkpoint\": " +
                    jsonString(state.best_model_checkpoint)
              : std::string()) +
         ",\n  \"log_history\": [" + logs + "\n  ]\n}\n";
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
    if (!inHistory) {
      inHistory = absl::StartsWith(entry, "\"log_history\": [");
      closed = inHistory && absl::EndsWith(entry, "]");
      if (closed)
        break;
      continue;
    }
    if (entry == "]") {
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
