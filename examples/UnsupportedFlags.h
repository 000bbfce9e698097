// The flags of Hugging Face's TrainingArguments and run_clm.py that
// kiln-train knows and does not act on. A command line from a Trainer
// script carries them; an unknown flag would stop it with llvm::cl's
// "Unknown command line argument", which says nothing of why. Each is
// either refused with the reason and what to do instead (exit 2), or taken
// with a note saying what kiln does in its place. A value that asks for
// what kiln does anyway (False, --local_rank -1, --dataloader_num_workers
// 0) is taken without a word: it asks for nothing kiln lacks.
#ifndef KILN_EXAMPLES_UNSUPPORTEDFLAGS_H
#define KILN_EXAMPLES_UNSUPPORTEDFLAGS_H

#include "llvm/Support/CommandLine.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::train {

/// What kiln-train does with a flag it does not act on.
enum class FlagResponse {
  refuse, ///< exit 2 with the reason
  note,   ///< run, saying what kiln does instead
};

/// One such flag: its name, whether it is a boolean (True/False, or given
/// alone), the values that ask for what kiln does anyway (booleans: "true"
/// and / or "false"), the response to any other value, and why.
struct UnsupportedFlagInfo {
  const char *name;
  bool boolean;
  std::vector<std::string> defaultValues;
  FlagResponse response;
  const char *why;
};

/// Every flag kiln-train knows and does not act on, in --help's order.
const std::vector<UnsupportedFlagInfo> &unsupportedFlagTable();

/// The table's flags as llvm::cl options in a category of their own, so
/// --help lists them and parsing accepts them.
class UnsupportedFlags {
public:
  UnsupportedFlags();

  /// The boolean ones: kiln-train reads "--flag True" as "--flag=true".
  std::vector<const llvm::cl::opt<bool> *> booleans() const;

  /// After parsing: the first refusal ("--flag ...: why"), or "" with
  /// `notes` holding a line for each flag taken with a note.
  std::string check(std::vector<std::string> &notes) const;

  llvm::cl::OptionCategory category{
      "Trainer flags kiln-train knows and does not act on (each is refused "
      "with the reason, or taken with a note; their default values are "
      "taken silently)"};

private:
  /// --help's text of each row.
  std::vector<std::unique_ptr<std::string>> descriptions_;
  // One option per table row, in the table's order; the unused pointer of
  // each pair is null.
  std::vector<std::unique_ptr<llvm::cl::opt<bool>>> booleans_;
  std::vector<std::unique_ptr<llvm::cl::opt<std::string>>> values_;
};

} // namespace kiln::train

#endif // KILN_EXAMPLES_UNSUPPORTEDFLAGS_H
