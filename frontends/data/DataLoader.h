// Batches of language-modelling blocks as plain host arrays, for a training
// loop to copy into its input tensors. Every batch has the same shape
// [batchSize, blockSize], so a compiled step never sees a new shape:
// - shuffle: each epoch visits the blocks in a permutation drawn from
//   (seed, epoch) alone, by Fisher-Yates over std::mt19937_64 with unbiased
//   bounded draws (no std::shuffle or std::uniform_int_distribution, whose
//   results differ between standard libraries), so a run is reproducible on
//   any platform and resumable at any step (seek);
// - dropLast (default): the ragged end of an epoch is dropped, as the HF
//   Trainer's dataloader_drop_last does;
// - dropLast = false: the last batch of an epoch is padded to full size with
//   rows of padId whose labels are kIgnoreIndex (-100, ignored by the loss)
//   and whose attention mask is 0; numRows says how many rows are real
//   (or, with completeLastFromEpochStart, completed with the epoch's first
//   blocks, as data-parallel processes' last round is).
#ifndef KILN_FRONTENDS_DATA_DATALOADER_H
#define KILN_FRONTENDS_DATA_DATALOADER_H

#include "frontends/data/GroupTexts.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::data {

struct LoaderOptions {
  int64_t batchSize = 8;
  bool shuffle = true;
  uint64_t seed = 42;
  bool dropLast = true;
  /// Input id of padding rows (dropLast = false only).
  int64_t padId = 0;
  /// dropLast = false: instead of padding rows, an epoch's short last
  /// batch is completed with the epoch's first blocks (cyclically when the
  /// epoch has fewer than a batch), as Accelerate's even_batches completes
  /// the last round of data-parallel processes for the Trainer; numRows is
  /// then the whole batch.
  bool completeLastFromEpochStart = false;
  /// Epochs next() runs through; 0 means without end.
  int64_t numEpochs = 1;
};

/// One batch, row-major [batchSize, blockSize].
struct Batch {
  int64_t batchSize = 0;
  int64_t blockSize = 0;
  std::vector<int64_t> inputIds;
  /// The input ids (the model shifts them); kIgnoreIndex on padding rows.
  std::vector<int64_t> labels;
  /// 1 on real rows, 0 on padding rows.
  std::vector<int64_t> attentionMask;
  /// Real rows; < batchSize only for a padded last batch.
  int64_t numRows = 0;
  /// The global step that produced it, its epoch, and its index in the epoch.
  int64_t step = 0;
  int64_t epoch = 0;
  int64_t indexInEpoch = 0;

  /// {batchSize, blockSize}.
  std::vector<int64_t> shape() const { return {batchSize, blockSize}; }
  /// The input ids narrowed to int32 (ids of any real vocabulary fit).
  std::vector<int32_t> inputIdsInt32() const;
};

/// Process `rank`'s share of a batch that `size` data-parallel processes
/// split: the batch holds size × B rows and each process takes B, rank r
/// rows [r B, (r + 1) B), as Accelerate shards the Trainer's batches. A
/// padded last batch (a loader without completeLastFromEpochStart, which
/// kiln-train sets for data parallelism) has its real rows spread evenly
/// instead: ceil(numRows / size) to each process, the batch's first rows
/// repeated where they run out, then padding, so that no process gets only
/// padding (a loss of 0/0). The batch size must divide by `size`.
Batch shardBatch(const Batch &batch, int rank, int size);

/// Epochs of shuffled, fixed-shape batches over LmBlocks.
class DataLoader {
public:
  /// Blocks + options → loader; fails on a non-positive batch size, no
  /// blocks, or (dropLast) fewer blocks than one batch.
  static absl::StatusOr<DataLoader> create(LmBlocks blocks,
                                           LoaderOptions options);

  /// Batches per epoch: floor (dropLast) or ceil of blocks / batchSize.
  int64_t batchesPerEpoch() const;
  /// numEpochs * batchesPerEpoch, or -1 when epochs do not end.
  int64_t totalSteps() const;
  /// The next batch, or nullopt after the last epoch.
  std::optional<Batch> next();
  /// The batch of a global step (the same batch next() gives at that step).
  Batch batchAt(int64_t step);
  /// Continue from a global step (resuming a run).
  void seek(int64_t step) { step_ = step; }
  /// Batches handed out so far (the next batch's step).
  int64_t step() const { return step_; }
  /// The epoch the next batch belongs to.
  int64_t epoch() const { return step_ / batchesPerEpoch(); }
  /// The order in which an epoch visits the blocks.
  std::vector<int64_t> epochOrder(int64_t epoch) const;
  const LmBlocks &blocks() const { return blocks_; }

private:
  DataLoader(LmBlocks blocks, LoaderOptions options)
      : blocks_(std::move(blocks)), options_(options) {}

  LmBlocks blocks_;
  LoaderOptions options_;
  int64_t step_ = 0;
  // The permutation of the epoch last used, kept to avoid redrawing it.
  int64_t orderEpoch_ = -1;
  std::vector<int64_t> order_;
};

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_DATALOADER_H
