// GPT-2's pre-tokenisation, written out by hand instead of run through a regex
// engine: the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// applied repeatedly from the left, over UTF-8 code points. A byte that is not
// valid UTF-8 counts as one character of the "other" class ([^\s\p{L}\p{N}]),
// so the pieces always partition the input exactly, whatever its bytes.
#ifndef KILN_FRONTENDS_DATA_PRETOKENIZER_H
#define KILN_FRONTENDS_DATA_PRETOKENIZER_H

#include <string_view>
#include <vector>

namespace kiln::data {

/// Text → the pieces GPT-2's regex matches, in order, as views into `text`;
/// their concatenation is `text`.
std::vector<std::string_view> preTokenize(std::string_view text);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_PRETOKENIZER_H
