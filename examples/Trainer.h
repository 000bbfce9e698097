// kiln-train's training loop, as Hugging Face's Trainer runs it: the model,
// AdamW, the learning-rate schedule and the data loader; Trainer-style log
// dicts on stdout, the progress bar and notes on stderr; checkpoints that
// survive a kill (frontends/nn/CheckpointFolder.h); the final evaluation and
// model files. kiln-train.cpp decides what to run (flags, resume point,
// batch size); this file runs it.
#ifndef KILN_EXAMPLES_TRAINER_H
#define KILN_EXAMPLES_TRAINER_H

#include "examples/Models.h"
#include "examples/Schedule.h"
#include "examples/TrainArgs.h"
#include "examples/TrainData.h"
#include "examples/TrainerLog.h"

#include "frontends/data/DataLoader.h"
#include "frontends/nn/GradScaler.h"
#include "frontends/nn/Lora.h"
#include "frontends/nn/Optimizer.h"
#include "frontends/nn/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace kiln::train {

/// AdamW with the arguments' learning rate and decay (none on biases and
/// LayerNorm weights, as the Trainer).
nn::AdamW::Options adamOptions(const TrainArgs &a, nn::Module &model);

/// Row-major int64 values of `shape` → a device-data tensor (a graph input).
Tensor idsTensor(const std::vector<int64_t> &values, const Shape &shape);

/// A checkpoint's metadata keys for what its data order depends on beside
/// the step, the block size and the data seed: the loader's batch and the
/// draws a step takes.
inline constexpr const char *kLoaderBatchKey = "total_train_batch_size";
inline constexpr const char *kAccumulationKey = "gradient_accumulation_steps";

/// The training run: model, optimizer, schedule, loader and the counters
/// that the logs report.
class Trainer {
public:
  /// Builds the model (fresh, or args.pretrainedFolder's weights; throws
  /// kiln::Error when they do not load), optimizer, schedule and loader.
  Trainer(const TrainArgs &args, PreparedData &data);
  /// Restores the checkpoint in `dir`, whose file read_checkpoint_file
  /// read; throws kiln::Error when it does not fit this model.
  void resume(const std::string &dir, nn::SafetensorsData file);
  int64_t step() const { return globalStep_; }
  /// The step the run ends at (--max_steps, else the epochs' steps).
  int64_t lastStep() const { return totalSteps_; }
  /// With --do_train: trains to the last step, logging, evaluating and
  /// saving as the strategies say, then saves the model to output_dir;
  /// with --do_eval: evaluates on the validation set.
  void run();

private:
  /// The pretrained weights and LoRA branches (with an adapter folder's
  /// weights) → the parameters the optimizer updates.
  nn::NamedTensors prepareModel();
  void train();
  /// One optimizer step over accumulation_ micro-batches.
  void trainStep();
  /// Logs the loss since the last log if the logging strategy says so.
  void maybeLog(bool epochEnded, bool last);
  /// Reads the losses of the steps since the last read into windowLoss_
  /// and runLoss_ (a device sync on cuda).
  void readLosses();
  /// The tail of every log dict: the epoch, and the tokens seen with
  /// --include_num_input_tokens_seen.
  void appendEpoch(LogDict &log) const;
  /// Whether evaluations in training pick a best model (the Trainer's
  /// _determine_best_metric): --metric_for_best_model given,
  /// --load_best_model_at_end or --save_strategy best.
  bool tracksBest() const;
  /// After an evaluation in training: whether its metric beats the best so
  /// far (strictly); it then becomes the best, at this step.
  bool judgeEvaluation();
  /// A checkpoint about to be saved at `path` becomes the best checkpoint
  /// when this step's evaluation was the best so far.
  void noteBest(const std::string &path);
  /// --load_best_model_at_end: the best checkpoint's model → model_ (a
  /// warning, and the last model kept, when its folder is gone).
  void loadBestModel();
  /// After training, --save_total_limit 1 with a best checkpoint: every
  /// other checkpoint of kiln's goes, as the Trainer's end of training
  /// (rotation during training kept the newest beside it).
  void keepOnlyTheBestCheckpoint();
  /// --save_total_limit's rotation (nn::rotateCheckpoints) in output_dir,
  /// never `keep` nor the best checkpoint (nor, with `keepNewest`, the
  /// highest step), each deletion said as the Trainer says it.
  void rotateCheckpoints(const std::string &keep, bool keepNewest);
  /// Evaluates on the validation set and prints the metrics dict.
  void evaluateAndLog();
  /// output_dir/checkpoint-N, written crash-safely by the main process
  /// (saveCheckpointFiles), then rotation; the others wait for it.
  void saveCheckpoint();
  void saveCheckpointFiles();
  /// The files of a checkpoint (with the optimizer) or of the final model.
  void writeFiles(const std::filesystem::path &dir, bool withOptimizer);
  /// run_clm's save_metrics: train_results.json (the training's summary),
  /// eval_results.json (the final evaluation's dict) and all_results.json
  /// (both) in `dir`, each of what this run did.
  void writeResults(const std::filesystem::path &dir) const;
  /// The tokenizer's files (if it has any) into `dir`.
  void writeTokenizerFiles(const std::filesystem::path &dir) const;
  /// --merge_lora: `dir` as a plain model folder, the branches folded in.
  void writeMergedModel(const std::filesystem::path &dir);
  void printBanner() const;
  /// The banner's LoRA settings: r, alpha (and rsLoRA's scaling), dropout,
  /// the targets and their layers, the modules trained whole.
  std::string describeLora() const;
  /// The data order's seed: --data_seed, else --seed.
  uint64_t dataSeed() const { return args_.dataSeed.value_or(args_.seed); }
  /// The rows the loader draws at once: every process's batch (each takes
  /// its share).
  int64_t loaderBatchSize() const {
    return args_.trainBatchSize * args_.worldSize;
  }
  /// The Trainer's total_flos: 6 × the input tokens so far × the
  /// non-embedding parameters.
  double totalFlos() const {
    return 6.0 * double(tokensSeen_) * double(nonEmbeddingParameters_);
  }
  /// The run's epochs, its last maybe partial, counted whole (the banner's
  /// and the Trainer state's num_train_epochs).
  int64_t epochsOfRun() const {
    return (totalSteps_ + updatesPerEpoch_ - 1) /
           std::max<int64_t>(updatesPerEpoch_, 1);
  }
  /// Epochs so far, fractional, as the Trainer's state.epoch.
  double epoch() const { return steps_.epoch(globalStep_); }

