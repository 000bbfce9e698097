// The training loop of kiln-train (see kiln-train.cpp and Trainer.h).
#include "examples/Trainer.h"
#include "examples/Schedule.h"
#include "examples/TrainerState.h"

#include "frontends/data/Files.h"
#include "frontends/data/GroupTexts.h"
#include "frontends/data/Tokenizer.h"
#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/CheckpointFolder.h"
#include "frontends/nn/Lora.h"
#include "frontends/nn/ModelConfig.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace kiln::train {

namespace fs = std::filesystem;

// Row-major int64 values of `shape` → a device-data tensor (a graph input).
Tensor idsTensor(const std::vector<int64_t> &values, const Shape &shape) {
  HostTensor host(DType::i64, shape);
  std::memcpy(host.data(), values.data(), values.size() * sizeof(int64_t));
  return Tensor::from_host(std::move(host));
}

nn::AdamW::Options adamOptions(const TrainArgs &a, nn::Module &model) {
  nn::AdamW::Options o;
  o.lr = a.learningRate;
  o.weight_decay = a.weightDecay;
  o.beta1 = a.adamBeta1, o.beta2 = a.adamBeta2, o.eps = a.adamEpsilon;
  o.no_decay = nn::bias_and_norm_names(model);
  if (a.zeroStage == 1)
    o.sharding = nn::StateSharding::by_parameter;
  if (a.zeroStage == 2)
    o.sharding = nn::StateSharding::by_parameter_with_gradients;
  return o;
}

