// kiln-train: trains a GPT-2 language model on text the way Hugging Face's
// run_clm.py + Trainer does, with kiln compiling each training step into one
// graph. Data files (raw text, SST-2 TSV, JSONL) are tokenized (GPT-2 BPE or
// bytes), grouped into block_size blocks and served in shuffled batches of a
// fixed shape (the ragged end dropped), so every step hits the graph compiled
// for the first. Each step records forward, backward, gradient clipping and
// the AdamW update, then kiln::step() runs them; the learning rate is a
// device scalar, so the schedule never recompiles (--eager instead runs each
// op as its own kernel: the baseline). Logs are the Trainer's
// dict lines on stdout (TrainerLog.h); banners, notes, the progress bar and
// kiln's metrics report go to stderr. Checkpoints (--save_steps) are
// output_dir/checkpoint-N/ folders that survive a kill at any moment: each
// is written under a temporary name, synced and renamed whole
// (frontends/nn/CheckpointFolder.h), and --save_total_limit deletes the
// oldest only after the new one has its name. As run_clm.py, a run whose
// output_dir holds checkpoints resumes from the newest complete one
// (skipping damaged ones, saying so) unless --overwrite_output_dir or
// --resume_from_checkpoint False says otherwise; it resumes with the same
// data order, optimizer state and dropout stream, so the losses are those
// of a run never stopped, bit for bit.
#include "examples/TrainArgs.h"
#include "examples/TrainData.h"
#include "examples/TrainerLog.h"
#include "compiler/MemoryPlanner.h"

