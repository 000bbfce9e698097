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
  const std::optional<int32_t> bos = tokenizer.bosId();
  for (size_t i = 0; i < texts.size(); ++i) {
    absl::StatusOr<std::vector<int32_t>> ids = tokenizer.encode(texts[i]);
    if (!ids.ok())
      return absl::Status(ids.status().code(),
                          absl::StrCat("example ", i, ": ",
                                       ids.status().message()));
    // As tokenizer(text) in run_clm: the post-processor's BOS first.
    if (bos)
      ids->insert(ids->begin(), *bos);
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

int64_t instructionPromptRoom(int64_t blockSize, int64_t longestResponse) {
  int64_t quarter = std::max<int64_t>(1, blockSize / 4);
  return blockSize - std::clamp<int64_t>(longestResponse + 1, 1, quarter);
}

absl::StatusOr<LmBlocks> instructionBlocks(const Tokenizer &tokenizer,
                                           const TextDataset &records,
                                           int64_t blockSize, int32_t eos,
                                           InstructionCuts *cuts) {
  if (records.promptBytes.size() != records.texts.size())
    return absl::InvalidArgumentError(
        "instruction blocks need instruction records (prompt and response)");
  if (blockSize < 2)
    return absl::InvalidArgumentError(
        absl::StrCat("block size must be at least 2, got ", blockSize));
  // Each record's prompt (led by BOS) and response (ended by eos).
  std::vector<std::vector<int32_t>> prompts, responses;
  int64_t longest = 0;
  for (size_t i = 0; i < records.texts.size(); ++i) {
    const std::string &text = records.texts[i];
    const size_t split = std::min(records.promptBytes[i], text.size());
    absl::StatusOr<std::vector<int32_t>> prompt =
        tokenizer.encode(text.substr(0, split));
    if (!prompt.ok())
      return prompt.status();
    if (std::optional<int32_t> bos = tokenizer.bosId())
      prompt->insert(prompt->begin(), *bos);
    // The response continues its prompt (no "▁" put first).
    absl::StatusOr<std::vector<int32_t>> response =
        tokenizer.encodeContinuation(text.substr(split));
    if (!response.ok())
      return response.status();
    longest = std::max(longest, int64_t(response->size()));
    response->push_back(eos);
    prompts.push_back(std::move(*prompt));
    responses.push_back(std::move(*response));
  }
  InstructionCuts counted;
  counted.promptRoom = instructionPromptRoom(blockSize, longest);
  LmBlocks blocks;
  blocks.blockSize = blockSize;
  const auto promptRoom = size_t(counted.promptRoom);
  for (size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int32_t> &prompt = prompts[i], &response = responses[i];
    if (prompt.size() > promptRoom) {
      prompt.erase(prompt.begin(),
                   prompt.end() - static_cast<std::ptrdiff_t>(promptRoom));
      ++counted.prompts;
    }
    if (prompt.size() + response.size() > size_t(blockSize)) {
      response.resize(size_t(blockSize) - prompt.size());
      ++counted.responses;
    }
    size_t start = blocks.ids.size();
    blocks.ids.insert(blocks.ids.end(), prompt.begin(), prompt.end());
    blocks.ids.insert(blocks.ids.end(), response.begin(), response.end());
    blocks.labels.resize(blocks.ids.size(), int32_t(kIgnoreIndex));
    std::copy(response.begin(), response.end(),
              blocks.labels.begin() +
                  static_cast<std::ptrdiff_t>(start + prompt.size()));
    blocks.ids.resize(start + size_t(blockSize), eos);
    blocks.labels.resize(blocks.ids.size(), int32_t(kIgnoreIndex));
  }
  if (cuts)
    *cuts = counted;
  return blocks;
}

} // namespace kiln::data
