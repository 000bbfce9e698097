// Declares kiln-train's flags (llvm::cl, in a struct so nothing lives at file
// scope), parses argv and validates every value against the others (see
// TrainArgs.h). Flag names are Hugging Face's, underscores included, so a
// run_clm.py command line carries over.
#include "examples/TrainArgs.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

namespace kiln::train {
namespace {

namespace cl = llvm::cl;

// The flags, declared in --help order. Members are constructed in order,
// so the category exists before the options that name it.
struct Flags {
  cl::OptionCategory model{"Model (GPT-2 configuration)"};
  cl::opt<std::string> modelType{"model_type",
                                 cl::desc("model family (default: gpt2)"),
                                 cl::init("gpt2"), cl::cat(model)};
  cl::opt<long> nLayer{"n_layer", cl::desc("transformer blocks (default: 2)"),
                       cl::init(2), cl::cat(model)};
  cl::opt<long> nEmbd{"n_embd", cl::desc("hidden size (default: 64)"),
                      cl::init(64), cl::cat(model)};
  cl::opt<long> nHead{"n_head", cl::desc("attention heads (default: 4)"),
                      cl::init(4), cl::cat(model)};
  cl::opt<long> nPositions{"n_positions",
                           cl::desc("maximum sequence length (default: 128)"),
                           cl::init(128), cl::cat(model)};
  cl::opt<long> vocabSize{
      "vocab_size",
      cl::desc("embedding rows (default: the tokenizer's vocabulary)"),
      cl::init(0), cl::cat(model)};
  cl::opt<double> dropout{
      "dropout", cl::desc("resid/embd/attn dropout probability (default: 0.1)"),
      cl::init(0.1), cl::cat(model)};

  cl::OptionCategory data{"Data"};
  cl::opt<std::string> tokenizerDir{
      "tokenizer_dir",
      cl::desc("directory with tokenizer.json or vocab.json + merges.txt "
               "(default: byte-level tokenizer, vocabulary 256)"),
      cl::value_desc("dir"), cl::cat(data)};
  cl::opt<std::string> trainFile{
      "train_file",
      cl::desc("training data (default: a generated demo corpus)"),
      cl::value_desc("file"), cl::cat(data)};
  cl::opt<std::string> validationFile{"validation_file",
                                      cl::desc("evaluation data"),
                                      cl::value_desc("file"), cl::cat(data)};
  cl::opt<std::string> dataset{
      "dataset",
      cl::desc("format of the data files: text | sst2 | jsonl (default: "
               "from the extension: .tsv sst2, .jsonl/.json jsonl, else text)"),
      cl::init("auto"), cl::cat(data)};
  cl::opt<long> blockSize{
      "block_size", cl::desc("tokens per training sequence (default: 32)"),
      cl::init(32), cl::cat(data)};
  cl::opt<long> maxTrainSamples{
      "max_train_samples",
      cl::desc("use only the first N training blocks (default: all)"),
      cl::init(-1), cl::cat(data)};
  cl::opt<long> maxEvalSamples{
      "max_eval_samples",
      cl::desc("use only the first N validation blocks (default: all)"),
      cl::init(-1), cl::cat(data)};
  cl::opt<long> corpusLines{
      "default_corpus_lines",
      cl::desc(
          "lines of the generated corpus (no --train_file) (default: 200)"),
      cl::init(200), cl::cat(data)};

  cl::OptionCategory training{"Training"};
  cl::opt<long> trainBatch{"per_device_train_batch_size",
                           cl::desc("sequences per training step (default: 8)"),
                           cl::init(8), cl::cat(training)};
  cl::opt<long> evalBatch{
      "per_device_eval_batch_size",
      cl::desc("sequences per evaluation step (default: 8)"), cl::init(8),
      cl::cat(training)};
  cl::opt<double> learningRate{
      "learning_rate", cl::desc("AdamW peak learning rate (default: 2e-3)"),
      cl::init(2e-3), cl::cat(training)};
  cl::opt<double> weightDecay{"weight_decay",
                              cl::desc("AdamW weight decay (not on biases and "
                                       "LayerNorm weights) (default: 0.0)"),
                              cl::init(0.0), cl::cat(training)};
  cl::opt<double> maxGradNorm{
      "max_grad_norm",
      cl::desc("gradient clipping norm (0: none) (default: 1.0)"),
      cl::init(1.0), cl::cat(training)};
  cl::opt<long> warmupSteps{"warmup_steps",
                            cl::desc("linear warmup steps (default: 0)"),
                            cl::init(0), cl::cat(training)};
  cl::opt<std::string> scheduler{
      "lr_scheduler_type",
      cl::desc("linear | cosine | constant | constant_with_warmup (default: "
               "linear)"),
      cl::init("linear"), cl::cat(training)};
  cl::opt<double> epochs{
      "num_train_epochs",
      cl::desc("epochs (when --max_steps is not set) (default: 3.0)"),
      cl::init(3.0), cl::cat(training)};
  cl::opt<long> maxSteps{
      "max_steps",
      cl::desc("total training steps (overrides epochs) (default: -1)"),
      cl::init(-1), cl::cat(training)};
  cl::opt<long> loggingSteps{
      "logging_steps", cl::desc("steps between loss log lines (default: 10)"),
      cl::init(10), cl::cat(training)};
  cl::opt<unsigned long> seed{
      "seed", cl::desc("seed of weights, dropout, shuffling (default: 42)"),
      cl::init(42), cl::cat(training)};