#include "frontends/data/DataLoader.h"
#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/CheckpointFolder.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/GradScaler.h"
#include "frontends/nn/Optimizer.h"
#include "frontends/nn/Safetensors.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace kiln::train {
namespace {

namespace fs = std::filesystem;

nn::GPT2Config modelConfig(const TrainArgs &a, int64_t vocabSize) {
  nn::GPT2Config c;
  c.vocab_size = vocabSize;
  c.n_positions = a.nPositions;
  c.n_embd = a.nEmbd;
  c.n_layer = a.nLayer;
  c.n_head = a.nHead;
  c.with_dropout(a.dropout);
  c.init_seed = a.seed;
  c.dropout_seed = a.seed;
  return c;
}

nn::LRLambda schedule(const TrainArgs &a, int64_t totalSteps) {
  if (a.lrSchedulerType == "cosine")
    return nn::cosine_schedule_with_warmup(a.warmupSteps, totalSteps);
  if (a.lrSchedulerType == "constant")
    return nn::constant_schedule();
  if (a.lrSchedulerType == "constant_with_warmup")
    return nn::constant_schedule_with_warmup(a.warmupSteps);
  return nn::linear_schedule_with_warmup(a.warmupSteps, totalSteps);
}

// Row-major int64 values of `shape` → a device-data tensor (a graph input).
Tensor idsTensor(const std::vector<int64_t> &values, const Shape &shape) {
  HostTensor host(DType::i64, shape);
  std::memcpy(host.data(), values.data(), values.size() * sizeof(int64_t));
  return Tensor::from_host(std::move(host));
}

// The mean loss over every validation block, in fixed-shape batches (the
// last padded with ignored rows, so no new shape), weighted by real rows as
// the Trainer's evaluation loop does.
double evaluate(nn::GPT2LMHeadModel &model, const data::LmBlocks &blocks,
                int64_t batchSize) {
  data::LoaderOptions o;
  o.batchSize = batchSize;
  o.shuffle = false;
  o.dropLast = false;
  auto loader = data::DataLoader::create(blocks, o);
  if (!loader.ok())
    return std::nan("");
  model.eval();
  set_graph_tag("eval step");
  NoGradGuard noGrad;
  double sum = 0;
  int64_t rows = 0;
  while (std::optional<data::Batch> batch = loader->next()) {
    Tensor ids = idsTensor(batch->inputIds, batch->shape());
    Tensor labels = idsTensor(batch->labels, batch->shape());
    Tensor loss = model.loss(ids, labels);
    kiln::step();
    sum += loss.item() * double(batch->numRows);
    rows += batch->numRows;
  }
  model.train();
  return sum / double(rows);
}

std::string jsonDict(const LogDict &dict) {
  std::string out = "{";
  for (size_t i = 0; i < dict.size(); ++i)
    out += (i ? ", \"" : "\"") + dict[i].first + "\": " +
           (std::isfinite(dict[i].second) ? pythonFloat(dict[i].second)
                                          : std::string("null"));
  return out + "}";
}

// Writes a small text file atomically (as the checkpoint itself), so a
// crash never leaves a torn trainer_state.json beside a good checkpoint.
void writeText(const fs::path &path, const std::string &text) {
  absl::Status status =
      nn::writeFileAtomically(path.string(), [&](int fd) -> absl::Status {
        size_t done = 0;
        while (done < text.size()) {
          ssize_t n = ::write(fd, text.data() + done, text.size() - done);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            return absl::InternalError(std::strerror(errno));
          done += size_t(n);
        }
        return absl::OkStatus();
      });
  if (!status.ok())
    throw Failure{"cannot write " + path.string() + ": " +
                      std::string(status.message()),
                  1};
}

// config.json with Hugging Face's GPT-2 keys, so the directory loads there.
/// `eos`: the tokenizer's end-of-text id, which GPT2Config uses for
/// bos_token_id and eos_token_id too; none (the byte-level tokenizer has
/// none) writes null, as transformers wants an id inside the vocabulary.
std::string configJson(const nn::GPT2Config &c, std::optional<int32_t> eos) {
  auto num = [](double v) { return pythonFloat(v); };
  std::string special = eos ? std::to_string(*eos) : "null";
  return "{\n  \"model_type\": \"gpt2\",\n  \"architectures\": "
         "[\"GPT2LMHeadModel\"],\n  \"activation_function\": \"gelu_new\",\n"
         "  \"vocab_size\": " +
         std::to_string(c.vocab_size) +
         ",\n  \"n_positions\": " + std::to_string(c.n_positions) +
         ",\n  \"n_ctx\": " + std::to_string(c.n_positions) +
         ",\n  \"n_embd\": " + std::to_string(c.n_embd) +
         ",\n  \"n_layer\": " + std::to_string(c.n_layer) +
         ",\n  \"n_head\": " + std::to_string(c.n_head) +
         ",\n  \"resid_pdrop\": " + num(c.resid_pdrop) +
         ",\n  \"embd_pdrop\": " + num(c.embd_pdrop) +
         ",\n  \"attn_pdrop\": " + num(c.attn_pdrop) +
         ",\n  \"layer_norm_epsilon\": " + num(c.layer_norm_epsilon) +
         ",\n  \"initializer_range\": " + num(c.initializer_range) +
         ",\n  \"bos_token_id\": " + special +
         ",\n  \"eos_token_id\": " + special +
         ",\n  \"tie_word_embeddings\": true\n}\n";
}

/// The training run: model, optimizer, schedule, loader and the counters
/// that the logs report.
class Trainer {
public:
  Trainer(const TrainArgs &args, PreparedData &data);
  /// Restores the checkpoint in `dir`, whose file read_checkpoint_file
  /// read; throws kiln::Error when it does not fit this model.
  void resume(const std::string &dir, nn::SafetensorsData file);
  int64_t step() const { return globalStep_; }
  /// Trains to the last step, printing logs; then evaluates and saves.
  void run();

private:
  void trainStep(const data::Batch &batch);
  void maybeLog();
  /// output_dir/checkpoint-N, written crash-safely, then rotation.
  void saveCheckpoint();
  /// The files of a checkpoint (with the optimizer) or of the final model.
  void writeFiles(const fs::path &dir, bool withOptimizer);
  void printBanner() const;
  double epoch() const {
    return double(globalStep_) / double(loader_.batchesPerEpoch());
  }

