// Generates kiln-train's default corpus from a template grammar (see
// DefaultCorpus.h). Draws come from std::mt19937_64, whose output sequence
// the C++ standard fixes, reduced with a plain modulo, so the text does not
// depend on the standard library's distributions.
#include "examples/DefaultCorpus.h"

#include <random>

namespace kiln::train {
namespace {

// Words of each grammatical role; nouns and verbs come in singular/plural
// pairs so agreement is something to learn.
const std::vector<std::string> kAdjectives = {
    "small", "old", "red", "quiet", "happy", "clever", "tall", "green"};
const std::vector<std::pair<std::string, std::string>> kNouns = {
    {"cat", "cats"},       {"dog", "dogs"},       {"bird", "birds"},
    {"farmer", "farmers"}, {"child", "children"}, {"teacher", "teachers"}};
const std::vector<std::pair<std::string, std::string>> kVerbs = {
    {"sees", "see"},   {"likes", "like"},    {"follows", "follow"},
    {"finds", "find"}, {"watches", "watch"}, {"helps", "help"}};
const std::vector<std::string> kObjects = {
    "a ball", "the river", "a book", "the moon", "an apple", "the garden"};
const std::vector<std::string> kPlaces = {"in the morning", "at night",
                                          "near the house", "on the hill",
                                          "after lunch",    "every day"};
const std::vector<std::string> kNumbers = {
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};

class Picker {
public:
  explicit Picker(uint64_t seed) : rng_(seed) {}
  size_t below(size_t n) { return size_t(rng_() % n); }
  template <typename T> const T &pick(const std::vector<T> &items) {
    return items[below(items.size())];
  }

private:
  std::mt19937_64 rng_;
};

std::string sentence(Picker &p) {
  bool plural = p.below(2) == 1;
  const auto &noun = p.pick(kNouns);
  const auto &verb = p.pick(kVerbs);
  std::string s = "the " + p.pick(kAdjectives) + " " +
                  (plural ? noun.second : noun.first) + " " +
                  (plural ? verb.second : verb.first) + " " + p.pick(kObjects);
  if (p.below(2) == 0)
    s += " " + p.pick(kPlaces);
  return s + ".";
}

// "three four five six." : a run of consecutive numbers.
std::string counting(Picker &p) {
  size_t start = p.below(kNumbers.size() - 3);
  size_t length = 3 + p.below(kNumbers.size() - start - 2);
  std::string s;
  for (size_t i = start; i < start + length; ++i)
    s += (s.empty() ? "" : " ") + kNumbers[i];
  return s + ".";
}

} // namespace

std::vector<std::string> generateCorpus(int64_t numLines, uint64_t seed) {
  Picker p(seed);
  std::vector<std::string> lines;
  lines.reserve(size_t(numLines));
  for (int64_t i = 0; i < numLines; ++i) {
    // A line is a short paragraph: one to three sentences, sometimes a
    // counting run.
    std::string line;
    size_t sentences = 1 + p.below(3);
    for (size_t j = 0; j < sentences; ++j)
      line += (line.empty() ? "" : " ") +
              (p.below(5) == 0 ? counting(p) : sentence(p));
    lines.push_back(line + "\n");
  }
  return lines;
}

} // namespace kiln::train
