// Readers for raw text, TSV and JSONL instruction data (see Datasets.h for
// the exact behaviour each copies from Hugging Face's loaders). Every reader
// works on the file's bytes in memory and counts lines itself, so that each
// error names file:line.
#include "frontends/data/Datasets.h"

#include "frontends/data/Files.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "support/JsonNesting.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>

namespace kiln::data {
namespace {

// Calls fn(lineNumber, line) for each line of `contents`, with "\n", "\r\n"
// or "\r" removed; `terminated` says whether the line had an ending.
template <typename Fn> void forEachLine(std::string_view contents, Fn fn) {
  size_t pos = 0;
  int lineNumber = 0;
  while (pos < contents.size()) {
    size_t end = contents.find_first_of("\r\n", pos);
    ++lineNumber;
    if (end == std::string_view::npos) {
      fn(lineNumber, contents.substr(pos), false);
      return;
    }
    fn(lineNumber, contents.substr(pos, end - pos), true);
    pos = end + 1;
    if (contents[end] == '\r' && pos < contents.size() && contents[pos] == '\n')
      ++pos;
  }
}

bool isBlank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

// The header → (text column, label column or -1), or an error.
absl::StatusOr<std::pair<int, int>>
tsvColumns(const std::vector<absl::string_view> &header,
           absl::string_view where) {
  int text = -1, label = -1;
  for (absl::string_view name : {"sentence", "content", "text"}) {
    for (size_t i = 0; i < header.size() && text < 0; ++i)
      if (header[i] == name)
        text = int(i);
    if (text >= 0)
      break;
  }
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == "label")
      label = int(i);
  if (text < 0)
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": no text column (expected a header named sentence, content "
               "or text; got ",
        absl::StrJoin(header, ", "), ")"));
  return std::make_pair(text, label);
}

// A JSONL object's string field; `optional` fields may be missing or null.
absl::StatusOr<std::string> stringField(const llvm::json::Object &object,
                                        const std::string &key, bool optional,
                                        absl::string_view where) {
  const llvm::json::Value *value = object.get(key);
  if (!value || value->kind() == llvm::json::Value::Null) {
    if (optional)
      return std::string();
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": missing field \"", key, "\""));
  }
  std::optional<llvm::StringRef> text = value->getAsString();
  if (!text)
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field \"", key, "\" is not a string"));
  return text->str();
}

} // namespace

TextDataset parseTextLines(std::string_view contents,
                           const TextFileOptions &options) {
  TextDataset dataset;
  forEachLine(contents, [&](int, std::string_view line, bool terminated) {
    if (line.empty() && options.dropEmptyLines)
      return;
    std::string text(line);
    if (terminated && options.keepLinebreaks)
      text.push_back('\n');
    dataset.texts.push_back(std::move(text));
  });
  return dataset;
}

absl::StatusOr<TextDataset> loadTextFile(const std::string &path,
                                         const TextFileOptions &options) {
  absl::StatusOr<std::string> contents = readFile(path);
  if (!contents.ok())
    return contents.status();
  return parseTextLines(*contents, options);
}

namespace {
/// `contents` without a leading UTF-8 byte-order mark, which spreadsheet
/// programs write and pandas and Arrow's JSON reader skip.
std::string_view withoutByteOrderMark(std::string_view contents) {
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  return contents.substr(0, bom.size()) == bom ? contents.substr(bom.size())
                                               : contents;
}
} // namespace