namespace {

/// "gpt2 n_layer 2, n_embd 64, n_head 4": a model's family and shape.
std::string describeShape(const std::string &family, int64_t layers,
                          int64_t width, int64_t heads) {
  return absl::StrFormat("%s n_layer %d, n_embd %d, n_head %d", family, layers,
                         width, heads);
}

/// Where checkpoint folder `dir` was saved by a model of another family or
/// shape than the run's (its config.json says), what differs; else empty.
/// The optimizer state's names or shapes would fail the load with less to
/// go on.
std::string checkpointModelMismatch(const std::string &dir,
                                    const TrainArgs &a) {
  fs::path file = fs::path(dir) / "config.json";
  absl::StatusOr<std::string> text = data::readFile(file.string());
  if (!text.ok())
    return ""; // a LoRA checkpoint's adapters have their own checks
  absl::StatusOr<std::string> type = nn::readModelType(*text, file.string());
  if (!type.ok())
    return "";
  std::string saved;
  if (nn::isLlamaFamily(*type)) {
    absl::StatusOr<nn::LlamaConfig> c =
        nn::parseLlamaConfigJson(*text, file.string());
    if (!c.ok())
      return "";
    saved = describeShape("llama", c->num_hidden_layers, c->hidden_size,
                          c->num_attention_heads);
  } else {
    absl::StatusOr<nn::GPT2Config> c =
        nn::parseGPT2ConfigJson(*text, file.string());
    if (!c.ok())
      return "";
    saved = describeShape("gpt2", c->n_layer, c->n_embd, c->n_head);
  }
  std::string running = describeShape(a.modelType == "llama" ? "llama" : "gpt2",
                                      a.nLayer, a.nEmbd, a.nHead);
  if (saved == running)
    return "";
  return file.string() + " is a " + saved + " model and this run builds " +
         running + "; resume with the model flags the run started with";
}

/// PyTorch's GradScaler, or the loss scaling of --deepspeed's fp16 section.
nn::GradScaler::Options scalerOptions(const TrainArgs &a) {
  nn::GradScaler::Options o;
  if (!a.deepSpeed || !a.deepSpeed->lossScaling)
    return o;
  const DeepSpeedLossScaling &ds = *a.deepSpeed->lossScaling;
  o.init_scale = ds.initScale;
  o.growth_interval = ds.window;
  o.min_scale = ds.minScale;
  o.hysteresis = ds.hysteresis;
  o.consecutive_hysteresis = ds.consecutiveHysteresis;
  return o;
}

/// What a DeepSpeed config changes in the run: its scheduler, and its
/// loss scaling under --fp16.
std::string describeDeepSpeed(const DeepSpeedConfig &config, bool scaling) {
  std::vector<std::string> parts;
  if (const auto &schedule = config.schedule)
    parts.push_back(absl::StrFormat(
        "%s with a %s warmup (the learning rate from its scheduler)",
        schedule->decay ? "WarmupDecayLR" : "WarmupLR",
        schedule->logWarmup ? "log" : "linear"));
  if (scaling && config.lossScaling) {
    const DeepSpeedLossScaling &ds = *config.lossScaling;
    parts.push_back(absl::StrFormat(
        "loss scale from 2^%d, doubled after %lld clean steps, halved on "
        "an overflow (hysteresis %lld%s), at least %g",
        int(std::log2(ds.initScale)), (long long)ds.window,
        (long long)ds.hysteresis,
        ds.consecutiveHysteresis ? ", consecutive" : "", ds.minScale));
  }
  return absl::StrJoin(parts, "; ");
}

/// The log history of a checkpoint's trainer_state.json, one entry a line
/// as writeFiles writes it, for the run that resumes there to carry over
/// (as the Trainer's TrainerState does). A file that is missing gives none;
/// one that is damaged or not in that layout gives none and a warning.
std::vector<std::string> readLogHistory(const fs::path &dir) {
  fs::path path = dir / kTrainerStateFile;
  std::error_code ec;
  if (!fs::exists(path, ec))
    return {};
  auto none = [&](const std::string &why) {
    std::fprintf(stderr,
                 "kiln-train: warning: %s: %s; its log history is not "
                 "carried over\n",
                 path.c_str(), why.c_str());
    return std::vector<std::string>{};
  };
  absl::StatusOr<std::string> text = data::readFile(path.string());
  if (!text.ok())
    return none(std::string(text.status().message()));
  absl::StatusOr<std::vector<std::string>> entries = parseLogHistory(*text);
  if (!entries.ok())
    return none(std::string(entries.status().message()));
  return std::move(*entries);
}

data::DataLoader makeLoader(const TrainArgs &a, const data::LmBlocks &blocks,
                            const data::Tokenizer &tokenizer) {
  data::LoaderOptions o;
  // Every process draws the same global batch and takes its share
  // (trainStep): the data order is that of one process at the whole batch.
  o.batchSize = a.trainBatchSize * a.worldSize;
  o.seed = a.dataSeed.value_or(a.seed);
  o.numEpochs = 0; // endless: max_steps decides when training ends
  // A ragged last batch is padded with rows the loss ignores (the same
  // shape, so the same compiled step) unless --dataloader_drop_last.
  o.dropLast = a.dataloaderDropLast;
  o.padId = tokenizer.eosId().value_or(0);
  // As Accelerate's even_batches: every process trains on whole batches.
  o.completeLastFromEpochStart = a.worldSize > 1;
  auto loader = data::DataLoader::create(blocks, o);
  // checkAgainstData() made sure that one batch fits; a loader that still
  // cannot be made is said, not a crash.
  if (!loader.ok())
    throw Failure{
        "the training data: " + std::string(loader.status().message()), 2};
  return std::move(*loader);
}

/// The tokens a batch's loss is over: its labels after the shift (each
/// row's first is no target) that are not the ignore index, as the
/// Trainer's num_items_in_batch counts them; a padding row's none.
int64_t predictedTokens(const data::Batch &batch) {
  int64_t count = 0;
  for (int64_t row = 0; row < batch.batchSize; ++row)
    for (int64_t t = 1; t < batch.blockSize; ++t)
      count +=
          batch.labels[size_t(row * batch.blockSize + t)] != data::kIgnoreIndex;
  return count;
}

/// A --*_steps count, or its share of the run's `total` steps rounded up
/// (the Trainer's TrainerState.compute_steps), at least 1.
int64_t stepsOfRun(int64_t steps, double ratio, int64_t total) {
  if (ratio <= 0)
    return steps;
  return std::max<int64_t>(int64_t(std::ceil(double(total) * ratio)), 1);
}

int64_t totalSteps(const TrainArgs &a, int64_t updatesPerEpoch) {
  if (a.maxSteps > 0)
    return a.maxSteps;
  return int64_t(std::ceil(a.numTrainEpochs * double(updatesPerEpoch)));
}

} // namespace

