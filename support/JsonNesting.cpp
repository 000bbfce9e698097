#include "support/JsonNesting.h"

#include "absl/strings/str_cat.h"

namespace kiln {

std::optional<std::string> jsonNestedTooDeeply(std::string_view text) {
  int depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    }
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonNesting)
        return absl::StrCat("nested deeper than ", kMaxJsonNesting,
                            " arrays or objects [", line, ":",
                            i - lineStart + 1, "]");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

} // namespace kiln
