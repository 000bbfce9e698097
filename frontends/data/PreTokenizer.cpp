// The GPT-2, Llama 3 and Qwen2 pre-tokenisation regexes as hand-written
// matchers. At each position the alternatives are tried in the regex's order
// and the first that matches wins; each alternative is greedy, and only the
// white-space alternatives ever give characters back.
#include "frontends/data/PreTokenizer.h"

#include "frontends/data/Unicode.h"

#include <cstddef>
#include <string>

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

//===--- Llama 3 ----------------------------------------------------------===//

bool isNewline(char32_t cp) { return cp == '\r' || cp == '\n'; }

// (?i:'s|'t|'re|'ve|'m|'ll|'d) → its length, or 0.
size_t matchContractionAnyCase(std::string_view text, size_t pos) {
  if (text[pos] != '\'' || pos + 1 >= text.size())
    return 0;
  auto lower = [&](size_t i) {
    char c = text[i];
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
  };
  char c = lower(pos + 1);
  if (c == 's' || c == 't' || c == 'm' || c == 'd')
    return 2;
  if (pos + 2 >= text.size())
    return 0;
  std::string two{c, lower(pos + 2)};
  return (two == "re" || two == "ve" || two == "ll") ? 3 : 0;
}

// The end of the run of \r and \n characters that starts at `pos`.
size_t newlinesEnd(std::string_view text, size_t pos) {
  while (pos < text.size() && isNewline(char32_t(text[pos])))
    ++pos;
  return pos;
}

// `\s*[\r\n]+|\s+(?!\S)|\s+` at a white-space character: up to the last
// newline of the run when it has one; else as GPT-2's `\s+(?!\S)|\s+`.
size_t matchSpacesLlama3(std::string_view text, size_t pos) {
  size_t end = pos, afterNewline = pos;
  while (end < text.size()) {
    Utf8Unit unit = decodeUtf8(text, end);
    if (classify(unit.codePoint) != CharClass::Space)
      break;
    end += unit.length;
    if (isNewline(unit.codePoint))
      afterNewline = end;
  }
  if (afterNewline > pos)
    return afterNewline - pos;
  return matchSpaces(text, pos);
}

// Llama 3's pattern, or Qwen2's when `maxDigits` is 1 (\p{N}{1,maxDigits}).
size_t matchAtLlama3(std::string_view text, size_t pos, int maxDigits) {
  if (size_t n = matchContractionAnyCase(text, pos))
    return n;
  Utf8Unit here = decodeUtf8(text, pos);
  CharClass cls = classify(here.codePoint);
  size_t next = pos + size_t(here.length);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (cls == CharClass::Letter)
    return runEnd(text, pos, CharClass::Letter) - pos;
  bool nextIsLetter =
      next < text.size() &&
      classify(decodeUtf8(text, next).codePoint) == CharClass::Letter;
  if (cls != CharClass::Number && !isNewline(here.codePoint) && nextIsLetter)
    return runEnd(text, next, CharClass::Letter) - pos;
  // \p{N}{1,3} (Llama 3), \p{N} (Qwen2)
  if (cls == CharClass::Number) {
    size_t end = next;
    for (int i = 1; i < maxDigits && end < text.size(); ++i) {
      Utf8Unit unit = decodeUtf8(text, end);
      if (classify(unit.codePoint) != CharClass::Number)
        break;
      end += unit.length;
    }
    return end - pos;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t otherStart = here.codePoint == ' ' && next < text.size() &&
                              classify(decodeUtf8(text, next).codePoint) ==
                                  CharClass::Other
                          ? next
                          : pos;
  if (cls == CharClass::Other || otherStart != pos)
    return newlinesEnd(text, runEnd(text, otherStart, CharClass::Other)) - pos;
  return matchSpacesLlama3(text, pos);
}

} // namespace

std::vector<std::string_view> preTokenize(std::string_view text,
                                          PreTokenizerKind kind) {
  std::vector<std::string_view> pieces;
  for (size_t pos = 0; pos < text.size();) {
    size_t length =
        kind == PreTokenizerKind::llama3  ? matchAtLlama3(text, pos, 3)
        : kind == PreTokenizerKind::qwen2 ? matchAtLlama3(text, pos, 1)
                                          : matchAt(text, pos);
    pieces.push_back(text.substr(pos, length));
    pos += length;
  }
  return pieces;
}

std::string_view preTokenizerPattern(PreTokenizerKind kind) {
  if (kind == PreTokenizerKind::llama3)
    return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
           "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
           "\\s+(?!\\S)|\\s+";
  if (kind == PreTokenizerKind::qwen2)
    return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
           "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
           "\\s+(?!\\S)|\\s+";
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
         "\\s+(?!\\S)|\\s+";
}

} // namespace kiln::data
