// From texts to fixed-size language-modelling blocks, as run_clm.py does:
// tokenize every example, then group_texts: concatenate the token ids of a
// group of examples and cut them into block_size blocks, dropping the
// remainder. run_clm maps group_texts with batched=True and datasets' default
// batch of 1,000 examples, so a remainder is dropped for each group of 1,000
// examples, not once at the end; examplesPerGroup reproduces that (0 groups
// everything at once). Labels are the input ids themselves (the model shifts
// them), so blocks store ids once.
#ifndef KILN_FRONTENDS_DATA_GROUPTEXTS_H
#define KILN_FRONTENDS_DATA_GROUPTEXTS_H

#include "frontends/data/Datasets.h"
#include "frontends/data/Tokenizer.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::data {

/// Texts → one id list per text, in order, each led by the tokenizer's BOS
/// when it has one (as Hugging Face's tokenizer(text) adds it).
absl::StatusOr<std::vector<std::vector<int32_t>>>
tokenizeTexts(const Tokenizer &tokenizer, absl::Span<const std::string> texts);

struct GroupOptions {
  int64_t blockSize = 1024;
  /// Examples concatenated together before cutting (HF map's batch_size).
  int64_t examplesPerGroup = 1000;
  /// Appended after each non-empty example (run_clm adds none: unset).
  std::optional<int32_t> eosId;
};

/// Fixed-size blocks of token ids, row-major [numBlocks, blockSize].
/// The label of a position the loss ignores (PyTorch's ignore_index).
inline constexpr int64_t kIgnoreIndex = -100;

struct LmBlocks {
  int64_t blockSize = 0;
  std::vector<int32_t> ids;
  /// Per id, its label (kIgnoreIndex where no loss is taken), or empty:
  /// the labels are the ids.
  std::vector<int32_t> labels;

  int64_t numBlocks() const {
    return blockSize == 0 ? 0 : int64_t(ids.size()) / blockSize;
  }
  /// Block i's ids.
  absl::Span<const int32_t> block(int64_t i) const {
    return absl::MakeConstSpan(ids).subspan(size_t(i * blockSize),
                                            size_t(blockSize));
  }
  /// Block i's labels (its ids when there are no separate labels).
  absl::Span<const int32_t> blockLabels(int64_t i) const {
    return labels.empty() ? block(i)
                          : absl::MakeConstSpan(labels).subspan(
                                size_t(i * blockSize), size_t(blockSize));
  }
  /// Keeps the first `count` blocks.
  void truncate(int64_t count) {
    ids.resize(size_t(count * blockSize));
    if (!labels.empty())
      labels.resize(ids.size());
  }
};

/// The most tokens an instruction record's prompt keeps in a block of
/// `blockSize` when the data set's longest response has `longestResponse`
/// tokens: the rest of the block is left for that response and its
/// end-of-text, but never more than a quarter of it. A longer prompt keeps
/// its end, in training and when an evaluation generates answers alike.
/// Every record of a data set is cut alike: were a prompt cut to make room
/// for its own response, where the response starts would tell the
/// response's length, which a model with position embeddings learns to
/// read (an SST-2 answer's label by its token count), and an evaluation
/// that cut prompts by each reference's length would hand the model the
/// answer.
int64_t instructionPromptRoom(int64_t blockSize, int64_t longestResponse);

/// What instructionBlocks cut from records longer than the block.
struct InstructionCuts {
  /// The prompts' room (instructionPromptRoom of the records' longest
  /// response).
  int64_t promptRoom = 0;
  /// Records whose prompt lost its start, and records whose response (or
  /// its end-of-text) lost its end.
  int64_t prompts = 0, responses = 0;
};

/// Instruction records (TextDataset::promptBytes set) → one block each, as
/// supervised fine-tuning lays them out: the prompt's tokens (led by the
/// tokenizer's BOS, if any), the response's, then `eos`, padded with `eos`
/// to `blockSize`; the loss is taken on the response and its first
/// end-of-text only (labels kIgnoreIndex elsewhere). A prompt longer than
/// instructionPromptRoom (of the records' longest response) keeps its end;
/// then a response that does not fit loses its end (and its end-of-text).
/// `cuts`, when given, counts both. InvalidArgument for data without prompts or
/// a block under 2 tokens.
absl::StatusOr<LmBlocks> instructionBlocks(const Tokenizer &tokenizer,
                                           const TextDataset &records,
                                           int64_t blockSize, int32_t eos,
                                           InstructionCuts *cuts = nullptr);

/// Tokenized examples → blocks; fails when blockSize or examplesPerGroup is
/// out of range.
absl::StatusOr<LmBlocks> groupTexts(absl::Span<const std::vector<int32_t>> examples,
                                    const GroupOptions &options);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_GROUPTEXTS_H
