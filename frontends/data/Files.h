// Reading whole files for the data layer, with errors that name the path,
// parsing JSON from outside, and the bridge from std::string_view to
// Abseil's string_view.
#ifndef KILN_FRONTENDS_DATA_FILES_H
#define KILN_FRONTENDS_DATA_FILES_H

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <string_view>

namespace kiln::data {

/// A path → the file's bytes; NotFound / Internal errors name the path.
absl::StatusOr<std::string> readFile(const std::string &path);

/// std::string_view → absl::string_view: Debian's Abseil is built with its
/// own string_view type, which StrCat, StrSplit and hash lookups take.
inline absl::string_view asAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

/// Whether `path` names an existing regular file.
bool fileExists(const std::string &path);

/// JSON text from outside → its value; InvalidArgument at `where` ("file"
/// or "file:line") when it nests deeper than kMaxJsonNesting (checked
/// first: llvm::json's recursive parser would overflow its stack) or is
/// not valid JSON.
absl::StatusOr<llvm::json::Value> parseJsonText(std::string_view text,
                                                absl::string_view where);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_FILES_H
