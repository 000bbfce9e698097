// Text data sets as lists of examples, read the way Hugging Face's loaders
// read them for run_clm:
// - raw text (WikiText): the "text" loader, one example per line. The file is
//   read as bytes; "\r\n" and "\r" end lines like "\n" (Python's universal
//   newlines); with keepLinebreaks (run_clm's default) each line keeps its
//   "\n", else it is dropped. Empty lines stay as examples ("" or "\n"), as
//   HF keeps them; they tokenize to nothing or to "\n" (dropEmptyLines drops
//   them instead). No trailing empty example after a final newline.
// - SST-2 TSV: a header row; the text column is the first of `sentence`,
//   `content`, `text` present, in any column position; a `label` column is
//   optional and must hold integers; other columns are ignored. No quoting
//   (GLUE's files use none). Blank lines are skipped (as pandas does); a row
//   with the wrong number of fields or a bad label is an error naming
//   file:line, as HF's csv loader would fail too.
// - JSONL instruction data (dolly-15k style): one JSON object per line with
//   string fields instruction, context (optional, may be missing, null or
//   empty) and response, rendered with InstructionTemplate. Blank lines are
//   skipped; invalid JSON, a missing or non-string field is an error naming
//   file:line.
#ifndef KILN_FRONTENDS_DATA_DATASETS_H
#define KILN_FRONTENDS_DATA_DATASETS_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::data {

/// Examples (texts) and, when the source had a label column, their labels.
struct TextDataset {
  std::vector<std::string> texts;
  /// Empty, or one label per text.
  std::vector<int64_t> labels;
  /// Instruction records only: per text, the length in bytes of its prompt
  /// (the template up to and including the response header); the rest of
  /// the text is the response. Empty for other data.
  std::vector<size_t> promptBytes;

  size_t size() const { return texts.size(); }
};

struct TextFileOptions {
  /// Keep each line's "\n" (run_clm's --keep_linebreaks, default true).
  bool keepLinebreaks = true;
  /// Drop lines that are empty (HF keeps them; they add no tokens).
  bool dropEmptyLines = false;
};

/// A text file's contents → one example per line.
TextDataset parseTextLines(std::string_view contents,
                           const TextFileOptions &options = {});
/// A text file → one example per line.
absl::StatusOr<TextDataset> loadTextFile(const std::string &path,
                                         const TextFileOptions &options = {});

/// A TSV's contents → texts (and labels); errors name `fileName`:line.
absl::StatusOr<TextDataset> parseTsv(std::string_view contents,
                                     std::string_view fileName);
/// A TSV file (SST-2: label/sentence in either order) → texts and labels.
absl::StatusOr<TextDataset> loadTsv(const std::string &path);

/// How an instruction example becomes one training text. The default renders
/// the dolly records the way the fine-tuning issue's workflow names them,
///   ### Instruction:\n{instruction}\n\n### Context:\n{context}\n\n
///   ### Answer:\n{response}
/// (without the line break after "\n\n" shown here), leaving out the context
/// section when the context is empty.
struct InstructionTemplate {
  std::string instructionKey = "instruction";
  std::string contextKey = "context";
  std::string responseKey = "response";
  std::string instructionHeader = "### Instruction:\n";
  std::string contextHeader = "### Context:\n";
  std::string responseHeader = "### Answer:\n";
  std::string sectionSeparator = "\n\n";
};

/// One example → its training text under `tmpl`.
std::string formatInstruction(const InstructionTemplate &tmpl,
                              std::string_view instruction,
                              std::string_view context,
                              std::string_view response);
/// JSONL contents → one rendered text per non-blank line.
absl::StatusOr<TextDataset>
parseInstructionJsonl(std::string_view contents, std::string_view fileName,
                      const InstructionTemplate &tmpl = {});
/// A JSONL file → one rendered text per non-blank line.
absl::StatusOr<TextDataset>
loadInstructionJsonl(const std::string &path,
                     const InstructionTemplate &tmpl = {});

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_DATASETS_H
