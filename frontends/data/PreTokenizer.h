// Byte-level BPE pre-tokenisation, written out by hand instead of run through
// a regex engine. GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// and Llama 3's (tiktoken's cl100k pattern)
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// and Qwen2's (Llama 3's with \p{N} for \p{N}{1,3}: each digit is a piece),
// and o200k's (GPT-4o's and Phi-4's: cased words, PreTokenizer.cpp)
//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+C?|
//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*C?|
//   \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// (C being (?i:'s|'t|'re|'ve|'m|'ll|'d)), applied repeatedly from the left,
// over UTF-8 code points. A byte that is not valid UTF-8 counts as one
// character of the "other" class ([^\s\p{L}\p{N}]), so the pieces always
// partition the input exactly, whatever its bytes.
#ifndef KILN_FRONTENDS_DATA_PRETOKENIZER_H
#define KILN_FRONTENDS_DATA_PRETOKENIZER_H

#include <string_view>
#include <vector>

namespace kiln::data {

/// Which of the four patterns splits the text.
enum class PreTokenizerKind { gpt2, llama3, qwen2, o200k };

/// Text → the pieces the pattern matches, in order, as views into `text`;
/// their concatenation is `text`.
std::vector<std::string_view>
preTokenize(std::string_view text,
            PreTokenizerKind kind = PreTokenizerKind::gpt2);

/// The regex of `kind` as tokenizer.json spells it (to recognise the
/// pattern in a file's Split pre-tokenizer).
std::string_view preTokenizerPattern(PreTokenizerKind kind);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_PRETOKENIZER_H