  cl::OptionCategory checkpoints{"Checkpoints"};
  cl::opt<std::string> outputDir{
      "output_dir", cl::desc("where checkpoints and the final model go"),
      cl::value_desc("dir"), cl::cat(checkpoints)};
  cl::opt<long> saveSteps{
      "save_steps",
      cl::desc("steps between checkpoints in output_dir/checkpoint-N (0: none) "
               "(default: 0)"),
      cl::init(0), cl::cat(checkpoints)};
  cl::opt<std::string> resume{
      "resume_from_checkpoint",
      cl::desc("checkpoint folder to continue from; True: the newest "
               "complete checkpoint-N in output_dir; False: start afresh "
               "(default: the newest complete one if output_dir has any)"),
      cl::value_desc("dir"), cl::cat(checkpoints)};
  cl::opt<bool> overwriteOutputDir{
      "overwrite_output_dir",
      cl::desc("train from scratch even when output_dir holds checkpoints, "
               "deleting them (default: resume from the newest)"),
      cl::cat(checkpoints)};
  cl::opt<long> saveTotalLimit{
      "save_total_limit",
      cl::desc("keep at most N checkpoints, deleting the oldest (0: all) "
               "(default: 0)"),
      cl::init(0), cl::cat(checkpoints)};

  cl::OptionCategory execution{"Execution"};
  cl::opt<bool> eager{"eager",
                      cl::desc("run each op at once as its own kernel, the "
                               "baseline without graph compilation (default: "
                               "$KILN_MODE, else graph mode)"),
                      cl::cat(execution)};
  // cl::desc keeps a reference: the text must outlive the option.
  std::string backendHelp = std::string("reference | cpu | cuda (default: "
                                        "$KILN_BACKEND, else ") +
                            kDefaultBackend + ")";
  cl::opt<std::string> backend{"backend", cl::desc(backendHelp),
                               cl::init(kDefaultBackend), cl::cat(execution)};
  cl::opt<std::string> cudaArch{
      "cuda_arch",
      cl::desc("GPU architecture for --backend cuda: sm_80 | sm_90 (default: "
               "$KILN_CUDA_ARCH, else sm_90)"),
      cl::cat(execution)};
  cl::opt<bool> tf32{"tf32",
                     cl::desc("--backend cuda: f32 matrix products in TF32 "
                              "(default: exact f32, as PyTorch)"),
                     cl::cat(execution)};
  cl::opt<bool> bf16{"bf16",
                     cl::desc("mixed precision: matrix products in bf16 "
                              "with f32 sums (PyTorch's autocast); weights, "
                              "optimizer and loss stay f32 (default: "
                              "$KILN_BF16=1, else f32)"),
                     cl::cat(execution)};
  cl::opt<bool> autoFindBatchSize{
      "auto_find_batch_size",
      cl::desc("train with the largest per-device batch, up to "
               "--per_device_train_batch_size, whose step's planned peak "
               "fits --memory_budget (planned, not run: no out-of-memory "
               "trials)"),
      cl::cat(execution)};
  cl::opt<bool> fp16{"fp16",
                     cl::desc("mixed precision: matrix products in f16 with "
                              "f32 sums and dynamic loss scaling (PyTorch's "
                              "autocast + GradScaler: an overflow skips the "
                              "step and halves the scale); weights, "
                              "optimizer and loss stay f32 (default: "
                              "$KILN_FP16=1, else f32)"),
                     cl::cat(execution)};
  cl::opt<std::string> memoryBudget{
      "memory_budget",
      cl::desc("the process's peak memory, e.g. 8GiB (on --backend cuda "
               "the device's): a compiled step plans within it less what "
               "the process holds outside any step, recomputing "
               "activations if it must; one that cannot fails before it "
               "runs, naming its largest buffers"),
      cl::value_desc("bytes"), cl::cat(execution)};
  cl::opt<std::string> cacheDir{
      "cache_dir",
      cl::desc("persistent compile cache (default: $KILN_CACHE_DIR, if set)"),
      cl::value_desc("dir"), cl::cat(execution)};
  cl::opt<std::string> dumpGraphs{
      "dump_graphs",
      cl::desc("write every distinct graph and a manifest here, for "
               "kilnc precompile (default: $KILN_DUMP_GRAPHS)"),
      cl::value_desc("dir"), cl::cat(execution)};

