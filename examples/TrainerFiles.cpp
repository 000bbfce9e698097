// What kiln-train's Trainer writes and reads back besides its logs: the
// checkpoint folders (gathered, written under a temporary name, rotated),
// the final model folder with its tokenizer, a LoRA run's merged model, and
// the best checkpoint loaded at the end (see Trainer.h).
#include "examples/Trainer.h"
#include "examples/TrainerState.h"

#include "frontends/data/Files.h"
#include "frontends/data/Tokenizer.h"
#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/CheckpointFolder.h"
#include "frontends/nn/Lora.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::train {

namespace fs = std::filesystem;

namespace {

// Writes a small text file atomically (as the checkpoint itself), so a
// crash never leaves a torn trainer_state.json beside a good checkpoint.
void writeText(const fs::path &path, const std::string &text) {
  absl::Status status = nn::writeTextAtomically(path.string(), text);
  if (!status.ok())
    throw Failure{"cannot write " + path.string() + ": " +
                      std::string(status.message()),
                  1};
}

} // namespace

void Trainer::writeTokenizerFiles(const fs::path &dir) const {
  // The tokenizer's files beside the model, as Trainer.save_model writes
  // them, so the folder is a --model_name_or_path on its own. The built-in
  // byte-level tokenizer has no files: a tokenizer_config.json names it.
  if (args_.tokenizerDir.empty()) {
    writeText(dir / "tokenizer_config.json",
              std::string("{\"tokenizer_class\": \"") +
                  data::kByteTokenizerClass + "\"}\n");
    return;
  }
  for (const char *name :
       {"tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json",
        "special_tokens_map.json"}) {
    fs::path from = fs::path(args_.tokenizerDir) / name;
    std::error_code ec;
    if (!fs::is_regular_file(from, ec) || fs::equivalent(from, dir / name, ec))
      continue;
    absl::StatusOr<std::string> text = data::readFile(from.string());
    if (!text.ok())
      throw Failure{std::string(text.status().message()), 1};
    writeText(dir / name, *text); // synced and renamed, as the rest
  }
}

void Trainer::writeMergedModel(const fs::path &dir) {
  std::error_code ec;
  if (!fs::create_directories(dir, ec) && ec)
    throw Failure{"cannot create " + dir.string() + ": " + ec.message(), 1};
  nn::NamedTensors merged = nn::merged_state_dict(*model_);
  absl::Status saved =
      nn::saveSafetensors((dir / "model.safetensors").string(),
                          nn::host_data_refs(merged), {{"format", "pt"}});
  if (!saved.ok())
    throw Failure{"--merge_lora: " + std::string(saved.message()), 1};
  writeText(dir / "config.json", configJson(spec_, *data_.tokenizer));
  writeTokenizerFiles(dir);
}

