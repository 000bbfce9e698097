// Reads, tokenizes and groups kiln-train's data (see TrainData.h).
#include "examples/TrainData.h"

#include "examples/DefaultCorpus.h"

#include "frontends/data/Datasets.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace kiln::train {
namespace {

namespace fs = std::filesystem;

// --dataset auto → the format implied by the file's extension.
std::string datasetKind(const std::string &flag, const std::string &path) {
  if (flag != "auto")
    return flag;
  std::string ext = fs::path(path).extension().string();
  if (ext == ".tsv")
    return "sst2";
  if (ext == ".csv")
    return "csv";
  if (ext == ".jsonl" || ext == ".json")
    return "jsonl";
  return "text";
}

absl::StatusOr<data::TextDataset> loadTexts(const std::string &kind,
                                            const std::string &path,
                                            const TrainArgs &a) {
  if (kind == "sst2")
    return data::loadTsv(path);
  if (kind == "csv")
    return data::loadCsv(path);
  if (kind == "jsonl")
    return data::loadJsonRecords(path);
  // run_clm's --keep_linebreaks applies to text files alone.
  data::TextFileOptions options;
  options.keepLinebreaks = a.keepLinebreaks;
  return data::loadTextFile(path, options);
}

// Texts → block_size blocks, as run_clm's tokenize + group_texts;
// instruction records → one block each, the loss on the responses.
// Records cut to the block are a warning, as the Trainer's tokenizer warns
// of sequences longer than the model takes: they train on less than the
// file holds.
absl::StatusOr<data::LmBlocks> toBlocks(const data::Tokenizer &tokenizer,
                                        const data::TextDataset &texts,
                                        int64_t blockSize, const char *which) {
  if (!texts.promptBytes.empty()) {
    std::optional<int32_t> eos = tokenizer.eosId();
    if (!eos)
      return absl::InvalidArgumentError(
          "instruction data (JSONL records) needs a tokenizer with an "
          "end-of-text token, which ends every response and pads the "
          "blocks; the byte-level tokenizer has none: give --tokenizer_dir "
          "or --tokenizer_name");
    data::InstructionCuts cuts;
    auto blocks =
        data::instructionBlocks(tokenizer, texts, blockSize, *eos, &cuts);
    if (blocks.ok() && (cuts.prompts || cuts.responses))
      std::fprintf(stderr,
                   "kiln-train: warning: %s records cut to --block_size "
                   "%lld: %lld of %zu prompts kept their last %lld tokens "
                   "(every prompt's room: the block less the longest "
                   "response's), %lld responses lost their ends\n",
                   which, (long long)blockSize, (long long)cuts.prompts,
                   texts.size(), (long long)cuts.promptRoom,
                   (long long)cuts.responses);
    return blocks;
  }
  auto ids = data::tokenizeTexts(tokenizer, texts.texts);
  if (!ids.ok())
    return ids.status();
  data::GroupOptions group;
  group.blockSize = blockSize;
  return data::groupTexts(*ids, group);
}

// The first `maxBlocks` blocks (all when -1 or more than there are).
data::LmBlocks truncated(data::LmBlocks blocks, int64_t maxBlocks) {
  if (maxBlocks >= 0 && maxBlocks < blocks.numBlocks())
    blocks.truncate(maxBlocks);
  return blocks;
}

} // namespace

