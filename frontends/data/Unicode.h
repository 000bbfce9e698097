// The Unicode pieces that GPT-2's tokenizer needs, without ICU: strict UTF-8
// decoding that turns every invalid byte into its own unit (so byte-level
// tokenization still covers arbitrary bytes), the letter / number / white
// space classes used by the pre-tokenisation regex, and GPT-2's
// bytes_to_unicode bijection between the 256 byte values and 256 printable
// code points (the alphabet that vocab.json and merges.txt are written in).
#ifndef KILN_FRONTENDS_DATA_UNICODE_H
#define KILN_FRONTENDS_DATA_UNICODE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::data {

/// Marks a byte that does not start a valid UTF-8 sequence.
inline constexpr char32_t kInvalidCodePoint = 0xFFFFFFFFu;

/// One decoded UTF-8 unit: a code point (or kInvalidCodePoint) and its length
/// in bytes (1 for an invalid byte).
struct Utf8Unit {
  char32_t codePoint;
  int length;
};

/// text[pos...] → its first UTF-8 unit. Overlong forms, surrogates, values
/// above U+10FFFF and truncated sequences decode as one invalid byte.
Utf8Unit decodeUtf8(std::string_view text, size_t pos);

/// A code point → its UTF-8 bytes, appended to `out`.
void appendUtf8(char32_t codePoint, std::string &out);

/// \p{L}: general category L* (exact for code points assigned in Unicode 14).
bool isLetter(char32_t codePoint);
/// \p{N}: general category N* (Nd, Nl, No; exact for Unicode 14).
bool isNumber(char32_t codePoint);
/// \s: the White_Space property (what Python's regex and Rust's regex use).
bool isWhitespace(char32_t codePoint);

/// A letter's case, as o200k's pattern (GPT-4o's, Phi-4's) divides \p{L}:
/// upper for Lu and Lt, lower for Ll, caseless for Lm and Lo. From
/// utf8proc's general category (Unicode 15); a code point that isLetter's
/// Unicode 14 ranges count as a letter and utf8proc does not is caseless.
enum class LetterCase { upper, lower, caseless };
LetterCase letterCase(char32_t letter);
/// \p{M}: general category M* (Mn, Mc, Me), from utf8proc.
bool isMark(char32_t codePoint);

/// GPT-2's bytes_to_unicode: a byte → the code point that stands for it.
char32_t byteToUnicode(uint8_t byte);
/// The inverse; nullopt for a code point that stands for no byte.
std::optional<uint8_t> unicodeToByte(char32_t codePoint);

/// Raw bytes → their symbol in GPT-2's alphabet (" the" → "Ġthe").
std::string bytesToSymbol(std::string_view bytes);
/// A symbol in GPT-2's alphabet → raw bytes ("Ġthe" → " the"); nullopt when
/// the symbol is not valid UTF-8 or holds a character outside the alphabet.
std::optional<std::string> symbolToBytes(std::string_view symbol);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_UNICODE_H