  std::vector<const cl::OptionCategory *> categories() const {
    return {&model, &data, &training, &checkpoints, &execution};
  }
  std::vector<const cl::opt<bool> *> booleans() const {
    return {&overwriteOutputDir, &eager, &tf32, &bf16, &fp16,
            &autoFindBatchSize};
  }
};

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
  a.maxGradNorm = f.maxGradNorm, a.warmupSteps = f.warmupSteps;
  a.lrSchedulerType = f.scheduler, a.numTrainEpochs = f.epochs;
  a.maxSteps = f.maxSteps, a.loggingSteps = f.loggingSteps, a.seed = f.seed;
  a.outputDir = f.outputDir, a.saveSteps = f.saveSteps;
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
  if (a.modelType != "gpt2")
    return "unknown --model_type '" + a.modelType + "'; expected gpt2";
  if (a.nEmbd % a.nHead != 0)
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
  if (a.blockSize > a.nPositions)
    return "--block_size (" + std::to_string(a.blockSize) +
           ") exceeds the model's --n_positions (" +
           std::to_string(a.nPositions) + ")";
  static const std::set<std::string> datasets = {"auto", "text", "sst2",
                                                 "jsonl"};
  if (!datasets.count(a.dataset))
    return "unknown --dataset '" + a.dataset +
           "'; expected text, sst2 or jsonl";
  namespace fs = std::filesystem;
  std::error_code ec;
  using File = std::pair<const char *, std::string>;
  for (auto [flag, path] : std::initializer_list<File>{
           {"train_file", a.trainFile}, {"validation_file", a.validationFile}})
    if (!path.empty() && !fs::is_regular_file(path, ec))
      return "--" + std::string(flag) + ": no such file: " + path;
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
  static const std::set<std::string> schedulers = {
      "linear", "cosine", "constant", "constant_with_warmup"};
  if (!schedulers.count(a.lrSchedulerType))
    return "unknown --lr_scheduler_type '" + a.lrSchedulerType +
           "'; expected linear, cosine, constant or constant_with_warmup";
  if (a.maxSteps == 0 || a.maxSteps < -1)
    return "--max_steps must be positive (or -1: use --num_train_epochs), "
           "got " +
           str(a.maxSteps);
  if (a.maxSteps < 0 && !(a.numTrainEpochs > 0 && a.numTrainEpochs < 1e6))
    return "--num_train_epochs must be positive, got " +
           std::to_string(a.numTrainEpochs);
  if (a.loggingSteps < 1)
    return "--logging_steps must be positive, got " + str(a.loggingSteps);
  if (a.saveSteps < 0)
    return "--save_steps must not be negative, got " + str(a.saveSteps);
  if (a.saveSteps > 0 && a.outputDir.empty())
    return "--save_steps needs --output_dir";
  if (a.saveTotalLimit < 0)
    return "--save_total_limit must not be negative, got " +
           str(a.saveTotalLimit);
  std::error_code ec;
  if (a.resume == TrainArgs::Resume::path &&
      !std::filesystem::is_directory(a.resumeFromCheckpoint, ec))
    return "--resume_from_checkpoint: no such directory: " +
           a.resumeFromCheckpoint;
  if (a.resume == TrainArgs::Resume::newest && a.outputDir.empty())
    return "--resume_from_checkpoint True needs --output_dir (the folder "
           "whose newest checkpoint-N to resume from)";
  if (!a.backend.empty() && a.backend != "reference" && a.backend != "cpu" &&
      a.backend != "cuda")
    return "unknown --backend '" + a.backend +
           "'; expected reference, cpu or cuda";
  if (!a.cudaArch.empty() && a.cudaArch != "sm_80" && a.cudaArch != "sm_90")
    return "unknown --cuda_arch '" + a.cudaArch + "'; expected sm_80 or sm_90";
  return "";
}

} // namespace

std::optional<uint64_t> parseByteSize(const std::string &text) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0)
    return std::nullopt;
  std::string unit(end);
  static const std::pair<const char *, double> units[] = {
      {"", 1},       {"B", 1},         {"K", 1e3},      {"KB", 1e3},
      {"M", 1e6},    {"MB", 1e6},      {"G", 1e9},      {"GB", 1e9},
      {"KiB", 1024}, {"MiB", 1 << 20}, {"GiB", 1 << 30}};
  for (auto [name, scale] : units)
    if (unit == name && value * scale < 1.8e19)
      return uint64_t(value * scale);
  return std::nullopt;
}

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
  if (!cl::ParseCommandLineOptions(
          int(argPointers.size()), argPointers.data(),
          "kiln-train: GPT-2 language-model training with kiln, in the style "
          "of Hugging Face's run_clm.py and Trainer\n",
          &llvm::errs())) {
    result.exitCode = 2;
    return result;
  }
  result.args = copyFlags(flags);
  TrainArgs &a = result.args;
  std::string problem = checkModelAndData(a);
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
  if (problem.empty() && a.autoFindBatchSize && !a.memoryBudget)
    problem = "--auto_find_batch_size needs --memory_budget SIZE (the "
              "memory the step may plan, e.g. 16GiB)";
  if (problem.empty() && a.autoFindBatchSize && a.eager)
    problem = "--auto_find_batch_size plans compiled steps; it does not "
              "apply to --eager";
  if (!problem.empty())
    result.exitCode = usageError(problem);
  return result;
}

} // namespace kiln::train
