// `kilnc plan`: the batch advisor from the command line. A Hugging Face
// config.json (GPT-2 or Llama) gives the model; its training step (loss,
// backward, clipping, AdamW; LoRA's when asked) is traced and planned for
// the target, never run, so the answer for a GPU comes on a machine without
// one: `kilnc plan --max_batch --config DIR --block_size 512
// --memory_budget 16GiB --backend cuda --bf16`.
#include "compiler/MemoryPlanner.h"
#include "compiler/tools/KilncCommon.h"
#include "support/ByteSize.h"

#include "frontends/nn/AutoModel.h"
#include "frontends/nn/BatchAdvisor.h"
#include "frontends/nn/Lora.h"
#include "frontends/nn/ModelConfig.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace kiln::kilnc {
namespace {

/// A positive integer flag, or `fallback` when absent; nullopt (after a
/// message) when malformed.
std::optional<int64_t> positiveFlag(const Args &args, const std::string &flag,
                                    int64_t fallback) {
  if (!args.has(flag))
    return fallback;
  std::string text = args.get(flag);
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1) {
    fail(flag + ": expected a positive integer, got '" + text + "'",
         kExitUsage);
    return std::nullopt;
  }
  return int64_t(value);
}

std::string describeTarget(const compiler::KeyOptions &key) {
  std::string target = key.backend == compiler::Backend::cuda
                           ? "cuda " + key.cudaArch
                           : std::string("cpu");
  if (key.productType == DType::bf16)
    target += ", bf16";
  else if (key.productType == DType::f16)
    target += ", fp16";
  return target;
}

} // namespace