  const TrainArgs &args_;
  PreparedData &data_;
  nn::GPT2LMHeadModel model_;
  nn::AdamW optimizer_;
  data::DataLoader loader_;
  int64_t totalSteps_;
  nn::LambdaLR scheduler_;
  /// f16 mixed precision's loss scaling (absent otherwise).
  std::unique_ptr<nn::GradScaler> scaler_;
  /// scaler_'s skipped steps at the last log.
  int64_t skippedAtLastLog_ = 0;
  int64_t globalStep_ = 0, startStep_ = 0;
  double windowLoss_ = 0, runLoss_ = 0;
  int64_t windowSteps_ = 0;
  std::vector<LogDict> history_;
  ProgressBar *bar_ = nullptr;
};

nn::AdamW::Options adamOptions(const TrainArgs &a, nn::Module &model) {
  nn::AdamW::Options o;
  o.lr = a.learningRate;
  o.weight_decay = a.weightDecay;
  o.no_decay = nn::bias_and_norm_names(model);
  return o;
}

data::DataLoader makeLoader(const TrainArgs &a, const data::LmBlocks &blocks) {
  data::LoaderOptions o;
  o.batchSize = a.trainBatchSize;
  o.seed = a.seed;
  o.numEpochs = 0; // endless: max_steps decides when training ends
  auto loader = data::DataLoader::create(blocks, o);
  // checkAgainstData() made sure that one batch fits.
  return std::move(*loader);
}

int64_t totalSteps(const TrainArgs &a, int64_t stepsPerEpoch) {
  if (a.maxSteps > 0)
    return a.maxSteps;
  return int64_t(std::ceil(a.numTrainEpochs * double(stepsPerEpoch)));
}

Trainer::Trainer(const TrainArgs &args, PreparedData &data)
    : args_(args), data_(data),
      model_(modelConfig(args, args.vocabSize ? args.vocabSize
                                              : data.tokenizer->vocabSize())),
      optimizer_(model_.named_parameters(), adamOptions(args, model_)),
      loader_(makeLoader(args, data.train)),
      totalSteps_(totalSteps(args, loader_.batchesPerEpoch())),
      scheduler_(optimizer_, schedule(args, totalSteps_)) {
  if (options().productType == DType::f16)
    scaler_ = std::make_unique<nn::GradScaler>();
  model_.train();
}

void Trainer::resume(const std::string &dir, nn::SafetensorsData file) {
  set_graph_tag("checkpoint load");
  nn::CheckpointState state = nn::load_checkpoint(
      std::move(file), (fs::path(dir) / nn::kCheckpointFileName).string(),
      model_, &optimizer_, {{"dropout", &model_.generator()}});
  // The data order is a function of (seed, step) only: a different batch
  // size or seed would continue on other batches.
  for (auto [key, value] :
       {std::pair{"train_batch_size", std::to_string(args_.trainBatchSize)},
        std::pair{"seed", std::to_string(args_.seed)}}) {
    auto it = state.metadata.find(key);
    if (it != state.metadata.end() && it->second != value)
      std::fprintf(stderr,
                   "kiln-train: warning: the checkpoint was trained with %s "
                   "%s, this run uses %s; the data order differs\n",
                   key, it->second.c_str(), value.c_str());
  }
  if (scaler_) {
    nn::GradScaler::HostState scale =
        nn::GradScaler::HostState::from_metadata(state.metadata, dir);
    scaler_->load_state(scale);
    skippedAtLastLog_ = scale.skipped_steps;
  }
  globalStep_ = startStep_ = state.step;
  scheduler_.set_step(state.step);
  loader_.seek(state.step);
  std::fprintf(stderr,
               "  Continuing training from checkpoint %s, global step "
               "%lld\n",
               dir.c_str(), (long long)state.step);
}

void Trainer::printBanner() const {
  std::fprintf(
      stderr,
      "***** Running training *****\n"
      "  Data = %s\n  Num examples = %lld (blocks of %lld tokens)\n"
      "  Num Epochs = %lld\n"
      "  Instantaneous batch size per device = %lld\n"
      "  Total optimization steps = %lld\n"
      "  Number of trainable parameters = %lld\n"
      "  Model = gpt2 n_layer %lld, n_embd %lld, n_head %lld, "
      "vocab %lld, n_positions %lld\n"
      "  Backend = %s, %s%s\n",
      data_.source.c_str(), (long long)data_.train.numBlocks(),
      (long long)args_.blockSize,
      (long long)((totalSteps_ + loader_.batchesPerEpoch() - 1) /
                  loader_.batchesPerEpoch()),
      (long long)args_.trainBatchSize, (long long)totalSteps_,
      (long long)model_.num_parameters(), (long long)args_.nLayer,
      (long long)args_.nEmbd, (long long)args_.nHead,
      (long long)model_.config().vocab_size, (long long)args_.nPositions,
      std::string(backendName(options().backend)).c_str(),
      mode() == Mode::eager ? "eager (one kernel per op)" : "compiled graphs",
      options().productType == DType::bf16 ? ", bf16 mixed precision"
      : options().productType == DType::f16
          ? ", fp16 mixed precision with dynamic loss scaling"
          : "");
}

void Trainer::trainStep(const data::Batch &batch) {
  // Labels are the inputs: the model shifts them.
  Tensor ids = idsTensor(batch.inputIds, batch.shape());
  Tensor loss = model_.loss(ids, ids);
  // The schedule advances on a skipped fp16 step too (PyTorch's AMP
  // recipe; the Trainer would hold it back, which needs the host to know).
  nn::backward_and_step(loss, optimizer_, args_.maxGradNorm, scaler_.get());
  scheduler_.step();
  kiln::step();
  // The loss is device data now: reading it forces no sync.
  double value = loss.item();
  windowLoss_ += value;
  runLoss_ += value;
  ++windowSteps_;
  ++globalStep_;
}

void Trainer::maybeLog() {
  if (globalStep_ % args_.loggingSteps != 0 && globalStep_ != totalSteps_)
    return;
  if (windowSteps_ == 0)
    return;
  // As the Trainer: mean loss of the window rounded to 4 digits, the
  // learning rate of the next step, the fractional epoch.
  LogDict log = {{"loss", pythonRound(windowLoss_ / double(windowSteps_), 4)},
                 {"learning_rate", scheduler_.last_lr()},
                 {"epoch", pythonRound(epoch(), 2)}};
  int64_t windowStepsLogged = windowSteps_;
  windowLoss_ = 0;
  windowSteps_ = 0;
  bar_->clear();
  std::printf("%s\n", formatLogDict(log).c_str());
  std::fflush(stdout);
  if (scaler_) {
    // Read at logging only: the skips themselves never wait for the host.
    nn::GradScaler::HostState scale = scaler_->state();
    if (int64_t skipped = scale.skipped_steps - skippedAtLastLog_)
      std::fprintf(stderr,
                   "fp16: %lld of the last %lld steps skipped (gradient "
                   "overflow); loss scale now %g\n",
                   (long long)skipped, (long long)windowStepsLogged,
                   scale.scale);
    skippedAtLastLog_ = scale.skipped_steps;
  }
  log.push_back({"step", double(globalStep_)});
  history_.push_back(log);
}

void Trainer::writeFiles(const fs::path &dir, bool withOptimizer) {
  nn::CheckpointState state;
  state.step = globalStep_;
  state.metadata = {{"epoch", pythonFloat(epoch())},
                    {"train_batch_size", std::to_string(args_.trainBatchSize)},
                    {"block_size", std::to_string(args_.blockSize)},
                    {"seed", std::to_string(args_.seed)}};
  if (scaler_ && withOptimizer)
    state.metadata.merge(scaler_->state().metadata());
  std::string file =
      withOptimizer ? "checkpoint.safetensors" : "model.safetensors";
  if (withOptimizer)
    nn::save_checkpoint((dir / file).string(), model_, &optimizer_,
                        {{"dropout", &model_.generator()}}, state);
  else
    nn::save_checkpoint((dir / file).string(), model_, nullptr, {}, state);
  writeText(dir / "config.json",
            configJson(model_.config(), data_.tokenizer->eosId()));
  std::string logs;
  for (const LogDict &log : history_)
    logs += (logs.empty() ? "\n    " : ",\n    ") + jsonDict(log);
  writeText(
      dir / "trainer_state.json",
      "{\n  \"global_step\": " + std::to_string(globalStep_) +
          ",\n  \"epoch\": " + pythonFloat(epoch()) +
          ",\n  \"max_steps\": " + std::to_string(totalSteps_) +
          ",\n  \"train_batch_size\": " + std::to_string(args_.trainBatchSize) +
          ",\n  \"log_history\": [" + logs + "\n  ]\n}\n");
}

void Trainer::saveCheckpoint() {
  auto fail = [](const absl::Status &status) {
    return Failure{"saving a checkpoint: " + std::string(status.message()), 1};
  };
  absl::StatusOr<nn::CheckpointFolderWriter> writer =
      nn::CheckpointFolderWriter::begin(args_.outputDir, globalStep_);
  if (!writer.ok())
    throw fail(writer.status());
  writeFiles(writer->path(), /*withOptimizer=*/true);
  if (absl::Status status = writer->commit(); !status.ok())
    throw fail(status);
  bar_->clear();
  std::fprintf(stderr, "Saving model checkpoint to %s\n",
               writer->finalPath().c_str());
  // Only after the new checkpoint has its name: a kill during rotation
  // still leaves it.
  absl::StatusOr<std::vector<std::string>> deleted = nn::rotateCheckpoints(
      args_.outputDir, args_.saveTotalLimit, writer->finalPath());
  if (!deleted.ok())
    throw fail(deleted.status());
  for (const std::string &folder : *deleted)
    std::fprintf(
        stderr, "Deleting older checkpoint [%s] due to args.save_total_limit\n",
        folder.c_str());
}

void Trainer::run() {
  printBanner();
  // Names the graphs in --dump_graphs' manifest (input of kilnc precompile).
  set_graph_tag("train step");
  ProgressBar bar(totalSteps_, globalStep_);
  bar_ = &bar;
  auto start = std::chrono::steady_clock::now();
  while (globalStep_ < totalSteps_) {
    trainStep(*loader_.next());
    maybeLog();
    if (args_.saveSteps > 0 && globalStep_ % args_.saveSteps == 0)
      saveCheckpoint();
    bar.update(globalStep_);
  }
  bar.finish();
  double runtime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  int64_t steps = globalStep_ - startStep_;
  LogDict summary = {
      {"train_runtime", pythonRound(runtime, 4)},
      {"train_samples_per_second",
       pythonRound(double(steps * args_.trainBatchSize) / runtime, 3)},
      {"train_steps_per_second", pythonRound(double(steps) / runtime, 3)},
      {"train_loss", steps ? runLoss_ / double(steps) : std::nan("")},
      {"epoch", pythonRound(epoch(), 2)}};
  std::printf("%s\n", formatLogDict(summary).c_str());
  std::fflush(stdout);
  if (data_.eval && data_.eval->numBlocks() > 0) {
    auto evalStart = std::chrono::steady_clock::now();
    double loss = evaluate(model_, *data_.eval, args_.evalBatchSize);
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - evalStart)
                         .count();
    LogDict eval = {{"eval_loss", loss},
                    {"perplexity", std::exp(loss)},
                    {"eval_runtime", pythonRound(seconds, 4)},
                    {"eval_samples", double(data_.eval->numBlocks())},
                    {"epoch", pythonRound(epoch(), 2)}};
    std::printf("%s\n", formatLogDict(eval).c_str());
    std::fflush(stdout);
  } else if (data_.eval) {
    std::fprintf(stderr,
                 "kiln-train: warning: the validation data has fewer "
                 "than %lld tokens; no evaluation\n",
                 (long long)args_.blockSize);
  }
  if (!args_.outputDir.empty()) {
    writeFiles(args_.outputDir, /*withOptimizer=*/false);
    bar_->clear();
    std::fprintf(stderr, "Saving model checkpoint to %s\n",
                 args_.outputDir.c_str());
  }
}

