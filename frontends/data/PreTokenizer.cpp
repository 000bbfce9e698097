// The GPT-2 pre-tokenisation regex as a hand-written matcher. At each
// position the alternatives are tried in the regex's order and the first that
// matches wins; each alternative is greedy, and only `\s+(?!\S)` ever needs to
// give characters back (at most one).
#include "frontends/data/PreTokenizer.h"

#include "frontends/data/Unicode.h"

#include <cstddef>

namespace kiln::data {
namespace {

enum class CharClass { Letter, Number, Space, Other };

CharClass classify(char32_t cp) {
  if (cp == kInvalidCodePoint)
    return CharClass::Other;
  if (isLetter(cp))
    return CharClass::Letter;
  if (isNumber(cp))
    return CharClass::Number;
  if (isWhitespace(cp))
    return CharClass::Space;
  return CharClass::Other;
}

// 's 't 're 've 'm 'll 'd (case-sensitive, as in GPT-2) → its length, or 0.
size_t matchContraction(std::string_view text, size_t pos) {
  if (text[pos] != '\'' || pos + 1 >= text.size())
    return 0;
  char c = text[pos + 1];
  if (c == 's' || c == 't' || c == 'm' || c == 'd')
    return 2;
  if (pos + 2 >= text.size())
    return 0;
  std::string_view two = text.substr(pos + 1, 2);
  return (two == "re" || two == "ve" || two == "ll") ? 3 : 0;
}

// The end of the run of characters of class `cls` that starts at `pos`.
size_t runEnd(std::string_view text, size_t pos, CharClass cls) {
  while (pos < text.size()) {
    Utf8Unit unit = decodeUtf8(text, pos);
    if (classify(unit.codePoint) != cls)
      break;
    pos += unit.length;
  }
  return pos;
}

// `\s+(?!\S)|\s+` at a white-space character: the whole run if it ends the
// text, else the run without its last character (which then leads the next
// word), unless that would leave nothing.
size_t matchSpaces(std::string_view text, size_t pos) {
  size_t end = pos, lastStart = pos;
  while (end < text.size()) {
    Utf8Unit unit = decodeUtf8(text, end);
    if (classify(unit.codePoint) != CharClass::Space)
      break;
    lastStart = end;
    end += unit.length;
  }
  if (end == text.size() || lastStart == pos)
    return end - pos;
  return lastStart - pos;
}

// The length of the match at `pos` (always at least one byte).
size_t matchAt(std::string_view text, size_t pos) {
  if (size_t n = matchContraction(text, pos))
    return n;
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: the three classes are
  // disjoint, so the class of the first character after an optional ' '
  // picks the alternative.
  if (text[pos] == ' ' && pos + 1 < text.size()) {
    CharClass next = classify(decodeUtf8(text, pos + 1).codePoint);
    if (next != CharClass::Space)
      return runEnd(text, pos + 1, next) - pos;
  }
  CharClass here = classify(decodeUtf8(text, pos).codePoint);
  if (here != CharClass::Space)
    return runEnd(text, pos, here) - pos;
  return matchSpaces(text, pos);
}

} // namespace

std::vector<std::string_view> preTokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (size_t pos = 0; pos < text.size();) {
    size_t length = matchAt(text, pos);
    pieces.push_back(text.substr(pos, length));
    pos += length;
  }
  return pieces;
}

} // namespace kiln::data
