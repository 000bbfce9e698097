// Readers for raw text, TSV, CSV and JSON records (see Datasets.h for
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
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <array>
#include <optional>

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
        absl::StrCat(where, value ? ": field \"" : ": missing field \"", key,
                     value ? "\" is null" : "\""));
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

namespace {
/// `path`'s bytes → parse(bytes), or the read's error naming the path.
template <typename Parse>
absl::StatusOr<TextDataset> parseFile(const std::string &path, Parse parse) {
  absl::StatusOr<std::string> contents = readFile(path);
  if (!contents.ok())
    return contents.status();
  return parse(std::string_view(*contents));
}
} // namespace

absl::StatusOr<TextDataset> loadTextFile(const std::string &path,
                                         const TextFileOptions &options) {
  return parseFile(path, [&](std::string_view contents) {
    return parseTextLines(contents, options);
  });
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
  return parseFile(path, [&](std::string_view contents) {
    return parseTsv(contents, path);
  });
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

namespace {

/// One CSV record: its fields and the line it starts on.
struct CsvRecord {
  int line = 0;
  std::vector<std::string> fields;
};

/// `contents` → its records, RFC 4180 as pandas' default parser reads it:
/// fields split at commas, a field in double quotes may hold commas, line
/// breaks and doubled quotes (characters after its closing quote are kept,
/// as pandas keeps them); records end at "\n", "\r\n" or "\r" outside
/// quotes; records that are blank (nothing but spaces and tabs, unquoted)
/// are skipped.
absl::StatusOr<std::vector<CsvRecord>> csvRecords(std::string_view contents,
                                                  std::string_view fileName) {
  std::vector<CsvRecord> records;
  CsvRecord record;
  std::string field;
  bool quotedRecord = false; // the record has a quoted field: never blank
  int line = 1;
  auto endField = [&] {
    record.fields.push_back(std::move(field));
    field.clear();
  };
  auto endRecord = [&] {
    endField();
    bool blank =
        !quotedRecord && record.fields.size() == 1 && isBlank(record.fields[0]);
    if (!blank)
      records.push_back(std::move(record));
    record = CsvRecord{};
    quotedRecord = false;
  };
  size_t pos = 0, n = contents.size();
  record.line = line;
  while (pos < n) {
    char c = contents[pos];
    if (c == '"' && field.empty()) {
      // A quoted field: up to the quote that is not doubled.
      int opened = line;
      quotedRecord = true;
      ++pos;
      for (;;) {
        if (pos >= n)
          return absl::InvalidArgumentError(absl::StrCat(
              asAbsl(fileName), ":", opened,
              ": a quoted field starts here and has no closing quote"));
        char q = contents[pos++];
        if (q == '"') {
          if (pos < n && contents[pos] == '"') {
            field.push_back('"');
            ++pos;
            continue;
          }
          break;
        }
        if (q == '\n' || (q == '\r' && (pos >= n || contents[pos] != '\n')))
          ++line;
        field.push_back(q);
      }
      continue;
    }
    ++pos;
    if (c == ',') {
      endField();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && pos < n && contents[pos] == '\n')
        ++pos;
      endRecord();
      record.line = ++line;
    } else {
      field.push_back(c);
    }
  }
  if (!field.empty() || !record.fields.empty() || quotedRecord)
    endRecord();
  return records;
}

} // namespace

absl::StatusOr<TextDataset> parseCsv(std::string_view contents,
                                     std::string_view fileName) {
  absl::StatusOr<std::vector<CsvRecord>> records =
      csvRecords(withoutByteOrderMark(contents), fileName);
  if (!records.ok())
    return records.status();
  if (records->empty())
    return absl::InvalidArgumentError(
        absl::StrCat(asAbsl(fileName), ": empty file (expected a header row)"));
  const std::vector<std::string> &header = records->front().fields;
  // run_clm: text_column_name = "text" if "text" in column_names else
  // column_names[0].
  size_t column = 0;
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == "text") {
      column = i;
      break;
    }
  TextDataset dataset;
  dataset.textColumn = header[column];
  for (size_t r = 1; r < records->size(); ++r) {
    const CsvRecord &row = (*records)[r];
    if (row.fields.size() > header.size())
      return absl::InvalidArgumentError(absl::StrCat(
          asAbsl(fileName), ":", row.line, ": expected ", header.size(),
          " comma-separated fields (", absl::StrJoin(header, ", "), "), got ",
          row.fields.size()));
    dataset.texts.push_back(column < row.fields.size() ? row.fields[column]
                                                       : std::string());
  }
  return dataset;
}