// The execution options: flags first, then the environment (read here, at
// the edge, by options_from_env), then the built-in default backend.
void configureKiln(const TrainArgs &a) {
  Options o;
  try {
    o = options_from_env();
  } catch (const Error &error) {
    throw Failure{error.what(), 2};
  }
  const char *envBackend = std::getenv("KILN_BACKEND");
  std::string backend = !a.backend.empty()          ? a.backend
                        : envBackend && *envBackend ? envBackend
                                                    : kDefaultBackend;
  o.backend = backend == "cpu"    ? Backend::cpu
              : backend == "cuda" ? Backend::cuda
                                  : Backend::reference;
  if (!a.cudaArch.empty())
    o.cudaArch = a.cudaArch;
  o.tf32 = o.tf32 || a.tf32;
  // A flag wins over KILN_BF16 / KILN_FP16.
  if (a.productType != DType::f32)
    o.productType = a.productType;
  check_backend_available(o.backend);
  if (!a.dumpGraphs.empty())
    o.dumpDir = a.dumpGraphs;
  if (!a.cacheDir.empty())
    o.cacheDir = a.cacheDir;
  if (a.eager)
    o.mode = Mode::eager;
  if (a.memoryBudget)
    o.memoryBudgetBytes = *a.memoryBudget;
  set_options(o);
}