Trainer::Trainer(const TrainArgs &args, PreparedData &data)
    : args_(args), data_(data),
      spec_(modelSpec(args, args.vocabSize ? args.vocabSize
                                           : data.tokenizer->vocabSize())),
      model_(buildModel(spec_)),
      optimizer_(prepareModel(), adamOptions(args, *model_)),
      loader_(makeLoader(args, data.train, *data.tokenizer)),
      accumulation_(
          std::min<int64_t>(args.gradientAccumulationSteps,
                            std::max<int64_t>(loader_.batchesPerEpoch(), 1))),
      steps_{std::max<int64_t>(loader_.batchesPerEpoch(), 1), accumulation_},
      updatesPerEpoch_(steps_.perEpoch()),
      totalSteps_(totalSteps(args, updatesPerEpoch_)),
      loggingSteps_(
          stepsOfRun(args.loggingSteps, args.loggingStepsRatio, totalSteps_)),
      evalSteps_(stepsOfRun(args.evalSteps, args.evalStepsRatio, totalSteps_)),
      saveSteps_(stepsOfRun(args.saveSteps, args.saveStepsRatio, totalSteps_)),
      scheduler_(optimizer_, makeSchedule(args, totalSteps_)) {
  if (options().productType == DType::f16)
    scaler_ = std::make_unique<nn::GradScaler>(scalerOptions(args));
  model_->train();
  nonEmbeddingParameters_ = model_->num_parameters(/*exclude_embeddings=*/true);
  if (tracksBest()) {
    // The keys the evaluation's dict has (evaluateAndLog).
    // (eval_samples, a constant, is no measure of a model.)
    std::vector<std::string> metrics = {"eval_loss", "eval_runtime",
                                        "eval_samples_per_second",
                                        "eval_steps_per_second"};
    if (data.evalRecords)
      metrics.insert(metrics.begin() + 1, "eval_accuracy");
    if (std::find(metrics.begin(), metrics.end(), args.metricForBestModel) ==
        metrics.end())
      throw Failure{"--metric_for_best_model " + args.metricForBestModel +
                        ": the evaluation reports " +
                        absl::StrJoin(metrics, ", ") + " on this data",
                    2};
  }
  if (accumulation_ < args.gradientAccumulationSteps)
    std::fprintf(stderr,
                 "kiln-train: --gradient_accumulation_steps %lld is more than "
                 "the %lld batches of an epoch: each optimizer step "
                 "accumulates the epoch's %lld (as the Trainer's last step of "
                 "an epoch takes the batches left)\n",
                 (long long)args.gradientAccumulationSteps,
                 (long long)accumulation_, (long long)accumulation_);
}

nn::NamedTensors Trainer::prepareModel() {
  if (!args_.pretrainedFolder.empty()) {
    set_graph_tag("pretrained load");
    loadPretrained(spec_, *model_, args_.pretrainedFolder);
  }
  if (!args_.useLora) {
    kiln::step(); // loaded weights become device data before the first step
    return model_->named_parameters();
  }
  lora_.r = args_.loraR;
  lora_.alpha = args_.loraAlpha;
  lora_.use_rslora = args_.useRslora;
  lora_.dropout = args_.loraDropout;
  lora_.target_modules_is_regex = args_.loraTargetsRegex;
  lora_.target_modules =
      args_.loraTargetsRegex
          ? args_.loraTargets
          : nn::expand_lora_targets(*model_, args_.loraTargets);
  lora_.modules_to_save = args_.loraModulesToSave;
  lora_.layers_to_transform = args_.loraLayers;
  lora_.layers_pattern = args_.loraLayersPattern;
  adapted_ = nn::apply_lora(*model_, lora_, args_.seed, &model_->generator());
  if (args_.mergeLora)
    if (std::optional<std::string> why = nn::lora_merge_refusal(*model_))
      throw Failure{"--merge_lora: " + *why, 1};
  if (!args_.adapterFolder.empty())
    nn::load_lora_adapter(*model_, lora_, args_.adapterFolder);
  if (args_.frozenType != DType::f32) {
    int64_t saved = model_->store_frozen_as(args_.frozenType);
    std::fprintf(stderr,
                 "kiln-train: the frozen base is stored in %s (%.1f MiB "
                 "less)\n",
                 std::string(dtypeName(args_.frozenType)).c_str(),
                 double(saved) / (1 << 20));
  }
  kiln::step();
  return nn::trainable_parameters(*model_);
}

