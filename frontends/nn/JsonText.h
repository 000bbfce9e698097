// Outside JSON text (a job's files: adapter configs, shard indexes,
// DeepSpeed configs) parsed behind the nesting bound, with one wording for
// the failure, so that each reader adds only its file's name. Header-only:
// the fuzzers' parser library compiles the readers without KilnNN.
#ifndef KILN_FRONTENDS_NN_JSONTEXT_H
#define KILN_FRONTENDS_NN_JSONTEXT_H

#include "support/JsonNesting.h"

#include "absl/status/statusor.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <string_view>

namespace kiln::nn {

/// `text` → its JSON value, or InvalidArgument "not JSON: <why>" when it
/// nests deeper than kMaxJsonNesting (checked first: llvm::json's parser
/// recurses) or does not parse.
inline absl::StatusOr<llvm::json::Value> parseJsonText(std::string_view text) {
  if (std::optional<std::string> deep = jsonNestedTooDeeply(text))
    return absl::InvalidArgumentError("not JSON: " + *deep);
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value)
    return absl::InvalidArgumentError("not JSON: " +
                                      llvm::toString(value.takeError()));
  return std::move(*value);
}

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_JSONTEXT_H
