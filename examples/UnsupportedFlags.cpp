// The Trainer flags kiln-train knows and does not act on (see
// UnsupportedFlags.h): the table, its llvm::cl options and the check.
#include "examples/UnsupportedFlags.h"

#include <algorithm>

namespace kiln::train {

namespace cl = llvm::cl;

namespace {

// The reasons, one each, so that each row of the table is one line.
constexpr const char *kLauncherRank =
    "kiln-train's processes take their ranks from the MPI launcher "
    "(mpirun -np N kiln-train ...; docs/DATA-PARALLEL.md), not from "
    "--local_rank";
constexpr const char *kNoFsdpConfig =
    "kiln-train reads --fsdp's options alone (shard_grad_op: the "
    "optimizer's state and the gradients sharded; sharded parameters are "
    "not built), and nothing of an FSDP config";
constexpr const char *kMpiExchange =
    "kiln's processes sum every parameter's gradient through MPI each step "
    "(mpirun): there are no unused parameters to find, and no backend to "
    "choose";
constexpr const char *kMainSaves =
    "the main process saves, and every process resumes from its "
    "checkpoints: output_dir must be a folder they all see";
constexpr const char *kNoUpload =
    "kiln-train does not upload; --output_dir holds the model folder "
    "(config.json, model.safetensors, the tokenizer's files) that "
    "push_to_hub would send";
constexpr const char *kNoDownload =
    "kiln-train never downloads: hub names resolve in the local hub cache, "
    "so no token is needed";
constexpr const char *kNoRemoteCode =
    "kiln-train builds GPT-2 and Llama from config.json and runs no model "
    "code of a folder's";
constexpr const char *kDeterministic =
    "kiln's steps are deterministic already: the same seed and flags give "
    "the same losses bit for bit on a backend";
constexpr const char *kNanInfLogged =
    "kiln-train logs a NaN or infinite loss as it is (KILN_CHECK_NUMERICS=1 "
    "names the op that made it; docs/DEBUGGING.md)";
constexpr const char *kTokensAcrossProcesses =
    "kiln-train weights each micro-batch's loss by the tokens of the whole "
    "step on every process, the Trainer's default";
constexpr const char *kResidentBuffers =
    "kiln's runtime keeps its buffers resident between steps by design; "
    "there is no cache of freed blocks to empty";
constexpr const char *kNoCallbacks = "kiln-train has no callbacks";
constexpr const char *kPartitioner =
    "kiln's partitioner chooses what the compiled step saves and "
    "recomputes (elementwise work is recomputed, matrix products and "
    "attention are not); --memory_budget makes it recompute more, layer "
    "by layer, until the step fits";
constexpr const char *kCompiled =
    "kiln compiles each step into one graph already";
constexpr const char *kLoadsAfterBuilding =
    "kiln builds the model, then loads the weights into it";
constexpr const char *kOwnMixedPrecision =
    "kiln's mixed precision (--bf16, --fp16) is its own compiler pass";
constexpr const char *kMemoryFigures =
    "kiln's memory figures are the planned peak (kilnc plan, the banner's "
    "budget) and KILN_PROFILE's";
constexpr const char *kAdamW =
    "kiln-train's optimizer is AdamW (--optim adamw_torch)";
constexpr const char *kWholeFiles =
    "kiln-train reads the data files whole (run_clm.py's default)";
constexpr const char *kOneTokenizer =
    "kiln has one tokenizer per model type, which tokenizes as the "
    "tokenizers library (the fast one) does";
constexpr const char *kNoCache =
    "kiln tokenizes the data afresh on each run; there is no cache";
constexpr const char *kNoWorkers =
    "kiln-train makes its batches in the training process, ahead of the "
    "device; there are no worker processes";
constexpr const char *kRuntimeCopies =
    "the runtime copies batches to the device as it needs them";
constexpr const char *kInputsOnly =
    "kiln's batches hold the model's inputs alone";
constexpr const char *kPerGpuTrain =
    "the Trainer's deprecated name: use --per_device_train_batch_size";
constexpr const char *kPerGpuEval =
    "the Trainer's deprecated name: use --per_device_eval_batch_size";
constexpr const char *kOneLength =
    "every block has --block_size tokens, so there is nothing to group";
constexpr const char *kDataSkip =
    "a resumed run continues on the batches its checkpoint's step reached "
    "(the data order is a function of the seed and the step)";
constexpr const char *kNoPredict =
    "run_clm.py has no prediction step; --do_eval reports eval_loss and "
    "perplexity";
constexpr const char *kTrainingPrecision =
    "evaluation runs in the training's precision: f32 weights, with "
    "--bf16 or --fp16's mixed precision";
constexpr const char *kLossOnly = "evaluation computes the loss alone";
constexpr const char *kNoPredictions =
    "evaluation keeps only the loss on the device; there are no "
    "predictions to move to the host";
constexpr const char *kWholeCheckpoints =
    "kiln's checkpoints keep the optimizer, scaler and random states, so "
    "that a resumed run continues exactly";
constexpr const char *kNoIntegrations =
    "kiln-train has no TensorBoard or W&B writer (--report_to); its logs "
    "are the Trainer's dict lines on stdout and trainer_state.json";
constexpr const char *kOneLevel =
    "kiln-train prints the Trainer's lines at one level";

} // namespace

const std::vector<UnsupportedFlagInfo> &unsupportedFlagTable() {
  using R = FlagResponse;
  // clang-format off
  static const std::vector<UnsupportedFlagInfo> table = {
      // Distribution, uploads and downloads.
      {"local_rank", false, {"-1", "0"}, R::refuse, kLauncherRank},
      {"fsdp_config", false, {""}, R::refuse, kNoFsdpConfig},
      {"ddp_find_unused_parameters", true, {"false"}, R::note, kMpiExchange},
      {"ddp_backend", false, {}, R::note, kMpiExchange},
      {"save_on_each_node", true, {"false"}, R::note, kMainSaves},
      {"push_to_hub", true, {"false"}, R::refuse, kNoUpload},
      {"hub_model_id", false, {""}, R::refuse, kNoUpload},
      {"hub_token", false, {""}, R::refuse, kNoUpload},
      {"token", false, {""}, R::note, kNoDownload},
      {"use_auth_token", true, {"false"}, R::note, kNoDownload},
      // The model, its loss and its optimizer.
      {"trust_remote_code", true, {"false"}, R::refuse, kNoRemoteCode},
      {"gradient_checkpointing", true, {"false"}, R::note, kPartitioner},
      {"gradient_checkpointing_kwargs", false, {""}, R::note, kPartitioner},
      {"torch_compile", true, {"false"}, R::note, kCompiled},
      {"torch_compile_backend", false, {""}, R::note, kCompiled},
      {"torch_compile_mode", false, {""}, R::note, kCompiled},
      {"low_cpu_mem_usage", true, {"false"}, R::note, kLoadsAfterBuilding},
      {"half_precision_backend", false, {"auto"}, R::note, kOwnMixedPrecision},
      {"skip_memory_metrics", true, {"true"}, R::note, kMemoryFigures},
      {"adafactor", true, {"false"}, R::refuse, kAdamW},
      {"full_determinism", true, {"false"}, R::note, kDeterministic},
      {"average_tokens_across_devices", true, {"true"}, R::refuse,
       kTokensAcrossProcesses},
      {"torch_empty_cache_steps", false, {"", "None"}, R::note,
       kResidentBuffers},
      // Data.
      {"streaming", true, {"false"}, R::refuse, kWholeFiles},
      {"use_fast_tokenizer", true, {"true"}, R::note, kOneTokenizer},
      {"overwrite_cache", true, {"false"}, R::note, kNoCache},
      {"dataloader_num_workers", false, {"0"}, R::note, kNoWorkers},
      {"dataloader_pin_memory", true, {"true"}, R::note, kRuntimeCopies},
      {"remove_unused_columns", true, {"true"}, R::note, kInputsOnly},
      {"per_gpu_train_batch_size", false, {}, R::refuse, kPerGpuTrain},
      {"per_gpu_eval_batch_size", false, {}, R::refuse, kPerGpuEval},
      {"group_by_length", true, {"false"}, R::note, kOneLength},
      {"ignore_data_skip", true, {"false"}, R::refuse, kDataSkip},
      // Evaluation and what is kept.
      {"do_predict", true, {"false"}, R::refuse, kNoPredict},
      {"bf16_full_eval", true, {"false"}, R::refuse, kTrainingPrecision},
      {"fp16_full_eval", true, {"false"}, R::refuse, kTrainingPrecision},
      {"prediction_loss_only", true, {"false", "true"}, R::note, kLossOnly},
      {"eval_accumulation_steps", false, {""}, R::note, kNoPredictions},
      {"save_only_model", true, {"false"}, R::refuse, kWholeCheckpoints},
      // Logging.
      {"logging_dir", false, {""}, R::note, kNoIntegrations},
      {"run_name", false, {""}, R::note, kNoIntegrations},
      {"log_level", false, {"passive"}, R::note, kOneLevel},
      {"logging_nan_inf_filter", true, {"false"}, R::note, kNanInfLogged},
      {"restore_callback_states_from_checkpoint", true, {"false"}, R::note,
       kNoCallbacks},
  };
  // clang-format on
  return table;
}

UnsupportedFlags::UnsupportedFlags() {
  for (const UnsupportedFlagInfo &flag : unsupportedFlagTable()) {
    // cl::desc keeps a reference: the text lives as long as the option.
    descriptions_.push_back(std::make_unique<std::string>(
        std::string(flag.response == FlagResponse::refuse ? "refused: "
                                                          : "noted: ") +
        flag.why));
    cl::desc desc(*descriptions_.back());
    if (flag.boolean) {
      booleans_.push_back(std::make_unique<cl::opt<bool>>(
          llvm::StringRef(flag.name), desc, cl::cat(category)));
      values_.push_back(nullptr);
    } else {
      booleans_.push_back(nullptr);
      values_.push_back(std::make_unique<cl::opt<std::string>>(
          llvm::StringRef(flag.name), desc, cl::value_desc("value"),
          cl::cat(category)));
    }
  }
}

std::vector<const cl::opt<bool> *> UnsupportedFlags::booleans() const {
  std::vector<const cl::opt<bool> *> out;
  for (const auto &flag : booleans_)
    if (flag)
      out.push_back(flag.get());
  return out;
}

std::string UnsupportedFlags::check(std::vector<std::string> &notes) const {
  const std::vector<UnsupportedFlagInfo> &table = unsupportedFlagTable();
  for (size_t i = 0; i < table.size(); ++i) {
    const UnsupportedFlagInfo &flag = table[i];
    std::string value;
    if (flag.boolean) {
      if (!booleans_[i]->getNumOccurrences())
        continue;
      value = *booleans_[i] ? "true" : "false";
    } else {
      if (!values_[i]->getNumOccurrences())
        continue;
      value = *values_[i];
    }
    if (std::find(flag.defaultValues.begin(), flag.defaultValues.end(),
                  value) != flag.defaultValues.end())
      continue;
    // A token is a secret: the message names the flag, not the value.
    bool secret =
        !flag.boolean && llvm::StringRef(flag.name).ends_with("token");
    std::string given = "--" + std::string(flag.name) + " " +
                        (flag.boolean ? (value == "true" ? "True" : "False")
                         : secret     ? "<the token>"
                                      : value);
    if (flag.response == FlagResponse::refuse)
      return given + ": " + flag.why;
    notes.push_back(given + ": " + flag.why);
  }
  return "";
}

} // namespace kiln::train
