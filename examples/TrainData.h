// Data preparation for kiln-train, as run_clm.py does it: the tokenizer
// (GPT-2 BPE from --tokenizer_dir, else bytes), training and validation
// texts (raw text, SST-2 TSV or JSONL, or the generated corpus), tokenized
// and grouped into block_size blocks; and the checks that need the data
// (vocabulary size, at least one full batch).
#ifndef KILN_EXAMPLES_TRAINDATA_H
#define KILN_EXAMPLES_TRAINDATA_H

#include "examples/TrainArgs.h"

#include "frontends/data/Datasets.h"
#include "frontends/data/GroupTexts.h"
#include "frontends/data/Tokenizer.h"

#include <memory>
#include <optional>
#include <string>

namespace kiln::train {

/// A failure that ends the run: the message and the exit status (2 for bad
/// input the user can fix, 1 for failures while training).
struct Failure {
  std::string message;
  int exitCode;
};

/// What the data preparation produced.
struct PreparedData {
  std::unique_ptr<data::Tokenizer> tokenizer;
  data::LmBlocks train;
  std::optional<data::LmBlocks> eval;
  /// What the training data is, for the banner.
  std::string source;
  /// The training data is instruction records: one per block, the loss on
  /// the responses.
  bool instruction = false;
  /// Validation instruction records (prompts and reference responses),
  /// for the generation pass of the evaluation.
  std::optional<data::TextDataset> evalRecords;
};

/// The arguments → tokenizer and blocks in `out`, or the failure (exit 2:
/// an unreadable or malformed file).
std::optional<Failure> prepareData(const TrainArgs &a, PreparedData &out);

/// The arguments and prepared data → a failure when --vocab_size is below
/// the tokenizer's or the training data holds less than one batch.
std::optional<Failure> checkAgainstData(const TrainArgs &a,
                                        const PreparedData &d);

} // namespace kiln::train

#endif // KILN_EXAMPLES_TRAINDATA_H