std::optional<Failure> prepareData(const TrainArgs &a, PreparedData &out) {
  auto tokenizer = data::loadTokenizer({a.tokenizerDir, "", "", ""});
  // A folder that is not there is a bad flag (2); a file there that is
  // malformed or of a kind kiln does not implement is bad input (1).
  if (!tokenizer.ok())
    return Failure{std::string(tokenizer.status().message()),
                   absl::IsNotFound(tokenizer.status()) ? 2 : 1};
  out.tokenizer = std::move(*tokenizer);
  data::TextDataset train, eval;
  bool haveEval = !a.validationFile.empty();
  if (a.trainFile.empty()) {
    // Generated text; its validation split comes from another seed.
    train.texts = generateCorpus(a.defaultCorpusLines, 1);
    if (!haveEval)
      eval.texts =
          generateCorpus(std::max<int64_t>(a.defaultCorpusLines / 10, 1), 2);
    haveEval = true;
    out.source =
        "generated corpus (" + std::to_string(train.size()) + " lines)";
  } else {
    auto loaded =
        loadTexts(datasetKind(a.dataset, a.trainFile), a.trainFile, a);
    if (!loaded.ok())
      return Failure{std::string(loaded.status().message()), 2};
    train = std::move(*loaded);
    out.source = a.trainFile;
    if (!train.textColumn.empty())
      out.source += " (column " + train.textColumn + ")";
  }
  if (a.splitValidation && a.validationFile.empty()) {
    // run_clm.py's split of a data set without one: validation is
    // train[:p%], training train[p%:] (the datasets library's rounding).
    auto count = size_t(std::llround(double(train.texts.size()) *
                                     double(a.validationSplitPercentage) /
                                     100.0));
    eval.texts.assign(train.texts.begin(), train.texts.begin() + long(count));
    train.texts.erase(train.texts.begin(), train.texts.begin() + long(count));
    if (!train.promptBytes.empty()) {
      eval.promptBytes.assign(train.promptBytes.begin(),
                              train.promptBytes.begin() + long(count));
      train.promptBytes.erase(train.promptBytes.begin(),
                              train.promptBytes.begin() + long(count));
    }
    if (train.labels.size() >= count) {
      eval.labels.assign(train.labels.begin(),
                         train.labels.begin() + long(count));
      train.labels.erase(train.labels.begin(),
                         train.labels.begin() + long(count));
    }
    haveEval = count > 0;
    out.source += " (the first " +
                  std::to_string(a.validationSplitPercentage) + "% of its " +
                  std::to_string(count + train.texts.size()) +
                  " texts held out for validation)";
  }
  if (!a.validationFile.empty()) {
    auto loaded = loadTexts(datasetKind(a.dataset, a.validationFile),
                            a.validationFile, a);
    if (!loaded.ok())
      return Failure{std::string(loaded.status().message()), 2};
    eval = std::move(*loaded);
  }
  auto trainBlocks = toBlocks(*out.tokenizer, train, a.blockSize, "training");
  if (!trainBlocks.ok())
    return Failure{std::string(trainBlocks.status().message()), 2};
  out.train = truncated(std::move(*trainBlocks), a.maxTrainSamples);
  out.instruction = !train.promptBytes.empty();
  if (haveEval) {
    if (!eval.promptBytes.empty()) {
      eval.texts.resize(std::min(eval.texts.size(),
                                 size_t(a.maxEvalSamples < 0
                                            ? eval.texts.size()
                                            : size_t(a.maxEvalSamples))));
      eval.promptBytes.resize(eval.texts.size());
      out.evalRecords = eval;
    }
    auto evalBlocks = toBlocks(*out.tokenizer, eval, a.blockSize, "validation");
    if (!evalBlocks.ok())
      return Failure{std::string(evalBlocks.status().message()), 2};
    out.eval = truncated(std::move(*evalBlocks), a.maxEvalSamples);
  }
  return std::nullopt;
}

// Checks that need the data: vocabulary and one full batch.
std::optional<Failure> checkAgainstData(const TrainArgs &a,
                                        const PreparedData &d) {
  int64_t vocab = d.tokenizer->vocabSize();
  // Without the flag, the size is a model folder's (takeConfig refuses
  // both at once).
  if (a.vocabSize > 0 && a.vocabSize < vocab)
    return Failure{(a.given.count("vocab_size")
                        ? "--vocab_size "
                        : "the model's config.json has vocab_size ") +
                       std::to_string(a.vocabSize) +
                       ", smaller than the tokenizer's vocabulary (" +
                       std::to_string(vocab) + ")",
                   2};
  // A short epoch's one batch is padded, as the Trainer trains on a
  // batch of what there is; only --dataloader_drop_last needs a full one:
  // a full batch of every process's rows, which the loader draws at once.
  const int64_t blocks = d.train.numBlocks();
  const int64_t batch = a.trainBatchSize * a.worldSize;
  const int64_t needed = a.dataloaderDropLast ? batch : 1;
  const std::string processes =
      a.worldSize == 1 ? ""
                       : " (" + std::to_string(a.worldSize) + " processes of " +
                             std::to_string(a.trainBatchSize) + ")";
  if (blocks < needed)
    return Failure{
        "the training data gives " + std::to_string(blocks) +
            (blocks == 1 ? " block of " : " blocks of ") +
            std::to_string(a.blockSize) + " tokens, " +
            (a.dataloaderDropLast
                 ? "fewer than one full batch of " + std::to_string(batch) +
                       processes + ", which --dataloader_drop_last True needs"
                 : std::string("none to train on")) +
            " (use more data, a smaller --block_size" +
            (a.dataloaderDropLast ? " or --per_device_train_batch_size)" : ")"),
        2};
  return std::nullopt;
}

} // namespace kiln::train
