// Declares kiln-train's flags (llvm::cl, in a struct so nothing lives at file
// scope), parses argv and validates every value against the others (see
// TrainArgs.h). Flag names are Hugging Face's, underscores included, so a
// run_clm.py command line carries over.
#include "examples/TrainArgs.h"
#include "compiler/Version.h"
#include "examples/ConfigOverrides.h"
#include "examples/DeepSpeedConfig.h"
#include "examples/Schedule.h"
#include "examples/TrainFlags.h"

#include "frontends/nn/AdapterConfig.h"
#include "frontends/nn/ModelConfig.h"
#include "support/ByteSize.h"
#include "support/CollectiveTimeout.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <tuple>
#include <vector>

namespace kiln::train {
namespace {

// Hugging Face's argument parser reads a boolean's value the way
// string_to_bool does (yes/no, true/false, t/f, y/n, 1/0, any case) and
// takes it as the next argument too; llvm::cl takes `--flag` or
// `--flag=true|false` only. "true"/"false" for a word, else "".
std::string boolWord(std::string word) {
  for (char &c : word)
    c = char(std::tolower((unsigned char)c));
  for (const char *yes : {"yes", "true", "t", "y", "1"})
    if (word == yes)
      return "true";
  for (const char *no : {"no", "false", "f", "n", "0"})
    if (word == no)
      return "false";
  return "";
}

// argv with `--flag VALUE` and `--flag=VALUE` of the boolean flags
// rewritten as `--flag=true|false`, so run_clm.py command lines carry over.
std::vector<std::string> normalizeBooleans(int argc, char **argv,
                                           const Flags &flags) {
  std::set<std::string> names;
  for (const cl::opt<bool> *flag : flags.booleans())
    names.insert(flag->ArgStr.str());
  std::vector<std::string> out(argv, argv + argc);
  for (size_t i = 1; i < out.size(); ++i) {
    std::string arg = out[i];
    if (arg == "--")
      break;
    size_t dashes = arg.rfind("--", 0) == 0  ? 2
                    : arg.rfind("-", 0) == 0 ? 1
                                             : 0;
    size_t eq = arg.find('=');
    std::string name = arg.substr(
        dashes, eq == std::string::npos ? std::string::npos : eq - dashes);
    if (!dashes || !names.count(name))
      continue;
    if (eq != std::string::npos) {
      if (std::string word = boolWord(arg.substr(eq + 1)); !word.empty())
        out[i] = "--" + name + "=" + word;
    } else if (i + 1 < out.size()) {
      if (std::string word = boolWord(out[i + 1]); !word.empty()) {
        out[i] = "--" + name + "=" + word;
        out.erase(out.begin() + long(i) + 1);
      }
    }
  }
  return out;
}

// Prints "kiln-train: error: <message>" and yields the bad-usage status.
int usageError(const std::string &message) {
  llvm::errs() << "kiln-train: error: " << message << "\n";
  return 2;
}

TrainArgs copyFlags(const Flags &f) {
  TrainArgs a;
  a.modelType = f.modelType;
  a.nLayer = f.nLayer, a.nEmbd = f.nEmbd, a.nHead = f.nHead;
  a.nPositions = f.nPositions, a.vocabSize = f.vocabSize;
  a.dropout = f.dropout;
  a.tokenizerDir = f.tokenizerDir, a.trainFile = f.trainFile;
  a.validationFile = f.validationFile, a.dataset = f.dataset;
  a.blockSize = f.blockSize, a.defaultCorpusLines = f.corpusLines;
  a.maxTrainSamples = f.maxTrainSamples, a.maxEvalSamples = f.maxEvalSamples;
  a.trainBatchSize = f.trainBatch, a.evalBatchSize = f.evalBatch;
  a.learningRate = f.learningRate, a.weightDecay = f.weightDecay;
  a.maxGradNorm = f.maxGradNorm;
  a.lrSchedulerType = f.scheduler, a.numTrainEpochs = f.epochs;
  a.maxSteps = f.maxSteps, a.seed = f.seed;
  a.outputDir = f.outputDir;
  a.saveTotalLimit = f.saveTotalLimit;
  a.overwriteOutputDir = f.overwriteOutputDir;
  // True and False (any case) are the words; anything else is a folder
  // (so a folder named "1" or "y" still works).
  std::string resume = f.resume, word = resume;
  for (char &c : word)
    c = char(std::tolower((unsigned char)c));
  if (resume.empty())
    a.resume = TrainArgs::Resume::detect;
  else if (word == "true")
    a.resume = TrainArgs::Resume::newest;
  else if (word == "false")
    a.resume = TrainArgs::Resume::never;
  else
    a.resume = TrainArgs::Resume::path, a.resumeFromCheckpoint = resume;
  a.eager = f.eager, a.dumpGraphs = f.dumpGraphs, a.cacheDir = f.cacheDir;
  // Empty when not given: KILN_BACKEND, then kDefaultBackend, apply.
  a.backend = f.backend.getNumOccurrences() ? f.backend.getValue() : "";
  a.cudaArch = f.cudaArch, a.tf32 = f.tf32;
  a.productType = f.bf16 ? DType::bf16 : f.fp16 ? DType::f16 : DType::f32;
  a.autoFindBatchSize = f.autoFindBatchSize;
  return a;
}

// --load_best_model_at_end and its metric → `a`, checked as
// TrainingArguments checks them; the first problem, or "".
std::string copyBestModelFlags(const Flags &f, TrainArgs &a) {
  std::string metric = f.metricForBestModel;
  if (metric.empty())
    return "--metric_for_best_model must name a metric (default: loss)";
  a.metricForBestModel =
      metric.rfind("eval_", 0) == 0 ? metric : "eval_" + metric;
  // The Trainer's default: a loss is better smaller, anything else greater.
  a.greaterIsBetter = f.greaterIsBetter.getNumOccurrences()
                          ? bool(f.greaterIsBetter)
                          : !llvm::StringRef(metric).ends_with("loss");
  a.loadBestModelAtEnd = f.loadBestModelAtEnd;
  a.evalOnStart = f.evalOnStart;
  return "";
}

// The Trainer's flags beyond run_clm's core (optimizer, loss, schedule,
// logging, device, best model, and those kiln-train does not act on) →
// `a`; the first problem, or "".
/// A --*_steps flag, where it goes and where its share of the run goes.
using StepsFlag = std::tuple<const char *, double, int64_t *, double *>;

/// A --*_steps value as TrainingArguments reads it: below 1 (and above 0),
/// a share of the run's steps, kept in `ratio`; else a whole number of
/// steps (warmup's: --warmup_ratio, which the share replaces).
std::string readSteps(const char *name, double value, int64_t &steps,
                      double &ratio) {
  if (!std::isfinite(value) || value < 0 || value > 1e15)
    return absl::StrFormat("--%s must be a non-negative number of steps, "
                           "got %g",
                           name, value);
  if (value > 0 && value < 1) {
    ratio = value, steps = 0;
    return "";
  }
  if (value != std::floor(value))
    return absl::StrFormat("--%s must be a whole number of steps when 1 or "
                           "more (below 1 it is a share of the run's "
                           "steps), got %g",
                           name, value);
  steps = int64_t(value);
  return "";
}

std::string copyTrainerFlags(const Flags &f, TrainArgs &a) {
  // The Trainer's names for PyTorch's AdamW formula, which kiln's is
  // (adamw_hf, transformers' own, with a note below).
  static const std::vector<std::string> adamw = {
      "adamw_torch", "adamw_torch_fused", "adamw_apex_fused", "adamw_torch_xla",
      "adamw_torch_npu_fused"};
  if (f.optim != "adamw_hf" &&
      std::find(adamw.begin(), adamw.end(), f.optim.getValue()) == adamw.end())
    return "--optim " + f.optim +
           ": kiln-train's optimizer is AdamW (--optim " +
           absl::StrJoin(adamw, ", ") + "); other optimizers are not built";
  if (f.optim == "adamw_hf")
    std::fprintf(stderr,
                 "kiln-train: note: --optim adamw_hf: kiln's AdamW is "
                 "PyTorch's (epsilon added after the bias correction)\n");
  // Notes are printed below, with those of the flags kiln does not act on.
  std::vector<std::string> notes;
  if (!f.deepspeed.empty()) {
    absl::StatusOr<DeepSpeedConfig> config = readDeepSpeedConfig(f.deepspeed);
    if (!config.ok())
      return std::string(config.status().message());
    a.zeroStage = config->zeroStage;
    a.deepSpeedFile = f.deepspeed;
    if (!config->notActedOn.empty())
      notes.push_back("--deepspeed " + f.deepspeed +
                      ": kiln plans the step's memory and communication "
                      "itself, so these settings, which tune DeepSpeed's "
                      "(or its reports) and not what a step computes, are "
                      "not acted on: " +
                      absl::StrJoin(config->notActedOn, ", "));
    if (!config->leftOut.empty())
      notes.push_back("--deepspeed " + f.deepspeed +
                      ": the flags set what the config leaves out, as they "
                      "set its \"auto\" values, where DeepSpeed would run "
                      "its defaults (to run those, pass them as the "
                      "flags): " +
                      absl::StrJoin(config->leftOut, ", "));
    if (config->schedule && f.scheduler.getNumOccurrences())
      notes.push_back("--deepspeed " + f.deepspeed +
                      ": its scheduler sets the learning rate, as under the "
                      "Trainer; --lr_scheduler_type " +
                      f.scheduler + " is not used");
    a.deepSpeed = std::move(*config);
  }
  absl::StatusOr<std::optional<int>> fsdp = fsdpZeroStage(f.fsdp, notes);
  if (!fsdp.ok())
    return std::string(fsdp.status().message());
  if (*fsdp && !f.deepspeed.empty())
    return "--fsdp and --deepspeed: the Trainer takes one of them";
  if (*fsdp)
    a.zeroStage = **fsdp;
  a.labelSmoothingFactor = f.labelSmoothingFactor;
  if (!(a.labelSmoothingFactor >= 0 && a.labelSmoothingFactor < 1))
    return absl::StrFormat("--label_smoothing_factor must be in [0, 1), got "
                           "%g",
                           a.labelSmoothingFactor);
  a.neftuneNoiseAlpha = f.neftuneNoiseAlpha;
  if (!(a.neftuneNoiseAlpha >= 0) || !std::isfinite(a.neftuneNoiseAlpha))
    return absl::StrFormat("--neftune_noise_alpha must be a non-negative "
                           "number, got %g",
                           a.neftuneNoiseAlpha);
  a.adamBeta1 = f.adamBeta1, a.adamBeta2 = f.adamBeta2;
  a.adamEpsilon = f.adamEpsilon;
  if (!f.schedulerKwargs.empty())
    if (std::string problem =
            parseScheduleKwargs(f.schedulerKwargs, a.lrSchedulerKwargs);
        !problem.empty())
      return problem;
  a.keepLinebreaks = f.keepLinebreaks;
  a.loggingFirstStep = f.loggingFirstStep;
  a.includeNumInputTokensSeen = f.includeNumInputTokensSeen;
  if (f.dataSeed.getNumOccurrences())
    a.dataSeed = f.dataSeed;
  if (!f.saveSafetensors)
    return "--save_safetensors False: kiln writes safetensors only (the "
           "Trainer's default format)";
  if (f.useCpu || f.noCuda) {
    const char *flag = f.useCpu ? "--use_cpu" : "--no_cuda";
    if (!a.backend.empty() && a.backend != "cpu")
      return std::string(flag) + " True and --backend " + a.backend +
             " disagree; give one";
    a.backend = "cpu";
  }
  if (std::string problem = copyBestModelFlags(f, a); !problem.empty())
    return problem;
  if (std::string problem = f.notActedOn.check(notes); !problem.empty())
    return problem;
  for (const std::string &note : notes)
    std::fprintf(stderr, "kiln-train: note: %s\n", note.c_str());
  return "";
}

/// "no" | "steps" | "epoch" → the strategy; nullopt otherwise.
std::optional<TrainArgs::Strategy> parseStrategy(const std::string &word) {
  using Strategy = TrainArgs::Strategy;
  if (word == "no")
    return Strategy::no;
  if (word == "steps")
    return Strategy::steps;
  if (word == "epoch")
    return Strategy::epoch;
  if (word == "best")
    return Strategy::best;
  return std::nullopt;
}

// The flags that Hugging Face's TrainingArguments and run_clm.py add to the
// basic ones → `a`; the first problem, or "".
std::string copyHuggingFaceFlags(const Flags &f, TrainArgs &a) {
  for (const auto &entry : cl::getRegisteredOptions())
    if (entry.second->getNumOccurrences() > 0)
      a.given.insert(entry.first.str());
  a.modelNameOrPath = f.modelNameOrPath, a.configName = f.configName;
  a.tokenizerName = f.tokenizerName, a.hubCacheDir = f.hubCache;
  a.modelRevision = f.modelRevision;
  if (a.modelRevision.empty())
    return "--model_revision must name a revision (default: main)";
  a.datasetName = f.datasetName, a.datasetConfigName = f.datasetConfigName;
  a.validationSplitPercentage = f.validationSplitPercentage;
  a.preprocessingNumWorkers = f.preprocessingNumWorkers;
  a.useLora = f.useLora, a.mergeLora = f.mergeLora, a.useRslora = f.useRslora;
  a.loraR = f.loraR, a.loraAlpha = f.loraAlpha, a.loraDropout = f.loraDropout;
  a.loraTargets.assign(f.loraTargetModules.begin(), f.loraTargetModules.end());
  a.loraModulesToSave.assign(f.loraModulesToSave.begin(),
                             f.loraModulesToSave.end());
  a.loraLayers.assign(f.loraLayersToTransform.begin(),
                      f.loraLayersToTransform.end());
  a.loraLayersPattern.assign(f.loraLayersPattern.begin(),
                             f.loraLayersPattern.end());
  for (int64_t layer : a.loraLayers)
    if (layer < 0)
      return "--lora_layers_to_transform takes layer indices from 0, got " +
             std::to_string(layer);
  if (!a.loraLayersPattern.empty() && a.loraLayers.empty())
    return "--lora_layers_pattern names the layers --lora_layers_to_transform "
           "counts; give that too";
  std::optional<DType> storage = nn::parse_torch_dtype(f.torchDtype.getValue());
  if (!storage)
    return "--torch_dtype must be auto, float32, bfloat16 or float16, got '" +
           f.torchDtype.getValue() + "'";
  a.frozenType = *storage;
  a.gradientAccumulationSteps = f.gradientAccumulationSteps;
  a.warmupRatio = f.warmupRatio;
  for (auto [name, value, steps, ratio] :
       {StepsFlag{"logging_steps", f.loggingSteps, &a.loggingSteps,
                  &a.loggingStepsRatio},
        StepsFlag{"save_steps", f.saveSteps, &a.saveSteps, &a.saveStepsRatio},
        StepsFlag{"eval_steps", f.evalSteps, &a.evalSteps, &a.evalStepsRatio},
        StepsFlag{"warmup_steps", f.warmupSteps, &a.warmupSteps,
                  &a.warmupRatio}})
    if (std::string problem = readSteps(name, value, *steps, *ratio);
        !problem.empty())
      return problem;
  a.dataloaderDropLast = f.dataloaderDropLast;
  if (a.given.count("ddp_timeout")) {
    absl::StatusOr<absl::Duration> limit =
        parseTimeoutSeconds(f.ddpTimeout.getValue(), "--ddp_timeout");
    if (!limit.ok())
      return std::string(limit.status().message());
    a.ddpTimeoutSeconds = absl::ToInt64Seconds(*limit);
  }
  a.progressBar = !f.disableTqdm;
  if (std::string problem = copyTrainerFlags(f, a); !problem.empty())
    return problem;
  // run_clm.py runs only what --do_train / --do_eval ask; kiln-train without
  // either trains (and evaluates where it has validation data).
  if (a.given.count("do_train") || a.given.count("do_eval")) {
    a.doTrain = f.doTrain;
    a.doEval = f.doEval;
    // --do_eval False alone turns the evaluation off, not kiln-train's
    // default training.
    if (!a.given.count("do_train") && !f.doEval)
      a.doTrain = true;
  } else {
    a.doTrain = a.doEval = true; // evaluation where there is validation data
  }
  // --model_type alone is run_clm.py's "train from scratch with the
  // family's default config": transformers' GPT2Config() (GPT-2 124M); the
  // n_* flags given still win.
  if (a.given.count("model_type") && a.modelNameOrPath.empty() &&
      a.configName.empty()) {
    nn::GPT2Config hf;
    nn::LlamaConfig llama; // transformers' LlamaConfig(): Llama 2 7B's shape
    bool isLlama = a.modelType == "llama";
    for (auto [flag, field, gpt2, llamaValue] :
         {std::tuple{"n_layer", &a.nLayer, hf.n_layer, llama.num_hidden_layers},
          std::tuple{"n_embd", &a.nEmbd, hf.n_embd, llama.hidden_size},
          std::tuple{"n_head", &a.nHead, hf.n_head, llama.num_attention_heads},
          std::tuple{"n_positions", &a.nPositions, hf.n_positions,
                     llama.max_position_embeddings},
          std::tuple{"vocab_size", &a.vocabSize, hf.vocab_size,
                     llama.vocab_size}})
      if (!a.given.count(flag))
        *field = isLlama ? llamaValue : gpt2;
  }
  std::string evalWord = f.evalStrategy;
  if (f.evaluationStrategy.getNumOccurrences()) {
    if (f.evalStrategy.getNumOccurrences() &&
        f.evalStrategy != f.evaluationStrategy)
      return "--eval_strategy and --evaluation_strategy (its older name) "
             "disagree; give one";
    evalWord = f.evaluationStrategy;
  }
  using Named = std::tuple<const char *, std::string, TrainArgs::Strategy *>;
  for (auto [flag, word, field] :
       {Named{"logging_strategy", f.loggingStrategy, &a.loggingStrategy},
        Named{"eval_strategy", evalWord, &a.evalStrategy},
        Named{"save_strategy", f.saveStrategy, &a.saveStrategy}}) {
    // best is a save strategy alone (TrainingArguments' SaveStrategy).
    const bool saving = field == &a.saveStrategy;
    std::optional<TrainArgs::Strategy> strategy = parseStrategy(word);
    if (!strategy || (*strategy == TrainArgs::Strategy::best && !saving))
      return "--" + std::string(flag) + ": unknown strategy '" + word +
             "'; expected no, steps" +
             (saving ? ", epoch or best" : " or epoch");
    *field = *strategy;
  }
  // TrainingArguments: an evaluation strategy other than no sets do_eval,
  // and run_clm then evaluates after training too.
  if (a.evalStrategy != TrainArgs::Strategy::no)
    a.doEval = true;
  // Without --eval_steps the steps strategy takes --logging_steps, a share
  // or a count (TrainingArguments; other strategies leave it unset).
  if (a.evalStrategy == TrainArgs::Strategy::steps && a.evalSteps == 0 &&
      a.evalStepsRatio == 0)
    a.evalSteps = a.loggingSteps, a.evalStepsRatio = a.loggingStepsRatio;
  a.evalDelay = f.evalDelay;
  if (!(a.evalDelay >= 0) || !std::isfinite(a.evalDelay))
    return absl::StrFormat("--eval_delay must be a non-negative number, got "
                           "%g",
                           a.evalDelay);
  for (const std::string &to : f.reportTo)
    if (to != "none" && to != "all")
      return "--report_to " + to +
             ": kiln-train has no such integration; its logs are the "
             "Trainer's dict lines on stdout (use --report_to none)";
  // Names and files: one source of each.
  if (!a.datasetName.empty() && !a.trainFile.empty())
    return "--dataset_name and --train_file both name the training data; "
           "give one";
  if (!a.datasetConfigName.empty() && a.datasetName.empty())
    return "--dataset_config_name needs --dataset_name";
  if (!a.tokenizerName.empty() && !a.tokenizerDir.empty())
    return "--tokenizer_name and --tokenizer_dir both name the tokenizer; "
           "give one";
  if (!a.modelNameOrPath.empty() && !a.configName.empty())
    return "--model_name_or_path and --config_name both give the model's "
           "config; give one";
  if (a.gradientAccumulationSteps < 1)
    return "--gradient_accumulation_steps must be positive, got " +
           std::to_string(a.gradientAccumulationSteps);
  if (!(a.warmupRatio >= 0 && a.warmupRatio <= 1))
    return "--warmup_ratio must be in [0, 1], got " +
           std::to_string(a.warmupRatio);
  // Without --eval_steps the steps strategy takes --logging_steps (the
  // Trainer's default); other strategies need none.
  if ((a.evalStrategy == TrainArgs::Strategy::steps ||
       a.given.count("eval_steps")) &&
      a.evalSteps < 1 && a.evalStepsRatio == 0)
    return std::string(a.given.count("eval_steps") ? "--eval_steps"
                                                   : "--logging_steps") +
           " must be positive, got " + std::to_string(a.evalSteps);
  if (a.validationSplitPercentage < 0 || a.validationSplitPercentage >= 100)
    return "--validation_split_percentage must be in [0, 100), got " +
           std::to_string(a.validationSplitPercentage);
  if (!a.doTrain && !a.doEval)
    return "--do_train False and --do_eval False: nothing to do";
  if (a.loraR < 1 || a.loraR > nn::kMaxLoraRank)
    return "--lora_r must be in [1, " + std::to_string(nn::kMaxLoraRank) +
           "], got " + std::to_string(a.loraR);
  if (!(a.loraDropout >= 0 && a.loraDropout < 1))
    return "--lora_dropout must be in [0, 1), got " +
           std::to_string(a.loraDropout);
  if (!std::isfinite(a.loraAlpha) || a.loraAlpha <= 0)
    return "--lora_alpha must be positive";
  // The adapters are all the run saves: a random base would be lost.
  if (a.useLora && a.modelNameOrPath.empty())
    return "--use_lora trains adapters on a frozen pretrained base, and "
           "without --model_name_or_path the base would be random weights "
           "saved nowhere (the output folder holds the adapters alone); "
           "train a base first (kiln-train ... --output_dir base) and pass "
           "--model_name_or_path base";
  if (a.mergeLora && a.given.count("output_dir") == 0)
    return "--merge_lora needs --output_dir (the merged model goes to "
           "output_dir/merged)";
  return "";
}

// The first problem with a model or data setting, or "".
std::string checkModelAndData(const TrainArgs &a) {
  auto positive = [](const char *flag, long v) -> std::string {
    return v >= 1 ? ""
                  : "--" + std::string(flag) + " must be positive, got " +
                        std::to_string(v);
  };
  using Flag = std::pair<const char *, long>;
  for (auto [flag, v] : std::initializer_list<Flag>{
           {"n_layer", a.nLayer},
           {"n_embd", a.nEmbd},
           {"n_head", a.nHead},
           {"n_positions", a.nPositions},
           {"block_size", a.blockSize},
           {"default_corpus_lines", a.defaultCorpusLines}})
    if (std::string e = positive(flag, v); !e.empty())
      return e;
  if (a.nLayer > nn::kMaxLayers)
    return "--n_layer must be at most " + std::to_string(nn::kMaxLayers) +
           ", got " + std::to_string(a.nLayer);
  if (a.modelType != "gpt2" && a.modelType != "llama")
    return "unknown --model_type '" + a.modelType + "'; expected gpt2 or llama";
  // (A loaded Llama config may set head_dim apart from n_embd / n_head.)
  if (!a.llamaConfig && a.nEmbd % a.nHead != 0)
    return "--n_embd (" + std::to_string(a.nEmbd) +
           ") must be a multiple of --n_head (" + std::to_string(a.nHead) + ")";
  if (a.vocabSize < 0)
    return "--vocab_size must not be negative, got " +
           std::to_string(a.vocabSize);
  if (a.maxTrainSamples == 0 || a.maxTrainSamples < -1)
    return "--max_train_samples must be positive (or -1: all), got " +
           std::to_string(a.maxTrainSamples);
  if (a.maxEvalSamples == 0 || a.maxEvalSamples < -1)
    return "--max_eval_samples must be positive (or -1: all), got " +
           std::to_string(a.maxEvalSamples);
  if (!(a.dropout >= 0 && a.dropout < 1))
    return "--dropout must be in [0, 1), got " + std::to_string(a.dropout);
  if (a.blockSize < 2)
    return "--block_size must be at least 2 (the model predicts the next "
           "token), got " +
           std::to_string(a.blockSize);
  // A model folder's or config's own positions are checked when it is
  // read (kiln-train's takeConfig); the flags' default is not the model's.
  if (a.modelNameOrPath.empty() && a.configName.empty() &&
      a.blockSize > a.nPositions)
    return "--block_size (" + std::to_string(a.blockSize) +
           ") exceeds the model's --n_positions (" +
           std::to_string(a.nPositions) + ")";
  static const std::set<std::string> datasets = {"auto", "text", "sst2", "csv",
                                                 "jsonl"};
  if (!datasets.count(a.dataset))
    return "unknown --dataset '" + a.dataset +
           "'; expected text, sst2, csv or jsonl";
  namespace fs = std::filesystem;
  std::error_code ec;
  using File = std::pair<const char *, std::string>;
  for (auto [flag, path] : std::initializer_list<File>{
           {"train_file", a.trainFile}, {"validation_file", a.validationFile}})
    if (!path.empty() && !fs::is_regular_file(path, ec))
      return "--" + std::string(flag) + ": " +
             (!fs::exists(path, ec)        ? "no such file: " + path
              : fs::is_directory(path, ec) ? path + " is a directory, not a "
                                                    "file"
                                           : path + " is not a regular file "
                                                    "(a pipe or a device): "
                                                    "kiln-train reads its "
                                                    "data from files");
  if (!a.tokenizerDir.empty() && !fs::is_directory(a.tokenizerDir, ec))
    return "--tokenizer_dir: no such directory: " + a.tokenizerDir;
  return "";
}

// The first problem with a training or execution setting, or "".
std::string checkTraining(const TrainArgs &a) {
  auto str = [](auto v) { return std::to_string(v); };
  if (a.trainBatchSize < 1)
    return "--per_device_train_batch_size must be positive, got " +
           str(a.trainBatchSize);
  if (a.evalBatchSize < 1)
    return "--per_device_eval_batch_size must be positive, got " +
           str(a.evalBatchSize);
  if (!std::isfinite(a.learningRate) || a.learningRate < 0)
    return "--learning_rate must be a non-negative number";
  if (!std::isfinite(a.weightDecay) || a.weightDecay < 0)
    return "--weight_decay must be a non-negative number";
  if (!std::isfinite(a.maxGradNorm) || a.maxGradNorm < 0)
    return "--max_grad_norm must be a non-negative number";
  if (a.warmupSteps < 0)
    return "--warmup_steps must not be negative, got " + str(a.warmupSteps);
  if (std::string problem = checkSchedule(a); !problem.empty())
    return problem;
  if (!(a.adamBeta1 >= 0 && a.adamBeta1 < 1) ||
      !(a.adamBeta2 >= 0 && a.adamBeta2 < 1))
    return absl::StrFormat("--adam_beta1 and --adam_beta2 must be in [0, 1), "
                           "got %g and %g",
                           a.adamBeta1, a.adamBeta2);
  if (!(a.adamEpsilon >= 0) || !std::isfinite(a.adamEpsilon))
    return absl::StrFormat("--adam_epsilon must be a non-negative number, "
                           "got %g",
                           a.adamEpsilon);
  if (a.maxSteps == 0 || a.maxSteps < -1)
    return "--max_steps must be positive (or -1: use --num_train_epochs), "
           "got " +
           str(a.maxSteps);
  if (a.maxSteps < 0 && !(a.numTrainEpochs > 0 && a.numTrainEpochs < 1e6))
    return absl::StrFormat("--num_train_epochs must be positive and below "
                           "10^6 (--max_steps counts steps past that), got %g",
                           a.numTrainEpochs);
  if (a.loggingSteps < 1 && a.loggingStepsRatio == 0)
    return "--logging_steps must be positive, got " + str(a.loggingSteps);
  if (a.saveSteps < 0)
    return "--save_steps must not be negative, got " + str(a.saveSteps);
  if (a.given.count("save_steps") &&
      (a.saveSteps > 0 || a.saveStepsRatio > 0) && a.outputDir.empty())
    return "--save_steps needs --output_dir";
  using Strategy = TrainArgs::Strategy;
  if (a.saveStrategy == Strategy::best) {
    // The Trainer saves after an evaluation that found a new best metric;
    // without evaluations in training it would save nothing, silently.
    if (a.evalStrategy == Strategy::no)
      return "--save_strategy best saves when an evaluation during training "
             "finds a new best --metric_for_best_model; give --eval_strategy "
             "steps or epoch";
    if (!a.loadBestModelAtEnd && !a.given.count("metric_for_best_model"))
      return "--save_strategy best needs --metric_for_best_model (or "
             "--load_best_model_at_end, whose default metric is loss), as the "
             "Trainer does";
    if (a.outputDir.empty())
      return "--save_strategy best needs --output_dir (where its checkpoints "
             "go)";
  }
  if (a.loadBestModelAtEnd && a.saveStrategy != Strategy::best) {
    auto name = [](Strategy s) {
      return s == Strategy::no      ? "no"
             : s == Strategy::steps ? "steps"
                                    : "epoch";
    };
    if (a.evalStrategy != a.saveStrategy)
      return std::string("--load_best_model_at_end needs the save and eval "
                         "strategies to match, got --eval_strategy ") +
             name(a.evalStrategy) + " and --save_strategy " +
             name(a.saveStrategy);
    // Shares of the run resolve to counts later: both shares, a whole
    // multiple (as the Trainer checks them); a share and a count, never.
    const bool shares = a.saveStepsRatio > 0 || a.evalStepsRatio > 0;
    if (a.evalStrategy == Strategy::steps && shares &&
        !(a.saveStepsRatio > 0 && a.evalStepsRatio > 0))
      return "--load_best_model_at_end needs --save_steps to be a multiple "
             "of --eval_steps, which a share of the run's steps and a count "
             "of steps cannot promise; give both as shares or both as "
             "counts";
    const double multiple = shares ? a.saveStepsRatio / a.evalStepsRatio
                                   : double(a.saveSteps) / double(a.evalSteps);
    if (a.evalStrategy == Strategy::steps &&
        std::abs(multiple - std::round(multiple)) > 1e-9)
      return absl::StrFormat("--load_best_model_at_end needs --save_steps "
                             "(%g) to be a multiple of --eval_steps (%g)",
                             shares ? a.saveStepsRatio : double(a.saveSteps),
                             shares ? a.evalStepsRatio : double(a.evalSteps));
    if (a.evalStrategy != Strategy::no && a.outputDir.empty())
      return "--load_best_model_at_end needs --output_dir (its checkpoints "
             "are where the best model is kept)";
  }
  if (a.saveTotalLimit < 0)
    return "--save_total_limit must not be negative, got " +
           str(a.saveTotalLimit);
  std::error_code ec;
  if (a.resume == TrainArgs::Resume::path &&
      !std::filesystem::is_directory(a.resumeFromCheckpoint, ec))
    return "--resume_from_checkpoint: " +
           std::string(std::filesystem::exists(a.resumeFromCheckpoint, ec)
                           ? "not a directory: "
                           : "no such directory: ") +
           a.resumeFromCheckpoint;
  if (a.resume == TrainArgs::Resume::newest && a.outputDir.empty())
    return "--resume_from_checkpoint True needs --output_dir (the folder "
           "whose newest checkpoint-N to resume from)";
  // run_clm.py resumes only under do_train; an evaluation alone scores the
  // model it is given.
  if (!a.doTrain && (a.resume == TrainArgs::Resume::path ||
                     a.resume == TrainArgs::Resume::newest))
    return "--resume_from_checkpoint continues a training run, and "
           "--do_train is off; to evaluate a checkpoint, pass its folder as "
           "--model_name_or_path";
  if (!a.backend.empty() && a.backend != "reference" && a.backend != "cpu" &&
      a.backend != "cuda")
    return "unknown --backend '" + a.backend +
           "'; expected reference, cpu or cuda";
  if (!a.cudaArch.empty() && a.cudaArch != "sm_80" && a.cudaArch != "sm_90")
    return "unknown --cuda_arch '" + a.cudaArch + "'; expected sm_80 or sm_90";
  return "";
}

} // namespace

ParseResult parseTrainArgs(int argc, char **argv) {
  // llvm::cl registers options in a process-wide registry and never
  // unregisters them, and code running later walks it (lld's driver, which
  // the CPU backend calls in-process): the flags must live until exit.
  static Flags flags;
  ParseResult result;
  cl::HideUnrelatedOptions(flags.categories());
  std::vector<std::string> args = normalizeBooleans(argc, argv, flags);
  std::vector<const char *> argPointers;
  for (const std::string &arg : args)
    argPointers.push_back(arg.c_str());
  cl::SetVersionPrinter([](llvm::raw_ostream &out) {
    out << "kiln-train: " << compiler::versionText() << "\n";
  });
  if (!cl::ParseCommandLineOptions(
          int(argPointers.size()), argPointers.data(),
          "kiln-train: causal language-model training and fine-tuning (GPT-2 "
          "and the Llama family, LoRA) with kiln, in the style of Hugging "
          "Face's run_clm.py and Trainer\n",
          &llvm::errs())) {
    result.exitCode = 2;
    return result;
  }
  result.args = copyFlags(flags);
  TrainArgs &a = result.args;
  a.commandLine.assign(argv + std::min(argc, 1), argv + argc);
  std::string problem = copyHuggingFaceFlags(flags, a);
  if (problem.empty() && flags.configOverrides.getNumOccurrences())
    problem = applyConfigOverrides(flags.configOverrides, a);
  if (problem.empty())
    problem = checkModelAndData(a);
  if (problem.empty())
    problem = checkTraining(a);
  if (problem.empty() && flags.fp16 && flags.bf16)
    problem = "--fp16 and --bf16 ask for two mixed precisions; give one";
  if (problem.empty() && !flags.memoryBudget.empty()) {
    a.memoryBudget = parseByteSize(flags.memoryBudget);
    if (!a.memoryBudget)
      problem = "--memory_budget: expected a size such as 512MB or 2GiB, "
                "got '" +
                flags.memoryBudget + "'";
  }
  if (problem.empty() && a.autoFindBatchSize && a.eager)
    problem = "--auto_find_batch_size plans compiled steps; it does not "
              "apply to --eager";
  if (problem.empty() && a.memoryBudget && a.eager)
    problem = "--memory_budget plans compiled steps' memory; it does not "
              "apply to --eager";
  if (problem.empty() && !a.dumpGraphs.empty() && a.eager)
    problem = "--dump_graphs writes the graphs of compiled steps; --eager "
              "compiles none";
  if (!problem.empty())
    result.exitCode = usageError(problem);
  return result;
}

} // namespace kiln::train