void Trainer::resume(const std::string &dir, nn::SafetensorsData file) {
  // A LoRA run's checkpoint holds the adapters; the base is the model the
  // run started from, which must be loaded for the adapters to mean
  // anything.
  auto scope = file.metadata.find(nn::kCheckpointModelKey);
  if (scope != file.metadata.end() && args_.pretrainedFolder.empty()) {
    auto base = file.metadata.find("base_model_name_or_path");
    throw Failure{dir + "/" + nn::kCheckpointFileName +
                      " holds only the LoRA adapters and their optimizer "
                      "state; resume with --model_name_or_path " +
                      (base == file.metadata.end() ? std::string("<the base>")
                                                   : base->second) +
                      " --use_lora, as the run started",
                  1};
  }
  // Adapters of other settings (or none) would fail on the optimizer
  // state's names and shapes; say what differs instead.
  if (scope != file.metadata.end() && !args_.useLora)
    throw Failure{dir + "/" + nn::kCheckpointFileName +
                      " holds a LoRA run's adapters; resume with --use_lora "
                      "and the run's LoRA flags",
                  1};
  if (scope == file.metadata.end() && args_.useLora)
    throw Failure{dir + "/" + nn::kCheckpointFileName +
                      " holds a full fine-tuning run's weights and optimizer "
                      "state, not LoRA adapters; resume without --use_lora",
                  1};
  if (args_.useLora && fs::exists(fs::path(dir) / nn::kAdapterConfigFile)) {
    try {
      nn::check_lora_adapter_config(lora_, dir, *model_);
    } catch (const Error &e) {
      throw Failure{std::string(e.what()) +
                        " (resume with the LoRA flags the run started with)",
                    1};
    }
  }
  if (std::string mismatch = checkpointModelMismatch(dir, args_);
      !mismatch.empty())
    throw Failure{mismatch, 1};
  set_graph_tag("checkpoint load");
  nn::CheckpointState state = nn::load_checkpoint(
      std::move(file), (fs::path(dir) / nn::kCheckpointFileName).string(),
      *model_, &optimizer_, {{"dropout", &model_->generator()}});
  // The data order is a function of (data seed, step) only, given the
  // batch the loader draws (every process's rows at once: processes ×
  // per-device batch), the draws a step takes (gradient accumulation) and
  // the block size: another of any of them continues on other batches,
  // and the same ones continue exactly, whatever the processes' count.
  // Checkpoints from before --data_seed hold the seed, which was the data
  // order's; those from before the loader's batch was kept were one
  // process's, drawing its train_batch_size a step.
  if (!state.metadata.count("data_seed") && state.metadata.count("seed"))
    state.metadata["data_seed"] = state.metadata["seed"];
  if (!state.metadata.count(kLoaderBatchKey) &&
      state.metadata.count("train_batch_size"))
    state.metadata[kLoaderBatchKey] = state.metadata["train_batch_size"];
  for (auto [key, what, value] :
       {std::tuple{kLoaderBatchKey,
                   "a total batch (processes x per-device "
                   "batch) of",
                   std::to_string(loaderBatchSize())},
        std::tuple{kAccumulationKey, "gradient_accumulation_steps",
                   std::to_string(accumulation_)},
        std::tuple{"block_size", "block_size", std::to_string(args_.blockSize)},
        std::tuple{"data_seed", "data_seed", std::to_string(dataSeed())}}) {
    auto it = state.metadata.find(key);
    if (it != state.metadata.end() && it->second != value &&
        args_.worldRank == 0)
      std::fprintf(stderr,
                   "kiln-train: warning: the checkpoint was trained with %s "
                   "%s, this run uses %s; the data order differs\n",
                   what, it->second.c_str(), value.c_str());
  }
  if (scaler_) {
    nn::GradScaler::HostState scale =
        nn::GradScaler::HostState::from_metadata(state.metadata, dir);
    scaler_->load_state(scale);
    skippedAtLastLog_ = scale.skipped_steps;
  }
  globalStep_ = startStep_ = state.step;
  resumedLogs_ = readLogHistory(dir);
  // The best evaluation so far and its checkpoint, which later ones must
  // beat (each absent when there was none).
  if (auto it = state.metadata.find("best_model_checkpoint");
      it != state.metadata.end()) {
    std::error_code ec;
    if (fs::is_directory(it->second, ec))
      bestCheckpoint_ = it->second;
    else if (args_.worldRank == 0) // as the Trainer's resume
      std::fprintf(stderr,
                   "kiln-train: warning: the best checkpoint %s recorded in "
                   "the resumed state does not exist anymore; ignoring it "
                   "for this run\n",
                   it->second.c_str());
  }
  if (auto it = state.metadata.find("best_metric"); it != state.metadata.end())
    bestMetric_ = std::strtod(it->second.c_str(), nullptr);
  if (auto it = state.metadata.find("best_global_step");
      it != state.metadata.end())
    bestStep_ = std::strtoll(it->second.c_str(), nullptr, 10);
  // Checkpoints from before the count: every micro-batch counted whole.
  auto tokens = state.metadata.find("num_input_tokens_seen");
  tokensSeen_ = tokens != state.metadata.end()
                    ? std::strtoll(tokens->second.c_str(), nullptr, 10)
                    : steps_.microBatchesBefore(state.step) *
                          args_.trainBatchSize * args_.blockSize;
  scheduler_.set_step(state.step);
  loader_.seek(steps_.microBatchesBefore(state.step));
  if (args_.worldRank == 0)
    std::fprintf(stderr,
                 "  Continuing training from checkpoint %s, global step "
                 "%lld\n",
                 dir.c_str(), (long long)state.step);
}

