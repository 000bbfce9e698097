// Output in the format of Hugging Face's Trainer, so scripts that scrape
// Trainer logs read kiln-train's too: metric dicts printed as Python prints a
// dict of floats (`{'loss': 3.2103, 'learning_rate': 4.9e-05, 'epoch': 0.1}`,
// floats in Python's shortest round-trip repr), Python's round(), and a
// tqdm-like progress bar that is drawn on stderr only when stderr is a
// terminal, so logs piped to a file or a test hold only the dict lines.
#ifndef KILN_EXAMPLES_TRAINERLOG_H
#define KILN_EXAMPLES_TRAINERLOG_H

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::train {

/// A double → Python's repr of that float ("4.9e-05", "0.1", "3.0", "nan").
std::string pythonFloat(double value);

/// Python's round(value, digits) for the magnitudes of training logs.
double pythonRound(double value, int digits);

/// Ordered (key, value) pairs → "{'key': value, ...}" as Python prints it.
using LogDict = std::vector<std::pair<std::string, double>>;
std::string formatLogDict(const LogDict &dict);

/// A log dict's value as Python prints it: the counts the Trainer and
/// run_clm log as ints (step, eval_samples, train_samples,
/// num_input_tokens_seen) without a fraction ("72"), every other value as a
/// float (pythonFloat).
std::string logValue(const std::string &key, double value);

/// A tqdm-style bar (" 40%|████      | 80/200 [00:10<00:15, 7.90it/s]")
/// redrawn in place on stderr; inert when stderr is not a terminal or
/// `enabled` is false (--disable_tqdm).
class ProgressBar {
public:
  /// `total` steps, counting from `initial` (a resumed run).
  ProgressBar(int64_t total, int64_t initial, bool enabled = true);
  /// Sets the position to `step` and redraws (at most ~10 times a second).
  void update(int64_t step);
  /// Clears the bar's line so a log line can be printed; the next update
  /// redraws it.
  void clear();
  /// Draws the final state and ends the line.
  void finish();

private:
  void draw();

  bool enabled_;
  int64_t total_, initial_, position_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
  bool drawn_ = false;
};

} // namespace kiln::train

#endif // KILN_EXAMPLES_TRAINERLOG_H