void warn(const std::string &message) {
  std::fprintf(stderr, "kiln-train: warning: %s\n", message.c_str());
}

Failure outputDirFailure(const absl::Status &status) {
  return Failure{"--output_dir: " + std::string(status.message()), 1};
}

/// A checkpoint to continue from: its folder and its file's contents.
struct ResumePoint {
  std::string dir;
  nn::SafetensorsData file;
};

// Which checkpoint the run continues from, as run_clm.py decides: the folder
// --resume_from_checkpoint names; else, unless it says False or
// --overwrite_output_dir is given, the newest checkpoint-N of output_dir
// whose file reads back whole (a damaged newer one is skipped, saying so).
std::optional<ResumePoint> chooseResumePoint(const TrainArgs &a) {
  using Resume = TrainArgs::Resume;
  if (a.resume == Resume::path) {
    absl::StatusOr<nn::SafetensorsData> file =
        nn::readCheckpointFolder(a.resumeFromCheckpoint);
    if (absl::IsNotFound(file.status()))
      throw Failure{"--resume_from_checkpoint: no checkpoint.safetensors in " +
                        a.resumeFromCheckpoint,
                    2};
    if (!file.ok())
      throw Failure{"load_checkpoint: " + std::string(file.status().message()),
                    1};
    return ResumePoint{a.resumeFromCheckpoint, std::move(*file)};
  }
  if (a.outputDir.empty() || a.resume == Resume::never ||
      (a.resume == Resume::detect && a.overwriteOutputDir))
    return std::nullopt;
  std::optional<nn::SafetensorsData> file;
  absl::StatusOr<nn::ResumeChoice> choice = nn::newestCompleteCheckpoint(
      a.outputDir, [&](const nn::CheckpointFolder &folder) {
        absl::StatusOr<nn::SafetensorsData> read =
            nn::readCheckpointFolder(folder.path);
        if (read.ok())
          file = std::move(*read);
        return read.status();
      });
  if (!choice.ok())
    throw outputDirFailure(choice.status());
  for (const std::string &skipped : choice->skipped)
    warn("skipping the unfinished or damaged checkpoint " + skipped);
  if (!choice->folder) {
    if (a.resume == Resume::newest)
      throw Failure{"--resume_from_checkpoint True: no valid checkpoint "
                    "found in output directory (" +
                        a.outputDir + ")",
                    2};
    return std::nullopt;
  }
  if (a.resume == Resume::detect)
    std::fprintf(stderr,
                 "Checkpoint detected, resuming training at %s. To avoid "
                 "this behavior, change the `--output_dir` or add "
                 "`--overwrite_output_dir` to train from scratch.\n",
                 choice->folder->path.c_str());
  return ResumePoint{choice->folder->path, std::move(*file)};
}