absl::StatusOr<TextDataset> loadCsv(const std::string &path) {
  return parseFile(path, [&](std::string_view contents) {
    return parseCsv(contents, path);
  });
}

namespace {

/// What a file of JSON records holds, decided by its first record.
enum class RecordKind { instruction, text };

/// The kind of data `first` starts, or an error naming its fields.
absl::StatusOr<RecordKind> recordKind(const llvm::json::Object &first,
                                      const InstructionTemplate &tmpl,
                                      absl::string_view where) {
  if (first.get(tmpl.instructionKey) || first.get(tmpl.responseKey))
    return RecordKind::instruction;
  if (first.get("text"))
    return RecordKind::text;
  std::vector<std::string> keys;
  for (const auto &entry : first)
    keys.push_back(entry.first.str());
  std::sort(keys.begin(), keys.end());
  return absl::InvalidArgumentError(absl::StrCat(
      where, ": a record needs a \"text\" field (language-model data) or \"",
      tmpl.instructionKey, "\" and \"", tmpl.responseKey,
      "\" fields (instruction data); this one has ",
      keys.empty() ? "none" : absl::StrJoin(keys, ", ")));
}

/// Adds one record (a JSON value) to `dataset`, of the kind the first
/// record decided (decided here when it is the first).
absl::Status addRecord(const llvm::json::Value &value,
                       const InstructionTemplate &tmpl, absl::string_view where,
                       std::optional<RecordKind> &kind, TextDataset &dataset) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected a JSON object"));
  if (!kind) {
    absl::StatusOr<RecordKind> first = recordKind(*object, tmpl, where);
    if (!first.ok())
      return first.status();
    kind = *first;
    if (*kind == RecordKind::text)
      dataset.textColumn = "text";
  }
  if (*kind == RecordKind::text) {
    absl::StatusOr<std::string> text =
        stringField(*object, "text", false, where);
    if (!text.ok())
      return text.status();
    dataset.texts.push_back(std::move(*text));
    return absl::OkStatus();
  }
  std::array<absl::StatusOr<std::string>, 3> fields = {
      stringField(*object, tmpl.instructionKey, false, where),
      stringField(*object, tmpl.contextKey, true, where),
      stringField(*object, tmpl.responseKey, false, where)};
  for (const auto &field : fields)
    if (!field.ok())
      return field.status();
  std::string text =
      formatInstruction(tmpl, *fields[0], *fields[1], *fields[2]);
  dataset.promptBytes.push_back(text.size() - fields[2]->size());
  dataset.texts.push_back(std::move(text));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<TextDataset> parseJsonRecords(std::string_view contents,
                                             std::string_view fileName,
                                             const InstructionTemplate &tmpl) {
  contents = withoutByteOrderMark(contents);
  TextDataset dataset;
  std::optional<RecordKind> kind;
  size_t start = contents.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && contents[start] == '[') {
    // One array of records (json.load's form, which the datasets library
    // reads too).
    absl::StatusOr<llvm::json::Value> array =
        parseJsonText(contents, asAbsl(fileName));
    if (!array.ok())
      return array.status();
    int index = 0; // the whole text parsed, and it starts with '['
    for (const llvm::json::Value &record : *array->getAsArray()) {
      std::string where = absl::StrCat(asAbsl(fileName), ": record ", ++index);
      if (absl::Status added = addRecord(record, tmpl, where, kind, dataset);
          !added.ok())
        return added;
    }
    return dataset;
  }
  absl::Status status;
  // JSON Lines: a JSON string cannot hold a raw line break, so lines are
  // records.
  forEachLine(contents, [&](int lineNumber, std::string_view line, bool) {
    if (!status.ok() || isBlank(line))
      return;
    std::string where = absl::StrCat(asAbsl(fileName), ":", lineNumber);
    absl::StatusOr<llvm::json::Value> value = parseJsonText(line, where);
    status = value.ok() ? addRecord(*value, tmpl, where, kind, dataset)
                        : value.status();
  });
  if (!status.ok())
    return status;
  return dataset;
}

absl::StatusOr<TextDataset> loadJsonRecords(const std::string &path,
                                            const InstructionTemplate &tmpl) {
  return parseFile(path, [&](std::string_view contents) {
    return parseJsonRecords(contents, path, tmpl);
  });
}

} // namespace kiln::data
