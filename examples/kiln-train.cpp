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
#include "compiler/MemoryPlanner.h"
#include "examples/HubFolders.h"
#include "examples/Models.h"
#include "examples/ProcessAgreement.h"
#include "examples/TrainArgs.h"
#include "examples/TrainData.h"
#include "examples/Trainer.h"
#include "support/ByteSize.h"
#include "support/CollectiveTimeout.h"
#include "support/Collectives.h"

#include "frontends/data/DataLoader.h"
#include "frontends/data/Files.h"
#include "frontends/data/Tokenizer.h"
#include "frontends/nn/BatchAdvisor.h"
#include "frontends/nn/Checkpoint.h"
#include "frontends/nn/CheckpointFolder.h"
#include "frontends/nn/GradScaler.h"
#include "frontends/nn/Lora.h"
#include "frontends/nn/ModelConfig.h"
#include "frontends/nn/Optimizer.h"
#include "frontends/nn/Safetensors.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace kiln::train {
namespace {

namespace fs = std::filesystem;

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
  // As kilnc: a GPU's settings on another backend are a mistake, not a
  // choice to ignore.
  if (o.backend != Backend::cuda && (!a.cudaArch.empty() || a.tf32))
    throw Failure{std::string(a.tf32 ? "--tf32" : "--cuda_arch") +
                      " needs --backend cuda (the backend is " + backend + ")",
                  2};
  if (!a.cudaArch.empty())
    o.cudaArch = a.cudaArch;
  o.tf32 = o.tf32 || a.tf32;
  // A flag wins over KILN_BF16 / KILN_FP16, `--bf16 False` too.
  if (a.productType != DType::f32)
    o.productType = a.productType;
  else if ((a.given.count("bf16") && o.productType == DType::bf16) ||
           (a.given.count("fp16") && o.productType == DType::f16))
    o.productType = DType::f32;
  check_backend_available(o.backend);
  if (!a.dumpGraphs.empty())
    o.dumpDir = a.dumpGraphs;
  if (!a.cacheDir.empty())
    o.cacheDir = a.cacheDir;
  if (a.given.count("eager")) // `--eager False` wins over KILN_MODE too
    o.mode = a.eager ? Mode::eager : Mode::graph;
  // parseTrainArgs refused these beside --eager; KILN_MODE=eager runs each
  // op at once as well, and would silently drop them.
  if (o.mode == Mode::eager && !a.eager) {
    const char *flag = a.autoFindBatchSize     ? "--auto_find_batch_size"
                       : a.memoryBudget        ? "--memory_budget"
                       : !a.dumpGraphs.empty() ? "--dump_graphs"
                                               : nullptr;
    if (flag)
      throw Failure{std::string(flag) +
                        " applies to compiled steps, and KILN_MODE=eager "
                        "runs each op at once (unset it, or give "
                        "--eager False)",
                    2};
  }
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
// Only a training run resumes (run_clm.py looks for checkpoints under
// do_train alone): an evaluation scores the model it was given, never a
// checkpoint that happens to lie in output_dir.
std::optional<ResumePoint> chooseResumePoint(const TrainArgs &a) {
  using Resume = TrainArgs::Resume;
  if (!a.doTrain) // parseTrainArgs refused --resume_from_checkpoint
    return std::nullopt;
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
  // Every process chooses the same; the main one says so.
  const bool speaks = a.worldRank == 0;
  for (const std::string &skipped : choice->skipped)
    if (speaks)
      warn("skipping the unfinished or damaged checkpoint " + skipped);
  if (!choice->folder) {
    if (a.resume == Resume::newest)
      throw Failure{"--resume_from_checkpoint True: no valid checkpoint "
                    "found in output directory (" +
                        a.outputDir + ")",
                    2};
    return std::nullopt;
  }
  if (a.resume == Resume::detect && speaks)
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
// those steps again an automatic resume would pick them. A checkpoint-N
// folder that is not kiln's is never deleted; one this run could save over
// stops it here, before any training it would cost. A run that does not
// train saves nothing, so it leaves every checkpoint as it is.
void handleOldCheckpoints(const TrainArgs &a, const std::string &resumedFrom,
                          int64_t startStep, int64_t endStep) {
  if (a.outputDir.empty() || !a.doTrain)
    return;
  absl::StatusOr<std::vector<nn::CheckpointFolder>> folders =
      nn::listCheckpointFolders(a.outputDir);
  if (!folders.ok())
    throw outputDirFailure(folders.status());
  for (const nn::CheckpointFolder &folder : *folders) {
    std::error_code ec;
    if (!resumedFrom.empty() && fs::equivalent(folder.path, resumedFrom, ec))
      continue;
    if (!nn::isKilnCheckpointFolder(folder.path)) {
      std::string what = folder.path + " holds no " + nn::kCheckpointFileName +
                         ": not a kiln checkpoint";
      if (folder.step > startStep && folder.step <= endStep &&
          a.saveStrategy != TrainArgs::Strategy::no)
        throw Failure{what + ", and this run would save step " +
                          std::to_string(folder.step) +
                          " over it; move it away or choose another "
                          "--output_dir",
                      2};
      warn(what + "; left alone");
      continue;
    }
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

// What run_clm.py checks before training into an output directory: one
// that holds files but no checkpoint-N is somebody's (a model folder, an
// earlier run's final save) and is refused unless --overwrite_output_dir.
// And whether this process can write there at all, so that a read-only
// folder fails now rather than at the first save, after the training.
void checkOutputDir(const TrainArgs &a) {
  if (a.outputDir.empty())
    return;
  const std::string probePrefix = ".kiln-write-test.";
  std::error_code ec;
  bool holdsFiles = false;
  for (fs::directory_iterator it(a.outputDir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    holdsFiles |= !nn::isCheckpointLeftover(name) &&
                  name.rfind(probePrefix, 0) != 0; // a killed run's probe
  }
  if (ec)
    throw outputDirFailure(absl::InternalError("cannot list " + a.outputDir +
                                               ": " + ec.message()));
  absl::StatusOr<std::vector<nn::CheckpointFolder>> folders =
      nn::listCheckpointFolders(a.outputDir);
  if (!folders.ok())
    throw outputDirFailure(folders.status());
  if (a.doTrain && !a.overwriteOutputDir && holdsFiles && folders->empty())
    throw Failure{"Output directory (" + a.outputDir +
                      ") already exists and is not empty. Use "
                      "--overwrite_output_dir to overcome.",
                  2};
  std::string probe =
      (fs::path(a.outputDir) / (probePrefix + std::to_string(::getpid())))
          .string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw Failure{"--output_dir: cannot write in " + a.outputDir + ": " +
                      std::strerror(errno),
                  2};
  ::close(fd);
  ::unlink(probe.c_str());
}

/// The model family and shape of `folder`'s config.json → `a` (the n_*
/// flags may not contradict it). `flag` names the flag that gave the folder.
void takeConfig(TrainArgs &a, const std::string &flag, const fs::path &folder) {
  fs::path file = folder / "config.json";
  absl::StatusOr<std::string> text = data::readFile(file.string());
  if (!text.ok())
    throw Failure{"--" + flag + ": " + std::string(text.status().message()), 1};
  absl::StatusOr<std::string> type = nn::readModelType(*text, file.string());
  if (!type.ok())
    throw Failure{std::string(type.status().message()), 1};
  if (!type->empty() && *type != "gpt2" && !nn::isLlamaFamily(*type))
    throw Failure{file.string() + ": " + nn::unimplementedModelType(*type), 1};
  for (const char *shape :
       {"n_layer", "n_embd", "n_head", "n_positions", "vocab_size"})
    if (a.given.count(shape))
      throw Failure{"--" + std::string(shape) +
                        ": the model's shape comes "
                        "from " +
                        file.string() + " (--" + flag + "); drop --" + shape,
                    2};
  if (nn::isLlamaFamily(*type)) {
    absl::StatusOr<nn::LlamaConfig> config =
        nn::parseLlamaConfigJson(*text, file.string());
    if (!config.ok())
      throw Failure{std::string(config.status().message()), 1};
    // --dropout given replaces the file's; the config is then final.
    if (a.given.count("dropout"))
      config->attention_dropout = a.dropout;
    a.dropout = config->attention_dropout;
    a.modelType = "llama";
    a.llamaConfig = *config;
    a.nLayer = config->num_hidden_layers, a.nEmbd = config->hidden_size;
    a.nHead = config->num_attention_heads;
    a.nPositions = config->max_position_embeddings;
    a.vocabSize = config->vocab_size;
    return;
  }
  absl::StatusOr<nn::GPT2Config> config =
      nn::parseGPT2ConfigJson(*text, file.string());
  if (!config.ok())
    throw Failure{std::string(config.status().message()), 1};
  // The whole config (its epsilon and three dropouts too); --dropout given
  // replaces the three.
  if (a.given.count("dropout"))
    config->with_dropout(a.dropout);
  a.dropout = config->resid_pdrop;
  a.modelType = "gpt2";
  a.gpt2Config = *config;
  a.nLayer = config->n_layer, a.nEmbd = config->n_embd;
  a.nHead = config->n_head, a.nPositions = config->n_positions;
  a.vocabSize = config->vocab_size;
  // GPT-2's learned positions have no row past n_positions (a Llama's
  // rotary ones take any length, as transformers lets them).
  if (a.blockSize > a.nPositions)
    throw Failure{"--block_size (" + std::to_string(a.blockSize) +
                      ") exceeds the model's n_positions (" +
                      std::to_string(a.nPositions) + ", " + file.string() + ")",
                  2};
}

/// An adapter folder as --model_name_or_path (PEFT's AutoPeftModel): its
/// LoRA settings (unless --use_lora gives them; load_lora_adapter then
/// checks they agree), tokenizer if it has one, and the base model its
/// adapter_config.json names → the base's folder, resolved by `folder`.
template <typename Resolve>
std::string takeAdapter(TrainArgs &a, const std::string &adapterDir,
                        Resolve folder) {
  std::string baseName;
  nn::LoraConfig saved;
  try {
    saved = nn::read_lora_adapter_config(adapterDir, baseName);
  } catch (const Error &e) {
    throw Failure{e.what(), 1};
  }
  if (baseName.empty())
    throw Failure{adapterDir + "/" + nn::kAdapterConfigFile +
                      ": no base_model_name_or_path to load the adapter on",
                  1};
  a.adapterFolder = adapterDir;
  a.baseModelName = baseName;
  // The adapter's settings, but those given on the command line (with or
  // without --use_lora): a given dropout trains with it, a given shape that
  // differs from the adapter's is an error when it loads
  // (check_lora_adapter_config), never silently the adapter's.
  a.useLora = true;
  auto take = [&](const char *flag, auto &field, const auto &value) {
    if (!a.given.count(flag))
      field = value;
  };
  take("lora_r", a.loraR, saved.r);
  take("lora_alpha", a.loraAlpha, saved.alpha);
  take("use_rslora", a.useRslora, saved.use_rslora);
  take("lora_dropout", a.loraDropout, saved.dropout);
  take("lora_target_modules", a.loraTargets, saved.target_modules);
  take("lora_target_modules", a.loraTargetsRegex,
       saved.target_modules_is_regex);
  take("lora_modules_to_save", a.loraModulesToSave, saved.modules_to_save);
  take("lora_layers_to_transform", a.loraLayers, saved.layers_to_transform);
  take("lora_layers_pattern", a.loraLayersPattern, saved.layers_pattern);
  if (a.tokenizerDir.empty() && data::hasTokenizer(adapterDir))
    a.tokenizerDir = adapterDir;
  try {
    return folder("model_name_or_path", baseName);
  } catch (const Failure &failure) {
    // PEFT writes the base as it was given: a relative path is relative to
    // where that run started, most often the adapter's own parent folder.
    fs::path beside = fs::path(adapterDir).parent_path() / baseName;
    std::error_code ec;
    if (fs::path(baseName).is_relative() && fs::is_directory(beside, ec))
      return beside.string();
    throw Failure{adapterDir + "/" + nn::kAdapterConfigFile +
                      " names the base model '" + baseName +
                      "', which is not here: " + failure.message,
                  failure.exitCode};
  }
}

/// Hugging Face names → folders and files, as run_clm.py resolves them but
/// on this machine only (HubFolders.h): the tokenizer, the model's config
/// (and weights), the data set's files.
void resolveHubNames(TrainArgs &a) {
  auto folder = [&](const std::string &flag, const std::string &name) {
    absl::StatusOr<std::string> dir =
        resolveModelFolder(flag, name, a.hubCacheDir, a.modelRevision);
    if (!dir.ok())
      throw Failure{std::string(dir.status().message()), 2};
    return *dir;
  };
  if (!a.tokenizerName.empty())
    a.tokenizerDir = folder("tokenizer_name", a.tokenizerName);
  for (auto [flag, name, weights] :
       {std::tuple{"model_name_or_path", a.modelNameOrPath, true},
        std::tuple{"config_name", a.configName, false}}) {
    if (name.empty())
      continue;
    std::string dir = folder(flag, name);
    if (weights && fs::exists(fs::path(dir) / nn::kAdapterConfigFile))
      dir = takeAdapter(a, dir, folder);
    takeConfig(a, flag, dir);
    if (weights) {
      a.pretrainedFolder = dir;
      if (a.adapterFolder.empty())
        a.baseModelName = name;
    }
    // run_clm.py takes the tokenizer from the model unless one is named.
    if (a.tokenizerDir.empty()) {
      if (!data::hasTokenizer(dir))
        throw Failure{"--" + std::string(flag) + " " + name + ": " + dir +
                          " has no tokenizer.json or vocab.json; name the "
                          "tokenizer with --tokenizer_name",
                      2};
      a.tokenizerDir = dir;
    }
  }
  for (const char *flag :
       {"lora_r", "lora_alpha", "use_rslora", "lora_dropout",
        "lora_target_modules", "lora_modules_to_save",
        "lora_layers_to_transform", "lora_layers_pattern", "merge_lora"})
    if (a.given.count(flag) && !a.useLora)
      throw Failure{"--" + std::string(flag) +
                        " needs --use_lora (or an "
                        "adapter folder as --model_name_or_path)",
                    2};
  if (a.frozenType != DType::f32 && !a.useLora)
    throw Failure{"--torch_dtype " +
                      std::string(nn::torch_dtype_name(a.frozenType)) +
                      " stores a frozen base in 16 bits, so it needs "
                      "--use_lora; full fine-tuning keeps f32 weights "
                      "(--bf16 or --fp16 give mixed precision)",
                  2};
  if (a.useLora && a.loraTargets.empty()) {
    // The folder's own model_type (Phi-3's differs from Llama's).
    const std::string type =
        a.llamaConfig ? a.llamaConfig->model_type : a.modelType;
    a.loraTargets = nn::default_lora_targets(type);
    if (a.loraTargets.empty())
      throw Failure{"--use_lora: no default target modules for model type " +
                        type +
                        " (PEFT has none either); give "
                        "--lora_target_modules (module names, or all-linear)",
                    2};
  }
  if (!a.datasetName.empty()) {
    absl::StatusOr<DatasetFiles> files =
        resolveDataset(a.datasetName, a.datasetConfigName);
    if (!files.ok())
      throw Failure{std::string(files.status().message()), 2};
    a.trainFile = files->train;
    if (a.validationFile.empty())
      a.validationFile = files->validation;
    a.splitValidation =
        a.validationFile.empty() && a.validationSplitPercentage > 0;
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
    throw Failure{"--memory_budget " + formatByteSize(budget) +
                      " is less than the " + formatByteSize(outside) +
                      " this process holds before any step (code, "
                      "libraries, the data set)",
                  1};
  Options o = options();
  o.memoryBudgetBytes = budget - outside;
  set_options(o);
  std::fprintf(stderr,
               "kiln-train: memory budget %s: %s held outside any step "
               "(code, libraries, data), %s for the step's plan\n",
               formatByteSize(budget).c_str(), formatByteSize(outside).c_str(),
               formatByteSize(o.memoryBudgetBytes).c_str());
}

/// --auto_find_batch_size without --memory_budget, as the Trainer's flag is
/// written: the plans get what this machine has for them (memory_for_plans:
/// the GPU's free memory on cuda, within KILN_DEVICE_MEMORY_LIMIT; the
/// host's available memory on cpu, which already leaves out what this
/// process holds), as the Trainer fills the GPU it finds.
void budgetFromTheMachine(const TrainArgs &args) {
  if (!args.autoFindBatchSize || args.memoryBudget)
    return;
  Options o = options();
  // The run's processes on this machine share what it has.
  const uint64_t machine = memory_for_plans();
  o.memoryBudgetBytes = machine / uint64_t(args.localWorldSize);
  set_options(o);
  if (args.worldRank != 0)
    return;
  std::string share =
      args.localWorldSize == 1
          ? "the " + formatByteSize(machine)
          : absl::StrFormat("%s, 1/%d of the %s",
                            formatByteSize(o.memoryBudgetBytes),
                            args.localWorldSize, formatByteSize(machine));
  std::fprintf(
      stderr,
      "kiln-train: auto_find_batch_size: no --memory_budget: the "
      "step plans within %s this machine has for the %s "
      "backend's programs%s\n",
      share.c_str(), std::string(backendName(o.backend)).c_str(),
      args.localWorldSize == 1
          ? ""
          : absl::StrFormat(" (%d processes on it)", args.localWorldSize)
                .c_str());
}

/// A data-parallel run's batch under --auto_find_batch_size: the smallest
/// of the processes' (each planned its own step: ZeRO's shards and what
/// each holds outside its plans differ), so that every process's fits and
/// all run the same batch.
int64_t agreeOnBatch(const TrainArgs &args, int64_t batch) {
  if (args.worldSize == 1)
    return batch;
  std::vector<int64_t> batches(size_t(args.worldSize), 0);
  batches[size_t(args.worldRank)] = batch;
  if (absl::Status status = allReduceSumInPlace(
          batches.data(), int64_t(batches.size()), DType::i64);
      !status.ok())
    throw Failure{"--auto_find_batch_size: " + std::string(status.message()),
                  1};
  if (args.worldRank == 0)
    std::fprintf(stderr,
                 "kiln-train: auto_find_batch_size: the %d processes' "
                 "largest batches: %s\n",
                 args.worldSize, absl::StrJoin(batches, ", ").c_str());
  return *std::min_element(batches.begin(), batches.end());
}

/// --auto_find_batch_size: the largest per-device batch, up to the one
/// asked, whose training step plans within the plans' share of
/// --memory_budget (budgetThePlans). Each probe
/// traces the step (forward, backward, clipping, AdamW) on a model of the
/// run's shape with a probe optimizer, and is planned, never run.
int64_t findBatchSize(const TrainArgs &args, const PreparedData &data) {
  std::unique_ptr<nn::CausalLM> probeModel = buildModel(modelSpec(
      args, args.vocabSize ? args.vocabSize : data.tokenizer->vocabSize()));
  nn::CausalLM &model = *probeModel;
  model.train();
  nn::TrainingStepShape shape;
  shape.seq = args.blockSize;
  shape.optimizer = adamOptions(args, model);
  shape.max_grad_norm = args.maxGradNorm;
  // The plans' budget (budgetThePlans): the process's less its own memory.
  std::string budget = formatByteSize(options().memoryBudgetBytes);
  int64_t batch = nn::largest_trainable_batch(
      model, model.named_parameters(), args.trainBatchSize,
      /*first=*/args.trainBatchSize, shape,
      [&](int64_t probed, std::optional<uint64_t> peak) {
        if (args.worldRank != 0) // the main process speaks for the run
          return;
        std::string verdict =
            peak && *peak <= options().memoryBudgetBytes
                ? "plans " + formatByteSize(*peak) + ": fits " + budget
                : "does not fit " + budget +
                      (peak ? " (plans " + formatByteSize(*peak) + ")"
                            : " even with recomputation");
        std::fprintf(stderr,
                     "kiln-train: auto_find_batch_size: batch %lld %s\n",
                     (long long)probed, verdict.c_str());
      });
  batch = agreeOnBatch(args, batch);
  if (batch == 0)
    throw Failure{"--auto_find_batch_size: not even batch 1 plans within " +
                      std::string(args.memoryBudget ? "--memory_budget"
                                                    : "the memory available") +
                      " (the step's smallest planned peak is over it)",
                  1};
  if (args.worldRank == 0)
    std::fprintf(stderr,
                 "kiln-train: auto_find_batch_size: training with batch "
                 "%lld\n",
                 (long long)batch);
  return batch;
}

/// Data parallelism: this process's place among those a launcher (mpirun)
/// started, joined here. The others print nothing on stdout and draw no
/// bar: the main process (rank 0) logs and saves, as the Trainer's.
void joinTheRun(TrainArgs &args) {
  try {
    args.worldSize = world_size();
    args.worldRank = world_rank();
  } catch (const Error &error) {
    throw Failure{error.what(), 1};
  }
  if (args.worldSize == 1)
    return;
  // Before the first collective (the command lines' sums below); the flag
  // wins over KILN_COLLECTIVE_TIMEOUT, which joining the world read.
  if (args.ddpTimeoutSeconds > 0)
    setCollectiveTimeout(
        {absl::Seconds(args.ddpTimeoutSeconds),
         "--ddp_timeout " + std::to_string(args.ddpTimeoutSeconds)});
  // world_size() read the same variables without an error.
  args.localWorldSize = launcherPlacement()->localSize;
  if (options().backend == Backend::cuda)
    throw Failure{"data parallelism (" + std::to_string(args.worldSize) +
                      " processes) runs on the cpu backend so far: the cuda "
                      "runtime has no all-reduce yet",
                  2};
  if (args.worldRank != 0) {
    args.progressBar = false;
    if (!std::freopen("/dev/null", "w", stdout))
      throw Failure{"cannot silence a secondary process's stdout", 1};
  }
  requireOneCommand(args);
}

/// --deepspeed's values against the flags, as the Trainer checks them once
/// it knows the processes: "auto" took the flag's; a number must equal it.
void matchDeepSpeedConfig(const TrainArgs &args) {
  if (!args.deepSpeed)
    return;
  std::map<std::string, double> flags = {
      {"gradient_accumulation_steps", double(args.gradientAccumulationSteps)},
      {"max_grad_norm", args.maxGradNorm},
      {"learning_rate", args.learningRate},
      {"adam_beta1", args.adamBeta1},
      {"adam_beta2", args.adamBeta2},
      {"adam_epsilon", args.adamEpsilon},
      {"weight_decay", args.weightDecay},
      {"fp16", options().productType == DType::f16 ? 1.0 : 0.0},
      {"bf16", options().productType == DType::bf16 ? 1.0 : 0.0}};
  // The batch is the advisor's to choose under --auto_find_batch_size.
  if (!args.autoFindBatchSize) {
    flags["per_device_train_batch_size"] = double(args.trainBatchSize);
    flags["train_batch_size"] = double(args.worldSize) *
                                double(args.trainBatchSize) *
                                double(args.gradientAccumulationSteps);
  }
  std::string mismatches = deepSpeedMismatches(*args.deepSpeed, flags);
  if (!mismatches.empty())
    throw Failure{"--deepspeed " + args.deepSpeedFile +
                      ": these values differ from the Trainer's flags (make "
                      "them \"auto\", or pass the flags):\n" +
                      mismatches.substr(0, mismatches.size() - 1),
                  2};
}

/// The output folders, made before anything runs so that a bad path fails
/// at once, not after the training it would have saved; then what killed
/// saves left is tidied before anything looks for checkpoints. By the main
/// process alone, the others waiting for it.
void prepareOutputDirs(const TrainArgs &args) {
  if (args.worldRank == 0) {
    // The graphs' folder may come from KILN_DUMP_GRAPHS (options_from_env):
    // checked here too, not at the first step's compile.
    std::string dumps = args.eager ? "" : options().dumpDir;
    for (auto [source, dir] :
         {std::pair{"--output_dir", args.outputDir},
          std::pair{args.dumpGraphs.empty() ? "KILN_DUMP_GRAPHS"
                                            : "--dump_graphs",
                    dumps}}) {
      std::error_code ec;
      if (!dir.empty() && !fs::create_directories(dir, ec) && ec)
        throw Failure{std::string(source) + ": cannot create " + dir + ": " +
                          ec.message(),
                      2};
    }
    if (!args.outputDir.empty()) {
      absl::StatusOr<std::vector<std::string>> notes =
          nn::recoverCheckpointFolders(args.outputDir);
      if (!notes.ok())
        throw outputDirFailure(notes.status());
      for (const std::string &note : *notes)
        warn(note);
    }
  }
  barrier();
}

int runMain(const TrainArgs &askedArgs) {
  TrainArgs args = askedArgs;
  configureKiln(args);
  joinTheRun(args);
  matchDeepSpeedConfig(args);
  prepareOutputDirs(args);
  checkOutputDir(args);
  resolveHubNames(args);
  if (args.preprocessingNumWorkers > 1)
    std::fprintf(stderr,
                 "kiln-train: note: --preprocessing_num_workers %lld: kiln "
                 "tokenizes on one thread\n",
                 (long long)args.preprocessingNumWorkers);
  PreparedData data;
  if (auto failure = prepareData(args, data))
    throw *failure;
  if (auto failure = checkAgainstData(args, data))
    throw *failure;
  requireOneDataSet(args, data);
  if (args.given.count("do_eval") && args.doEval &&
      !(data.eval && data.eval->numBlocks() > 0)) {
    if (!args.validationFile.empty())
      throw Failure{"--do_eval: --validation_file " + args.validationFile +
                        " gives no block of " + std::to_string(args.blockSize) +
                        " tokens (too little text, or no records)",
                    2};
    throw Failure{"--do_eval needs validation data of at least one block: "
                  "--validation_file, or a --dataset_name with a validation "
                  "split (else --validation_split_percentage of its training "
                  "texts)",
                  2};
  }
  budgetThePlans(args);
  budgetFromTheMachine(args);
  if (args.autoFindBatchSize)
    args.trainBatchSize = findBatchSize(args, data);
  // After the advisor's probe model: the run's weights do not depend on it.
  manual_seed(args.seed);
  Trainer trainer(args, data);
  std::optional<ResumePoint> resumePoint = chooseResumePoint(args);
  if (resumePoint)
    trainer.resume(resumePoint->dir, std::move(resumePoint->file));
  // Only once the run has started well: a typo must not cost checkpoints.
  // By the main process, once every process has read its checkpoint.
  barrier();
  if (args.worldRank == 0)
    handleOldCheckpoints(args, resumePoint ? resumePoint->dir : "",
                         trainer.step(), trainer.lastStep());
  trainer.run();
  if (args.worldRank == 0)
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
  // A failing process of a data-parallel run ends the others too
  // (abort_processes), which would otherwise wait for it in their next sum.
  try {
    return runMain(parsed.args);
  } catch (const Failure &failure) {
    std::fprintf(stderr, "kiln-train: error: %s\n", failure.message.c_str());
    kiln::abort_processes(failure.exitCode);
  } catch (const kiln::Error &error) {
    std::fprintf(stderr, "kiln-train: error: %s\n", error.what());
    kiln::abort_processes(1);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "kiln-train: error: %s\n", error.what());
    kiln::abort_processes(1);
  }
}