void Trainer::printBanner() const {
  if (args_.worldRank != 0) // the main process's
    return;
  // The Trainer's figures: the accumulation asked, whatever an epoch holds
  // (the warning above says what a step takes).
  const int64_t accumulation = args_.gradientAccumulationSteps;
  const bool parallel = args_.worldSize > 1;
  int64_t trainable = 0, owned = 0;
  for (size_t i = 0; i < optimizer_.params().size(); ++i) {
    trainable += optimizer_.params()[i].second.numel();
    owned += optimizer_.owns(i) ? optimizer_.params()[i].second.numel() : 0;
  }
  const std::string sharding =
      optimizer_.sharded()
          ? absl::StrFormat("; ZeRO stage %d: the optimizer's state%s split "
                            "between them, the main process's covering "
                            "%lld of the %lld weights",
                            optimizer_.shards_gradients() ? 2 : 1,
                            optimizer_.shards_gradients() ? " and gradients"
                                                          : "",
                            (long long)owned, (long long)trainable)
          : "";
  std::fprintf(
      stderr,
      "***** Running training *****\n"
      "  Data = %s\n  Num examples = %lld (%s of %lld tokens)\n"
      "  Num Epochs = %lld\n"
      "  Instantaneous batch size per device = %lld\n"
      "  Total train batch size (w. %s) = %.0f\n%s"
      "  Gradient Accumulation steps = %lld\n"
      "  Total optimization steps = %lld\n"
      "  Number of trainable parameters = %lld\n"
      "  Model = %s%s\n"
      "  Backend = %s, %s%s\n",
      data_.source.c_str(), (long long)data_.train.numBlocks(),
      data_.instruction ? "instruction records, the loss on the responses, "
                          "one a block"
                        : "blocks",
      (long long)args_.blockSize, (long long)epochsOfRun(),
      (long long)args_.trainBatchSize,
      parallel ? "parallel, distributed & accumulation" : "accumulation",
      // In double: an absurd accumulation must not overflow.
      double(args_.trainBatchSize) * double(accumulation) *
          double(args_.worldSize),
      parallel ? ("  Processes = " + std::to_string(args_.worldSize) +
                  " (data parallel: each takes its share of a batch, the "
                  "gradients averaged over them" +
                  sharding + ")\n")
                     .c_str()
               : "",
      (long long)accumulation, (long long)totalSteps_, (long long)trainable,
      model_->describe().c_str(),
      args_.pretrainedFolder.empty()
          ? ""
          : (", weights from " + args_.pretrainedFolder).c_str(),
      std::string(backendName(options().backend)).c_str(),
      mode() == Mode::eager ? "eager (one kernel per op)" : "compiled graphs",
      options().productType == DType::bf16 ? ", bf16 mixed precision"
      : options().productType == DType::f16
          ? ", fp16 mixed precision with dynamic loss scaling"
          : "");
  if (args_.deepSpeed &&
      (args_.deepSpeed->schedule || (scaler_ && args_.deepSpeed->lossScaling)))
    std::fprintf(
        stderr, "  DeepSpeed config = %s\n",
        describeDeepSpeed(*args_.deepSpeed, scaler_ != nullptr).c_str());
  if (args_.useLora)
    std::fprintf(stderr,
                 "  LoRA = %s: %lld trainable of %lld parameters (%.3f%%), "
                 "the base frozen%s\n",
                 describeLora().c_str(), (long long)trainable,
                 (long long)model_->num_parameters(),
                 100.0 * double(trainable) / double(model_->num_parameters()),
                 args_.adapterFolder.empty()
                     ? ""
                     : (", adapter from " + args_.adapterFolder).c_str());
}

