// Tokenizing a data set and run_clm's group_texts.
#include "frontends/data/GroupTexts.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <algorithm>

namespace kiln::data {

absl::StatusOr<std::vector<std::vector<int32_t>>>
tokenizeTexts(const Tokenizer &tokenizer, absl::Span<const std::string> texts) {
  std::vector<std::vector<int32_t>> examples;
  examples.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    absl::StatusOr<std::vector<int32_t>> ids = tokenizer.encode(texts[i]);
    if (!ids.ok())
      return absl::Status(ids.status().code(),
                          absl::StrCat("example ", i, ": ",
                                       ids.status().message()));
    examples.push_back(std::move(*ids));
  }
  return examples;
}

absl::StatusOr<LmBlocks> groupTexts(absl::Span<const std::vector<int32_t>> examples,
                                    const GroupOptions &options) {
  if (options.blockSize <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("block size must be positive, got ", options.blockSize));
  if (options.examplesPerGroup < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("examples per group must be non-negative, got ",
                     options.examplesPerGroup));
  size_t groupSize = options.examplesPerGroup == 0
                         ? std::max<size_t>(examples.size(), 1)
                         : size_t(options.examplesPerGroup);
  LmBlocks blocks;
  blocks.blockSize = options.blockSize;
  std::vector<int32_t> group;
  for (size_t begin = 0; begin < examples.size(); begin += groupSize) {
    // 1. Concatenate the group's examples (each followed by EOS if asked).
    group.clear();
    size_t end = std::min(examples.size(), begin + groupSize);
    for (size_t i = begin; i < end; ++i) {
      group.insert(group.end(), examples[i].begin(), examples[i].end());
      if (options.eosId && !examples[i].empty())
        group.push_back(*options.eosId);
    }
    // 2. Keep whole blocks only, as run_clm's total_length rounding does.
    size_t kept = group.size() / size_t(options.blockSize) *
                  size_t(options.blockSize);
    blocks.ids.insert(blocks.ids.end(), group.begin(), group.begin() + kept);
  }
  return blocks;
}

} // namespace kiln::data
