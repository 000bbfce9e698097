// Python's re patterns as POSIX extended ones; see PythonRegex.h.
#include "frontends/nn/PythonRegex.h"

#include "absl/strings/str_cat.h"

#include <bitset>
#include <cctype>
#include <optional>

namespace kiln::nn {
namespace {

/// The printable ASCII characters, the only ones a class may hold: module
/// names are Python identifiers joined by dots.
constexpr int kFirstPrintable = 0x20, kLastPrintable = 0x7e;
using CharSet = std::bitset<128>;

void addRange(CharSet &set, char first, char last) {
  for (int c = first; c <= last; ++c)
    set.set(c);
}

/// The characters of Python's \d, \w or \s (ASCII), or nullopt for another
/// letter.
std::optional<CharSet> shorthandClass(char letter) {
  CharSet set;
  switch (std::tolower(static_cast<unsigned char>(letter))) {
  case 'd':
    addRange(set, '0', '9');
    break;
  case 'w':
    addRange(set, '0', '9');
    addRange(set, 'A', 'Z');
    addRange(set, 'a', 'z');
    set.set('_');
    break;
  case 's':
    for (char c : std::string_view(" \t\n\r\f\v"))
      set.set(c);
    break;
  default:
    return std::nullopt;
  }
  if (std::isupper(static_cast<unsigned char>(letter))) // \D, \W, \S
    set.flip();
  return set;
}

/// `set` as a POSIX bracket expression. Inside brackets POSIX has no
/// escapes, so placement makes the special characters literal: ']' first,
/// '-' last (or first), '^' anywhere but first, '[' after the other members
/// (so never before '.', ':' or '='). Characters outside printable ASCII
/// are dropped (no module name holds them).
std::string bracket(const CharSet &set) {
  if (set.count() == 1 && set.test('^'))
    return "\\^";
  std::string out = "[";
  if (set.test(']'))
    out += ']';
  for (int c = kFirstPrintable; c <= kLastPrintable; ++c)
    if (set.test(c) && c != ']' && c != '-' && c != '^' && c != '[')
      out += char(c);
  if (set.test('['))
    out += '[';
  if (set.test('^') && out.size() == 1) // '^' and '-' alone
    return "[-^]";
  if (set.test('^'))
    out += '^';
  if (set.test('-'))
    out += '-';
  return out + "]";
}

class Translator {
public:
  explicit Translator(std::string_view pattern) : p_(pattern) {}

  absl::StatusOr<std::string> run() {
    while (i_ < p_.size()) {
      char c = p_[i_];
      if (static_cast<unsigned char>(c) > 0x7f)
        return refuse("holds a character outside ASCII");
      // Whether what comes before can be repeated: Python refuses a repeat
      // at the start, after '(', '|', '^', '$' or another repeat.
      const bool repeatable = repeatable_;
      repeatable_ = true;
      switch (c) {
      case '\\':
        if (absl::Status s = escape(); !s.ok())
          return s;
        break;
      case '[':
        if (absl::Status s = charClass(); !s.ok())
          return s;
        break;
      case '|':
      case '^':
      case '$':
        out_ += c;
        ++i_;
        repeatable_ = false;
        break;
      case '(':
        repeatable_ = false;
        if (p_.substr(i_, 3) == "(?:") {
          i_ += 3;
        } else if (p_.substr(i_, 2) == "(?") {
          return refuse("holds '(?' other than '(?:' (named groups, inline "
                        "flags, lookarounds), which kiln does not read");
        } else {
          ++i_;
        }
        out_ += '(';
        break;
      case '*':
      case '+':
      case '?':
        if (!repeatable)
          return nothingToRepeat();
        out_ += c;
        ++i_;
        if (absl::Status s = afterQuantifier(); !s.ok())
          return s;
        repeatable_ = false;
        break;
      case '{':
        if (absl::Status s = braces(repeatable); !s.ok())
          return s;
        break;
      case '}':
        out_ += "\\}";
        ++i_;
        break;
      default: // . ) and literals mean the same in POSIX
        out_ += c;
        ++i_;
      }
    }
    return out_;
  }

private:
  absl::Status refuse(const std::string &why) const {
    return absl::InvalidArgumentError(why);
  }

  absl::Status nothingToRepeat() const {
    return refuse("repeats nothing (a repeat at the start, after '(', '|', "
                  "'^', '$' or another repeat), which Python refuses");
  }

  /// A backslash and the character after it, outside a class.
  absl::Status escape() {
    if (i_ + 1 >= p_.size())
      return refuse("ends in a lone '\\'");
    char next = p_[i_ + 1];
    i_ += 2;
    if (static_cast<unsigned char>(next) > 0x7f)
      return refuse("holds a character outside ASCII");
    if (std::optional<CharSet> set = shorthandClass(next)) {
      out_ += bracket(*set);
      return absl::OkStatus();
    }
    if (std::isalnum(static_cast<unsigned char>(next)))
      return refuse(absl::StrCat("holds \\", std::string(1, next),
                                 ", which kiln does not read as Python's re "
                                 "does (only \\d \\D \\w \\W \\s \\S and "
                                 "escaped punctuation)"));
    out_ += '\\';
    out_ += next;
    return absl::OkStatus();
  }

