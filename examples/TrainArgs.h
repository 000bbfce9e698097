// kiln-train's command line: the flags of Hugging Face's run_clm.py and
// TrainingArguments that a GPT-2 training run needs, parsed with llvm::cl
// into one TrainArgs struct and checked before anything is built, so a bad
// value is one clear message and exit status 2, never a crash later.
#ifndef KILN_EXAMPLES_TRAINARGS_H
#define KILN_EXAMPLES_TRAINARGS_H

#include "examples/DeepSpeedConfig.h"
#include "frontends/nn/ModelConfig.h"
#include "support/HostTensor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::train {

/// The backend used when neither --backend nor $KILN_BACKEND is given: one
/// constant, so the default changes in one place (set to "reference" if the
/// CPU backend is ever unusable).
inline constexpr const char *kDefaultBackend = "cpu";

/// Every setting of a run, after validation.
struct TrainArgs {
  // Model: "gpt2" or "llama"; the n_* shape (a loaded config's too;
  // vocab_size 0 = the tokenizer's).
  std::string modelType = "gpt2";
  int64_t nLayer = 2, nEmbd = 64, nHead = 4, nPositions = 128;
  int64_t vocabSize = 0;
  /// The config taken, by family: a folder's config.json or
  /// --config_overrides' (absent: the n_* flags' shape). It is final:
  /// --dropout given is folded in when it is taken, and the n_* fields
  /// hold its shape.
  std::optional<nn::LlamaConfig> llamaConfig;
  std::optional<nn::GPT2Config> gpt2Config;
  double dropout = 0.1;
  /// Hugging Face names (folders or hub ids), resolved to folders and files
  /// by resolveHubNames (kiln-train.cpp) before anything is built; the hub
  /// cache searched ("" : $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/...).
  std::string modelNameOrPath, configName, tokenizerName, hubCacheDir;
  /// --model_revision: the hub cache's revision the names resolve at.
  std::string modelRevision = "main";
  /// The folder whose weights the model starts from ("": fresh weights).
  std::string pretrainedFolder;
  /// --use_lora: PEFT-style adapters on a frozen base (nn::apply_lora);
  /// targets empty until resolved (the model type's default). An adapter
  /// folder as --model_name_or_path sets adapterFolder (its weights are
  /// loaded after the branches are added) and, without --use_lora, the
  /// LoRA settings from its adapter_config.json.
  bool useLora = false, mergeLora = false, useRslora = false;
  int64_t loraR = 8;
  double loraAlpha = 16, loraDropout = 0.05;
  std::vector<std::string> loraTargets, loraModulesToSave;
  /// loraTargets holds one regular expression (an adapter folder's
  /// target_modules given as a string: LoraConfig::target_modules_is_regex).
  bool loraTargetsRegex = false;
  /// PEFT's layers_to_transform and layers_pattern (empty: every layer).
  std::vector<int64_t> loraLayers;
  std::vector<std::string> loraLayersPattern;
  std::string adapterFolder;
  /// --torch_dtype: the frozen base's storage type under --use_lora (f32:
  /// auto and float32).
  DType frozenType = DType::f32;
  /// The base model's name for adapter_config.json (what
  /// --model_name_or_path, or an adapter's config, named; "" from scratch).
  std::string baseModelName;
  // Data.
  std::string tokenizerDir, trainFile, validationFile;
  /// --dataset_name / --dataset_config_name (files under a kiln data dir).
  std::string datasetName, datasetConfigName;
  /// The validation set is the first validationSplitPercentage % of the
  /// training texts (a named data set without a validation split).
  bool splitValidation = false;
  int64_t validationSplitPercentage = 5;
  /// --preprocessing_num_workers as given (tokenizing is single-threaded).
  int64_t preprocessingNumWorkers = 0;
  /// Text files keep each line's "\n" (run_clm's --keep_linebreaks).
  bool keepLinebreaks = true;
  /// "text" | "sst2" | "csv" | "jsonl" (resolved from the file name when
  /// "auto").
  std::string dataset = "auto";
  int64_t blockSize = 32;
  /// Blocks kept of the training / validation data (-1: all), as
  /// run_clm's --max_train_samples / --max_eval_samples.
  int64_t maxTrainSamples = -1, maxEvalSamples = -1;
  /// Lines of the generated corpus when no --train_file is given.
  int64_t defaultCorpusLines = 200;
  // Optimisation.
  int64_t trainBatchSize = 8, evalBatchSize = 8;
  double learningRate = 2e-3, weightDecay = 0, maxGradNorm = 1.0;
  int64_t warmupSteps = 0;
  /// --warmup_ratio: warmup steps = ceil(ratio * total) when warmupSteps is 0.
  double warmupRatio = 0;
  std::string lrSchedulerType = "linear";
  /// --lr_scheduler_kwargs: the schedule's extra arguments (num_cycles,
  /// power, lr_end, timescale, min_lr, min_lr_rate), checked against
  /// lrSchedulerType.
  std::map<std::string, double> lrSchedulerKwargs;
  /// --label_smoothing_factor: the loss's (and the evaluation's, as the
  /// Trainer's LabelSmoother) share of the uniform distribution.
  double labelSmoothingFactor = 0;
  /// --neftune_noise_alpha: NEFTune's noise on the token embeddings in
  /// training (0: none).
  double neftuneNoiseAlpha = 0;
  /// AdamW's betas and epsilon (--adam_beta1, --adam_beta2, --adam_epsilon).
  double adamBeta1 = 0.9, adamBeta2 = 0.999, adamEpsilon = 1e-8;
  /// Micro-batches per optimizer step.
  int64_t gradientAccumulationSteps = 1;
  /// Train, then evaluate on the validation set (--do_train / --do_eval;
  /// neither given: train, and evaluate when there is validation data).
  bool doTrain = true, doEval = false;
  /// When to log the loss, evaluate and save (TrainingArguments' strategies;
  /// best, for saving alone: when an evaluation in training finds a new
  /// best --metric_for_best_model).
  enum class Strategy { no, steps, epoch, best };
  Strategy loggingStrategy = Strategy::steps, evalStrategy = Strategy::no,
           saveStrategy = Strategy::steps;
  /// Steps between evaluations under Strategy::steps (0: loggingSteps).
  int64_t evalSteps = 0;
  /// --eval_delay: no evaluation during training before this many steps
  /// (or epochs, under Strategy::epoch).
  double evalDelay = 0;
  /// Drop each epoch's ragged last batch; else pad it with ignored rows.
  bool dataloaderDropLast = false;
  /// The tqdm-style bar on a terminal (--disable_tqdm turns it off).
  bool progressBar = true;
  /// A data-parallel run's processes and this one's place among them
  /// (kiln::world_size(), world_rank(): set by kiln-train, not a flag).
  /// The batch size above is per process, as the Trainer's per device.
  int worldSize = 1, worldRank = 0;
  /// The arguments kiln-train was started with (argv[1..]): a data-parallel
  /// run's processes must have the same (ProcessAgreement.h).
  std::vector<std::string> commandLine;
  /// --ddp_timeout: each collective's deadline in seconds (0: not given,
  /// KILN_COLLECTIVE_TIMEOUT's or the default; support/CollectiveTimeout.h).
  int64_t ddpTimeoutSeconds = 0;
  /// The run's processes on this machine (WorldPlacement::localSize).
  int localWorldSize = 1;
  /// --deepspeed's zero_optimization.stage: 1 shards the optimizer's state
  /// over the processes (nn::StateSharding::by_parameter), 2 its averaged
  /// gradients too (by_parameter_with_gradients).
  int zeroStage = 0;
  /// --deepspeed's config as read (its values are checked against the
  /// flags once the run's processes are known: matchDeepSpeedConfig).
  std::optional<DeepSpeedConfig> deepSpeed;
  std::string deepSpeedFile;
  double numTrainEpochs = 3;
  int64_t maxSteps = -1;
  int64_t loggingSteps = 10;
  /// --logging_first_step: log after the first step too.
  bool loggingFirstStep = false;
  /// --include_num_input_tokens_seen: logs count the tokens trained on.
  bool includeNumInputTokensSeen = false;
  uint64_t seed = 42;
  /// --data_seed: the data order's seed (absent: seed's).
  std::optional<uint64_t> dataSeed;
  // Checkpoints.
  std::string outputDir;
  /// --resume_from_checkpoint: not given (detect: the newest complete
  /// checkpoint-N of output_dir if there is one and no
  /// --overwrite_output_dir), True (newest: the same, but one must exist),
  /// a folder (path: resumeFromCheckpoint), or False (never).
  enum class Resume { detect, newest, path, never };
  Resume resume = Resume::detect;
  std::string resumeFromCheckpoint;
  /// Start afresh even when output_dir holds checkpoints, deleting them
  /// (all but one that --resume_from_checkpoint names).
  bool overwriteOutputDir = false;
  int64_t saveSteps = 500;
  /// --logging_steps, --eval_steps, --save_steps below 1
  /// (TrainingArguments' ratios): that share of the run's steps, rounded
  /// up, which the Trainer resolves once it knows them (0: the whole
  /// number above applies).
  double loggingStepsRatio = 0, evalStepsRatio = 0, saveStepsRatio = 0;
  /// --load_best_model_at_end: after training, the model of the
  /// checkpoint whose evaluation scored best on metricForBestModel (an
  /// "eval_" key of the evaluation's dict) becomes the final model;
  /// greaterIsBetter says which way is best.
  bool loadBestModelAtEnd = false;
  /// --eval_on_start: one evaluation before the first step (the Trainer's,
  /// a resumed run's too).
  bool evalOnStart = false;
  std::string metricForBestModel = "eval_loss";
  bool greaterIsBetter = false;
  /// Keep at most this many checkpoint-N folders (0: all), deleting the
  /// oldest after each save.
  int64_t saveTotalLimit = 0;
  // Execution.
  bool eager = false;
  /// "reference" | "cpu" | "cuda", or "" when --backend was not given.
  std::string backend;
  /// --cuda_arch ("" : $KILN_CUDA_ARCH, else sm_90) and --tf32 (f32 GEMMs
  /// in TF32 on cuda; exact f32 by default, as PyTorch's).
  std::string cudaArch;
  bool tf32 = false;
  /// --bf16 / --fp16: matrix products on bf16 / f16 inputs
  /// (lazy::Options::productType); f16 adds dynamic loss scaling
  /// (nn::GradScaler). f32: neither flag.
  DType productType = DType::f32;
  /// --auto_find_batch_size: the largest batch up to trainBatchSize whose
  /// step plans within memoryBudget (kiln::largest_planned_batch).
  bool autoFindBatchSize = false;
  /// --memory_budget in bytes: the process's peak (the device's on cuda);
  /// a step's plan gets it less the process's own memory (budgetThePlans).
  std::optional<uint64_t> memoryBudget;
  std::string dumpGraphs;
  /// The persistent compile cache's directory ("" : $KILN_CACHE_DIR).
  std::string cacheDir;
  /// The flags given on the command line, by name ("n_layer", ...).
  std::set<std::string> given;
};

/// argv → the arguments, or the exit status to return: 0 after --help or
/// --version, 2 after a message on stderr for a bad command line.
struct ParseResult {
  TrainArgs args;
  std::optional<int> exitCode;
};
ParseResult parseTrainArgs(int argc, char **argv);

} // namespace kiln::train

#endif // KILN_EXAMPLES_TRAINARGS_H