  const TrainArgs &args_;
  PreparedData &data_;
  /// The family and config; model_ is built from it.
  ModelSpec spec_;
  std::unique_ptr<nn::CausalLM> model_;
  /// --use_lora's settings and the adapted modules (empty without LoRA);
  /// declared before optimizer_, whose construction fills them.
  nn::LoraConfig lora_;
  std::vector<std::string> adapted_;
  nn::AdamW optimizer_;
  data::DataLoader loader_;
  /// Micro-batches an optimizer step accumulates:
  /// --gradient_accumulation_steps, at most an epoch's batches (the Trainer's
  /// last update of an epoch takes the batches left; an update never spans
  /// epochs).
  int64_t accumulation_;
  /// The epoch's split into optimizer steps, as the Trainer's: each
  /// accumulation_ micro-batches, the epoch's last the batches left.
  EpochSteps steps_;
  /// Optimizer steps per epoch: steps_.perEpoch().
  int64_t updatesPerEpoch_;
  int64_t totalSteps_;
  /// --logging_steps, --eval_steps and --save_steps as counts: a share of
  /// the run resolved against totalSteps_.
  int64_t loggingSteps_, evalSteps_, saveSteps_;
  nn::LambdaLR scheduler_;
  /// f16 mixed precision's loss scaling (absent otherwise).
  std::unique_ptr<nn::GradScaler> scaler_;
  /// scaler_'s skipped steps at the last log.
  int64_t skippedAtLastLog_ = 0;
  int64_t globalStep_ = 0, startStep_ = 0;
  double windowLoss_ = 0, runLoss_ = 0;
  /// The losses of the steps not logged yet, in order, each step's as its
  /// micro-batches' parts (summing to the step's loss): device data until
  /// read.
  std::vector<std::vector<Tensor>> unreadLosses_;
  /// The last step's gradient norm (device data; read when logged).
  Tensor gradNorm_;
  /// The learning rate the last step applied (the schedule has moved on
  /// since): what the Trainer logs.
  double stepLearningRate_ = 0;
  int64_t windowSteps_ = 0;
  /// Tokens of the training batches so far (their real rows).
  int64_t tokensSeen_ = 0;
  std::vector<LogDict> history_;
  /// history_'s length when training ended: output_dir's
  /// trainer_state.json holds these (run_clm saves the state before its
  /// final evaluation).
  size_t trainedHistory_ = 0;
  /// The log history of the checkpoint resumed from, as its
  /// trainer_state.json wrote it: written again before history_.
  std::vector<std::string> resumedLogs_;
  /// The last evaluation's dict (empty before one).
  LogDict lastEval_;
  /// The training's summary dict with run_clm's train_samples (empty
  /// before training ends), and the final evaluation's dict.
  LogDict trainResults_, evalResults_;
  /// --load_best_model_at_end: the best checkpoint so far and its metric
  /// ("" and NaN before one).
  std::string bestCheckpoint_;
  double bestMetric_ = std::nan("");
  /// The step whose evaluation was the best so far (-1: none in this run).
  int64_t bestStep_ = -1;
  /// The model's parameters but its embeddings' tables, the Trainer's
  /// num_parameters(exclude_embeddings=True): total_flos counts 6 a token
  /// for each.
  int64_t nonEmbeddingParameters_ = 0;
  ProgressBar *bar_ = nullptr;
};

} // namespace kiln::train

#endif // KILN_EXAMPLES_TRAINER_H