  /// Python's lazy `?` after a quantifier is dropped (it matches the same
  /// whole strings); its possessive `+` is refused.
  absl::Status afterQuantifier() {
    if (i_ < p_.size() && p_[i_] == '?')
      ++i_;
    else if (i_ < p_.size() && p_[i_] == '+')
      return refuse("holds a possessive quantifier, which kiln does not "
                    "read");
    return absl::OkStatus();
  }

  /// {m}, {m,}, {,n}, {,} or {m,n} (to POSIX, {,n} as {0,n} and {,} as
  /// {0,}) after what `repeatable` says can be repeated; any other '{' is a
  /// literal, as Python reads it.
  absl::Status braces(bool repeatable) {
    size_t close = p_.find('}', i_);
    std::string_view body = close == std::string_view::npos
                                ? ""
                                : p_.substr(i_ + 1, close - i_ - 1);
    size_t comma = body.find(',');
    std::string_view low = body.substr(0, comma);
    std::string_view high =
        comma == std::string_view::npos ? "" : body.substr(comma + 1);
    auto digits = [](std::string_view s) {
      return s.find_first_not_of("0123456789") == std::string_view::npos;
    };
    bool quantifier = !body.empty() && digits(low) && digits(high);
    if (!quantifier) {
      out_ += "\\{";
      ++i_;
      return absl::OkStatus();
    }
    if (!repeatable)
      return nothingToRepeat();
    repeatable_ = false;
    out_ += "{" + std::string(low.empty() ? "0" : low) +
            (comma == std::string_view::npos ? "" : ",") + std::string(high) +
            "}";
    i_ = close + 1;
    return afterQuantifier();
  }

  /// One character of a class: a literal, escaped punctuation or a
  /// shorthand class (`set`: its members).
  absl::StatusOr<CharSet> classAtom(char &literal) {
    char c = p_[i_];
    if (static_cast<unsigned char>(c) > 0x7f)
      return refuse("holds a character outside ASCII");
    if (c == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':')
      return refuse("holds '[:' in a class: a POSIX class in other "
                    "dialects, the characters themselves in Python");
    CharSet set;
    ++i_;
    if (c != '\\') {
      literal = c;
      set.set(c);
      return set;
    }
    if (i_ >= p_.size())
      return refuse("ends in a lone '\\'");
    char next = p_[i_++];
    // An escaped byte too (a CharSet holds ASCII only).
    if (static_cast<unsigned char>(next) > 0x7f)
      return refuse("holds a character outside ASCII");
    if (std::optional<CharSet> shorthand = shorthandClass(next)) {
      literal = 0;
      return *shorthand;
    }
    if (std::isalnum(static_cast<unsigned char>(next)))
      return refuse(absl::StrCat("holds \\", std::string(1, next),
                                 " in a class, which kiln does not read"));
    literal = next;
    set.set(next);
    return set;
  }

  /// A class `[...]`, read as Python reads it (a ']' first is a member),
  /// emitted as its set of characters.
  absl::Status charClass() {
    ++i_;
    bool negated = i_ < p_.size() && p_[i_] == '^';
    if (negated)
      ++i_;
    CharSet set;
    bool first = true;
    while (true) {
      if (i_ >= p_.size())
        return refuse("holds a '[' that is never closed");
      if (p_[i_] == ']' && !first)
        break;
      first = false;
      char low = 0;
      absl::StatusOr<CharSet> atom = classAtom(low);
      if (!atom.ok())
        return atom.status();
      bool range = i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']';
      if (range && !low) // \d-z
        return refuse("holds a bad range in a class");
      if (!range) {
        set |= *atom;
        continue;
      }
      ++i_; // the '-'
      char high = 0;
      absl::StatusOr<CharSet> end = classAtom(high);
      if (!end.ok())
        return end.status();
      if (!high || high < low)
        return refuse("holds a bad range in a class");
      addRange(set, low, high);
    }
    ++i_; // the ']'
    if (negated)
      set.flip();
    CharSet printable;
    addRange(printable, kFirstPrintable, kLastPrintable);
    if ((set & printable).none())
      return refuse("holds a class no module name's character is in");
    out_ += bracket(set & printable);
    return absl::OkStatus();
  }

  std::string_view p_;
  size_t i_ = 0;
  std::string out_;
  bool repeatable_ = false;
};

} // namespace

absl::StatusOr<std::string> python_regex_to_posix(std::string_view pattern) {
  if (pattern.size() > kMaxPythonRegexLength)
    return absl::InvalidArgumentError(
        absl::StrCat("is longer than ", kMaxPythonRegexLength, " characters"));
  absl::StatusOr<std::string> body = Translator(pattern).run();
  if (!body.ok())
    return body.status();
  return "^(" + *body + ")$";
}

absl::StatusOr<llvm::Regex> python_fullmatch_regex(std::string_view pattern) {
  absl::StatusOr<std::string> posix = python_regex_to_posix(pattern);
  if (!posix.ok())
    return posix.status();
  llvm::Regex regex(*posix);
  std::string error;
  if (!regex.isValid(error))
    return absl::InvalidArgumentError("is not a regular expression kiln "
                                      "reads: " +
                                      error);
  return regex;
}

} // namespace kiln::nn
