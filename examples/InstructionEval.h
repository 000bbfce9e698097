// The generation pass of kiln-train's evaluation on instruction data: the
// model answers each validation prompt greedily and the answer is scored
// against the reference response, as one measures an instruction-tuned
// classifier (SST-2 as dolly records: "positive" / "negative").
#ifndef KILN_EXAMPLES_INSTRUCTIONEVAL_H
#define KILN_EXAMPLES_INSTRUCTIONEVAL_H

#include "frontends/data/Datasets.h"
#include "frontends/data/Tokenizer.h"
#include "frontends/nn/CausalLM.h"

#include <cstdint>

namespace kiln::train {

struct GenerationScore {
  /// Answers equal to the reference, and answers in all.
  int64_t correct = 0, total = 0;
  double accuracy() const { return total ? double(correct) / double(total) : 0; }
};

/// Greedy answers to `records`' prompts, `batchSize` at a time in blocks of
/// `blockSize` tokens padded with end-of-text (one shape, so one compiled
/// forward serves every step: a causal model's padding after a position
/// does not change it). An answer ends at end-of-text, a newline or after
/// one token more than the longest reference; it is right when it equals
/// the reference response, both trimmed and lower-cased. A prompt too long
/// keeps its end, as training cut it (data::instructionPromptRoom of the
/// longest reference: every prompt alike, never by its own reference). Throws
/// kiln::Error if the tokenizer has no end-of-text token. In a data-parallel
/// run each process scores its share of the batches (batch b where b mod
/// `processes` is `rank`) and the caller sums the scores over processes.
GenerationScore scoreGeneration(nn::CausalLM &model,
                                const data::Tokenizer &tokenizer,
                                const data::TextDataset &records,
                                int64_t blockSize, int64_t batchSize,
                                int rank = 0, int processes = 1);

} // namespace kiln::train

#endif // KILN_EXAMPLES_INSTRUCTIONEVAL_H
