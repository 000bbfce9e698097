// The data loader: per-epoch permutations from (seed, epoch), and batches cut
// from them with either the ragged end dropped or padded to full shape.
#include "frontends/data/DataLoader.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cassert>
#include <numeric>
#include <random>
#include <utility>

namespace kiln::data {
namespace {

// SplitMix64's finalizer: spreads (seed, epoch) over the generator's seed.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform draw from [0, bound): rejects the low 2^64 mod bound values so
// that every residue is equally likely.
uint64_t uniformBelow(std::mt19937_64 &rng, uint64_t bound) {
  uint64_t threshold = (0 - bound) % bound;
  while (true) {
    uint64_t r = rng();
    if (r >= threshold)
      return r % bound;
  }
}

} // namespace

std::vector<int32_t> Batch::inputIdsInt32() const {
  return std::vector<int32_t>(inputIds.begin(), inputIds.end());
}

absl::StatusOr<DataLoader> DataLoader::create(LmBlocks blocks,
                                              LoaderOptions options) {
  if (options.batchSize <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("batch size must be positive, got ", options.batchSize));
  if (options.numEpochs < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("epochs must be non-negative, got ", options.numEpochs));
  int64_t numBlocks = blocks.numBlocks();
  if (numBlocks == 0)
    return absl::InvalidArgumentError(
        "no blocks to load (is the data set shorter than one block?)");
  if (options.dropLast && numBlocks < options.batchSize)
    return absl::InvalidArgumentError(absl::StrCat(
        numBlocks, " blocks make no full batch of ", options.batchSize,
        " (use a smaller batch or dropLast = false)"));
  return DataLoader(std::move(blocks), options);
}

int64_t DataLoader::batchesPerEpoch() const {
  int64_t numBlocks = blocks_.numBlocks();
  if (options_.dropLast)
    return numBlocks / options_.batchSize;
  return (numBlocks + options_.batchSize - 1) / options_.batchSize;
}

int64_t DataLoader::totalSteps() const {
  return options_.numEpochs == 0 ? -1
                                 : options_.numEpochs * batchesPerEpoch();
}

std::vector<int64_t> DataLoader::epochOrder(int64_t epoch) const {
  std::vector<int64_t> order(size_t(blocks_.numBlocks()));
  std::iota(order.begin(), order.end(), 0);
  if (!options_.shuffle)
    return order;
  std::mt19937_64 rng(mix(options_.seed ^ mix(uint64_t(epoch))));
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[uniformBelow(rng, i)]);
  return order;
}

Batch DataLoader::batchAt(int64_t step) {
  assert(step >= 0 && "a data loader step is never negative");
  Batch batch;
  batch.step = step;
  batch.epoch = step / batchesPerEpoch();
  batch.indexInEpoch = step % batchesPerEpoch();
  batch.batchSize = options_.batchSize;
  batch.blockSize = blocks_.blockSize;
  if (batch.epoch != orderEpoch_) {
    order_ = epochOrder(batch.epoch);
    orderEpoch_ = batch.epoch;
  }
  int64_t first = batch.indexInEpoch * options_.batchSize;
  batch.numRows = std::min<int64_t>(options_.batchSize,
                                    blocks_.numBlocks() - first);
  size_t size = size_t(batch.batchSize * batch.blockSize);
  // Padding rows by default; real rows overwrite their slice below.
  batch.inputIds.assign(size, options_.padId);
  batch.labels.assign(size, kIgnoreIndex);
  batch.attentionMask.assign(size, 0);
  // Accelerate's even_batches: the rows after the epoch's last continue
  // from its first, cycling through an epoch shorter than a batch.
  const int64_t realRows = batch.numRows;
  if (options_.completeLastFromEpochStart)
    batch.numRows = batch.batchSize;
  for (int64_t row = 0; row < batch.numRows; ++row) {
    const int64_t index = row < realRows
                              ? order_[first + row]
                              : order_[(row - realRows) % blocks_.numBlocks()];
    absl::Span<const int32_t> ids = blocks_.block(index);
    absl::Span<const int32_t> labels = blocks_.blockLabels(index);
    size_t offset = size_t(row * batch.blockSize);
    for (size_t j = 0; j < ids.size(); ++j) {
      batch.inputIds[offset + j] = ids[j];
      batch.labels[offset + j] = labels[j];
      batch.attentionMask[offset + j] = 1;
    }
  }
  return batch;
}

Batch shardBatch(const Batch &batch, int rank, int size) {
  assert(size > 0 && rank >= 0 && rank < size && batch.batchSize % size == 0 &&
         "a shard of a whole batch");
  Batch shard = batch;
  shard.batchSize = batch.batchSize / size;
  bool padded = batch.numRows < batch.batchSize;
  shard.numRows = padded ? (batch.numRows + size - 1) / size : shard.batchSize;
  const size_t block = size_t(batch.blockSize);
  shard.inputIds.resize(size_t(shard.batchSize) * block);
  shard.labels.resize(shard.inputIds.size());
  shard.attentionMask.resize(shard.inputIds.size());
  for (int64_t row = 0; row < shard.batchSize; ++row) {
    // A padded batch's row numRows is padding.
    int64_t from = !padded ? rank * shard.batchSize + row
                   : row < shard.numRows
                       ? (rank * shard.numRows + row) % batch.numRows
                       : batch.numRows;
    for (auto [out, in] :
         {std::pair{&shard.inputIds, &batch.inputIds},
          std::pair{&shard.labels, &batch.labels},
          std::pair{&shard.attentionMask, &batch.attentionMask}})
      std::copy_n(in->begin() + from * block, block,
                  out->begin() + row * block);
  }
  return shard;
}

std::optional<Batch> DataLoader::next() {
  if (options_.numEpochs != 0 && step_ >= totalSteps())
    return std::nullopt;
  return batchAt(step_++);
}

} // namespace kiln::data