std::string Trainer::describeLora() const {
  std::string text = absl::StrFormat("r %d, alpha %g", lora_.r, lora_.alpha);
  if (lora_.use_rslora)
    absl::StrAppendFormat(&text, " (rsLoRA: scaled by %.4g)", lora_.scaling());
  absl::StrAppendFormat(&text, ", dropout %g on ", lora_.dropout);
  if (lora_.target_modules_is_regex)
    absl::StrAppend(&text, "the modules matching '",
                    lora_.target_modules.front(), "'");
  else
    absl::StrAppend(&text, absl::StrJoin(lora_.target_modules, ","));
  if (!lora_.layers_to_transform.empty())
    absl::StrAppend(&text, " in layers ",
                    absl::StrJoin(lora_.layers_to_transform, ","),
                    lora_.layers_pattern.empty()
                        ? std::string()
                        : " of " + absl::StrJoin(lora_.layers_pattern, ","));
  absl::StrAppend(&text, " (", adapted_.size(), " modules)");
  if (!lora_.modules_to_save.empty())
    absl::StrAppend(&text, ", ", absl::StrJoin(lora_.modules_to_save, ","),
                    " trained whole");
  return text;
}

void Trainer::trainStep() {
  // The Trainer draws the step's micro-batches first (get_batch_samples)
  // to count the tokens their loss is over: fewer in the epoch's last step.
  const int64_t micro = steps_.microBatches(globalStep_);
  const int world = args_.worldSize;
  std::vector<data::Batch> batches;
  std::vector<int64_t> tokens; // this process's, a micro-batch
  int64_t allTokens = 0;       // over the step and every process
  for (int64_t i = 0; i < micro; ++i) {
    data::Batch batch = *loader_.next();
    // The Trainer counts the rows it has, the ragged last batch's fewer,
    // over every process.
    tokensSeen_ += batch.numRows * args_.blockSize;
    // Every process draws the whole batch, so each counts every process's
    // share here: the Trainer's gathered count, with no collective.
    for (int rank = 0; rank < world; ++rank) {
      data::Batch shard =
          world > 1 ? data::shardBatch(batch, rank, world) : batch;
      int64_t count = predictedTokens(shard);
      allTokens += count;
      if (rank == args_.worldRank) {
        tokens.push_back(count);
        batches.push_back(std::move(shard));
      }
    }
  }
  std::vector<Tensor> losses;
  for (int64_t i = 0; i < micro; ++i) {
    const data::Batch &batch = batches[size_t(i)];
    // The model shifts the labels: they are the inputs, with the loss's
    // ignore index on padding rows.
    Tensor ids = idsTensor(batch.inputIds, batch.shape());
    Tensor labels = idsTensor(batch.labels, batch.shape());
    Tensor loss = model_->loss(ids, labels);
    // As the Trainer with num_items_in_batch (and its default
    // average_tokens_across_devices): the summed token losses over the
    // step's tokens on every process, times the processes' count that the
    // gradients' average divides out. The weight is a graph input, so the
    // epoch's ragged last step runs the same compiled graphs.
    Tensor part = loss;
    if (accumulation_ > 1 || world > 1)
      part = loss * Tensor::scalar(double(tokens[size_t(i)]) * world /
                                       double(std::max<int64_t>(allTokens, 1)),
                                   loss.dtype());
    // The step's loss is the sum of its parts (on every process the mean
    // of theirs, as the Trainer gathers it).
    losses.push_back(world > 1 ? all_reduce(part.detach()) * (1.0 / world)
                               : part.detach());
    if (i + 1 < micro) {
      (scaler_ ? scaler_->scale(part) : part).backward();
      kiln::step(); // gradients so far become device data
      continue;
    }
    // The schedule advances on a skipped fp16 step too (PyTorch's AMP
    // recipe; the Trainer would hold it back, which needs the host to
    // know).
    gradNorm_ = nn::backward_and_step(part, optimizer_, args_.maxGradNorm,
                                      scaler_.get());
    stepLearningRate_ = scheduler_.last_lr();
    scheduler_.step();
    kiln::step();
  }
  // Left on the device until a log reads them (readLosses): as the
  // Trainer, which syncs only to log, so on a GPU the host records the
  // next step while the device runs this one.
  unreadLosses_.push_back(std::move(losses));
  ++windowSteps_;
  ++globalStep_;
}