void Trainer::writeFiles(const fs::path &dir, bool withOptimizer) {
  nn::CheckpointState state;
  state.step = globalStep_;
  state.metadata = {{"epoch", pythonFloat(epoch())},
                    {"train_batch_size", std::to_string(args_.trainBatchSize)},
                    {kLoaderBatchKey, std::to_string(loaderBatchSize())},
                    {kAccumulationKey, std::to_string(accumulation_)},
                    {"block_size", std::to_string(args_.blockSize)},
                    {"seed", std::to_string(args_.seed)},
                    {"data_seed", std::to_string(dataSeed())},
                    {"num_input_tokens_seen", std::to_string(tokensSeen_)}};
  if (!bestCheckpoint_.empty())
    state.metadata["best_model_checkpoint"] = bestCheckpoint_;
  if (!std::isnan(bestMetric_))
    state.metadata["best_metric"] = pythonFloat(bestMetric_);
  // The Trainer records the best step only where it saves checkpoints.
  const bool saves = args_.saveStrategy != TrainArgs::Strategy::no;
  if (bestStep_ >= 0 && saves)
    state.metadata["best_global_step"] = std::to_string(bestStep_);
  if (scaler_ && withOptimizer)
    state.metadata.merge(scaler_->state().metadata());
  // A checkpoint holds what a resume needs; with LoRA it is also a PEFT
  // checkpoint (its adapter files), and the final folder is the adapter
  // alone, as PeftModel.save_pretrained writes it (--merge_lora adds the
  // merged model beside it). LoRA on a pretrained base: the checkpoint
  // holds the adapters and their optimizer state (as PEFT's do) and a
  // resume reloads the base from --model_name_or_path, so an 8B base is
  // not copied at every save; a base trained from scratch is saved whole.
  const bool adaptersOnly = args_.useLora && !args_.pretrainedFolder.empty();
  if (adaptersOnly)
    state.metadata["base_model_name_or_path"] = args_.baseModelName;
  if (withOptimizer)
    nn::save_checkpoint((dir / "checkpoint.safetensors").string(), *model_,
                        &optimizer_, {{"dropout", &model_->generator()}}, state,
                        adaptersOnly ? nn::CheckpointScope::trainable_only
                                     : nn::CheckpointScope::whole_model);
  else if (!args_.useLora)
    nn::save_checkpoint((dir / "model.safetensors").string(), *model_, nullptr,
                        {}, state);
  if (args_.useLora)
    nn::save_lora_adapter(*model_, lora_, dir.string(), args_.baseModelName);
  if (withOptimizer || !args_.useLora)
    writeText(dir / "config.json", configJson(spec_, *data_.tokenizer));
  writeTokenizerFiles(dir);
  TrainerState record;
  record.global_step = globalStep_;
  record.epoch = epoch();
  record.max_steps = totalSteps_;
  record.train_batch_size = args_.trainBatchSize;
  record.logging_steps = loggingSteps_;
  // The TrainerState's default (500) where no steps strategy set one.
  record.eval_steps = evalSteps_ > 0 ? evalSteps_ : 500;
  record.save_steps = saveSteps_;
  record.num_train_epochs = epochsOfRun();
  record.total_flos = totalFlos();
  if (args_.includeNumInputTokensSeen)
    record.num_input_tokens_seen = tokensSeen_;
  if (!std::isnan(bestMetric_))
    record.best_metric = bestMetric_;
  if (bestStep_ >= 0 && saves)
    record.best_global_step = bestStep_;
  record.best_model_checkpoint = bestCheckpoint_;
  record.log_history = resumedLogs_;
  // The final files' history ends with the training (its summary).
  const size_t logs = withOptimizer || !args_.doTrain
                          ? history_.size()
                          : std::min(history_.size(), trainedHistory_);
  for (size_t i = 0; i < logs; ++i)
    record.log_history.push_back(logEntryJson(history_[i]));
  writeText(dir / kTrainerStateFile, trainerStateJson(record));
}

bool Trainer::tracksBest() const {
  return args_.loadBestModelAtEnd ||
         args_.saveStrategy == TrainArgs::Strategy::best ||
         args_.given.count("metric_for_best_model");
}

bool Trainer::judgeEvaluation() {
  if (!tracksBest())
    return false;
  auto it = std::find_if(lastEval_.begin(), lastEval_.end(), [&](auto &kv) {
    return kv.first == args_.metricForBestModel;
  });
  if (it == lastEval_.end() || std::isnan(it->second))
    return false;
  // Strictly better, as the Trainer's: a tie keeps the earlier checkpoint.
  double metric = it->second;
  if (!std::isnan(bestMetric_) &&
      !(args_.greaterIsBetter ? metric > bestMetric_ : metric < bestMetric_))
    return false;
  bestMetric_ = metric;
  bestStep_ = globalStep_;
  return true;
}

void Trainer::noteBest(const std::string &path) {
  if (bestStep_ == globalStep_)
    bestCheckpoint_ = path;
}

void Trainer::loadBestModel() {
  fs::path file = fs::path(bestCheckpoint_) / nn::kCheckpointFileName;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::fprintf(stderr,
                 "kiln-train: warning: the best checkpoint %s is gone; the "
                 "final model is the last step's\n",
                 bestCheckpoint_.c_str());
    return;
  }
  if (args_.worldRank == 0) // every process loads it; the main one says so
    std::fprintf(stderr, "Loading best model from %s (score: %s).\n",
                 bestCheckpoint_.c_str(), pythonFloat(bestMetric_).c_str());
  set_graph_tag("checkpoint load");
  // The model alone: training is over, its optimizer state no longer
  // matters (a LoRA checkpoint's adapters load onto the base as it is).
  nn::load_checkpoint(file.string(), *model_, nullptr, {});
}

