// Python's re patterns read as POSIX ones (frontends/nn/PythonRegex.h):
// each pattern matches the same whole names as Python's re.fullmatch, and
// what kiln cannot read as Python does is refused, never read otherwise.
#include "frontends/nn/PythonRegex.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::nn {
namespace {

const std::vector<std::string> kNames = {"model.layers.0.self_attn.q_proj",
                                         "model.layers.12.self_attn.v_proj",
                                         "model.layers.3.mlp.gate_proj",
                                         "transformer.h.1.attn.c_attn",
                                         "transformer.h.10.mlp.c_fc",
                                         "lm_head",
                                         "model.embed_tokens",
                                         "q_proj",
                                         "a{2}",
                                         "x-y",
                                         "x^y",
                                         "x]y"};

TEST(PythonRegex, MatchesWhatPythonsFullmatchMatches) {
  // Each row: a pattern and, for each of kNames in order, whether
  // Python 3.12's re.fullmatch(pattern, name) matches (1) or not (0),
  // as Python printed them.
  struct Row {
    const char *pattern;
    const char *python;
  };
  const Row rows[] = {
      {R"(.*\.(q|v)_proj)", "110000000000"},
      {R"(.*\.(q_proj|v_proj))", "110000000000"},
      {R"(model\.layers\.\d+\.self_attn\.[qv]_proj)", "110000000000"},
      {R"(model\.layers\.[0-9]\.self_attn\..*)", "100000000000"},
      {R"(.*?\.h\.1\d*\..*)", "000110000000"},
      {R"((?:.*\.)?(c_attn|c_fc))", "000110000000"},
      {R"(.*layers\.(0|1|2|3)\..*)", "101000000000"},
      {R"([^.]+)", "000001011111"},
      {R"(\w+)", "000001010000"},
      {R"(\w+(\.\w+){4})", "111110000000"},
      {R"(.*\.[a-z]+_proj)", "111000000000"},
      {R"(model\.layers\.\d{1,2}\.self_attn\.q_proj)", "100000000000"},
      {R"(model\.layers\.\d{2,}\..*)", "010000000000"},
      {R"(model\.layers\.\d{,1}\..*)", "101000000000"},
      {R"(.*c_[a-z]{2,})", "000110000000"},
      {R"(a{2})", "000000000000"},
      {R"(a\{2\})", "000000001000"},
      {R"(x[-^]y)", "000000000110"},
      {R"(x[]]y)", "000000000001"},
      {R"(x[\]]y)", "000000000001"},
      {R"(x\^y)", "000000000010"},
      {R"(x[\w-]y)", "000000000100"},
      {R"([\S]+)", "111111111111"},
      {R"(\S+)", "111111111111"},
      {R"(\D+)", "000001110111"},
      {R"(lm_head|q_proj)", "000001010000"},
      {R"(.+_proj$)", "111000010000"},
      {R"(^q_proj)", "000000010000"},
      {R"((.*)*x)", "000000000000"},
      {R"(((((a)))))", "000000000000"},
      {R"(.*[.]q_proj)", "100000000000"},
      {R"(q_pro[^j])", "000000000000"},
  };
  for (const Row &row : rows) {
    absl::StatusOr<llvm::Regex> regex = python_fullmatch_regex(row.pattern);
    ASSERT_TRUE(regex.ok()) << row.pattern << ": " << regex.status();
    for (size_t k = 0; k < kNames.size(); ++k)
      EXPECT_EQ(regex->match(kNames[k]), row.python[k] == '1')
          << row.pattern << " on " << kNames[k] << " (POSIX "
          << *python_regex_to_posix(row.pattern) << ")";
  }
}

TEST(PythonRegex, WhatPythonReadsOtherwiseIsRefused) {
  struct Case {
    const char *pattern, *message;
  };
  for (const Case &c : std::vector<Case>{
           {R"(\Aq_proj\Z)", "holds \\A"},
           {R"(q_proj\b)", "holds \\b"},
           {R"((a)\1)", "holds \\1"},
           {R"((?P<name>q)_proj)", "holds '(?' other than '(?:'"},
           {R"((?i)Q_PROJ)", "holds '(?' other than '(?:'"},
           {R"(.*(?<!x)q_proj)", "holds '(?' other than '(?:'"},
           {R"(a*+)", "possessive"},
           {R"([[:alpha:]]+)", "holds '[:'"},
           {R"([\b])", "holds \\b in a class"},
           {R"([z-a])", "a bad range"},
           {R"([^\x00-\x7f])", "holds \\x in a class"},
           {"q_proj\\", "ends in a lone '\\'"},
           {"[abc", "never closed"},
           {"q_proj(", "is not a regular expression kiln reads"},
           {"(a|)", "is not a regular expression kiln reads"},
           {"*a", "is not a regular expression kiln reads"},
           {"a{1000}", "is not a regular expression kiln reads"},
           {"caf\xc3\xa9", "outside ASCII"},
       }) {
    absl::StatusOr<llvm::Regex> regex = python_fullmatch_regex(c.pattern);
    ASSERT_FALSE(regex.ok()) << c.pattern;
    EXPECT_NE(std::string(regex.status().message()).find(c.message),
              std::string::npos)
        << c.pattern << ": " << regex.status();
  }
}

TEST(PythonRegex, HostilePatternsNeitherHangNorOverflow) {
  // Nested repeats that backtracking engines (Python's, std::regex) take
  // exponential time over, and nesting deep enough to overflow std::regex's
  // recursive compiler: LLVM's matcher is linear in the name.
  std::string nested;
  for (int k = 0; k < 40; ++k)
    nested += "(.*)*";
  absl::StatusOr<llvm::Regex> slow = python_fullmatch_regex(nested + "x");
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_FALSE(slow->match("model.layers.0.self_attn.q_proj.weight.values"));
  std::string deep = std::string(1000, '(') + "q_proj" + std::string(1000, ')');
  absl::StatusOr<llvm::Regex> parens = python_fullmatch_regex(deep);
  ASSERT_TRUE(parens.ok()) << parens.status();
  EXPECT_TRUE(parens->match("q_proj"));
  EXPECT_FALSE(python_fullmatch_regex(std::string(5000, 'a')).ok());
}

} // namespace
} // namespace kiln::nn