void Trainer::readLosses() {
  for (const std::vector<Tensor> &parts : unreadLosses_) {
    double value = 0;
    for (const Tensor &part : parts)
      value += part.item();
    windowLoss_ += value;
    runLoss_ += value;
  }
  unreadLosses_.clear();
}

void Trainer::maybeLog(bool epochEnded, bool last) {
  using Strategy = TrainArgs::Strategy;
  // The steps strategy logs at multiples of --logging_steps alone, the
  // last step no exception (the Trainer's DefaultFlowCallback; the
  // summary's train_loss covers the steps after the last log); the epoch
  // strategy at an epoch's end or where training stops mid-epoch (its
  // on_epoch_end).
  bool due = args_.loggingStrategy == Strategy::steps
                 ? globalStep_ % loggingSteps_ == 0
             : args_.loggingStrategy == Strategy::epoch ? epochEnded || last
                                                        : false;
  // As the Trainer's DefaultFlowCallback, whatever the strategy.
  due = due || (args_.loggingFirstStep && globalStep_ == 1);
  if (!due || windowSteps_ == 0)
    return;
  readLosses();
  // As the Trainer (transformers 5): mean loss of the window rounded to 4
  // digits, the learning rate the last step used, the fractional epoch;
  // grad_norm: the last step's, before clipping (measured without clipping
  // too, as transformers 5's Trainer).
  LogDict log = {{"loss", pythonRound(windowLoss_ / double(windowSteps_), 4)},
                 {"grad_norm", gradNorm_.item()},
                 {"learning_rate", stepLearningRate_}};
  appendEpoch(log);
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

void Trainer::appendEpoch(LogDict &log) const {
  // Trainer.log adds both to every dict it prints.
  log.push_back({"epoch", pythonRound(epoch(), 2)});
  if (args_.includeNumInputTokensSeen)
    log.push_back({"num_input_tokens_seen", double(tokensSeen_)});
}

void Trainer::train() {
  using Strategy = TrainArgs::Strategy;
  printBanner();
  ProgressBar bar(totalSteps_, globalStep_, args_.progressBar);
  bar_ = &bar;
  auto start = std::chrono::steady_clock::now();
  // The Trainer's eval_on_start: before the loop, whatever the strategy.
  if (args_.evalOnStart)
    evaluateAndLog();
  while (globalStep_ < totalSteps_) {
    // Names the graphs in --dump_graphs' manifest (kilnc precompile's
    // input); an evaluation in between names its own.
    set_graph_tag("train step");
    trainStep();
    bool last = globalStep_ == totalSteps_;
    // The Trainer's on_epoch_end also runs when max_steps stops the loop
    // mid-epoch (--max_steps, fractional --num_train_epochs): the epoch
    // strategies log, evaluate and save at the last step too
    // (trainer.py _run_epoch; trainer_callback.py DefaultFlowCallback).
    bool epochEnded = globalStep_ % updatesPerEpoch_ == 0 || last;
    // The Trainer's order: log, evaluate, save.
    maybeLog(epochEnded, last);
    // --eval_delay counts steps or epochs, as the strategy does. The steps
    // strategy evaluates at the last step too (DefaultFlowCallback's
    // on_step_end: global_step >= max_steps and not already due).
    bool newBest = false;
    if ((args_.evalStrategy == Strategy::steps &&
         (globalStep_ % evalSteps_ == 0 || last) &&
         args_.evalDelay <= double(globalStep_)) ||
        (args_.evalStrategy == Strategy::epoch && epochEnded &&
         args_.evalDelay <= epoch())) {
      evaluateAndLog();
      newBest = judgeEvaluation();
    }
    // The steps strategy also saves at the last step (the Trainer's
    // DefaultFlowCallback), so a longer run resumes where this one ended;
    // best saves after an evaluation that found a new best.
    if (!args_.outputDir.empty() &&
        ((args_.saveStrategy == Strategy::steps && saveSteps_ > 0 &&
          (globalStep_ % saveSteps_ == 0 || last)) ||
         (args_.saveStrategy == Strategy::epoch && epochEnded) ||
         (args_.saveStrategy == Strategy::best && newBest)))
      saveCheckpoint();
    bar.update(globalStep_);
  }
  readLosses(); // train_loss counts every step, logged or not
  bar.finish();
  bar_ = nullptr;
  if (args_.loadBestModelAtEnd && !bestCheckpoint_.empty())
    loadBestModel();
  keepOnlyTheBestCheckpoint();
  double runtime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  int64_t steps = globalStep_ - startStep_;
  // The Trainer's count: the schedule's samples (max_steps × the total
  // batch, the accumulation asked, else the data set × the epochs), the
  // share of its steps run here (a resumed run's part).
  const double scheduleSamples =
      args_.maxSteps > 0
          ? double(totalSteps_) * double(args_.trainBatchSize) *
                double(args_.gradientAccumulationSteps) *
                double(args_.worldSize)
          : double(data_.train.numBlocks()) * args_.numTrainEpochs;
  const double samples = scheduleSamples * double(steps) /
                         double(std::max<int64_t>(totalSteps_, 1));
  LogDict summary = {
      {"train_runtime", pythonRound(runtime, 4)},
      {"train_samples_per_second", pythonRound(samples / runtime, 3)},
      {"train_steps_per_second", pythonRound(double(steps) / runtime, 3)},
      {"total_flos", totalFlos()},
      // No step run (resumed at the last step): 0.0, as the Trainer's
      // total loss over no steps.
      {"train_loss", steps ? runLoss_ / double(steps) : 0.0}};
  appendEpoch(summary);
  // The Trainer's printers leave total_flos out; its history keeps it.
  LogDict printed = summary;
  printed.erase(
      std::remove_if(printed.begin(), printed.end(),
                     [](auto &kv) { return kv.first == "total_flos"; }),
      printed.end());
  std::printf("%s\n", formatLogDict(printed).c_str());
  std::fflush(stdout);
  // The Trainer logs the summary into log_history too; run_clm adds the
  // training set's size for train_results.json.
  trainResults_ = summary;
  trainResults_.push_back({"train_samples", double(data_.train.numBlocks())});
  summary.push_back({"step", double(globalStep_)});
  history_.push_back(summary);
  trainedHistory_ = history_.size();
}

void Trainer::run() {
  if (args_.doTrain)
    train();
  // Without --do_eval given, evaluation runs where there is validation
  // data; with it, kiln-train checked that there is.
  if (args_.doEval && data_.eval) {
    evaluateAndLog();
    evalResults_ = lastEval_;
  }
  if (args_.worldRank != 0) // the main process saves
    return;
  if (!args_.outputDir.empty() && (args_.doTrain || !evalResults_.empty()))
    writeResults(args_.outputDir);
  if (args_.doTrain && !args_.outputDir.empty()) {
    writeFiles(args_.outputDir, /*withOptimizer=*/false);
    std::fprintf(stderr, "Saving model checkpoint to %s%s\n",
                 args_.outputDir.c_str(),
                 args_.useLora ? " (the LoRA adapter)" : "");
  }
  if (args_.mergeLora) {
    fs::path merged = fs::path(args_.outputDir) / "merged";
    writeMergedModel(merged);
    std::fprintf(stderr, "Saving the merged model to %s\n",
                 merged.string().c_str());
  }
}

} // namespace kiln::train