// Checkpoints in output_dir from beyond the step this run starts at belong
// to another run: --overwrite_output_dir deletes them (all but the one
// resumed from); otherwise they are named, since until this run saves
// those steps again an automatic resume would pick them.
void handleOldCheckpoints(const TrainArgs &a, const std::string &resumedFrom,
                          int64_t startStep) {
  if (a.outputDir.empty())
    return;
  absl::StatusOr<std::vector<nn::CheckpointFolder>> folders =
      nn::listCheckpointFolders(a.outputDir);
  if (!folders.ok())
    throw outputDirFailure(folders.status());
  for (const nn::CheckpointFolder &folder : *folders) {
    std::error_code ec;
    if (!resumedFrom.empty() && fs::equivalent(folder.path, resumedFrom, ec))
      continue;
    if (a.overwriteOutputDir) {
      if (absl::Status s = nn::removeCheckpointFolder(folder.path); !s.ok())
        throw outputDirFailure(s);
      std::fprintf(stderr,
                   "Deleting older checkpoint [%s] due to "
                   "--overwrite_output_dir\n",
                   folder.path.c_str());
    } else if (folder.step > startStep) {
      warn(folder.path + " is from beyond step " + std::to_string(startStep) +
           ", where this run starts; it is replaced when this run saves "
           "that step (--overwrite_output_dir deletes such checkpoints)");
    }
  }
}

