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
// - CSV (run_clm's `--train_file x.csv`, read by pandas): a header row; the
//   text column is `text` if there is one, else the first, as run_clm picks
//   it; other columns are ignored. RFC 4180 quoting, as pandas reads by
//   default: a field in double quotes may hold commas, line breaks and
//   doubled quotes. Blank lines are skipped; a row with more fields than
//   the header is an error naming file:line (pandas' "Expected N fields");
//   a row with fewer has empty fields for the rest (pandas' NaN), and an
//   empty text is an example without tokens.
// - JSON records (`.json` / `.jsonl`): JSON Lines, one object per line, or
//   a file holding one array of objects (both read by the datasets
//   library's json loader). What the first record holds decides the kind:
//   - instruction data (dolly-15k style): string fields instruction,
//     context (optional, may be missing, null or empty) and response,
//     rendered with InstructionTemplate;
//   - language-model data: a string field `text` (run_clm's text column),
//     each record's text an example as a text file's line is.
//   Blank lines are skipped; invalid JSON, a record that is not an object,
//   a missing or non-string field is an error naming file:line (file:
//   record N in an array).
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
  /// The column or field the texts came from (CSV, JSON records); empty
  /// for text files.
  std::string textColumn;
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
/// A CSV's contents → the texts of its text column; errors name
/// `fileName`:line.
absl::StatusOr<TextDataset> parseCsv(std::string_view contents,
                                     std::string_view fileName);
/// A CSV file → the texts of its text column.
absl::StatusOr<TextDataset> loadCsv(const std::string &path);

/// JSON records (JSON Lines or one array) → one text per record: rendered
/// instruction records, or the `text` fields of language-model records.
absl::StatusOr<TextDataset>
parseJsonRecords(std::string_view contents, std::string_view fileName,
                 const InstructionTemplate &tmpl = {});
/// A JSON records file → one text per record.
absl::StatusOr<TextDataset>
loadJsonRecords(const std::string &path, const InstructionTemplate &tmpl = {});

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_DATASETS_H
