// The GPT-2, Llama 3, Qwen2 and o200k pre-tokenisation regexes as
// hand-written matchers. At each position the alternatives are tried in the
// regex's order and the first that matches wins; each alternative is greedy,
// and only the white-space alternatives and o200k's cased words ever give
// characters back.
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

// The end of the run of \r and \n characters (and of '/' too when
// `slashes`: o200k's [\r\n/]*) that starts at `pos`.
size_t newlinesEnd(std::string_view text, size_t pos, bool slashes = false) {
  while (pos < text.size() &&
         (isNewline(char32_t(text[pos])) || (slashes && text[pos] == '/')))
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

// The alternatives after cl100k's words, which o200k shares but for '/'
// among the newlines after punctuation: \p{N}{1,maxDigits}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ at a character
// that begins no word.
size_t matchAfterWords(std::string_view text, size_t pos, int maxDigits,
                       bool slashes) {
  Utf8Unit here = decodeUtf8(text, pos);
  CharClass cls = classify(here.codePoint);
  size_t next = pos + size_t(here.length);
  // \p{N}{1,3} (Llama 3, o200k), \p{N} (Qwen2)
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
  //  ?[^\s\p{L}\p{N}]+[\r\n]* (o200k: [\r\n/]*)
  size_t otherStart = here.codePoint == ' ' && next < text.size() &&
                              classify(decodeUtf8(text, next).codePoint) ==
                                  CharClass::Other
                          ? next
                          : pos;
  if (cls == CharClass::Other || otherStart != pos)
    return newlinesEnd(text, runEnd(text, otherStart, CharClass::Other),
                       slashes) -
           pos;
  return matchSpacesLlama3(text, pos);
}

// Whether the character may lead a word: [^\r\n\p{L}\p{N}].
bool leadsWord(Utf8Unit unit) {
  CharClass cls = classify(unit.codePoint);
  return !isNewline(unit.codePoint) && cls != CharClass::Letter &&
         cls != CharClass::Number;
}

// Llama 3's pattern, or Qwen2's when `maxDigits` is 1 (\p{N}{1,maxDigits}).
size_t matchAtLlama3(std::string_view text, size_t pos, int maxDigits) {
  if (size_t n = matchContractionAnyCase(text, pos))
    return n;
  Utf8Unit here = decodeUtf8(text, pos);
  size_t next = pos + size_t(here.length);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (classify(here.codePoint) == CharClass::Letter)
    return runEnd(text, pos, CharClass::Letter) - pos;
  if (leadsWord(here) && next < text.size() &&
      classify(decodeUtf8(text, next).codePoint) == CharClass::Letter)
    return runEnd(text, next, CharClass::Letter) - pos;
  return matchAfterWords(text, pos, maxDigits, /*slashes=*/false);
}

//===--- o200k (GPT-4o's; Phi-4's) ----------------------------------------===//
//
// Its words are cased: with A = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// B = [\p{Ll}\p{Lm}\p{Lo}\p{M}], the first two alternatives are
//   [^\r\n\p{L}\p{N}]?A*B+C?  and  [^\r\n\p{L}\p{N}]?A+B*C?
// with C = (?i:'s|'t|'re|'ve|'m|'ll|'d): a word is capitals then small
// letters ("HTTPServer", "fooBAR" → "foo", "BAR"), marks stay inside words,
// and a contraction goes with its word. Caseless letters and marks are in
// both A and B, which is where the regex engine backtracks.

// A character's place in A and B.
enum class WordClass { none, upper, lower, both };

WordClass wordClass(char32_t cp) {
  if (cp == kInvalidCodePoint)
    return WordClass::none;
  if (isLetter(cp))
    switch (letterCase(cp)) {
    case LetterCase::upper:
      return WordClass::upper;
    case LetterCase::lower:
      return WordClass::lower;
    case LetterCase::caseless:
      return WordClass::both;
    }
  return isMark(cp) ? WordClass::both : WordClass::none;
}

bool inA(WordClass c) { return c == WordClass::upper || c == WordClass::both; }
bool inB(WordClass c) { return c == WordClass::lower || c == WordClass::both; }

WordClass wordClassAt(std::string_view text, size_t pos) {
  return pos < text.size() ? wordClass(decodeUtf8(text, pos).codePoint)
                           : WordClass::none;
}

// The end of the run of characters in A (or B) that starts at `pos`.
size_t wordRunEnd(std::string_view text, size_t pos, bool (*in)(WordClass)) {
  while (pos < text.size()) {
    Utf8Unit unit = decodeUtf8(text, pos);
    if (!in(wordClass(unit.codePoint)))
      break;
    pos += unit.length;
  }
  return pos;
}

constexpr size_t kNoMatch = std::string_view::npos;

// A*B+ at `q` → its end, or kNoMatch. A* takes its whole run, then gives
// characters back until B+ can start: at the run's end if a small letter
// follows (then B+ takes its run), else at the run's last character in B,
// which B+ takes alone (no character after it in the run is in B).
size_t matchCapitalsThenSmall(std::string_view text, size_t q) {
  size_t end = wordRunEnd(text, q, inA);
  if (wordClassAt(text, end) == WordClass::lower)
    return wordRunEnd(text, end, inB);
  size_t afterLastB = kNoMatch;
  for (size_t p = q; p < end;) {
    Utf8Unit unit = decodeUtf8(text, p);
    p += unit.length;
    if (inB(wordClass(unit.codePoint)))
      afterLastB = p;
  }
  return afterLastB;
}

// A+B* at `q` → its end, or kNoMatch.
size_t matchCapitalsThenAnySmall(std::string_view text, size_t q) {
  size_t end = wordRunEnd(text, q, inA);
  return end == q ? kNoMatch : wordRunEnd(text, end, inB);
}

size_t matchAtO200k(std::string_view text, size_t pos) {
  Utf8Unit here = decodeUtf8(text, pos);
  // Each word alternative first with its leading character, then without
  // (which only a leading mark, itself in A and B, can use); a character
  // that cannot lead a word gives one start only.
  const size_t starts[] = {pos + size_t(here.length), pos};
  const size_t firstStart = leadsWord(here) ? 0 : 1;
  for (auto *word : {matchCapitalsThenSmall, matchCapitalsThenAnySmall})
    for (size_t i = firstStart; i < 2; ++i)
      if (size_t end = word(text, starts[i]); end != kNoMatch) {
        if (end < text.size())
          end += matchContractionAnyCase(text, end);
        return end - pos;
      }
  return matchAfterWords(text, pos, /*maxDigits=*/3, /*slashes=*/true);
}

} // namespace

std::vector<std::string_view> preTokenize(std::string_view text,
                                          PreTokenizerKind kind) {
  std::vector<std::string_view> pieces;
  for (size_t pos = 0; pos < text.size();) {
    size_t length =
        kind == PreTokenizerKind::llama3  ? matchAtLlama3(text, pos, 3)
        : kind == PreTokenizerKind::qwen2 ? matchAtLlama3(text, pos, 1)
        : kind == PreTokenizerKind::o200k ? matchAtO200k(text, pos)
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
  if (kind == PreTokenizerKind::o200k)
    return "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"
           "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
           "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
           "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
           "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|"
           "\\s+(?!\\S)|\\s+";
  if (kind == PreTokenizerKind::qwen2)
    return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
           "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
           "\\s+(?!\\S)|\\s+";
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
         "\\s+(?!\\S)|\\s+";
}

} // namespace kiln::data