/// --memory_budget is what the process may hold, the memory a job is
/// measured by. Where a step's memory is the host's (not on the cuda
/// backend, whose budget is the device's), its plan gets the budget less
/// what the process already holds outside any plan (code, libraries, the
/// data set), measured now: the planner's peak counts tensors only.
void budgetThePlans(const TrainArgs &args) {
  if (!args.memoryBudget || args.eager || options().backend == Backend::cuda)
    return;
  const uint64_t budget = *args.memoryBudget, outside = memory_outside_plans();
  if (outside >= budget)
    throw Failure{"--memory_budget " + compiler::formatBytes(budget) +
                      " is less than the " + compiler::formatBytes(outside) +
                      " this process holds before any step (code, "
                      "libraries, the data set)",
                  1};
  Options o = options();
  o.memoryBudgetBytes = budget - outside;
  set_options(o);
  std::fprintf(stderr,
               "kiln-train: memory budget %s: %s held outside any step "
               "(code, libraries, data), %s for the step's plan\n",
               compiler::formatBytes(budget).c_str(),
               compiler::formatBytes(outside).c_str(),
               compiler::formatBytes(o.memoryBudgetBytes).c_str());
}

/// --auto_find_batch_size: the largest per-device batch, up to the one
/// asked, whose training step plans within the plans' share of
/// --memory_budget (budgetThePlans). Each probe
/// traces the step (forward, backward, clipping, AdamW) on a model of the
/// run's shape with a probe optimizer, and is planned, never run.
int64_t findBatchSize(const TrainArgs &args, const PreparedData &data) {
  nn::GPT2LMHeadModel model(modelConfig(
      args, args.vocabSize ? args.vocabSize : data.tokenizer->vocabSize()));
  model.train();
  auto traceStep = [&](int64_t batch) -> TracedStep {
    struct Probe {
      Probe(nn::NamedTensors params, const nn::AdamW::Options &options)
          : optimizer(std::move(params), options) {
        if (kiln::options().productType == DType::f16)
          scaler = std::make_unique<nn::GradScaler>();
      }
      nn::AdamW optimizer;
      std::unique_ptr<nn::GradScaler> scaler;
      Tensor loss;
    };
    auto probe = std::make_shared<Probe>(model.named_parameters(),
                                         adamOptions(args, model));
    Tensor ids = idsTensor(std::vector<int64_t>(batch * args.blockSize, 0),
                           {batch, args.blockSize});
    probe->loss = model.loss(ids, ids);
    nn::backward_and_step(probe->loss, probe->optimizer, args.maxGradNorm,
                          probe->scaler.get());
    return probe;
  };
  // The plans' budget (budgetThePlans): the process's less its own memory.
  std::string budget = compiler::formatBytes(options().memoryBudgetBytes);
  int64_t batch = largest_planned_batch(
      args.trainBatchSize, traceStep,
      [&](int64_t probed, std::optional<uint64_t> peak) {
        std::string verdict =
            peak && *peak <= options().memoryBudgetBytes
                ? "plans " + compiler::formatBytes(*peak) + ": fits " + budget
                : "does not fit " + budget +
                      (peak ? " (plans " + compiler::formatBytes(*peak) + ")"
                            : " even with recomputation");
        std::fprintf(stderr,
                     "kiln-train: auto_find_batch_size: batch %lld %s\n",
                     (long long)probed, verdict.c_str());
      });
  if (batch == 0)
    throw Failure{"--auto_find_batch_size: not even batch 1 plans within "
                  "--memory_budget (the step's smallest planned peak is "
                  "over it)",
                  1};
  std::fprintf(stderr,
               "kiln-train: auto_find_batch_size: training with batch "
               "%lld\n",
               (long long)batch);
  return batch;
}