void Trainer::keepOnlyTheBestCheckpoint() {
  if (args_.worldRank != 0 || args_.saveTotalLimit != 1 ||
      bestCheckpoint_.empty() || args_.outputDir.empty())
    return;
  std::error_code ec;
  if (!fs::is_directory(bestCheckpoint_, ec))
    return;
  rotateCheckpoints(bestCheckpoint_, /*keepNewest=*/false);
}

void Trainer::rotateCheckpoints(const std::string &keep, bool keepNewest) {
  absl::StatusOr<std::vector<std::string>> deleted = nn::rotateCheckpoints(
      args_.outputDir, args_.saveTotalLimit, keep, bestCheckpoint_, keepNewest);
  if (!deleted.ok())
    throw Failure{
        "saving a checkpoint: " + std::string(deleted.status().message()), 1};
  for (const std::string &folder : *deleted)
    std::fprintf(
        stderr, "Deleting older checkpoint [%s] due to args.save_total_limit\n",
        folder.c_str());
}

void Trainer::saveCheckpoint() {
  // ZeRO stages 1 and 2: the main process gathers the optimizer's state from
  // its owners, so the checkpoint is the one an unsharded run saves (and
  // resumes at any number of processes).
  optimizer_.consolidate_state(/*to=*/0);
  // One process writes (the Trainer's should_save: the main one); the
  // others note the same folder and wait until it is there.
  if (args_.worldRank != 0) {
    noteBest(nn::checkpointFolderPath(args_.outputDir, globalStep_));
    barrier();
    return;
  }
  saveCheckpointFiles();
  barrier();
}

void Trainer::saveCheckpointFiles() {
  auto fail = [](const absl::Status &status) {
    return Failure{"saving a checkpoint: " + std::string(status.message()), 1};
  };
  absl::StatusOr<nn::CheckpointFolderWriter> writer =
      nn::CheckpointFolderWriter::begin(args_.outputDir, globalStep_);
  if (!writer.ok())
    throw fail(writer.status());
  noteBest(writer->finalPath());
  writeFiles(writer->path(), /*withOptimizer=*/true);
  if (absl::Status status = writer->commit(); !status.ok())
    throw fail(status);
  bar_->clear();
  std::fprintf(stderr, "Saving model checkpoint to %s\n",
               writer->finalPath().c_str());
  // Only after the new checkpoint has its name: a kill during rotation
  // still leaves it.
  rotateCheckpoints(writer->finalPath(), /*keepNewest=*/true);
}

namespace {
/// A metrics dict as save_metrics writes it: json.dump(indent=4,
/// sort_keys=True), a non-finite value as null.
std::string resultsJson(LogDict dict) {
  std::sort(dict.begin(), dict.end());
  std::string out = "{";
  for (size_t i = 0; i < dict.size(); ++i)
    out +=
        std::string(i ? "," : "") + "\n    \"" + dict[i].first + "\": " +
        (std::isfinite(dict[i].second) ? logValue(dict[i].first, dict[i].second)
                                       : std::string("null"));
  return out + "\n}";
}
} // namespace

void Trainer::writeResults(const fs::path &dir) const {
  std::error_code error;
  fs::create_directories(dir, error);
  LogDict all;
  if (!trainResults_.empty()) {
    writeText(dir / "train_results.json", resultsJson(trainResults_));
    all = trainResults_;
  }
  if (!evalResults_.empty()) {
    writeText(dir / "eval_results.json", resultsJson(evalResults_));
    for (const auto &entry : evalResults_)
      if (std::none_of(all.begin(), all.end(), [&](const auto &kept) {
            return kept.first == entry.first;
          }))
        all.push_back(entry);
  }
  if (!all.empty())
    writeText(dir / "all_results.json", resultsJson(all));
}

} // namespace kiln::train
