// Python `re` patterns, the subset written to match module names, as LLVM's
// POSIX regular expressions. PEFT matches a string target_modules against
// each module's whole name with re.fullmatch; kiln reads the same patterns
// with llvm::Regex, whose matcher runs in time linear in the name (no
// backtracking: a pattern such as (.*)*x cannot hang a run, nor deep
// nesting overflow the stack, as both do under std::regex).
#ifndef KILN_FRONTENDS_NN_PYTHONREGEX_H
#define KILN_FRONTENDS_NN_PYTHONREGEX_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Regex.h"

#include <string>
#include <string_view>

namespace kiln::nn {

/// The longest pattern read: module-name patterns are tens of characters.
inline constexpr size_t kMaxPythonRegexLength = 4096;

/// `pattern` translated to POSIX extended syntax, anchored at both ends so
/// that a match is re.fullmatch's. Translated: literals and escaped
/// punctuation, `.`, `^`, `$`, `|`, groups and `(?:...)`, the quantifiers
/// `*`, `+`, `?` and `{m}`, `{m,}`, `{,n}`, `{m,n}` (lazy forms read as
/// greedy, which matches the same whole strings), classes with ranges,
/// negation and `\d \w \s` (ASCII), and `\d \D \w \W \s \S` outside them.
/// Refused, with the reason: anything else Python reads otherwise or kiln
/// cannot match (`\A`, `\Z`, `\b`, back references, other `(?` groups such
/// as named groups, inline flags and lookarounds, possessive quantifiers,
/// `[:` in a class, characters outside ASCII), and what POSIX refuses
/// (an empty alternative or group, a repeat of nothing).
absl::StatusOr<std::string> python_regex_to_posix(std::string_view pattern);

/// python_regex_to_posix's translation compiled: an llvm::Regex whose
/// match(name) is re.fullmatch(pattern, name).
absl::StatusOr<llvm::Regex> python_fullmatch_regex(std::string_view pattern);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_PYTHONREGEX_H