int runMain(const TrainArgs &askedArgs) {
  TrainArgs args = askedArgs;
  configureKiln(args);
  // Directories are made before anything runs, so a bad path fails at once,
  // not after the training it would have saved.
  for (auto [flag, dir] : {std::pair{"output_dir", args.outputDir},
                           std::pair{"dump_graphs", args.dumpGraphs}}) {
    std::error_code ec;
    if (!dir.empty() && !fs::create_directories(dir, ec) && ec)
      throw Failure{"--" + std::string(flag) + ": cannot create " + dir + ": " +
                        ec.message(),
                    2};
  }
  // What killed saves left is tidied before anything looks for checkpoints.
  if (!args.outputDir.empty()) {
    absl::StatusOr<std::vector<std::string>> notes =
        nn::recoverCheckpointFolders(args.outputDir);
    if (!notes.ok())
      throw outputDirFailure(notes.status());
    for (const std::string &note : *notes)
      warn(note);
  }
  PreparedData data;
  if (auto failure = prepareData(args, data))
    throw *failure;
  if (auto failure = checkAgainstData(args, data))
    throw *failure;
  budgetThePlans(args);
  if (args.autoFindBatchSize)
    args.trainBatchSize = findBatchSize(args, data);
  // After the advisor's probe model: the run's weights do not depend on it.
  manual_seed(args.seed);
  Trainer trainer(args, data);
  std::optional<ResumePoint> resumePoint = chooseResumePoint(args);
  if (resumePoint)
    trainer.resume(resumePoint->dir, std::move(resumePoint->file));
  // Only once the run has started well: a typo must not cost checkpoints.
  handleOldCheckpoints(args, resumePoint ? resumePoint->dir : "",
                       trainer.step());
  trainer.run();
  std::fprintf(stderr, "%s", metrics::report().c_str());
  return 0;
}

} // namespace
} // namespace kiln::train

int main(int argc, char **argv) {
  using namespace kiln::train;
  ParseResult parsed = parseTrainArgs(argc, argv);
  if (parsed.exitCode)
    return *parsed.exitCode;
  try {
    return runMain(parsed.args);
  } catch (const Failure &failure) {
    std::fprintf(stderr, "kiln-train: error: %s\n", failure.message.c_str());
    return failure.exitCode;
  } catch (const kiln::Error &error) {
    std::fprintf(stderr, "kiln-train: error: %s\n", error.what());
    return 1;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "kiln-train: error: %s\n", error.what());
    return 1;
  }
}