absl::StatusOr<TextDataset> parseTsv(std::string_view contents,
                                     std::string_view fileName) {
  contents = withoutByteOrderMark(contents);
  TextDataset dataset;
  std::vector<absl::string_view> header;
  int textColumn = -1, labelColumn = -1;
  absl::Status status;
  forEachLine(contents, [&](int lineNumber, std::string_view line, bool) {
    if (!status.ok() || isBlank(line))
      return;
    std::string where = absl::StrCat(asAbsl(fileName), ":", lineNumber);
    std::vector<absl::string_view> fields =
        absl::StrSplit(asAbsl(line), '\t');
    if (header.empty()) {
      header = fields;
      absl::StatusOr<std::pair<int, int>> columns = tsvColumns(header, where);
      if (!columns.ok()) {
        status = columns.status();
        return;
      }
      std::tie(textColumn, labelColumn) = *columns;
      return;
    }
    if (fields.size() != header.size()) {
      status = absl::InvalidArgumentError(absl::StrCat(
          where, ": expected ", header.size(), " tab-separated fields (",
          absl::StrJoin(header, ", "), "), got ", fields.size()));
      return;
    }
    if (labelColumn >= 0) {
      int64_t label = 0;
      if (!absl::SimpleAtoi(fields[labelColumn], &label)) {
        status = absl::InvalidArgumentError(
            absl::StrCat(where, ": label \"", fields[labelColumn],
                         "\" is not an integer"));
        return;
      }
      dataset.labels.push_back(label);
    }
    dataset.texts.emplace_back(fields[textColumn]);
  });
  if (!status.ok())
    return status;
  if (header.empty())
    return absl::InvalidArgumentError(
        absl::StrCat(asAbsl(fileName), ": empty file (expected a header row)"));
  return dataset;
}

absl::StatusOr<TextDataset> loadTsv(const std::string &path) {
  absl::StatusOr<std::string> contents = readFile(path);
  if (!contents.ok())
    return contents.status();
  return parseTsv(*contents, path);
}

std::string formatInstruction(const InstructionTemplate &tmpl,
                              std::string_view instruction,
                              std::string_view context,
                              std::string_view response) {
  std::string text = absl::StrCat(tmpl.instructionHeader, asAbsl(instruction),
                                  tmpl.sectionSeparator);
  if (!context.empty())
    absl::StrAppend(&text, tmpl.contextHeader, asAbsl(context),
                    tmpl.sectionSeparator);
  absl::StrAppend(&text, tmpl.responseHeader, asAbsl(response));
  return text;
}

absl::StatusOr<TextDataset>
parseInstructionJsonl(std::string_view contents, std::string_view fileName,
                      const InstructionTemplate &tmpl) {
  contents = withoutByteOrderMark(contents);
  TextDataset dataset;
  absl::Status status;
  // JSON strings cannot hold a raw line break, so lines are records.
  forEachLine(contents, [&](int lineNumber, std::string_view line, bool) {
    if (!status.ok() || isBlank(line))
      return;
    std::string where = absl::StrCat(asAbsl(fileName), ":", lineNumber);
    if (std::optional<std::string> deep = jsonNestedTooDeeply(line)) {
      status = absl::InvalidArgumentError(
          absl::StrCat(where, ": invalid JSON ", *deep));
      return;
    }
    llvm::Expected<llvm::json::Value> value =
        llvm::json::parse(llvm::StringRef(line.data(), line.size()));
    if (!value) {
      status = absl::InvalidArgumentError(absl::StrCat(
          where, ": invalid JSON ", llvm::toString(value.takeError())));
      return;
    }
    const llvm::json::Object *object = value->getAsObject();
    if (!object) {
      status = absl::InvalidArgumentError(
          absl::StrCat(where, ": expected a JSON object"));
      return;
    }
    std::array<absl::StatusOr<std::string>, 3> fields = {
        stringField(*object, tmpl.instructionKey, false, where),
        stringField(*object, tmpl.contextKey, true, where),
        stringField(*object, tmpl.responseKey, false, where)};
    for (const auto &field : fields)
      if (!field.ok()) {
        status = field.status();
        return;
      }
    std::string text =
        formatInstruction(tmpl, *fields[0], *fields[1], *fields[2]);
    dataset.promptBytes.push_back(text.size() - fields[2]->size());
    dataset.texts.push_back(std::move(text));
  });
  if (!status.ok())
    return status;
  return dataset;
}

absl::StatusOr<TextDataset>
loadInstructionJsonl(const std::string &path,
                     const InstructionTemplate &tmpl) {
  absl::StatusOr<std::string> contents = readFile(path);
  if (!contents.ok())
    return contents.status();
  return parseInstructionJsonl(*contents, path, tmpl);
}

} // namespace kiln::data