int runPlan(int argc, char **argv) {
  std::set<std::string> valued = {"--config",
                                  "--block_size",
                                  "--batch",
                                  "--batch_limit",
                                  "--memory_budget",
                                  "--memory-budget",
                                  "--max_grad_norm",
                                  "--lora_r",
                                  "--lora_target_modules",
                                  "--lora_alpha",
                                  "--lora_dropout",
                                  "--torch_dtype",
                                  "--lora_modules_to_save"};
  valued.insert(kTargetFlags.begin(), kTargetFlags.end());
  std::set<std::string> switches = {"--max_batch", "--use_lora"};
  switches.insert(kTargetSwitches.begin(), kTargetSwitches.end());
  std::optional<Args> args = parseArgs(argc, argv, 2, valued, switches);
  if (!args)
    return kExitUsage;
  if (args->has("--help"))
    return usage(0);
  if (!args->positional.empty())
    return fail("plan: unexpected argument '" + args->positional[0] +
                    "' (the model is --config)",
                kExitUsage);
  if (!args->has("--config"))
    return fail("plan: --config (a config.json or a model folder) is "
                "required",
                kExitUsage);
  if (args->has("--max_batch") && args->has("--batch"))
    return fail("plan: give one of --max_batch and --batch N, not both",
                kExitUsage);
  if (!args->has("--max_batch") && !args->has("--batch"))
    return fail("plan: give --max_batch (the largest batch that fits "
                "--memory_budget) or --batch N (one batch's planned peak)",
                kExitUsage);
  if (args->has("--batch_limit") && !args->has("--max_batch"))
    return fail("plan: --batch_limit bounds --max_batch's search; with "
                "--batch N it has nothing to bound",
                kExitUsage);
  compiler::KeyOptions key;
  if (!parseTargetFlags(*args, key))
    return kExitUsage;
  std::optional<uint64_t> budget = memoryBudgetFlag(*args);
  if (!budget)
    return kExitUsage;
  if (args->has("--max_batch") && *budget == 0)
    return fail("plan --max_batch needs --memory_budget", kExitUsage);
  std::optional<int64_t> limit = positiveFlag(*args, "--batch_limit", 1024);
  std::optional<int64_t> batch = positiveFlag(*args, "--batch", 1);
  std::optional<int64_t> loraR = positiveFlag(*args, "--lora_r", 8);
  if (!limit || !batch || !loraR)
    return kExitUsage;
  if (*loraR > nn::kMaxLoraRank)
    return fail("--lora_r: at most " + std::to_string(nn::kMaxLoraRank),
                kExitUsage);
  std::string clipText = args->get("--max_grad_norm", "1");
  char *clipEnd = nullptr;
  double maxGradNorm = std::strtod(clipText.c_str(), &clipEnd);
  if (clipText.empty() || *clipEnd != '\0' || !(maxGradNorm >= 0))
    return fail("--max_grad_norm: expected a number >= 0 (0: no clipping), "
                "got '" + clipText + "'",
                kExitUsage);

  // run_clm's --torch_dtype: the frozen base's storage under --use_lora.
  std::optional<DType> storage =
      nn::parse_torch_dtype(args->get("--torch_dtype", "auto"));
  if (!storage)
    return fail("--torch_dtype: expected auto, float32, bfloat16 or float16, "
                "got '" + args->get("--torch_dtype") + "'",
                kExitUsage);
  if (*storage != DType::f32 && !args->has("--use_lora"))
    return fail("--torch_dtype " + args->get("--torch_dtype") +
                    " stores a frozen base in 16 bits: it needs --use_lora",
                kExitUsage);
  for (const char *flag : {"--lora_r", "--lora_target_modules", "--lora_alpha",
                           "--lora_dropout", "--lora_modules_to_save"})
    if (args->has(flag) && !args->has("--use_lora"))
      return fail(std::string(flag) + " needs --use_lora", kExitUsage);
  // kiln-train's LoRA flags: the dropout's masks are in the plan; alpha
  // scales the branch and changes nothing planned, but is checked as
  // kiln-train checks it.
  auto number = [&](const char *flag, double fallback) {
    if (!args->has(flag))
      return fallback;
    std::string text = args->get(flag);
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    return text.empty() || *end != '\0' ? std::nan("") : value;
  };
  const double loraAlpha = number("--lora_alpha", 2.0 * double(*loraR));
  const double loraDropout = number("--lora_dropout", 0.05);
  if (!(loraAlpha > 0) || !std::isfinite(loraAlpha))
    return fail("--lora_alpha: expected a positive number, got '" +
                    args->get("--lora_alpha") + "'",
                kExitUsage);
  if (!(loraDropout >= 0 && loraDropout < 1))
    return fail("--lora_dropout: expected a number in [0, 1), got '" +
                    args->get("--lora_dropout") + "'",
                kExitUsage);

  std::string path = args->get("--config");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    // An adapter folder holds no model config: kiln-train loads the base
    // its adapter_config.json names, and so must the plan.
    if (!std::filesystem::exists(path + "/config.json", ec) &&
        std::filesystem::exists(path + "/" + nn::kAdapterConfigFile, ec)) {
      std::string base;
      try {
        nn::LoraConfig adapter = nn::read_lora_adapter_config(path, base);
        return fail(path +
                        " is a LoRA adapter folder: plan its base, --config " +
                        (base.empty() ? std::string("BASE") : base) +
                        " --use_lora --lora_r " + std::to_string(adapter.r) +
                        " --lora_target_modules " +
                        (adapter.target_modules_is_regex
                             ? "<the modules matching '" +
                                   adapter.target_modules.front() + "'>"
                             : absl::StrJoin(adapter.target_modules, ",")) +
                        (adapter.modules_to_save.empty()
                             ? std::string()
                             : " --lora_modules_to_save " +
                                   absl::StrJoin(adapter.modules_to_save, ",")),
                    kExitUsage);
      } catch (const Error &e) {
        return fail(e.what());
      }
    }
    path += "/config.json";
  }
  auto text = llvm::MemoryBuffer::getFile(path);
  if (!text)
    return fail(path + ": " + text.getError().message());
  try {
    Options options;
    options.backend = key.backend == compiler::Backend::cuda ? Backend::cuda
                                                             : Backend::cpu;
    options.cudaArch = key.cudaArch;
    options.tf32 = key.tf32;
    options.productType = key.productType;
    options.memoryBudgetBytes = *budget;
    // The planned graph, written as a run writes the graphs it compiles
    // (`kilnc compile --print-thunks` then shows its kernels).
    if (const char *dump = std::getenv("KILN_DUMP_GRAPHS"))
      options.dumpDir = dump;
    set_options(options);
    // Planned, never run: the weights are never drawn (an 8B model's fit
    // in memory that is never touched), and a 16-bit base is built so.
    nn::ModelBuild build;
    build.dtype = *storage;
    build.draw_initial_values = false;
    absl::StatusOr<std::unique_ptr<nn::CausalLM>> model =
        nn::causal_lm_from_config((*text)->getBuffer().str(), path, build);
    if (!model.ok())
      return fail(std::string(model.status().message()));
    nn::TrainingStepShape shape;
    shape.seq = std::min<int64_t>(1024, (*model)->max_positions());
    std::optional<int64_t> seq =
        positiveFlag(*args, "--block_size", shape.seq);
    if (!seq)
      return kExitUsage;
    shape.seq = *seq;
    shape.max_grad_norm = maxGradNorm;
    // As kiln-train: a Llama (rotary positions) takes longer sequences.
    if ((*model)->positions_bounded() && shape.seq > (*model)->max_positions())
      return fail("--block_size " + std::to_string(shape.seq) +
                      " exceeds the model's " +
                      std::to_string((*model)->max_positions()) +
                      " positions",
                  kExitUsage);
    nn::NamedTensors params = (*model)->named_parameters();
    std::string what = (*model)->describe();
    if (args->has("--use_lora")) {
      nn::LoraConfig lora;
      lora.r = *loraR;
      lora.alpha = loraAlpha;
      lora.dropout = loraDropout;
      lora.target_modules = nn::expand_lora_targets(
          **model, args->has("--lora_target_modules")
                       ? std::vector<std::string>(absl::StrSplit(
                             args->get("--lora_target_modules"), ','))
                       : nn::default_lora_targets((*model)->model_type()));
      if (args->has("--lora_modules_to_save"))
        lora.modules_to_save = absl::StrSplit(
            args->get("--lora_modules_to_save"), ',', absl::SkipEmpty());
      nn::apply_lora(**model, lora, 0, &(*model)->generator());
      params = nn::trainable_parameters(**model);
      what += ", LoRA r " + std::to_string(lora.r);
      if (*storage != DType::f32)
        what += ", base in " + std::string(dtypeName(*storage));
    }
    (*model)->train();
    std::string target = describeTarget(key);
    if (args->has("--batch")) {
      shape.batch = *batch;
      std::string overBudget;
      std::optional<uint64_t> peak = plan_traced(
          [&] { return nn::trace_training_step(**model, params, shape); },
          &overBudget);
      if (!peak)
        return fail("batch " + std::to_string(*batch) +
                    (*budget ? " does not fit --memory_budget " +
                                   formatByteSize(*budget) +
                                   " even with recomputation"
                             : std::string(" cannot be planned")) +
                    ": " + overBudget);
      std::printf("batch %lld, seq %lld: planned peak %s (%s; %s)\n",
                  (long long)*batch, (long long)shape.seq,
                  formatByteSize(*peak).c_str(), what.c_str(), target.c_str());
      return 0;
    }
    std::map<int64_t, uint64_t> fittingPeaks; // the probes that fit
    int64_t best = nn::largest_trainable_batch(
        **model, params, *limit, /*first=*/1, shape,
        [&](int64_t probed, std::optional<uint64_t> peak) {
          bool fits = peak && *peak <= *budget;
          if (fits)
            fittingPeaks[probed] = *peak;
          std::fprintf(stderr, "kilnc: plan: batch %lld: %s\n",
                       (long long)probed,
                       peak ? ("plans " + formatByteSize(*peak) +
                               (fits ? ": fits" : ": over"))
                                  .c_str()
                            : "over the budget even with recomputation");
        });
    if (best == 0)
      return fail("not even batch 1 plans within --memory_budget " +
                  formatByteSize(*budget));
    // The search probed its answer: that probe's peak, not a new plan
    // (each plan compiles the step).
    auto found = fittingPeaks.find(best);
    std::optional<uint64_t> peak;
    if (found != fittingPeaks.end())
      peak = found->second;
    std::printf("largest batch %lld%s: planned peak %s of %s (%s, seq %lld; "
                "%s)\n",
                (long long)best, best == *limit ? " (--batch_limit)" : "",
                peak ? formatByteSize(*peak).c_str() : "?",
                formatByteSize(*budget).c_str(), what.c_str(),
                (long long)shape.seq, target.c_str());
    return 0;
  } catch (const Error &e) {
    return fail(e.what());
  }
}

} // namespace kiln::kilnc
