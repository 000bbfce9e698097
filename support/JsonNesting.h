// A bound on how deeply JSON text nests, checked before a parser sees it.
// llvm::json::parse (and the Value it builds, whose destructor recurses
// too) uses a stack frame per level, so a line of 50,000 '[' crashed every
// reader of outside JSON (config.json, tokenizer.json, a safetensors
// header, JSONL data, --lr_scheduler_kwargs) with a stack overflow. No
// file kiln reads nests more than a few levels; Python's json module stops
// near 1,000 (its recursion limit).
#ifndef KILN_SUPPORT_JSONNESTING_H
#define KILN_SUPPORT_JSONNESTING_H

#include <optional>
#include <string>
#include <string_view>

namespace kiln {

/// The deepest nesting of arrays and objects kiln's JSON readers accept.
inline constexpr int kMaxJsonNesting = 512;

/// → a message ("nested deeper than 512 arrays or objects [line:column]",
/// in llvm::json's position format) when `text` opens more than
/// kMaxJsonNesting arrays or objects at once, outside strings; nullopt
/// otherwise. Says nothing else about whether `text` is valid JSON.
std::optional<std::string> jsonNestedTooDeeply(std::string_view text);

} // namespace kiln

#endif // KILN_SUPPORT_JSONNESTING_H
