// Python's re patterns read as POSIX ones (frontends/nn/PythonRegex.h):
// each pattern matches the same whole names as Python's re.fullmatch, and
// what kiln cannot read as Python does is refused, never read otherwise.
#include "frontends/nn/PythonRegex.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
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
           {"*a", "repeats nothing"},
           {"a{1000}", "is not a regular expression kiln reads"},
           {"caf\xc3\xa9", "outside ASCII"},
           // JobFilesFuzzer: an escaped non-ASCII byte in a class threw
           // std::out_of_range out of a bitset (terminate), and outside one
           // went through unchecked.
           {"[\\\xd5\x9c_]", "outside ASCII"},
           {"a\\\xd5\x9c", "outside ASCII"},
           {"$+", "repeats nothing"},
           {"a**", "repeats nothing"},
           {"a*{2}", "repeats nothing"},
           {"(*a)", "repeats nothing"},
           {"x|?", "repeats nothing"},
           {R"([\d-z])", "a bad range"},
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

/// A random pattern from module names' pieces and every construct the
/// translation reads (and some it refuses), nested up to `depth`.
std::string randomPattern(std::mt19937 &rng, int depth = 0) {
  auto pick = [&](const std::vector<std::string> &from) {
    return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
  };
  static const std::vector<std::string> atoms = {
      "a",   "b",   "q",    "_",   ".", "\\.",  "\\d",    "\\w", "\\s", "\\D",
      "\\W", "0",   "1",    "-",   "^", "$",    "]",      "}",   "{",   "\\]",
      "\\-", "\\^", "\\\\", "\\{", "x", "proj", "layers", "h",   ".*"};
  static const std::vector<std::string> classItems = {
      "a",    "b",   "q", "_", ".", "\\d", "\\w", "\\s",
      "0-9",  "a-z", "-", "^", "]", "\\]", "\\-", "[",
      "\\\\", "\\.", "x", "}", "{", "$",   "|",   "("};
  static const std::vector<std::string> repeats = {
      "",    "",      "",     "*",    "+",   "?",      "*?",  "+?", "??",
      "{2}", "{1,2}", "{,2}", "{2,}", "{,}", "{1,2}?", "{x}", "{"};
  std::uniform_real_distribution<double> unit(0, 1);
  std::string out;
  int pieces = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int k = 0; k < pieces; ++k) {
    double r = unit(rng);
    if (r < 0.2) {
      std::string items;
      for (int n = std::uniform_int_distribution<int>(1, 4)(rng); n > 0; --n)
        items += pick(classItems);
      out += std::string(unit(rng) < 0.5 ? "[" : "[^") + items + "]" +
             pick(repeats);
    } else if (r < 0.4 && depth < 3) {
      // Groups repeat boundedly: Python's backtracking would take
      // exponential time over (.*)*, which the reference must not.
      out += pick({"(", "(?:"}) + randomPattern(rng, depth + 1) + ")" +
             pick({"", "", "?", "{2}", "{,1}"});
    } else {
      out += pick(atoms) + pick(repeats);
    }
  }
  if (unit(rng) < 0.2 && depth < 3)
    out += "|" + randomPattern(rng, depth + 1);
  return out;
}

TEST(PythonRegex, AgreesWithPythonOnRandomPatterns) {
  // Differential: 3000 random patterns against 30 names, answered by the
  // python3 on PATH (re.fullmatch, or "E" where re refuses the pattern).
  // Every pattern kiln reads must match what Python matches, and must be
  // one Python reads; kiln may refuse more (possessive repeats).
  if (std::system("python3 -c 'import re' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no python3 to answer for re.fullmatch";
  const std::vector<std::string> names = {"model.layers.0.self_attn.q_proj",
                                          "model.layers.12.mlp.up_proj",
                                          "transformer.h.1.attn.c_attn",
                                          "lm_head",
                                          "q_proj",
                                          "a",
                                          "ab",
                                          "aab",
                                          "0",
                                          "01",
                                          "a.b",
                                          "a-b",
                                          "a^b",
                                          "a]b",
                                          "a}b",
                                          "a{b",
                                          "a\\b",
                                          "x",
                                          "xx",
                                          "h.1",
                                          "_",
                                          "",
                                          "a b",
                                          "$",
                                          "-",
                                          "^",
                                          "]",
                                          "q.proj",
                                          "qq_proj",
                                          "layers.1"};
  std::mt19937 rng(20261206);
  std::vector<std::string> patterns;
  char dir[] = "/tmp/kiln-regex-diff-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string in = std::string(dir) + "/patterns.txt",
                    out = std::string(dir) + "/python.txt";
  {
    std::ofstream file(in, std::ios::binary);
    for (int k = 0; k < 3000; ++k) {
      patterns.push_back(randomPattern(rng));
      file << patterns.back() << '\n';
    }
  }
  std::ofstream(std::string(dir) + "/names.txt", std::ios::binary) << [&] {
    std::string text;
    for (const std::string &name : names)
      text += name + '\n';
    return text;
  }();
  const std::string script =
      "import re, sys, warnings\n"
      "warnings.simplefilter('ignore')\n"
      "names = open(sys.argv[2]).read().split('\\n')[:-1]\n"
      "with open(sys.argv[3], 'w') as out:\n"
      "  for p in open(sys.argv[1]).read().split('\\n')[:-1]:\n"
      "    try:\n"
      "      c = re.compile(p)\n"
      "    except re.error:\n"
      "      out.write('E\\n'); continue\n"
      "    out.write(''.join('1' if c.fullmatch(n) else '0' for n in names)"
      " + '\\n')\n";
  std::ofstream(std::string(dir) + "/answer.py") << script;
  ASSERT_EQ(std::system(("python3 " + std::string(dir) + "/answer.py " + in +
                         " " + dir + "/names.txt " + out)
                            .c_str()),
            0);
  std::ifstream answers(out);
  int read = 0, refused = 0;
  for (const std::string &pattern : patterns) {
    std::string python;
    ASSERT_TRUE(std::getline(answers, python)) << "python answered less";
    absl::StatusOr<llvm::Regex> regex = python_fullmatch_regex(pattern);
    if (!regex.ok()) {
      ++refused;
      continue;
    }
    ++read;
    ASSERT_NE(python, "E") << "kiln reads '" << pattern
                           << "', which Python refuses";
    std::string kiln;
    for (const std::string &name : names)
      kiln += regex->match(name) ? '1' : '0';
    EXPECT_EQ(kiln, python)
        << pattern << " (POSIX " << *python_regex_to_posix(pattern) << ")";
  }
  // Most are read: the test would pass vacuously if nothing were.
  EXPECT_GT(read, 1000) << refused << " refused";
  for (const char *file :
       {"/patterns.txt", "/python.txt", "/names.txt", "/answer.py"})
    ::unlink((std::string(dir) + file).c_str());
  ::rmdir(dir);
}

} // namespace
} // namespace kiln::nn
