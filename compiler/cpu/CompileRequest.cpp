// What a compile request means for the cpu/cuda backends: the pipeline
// options and kernel target derived from CompileOptions (every compile
// path, cached or not, goes through these two), and the environment
// overrides the GPU machine's A/B measurements read once (row lanes, chunk
// sizes, the vocabulary multiple).
#include "compiler/cpu/CpuCompiler.h"
#include "compiler/cpu/KernelEmitter.h"
#include "support/EnvironmentSwitch.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::compiler::cpu {

namespace {
/// A warp: the threads that share a row of a row-reduction fusion on a GPU.
constexpr unsigned kGpuRowLanes = 32;
/// The cuda target's loss chunk and 16-bit (bf16, f16) vocabulary multiple
/// (pipelineOptionsFor).
constexpr int64_t kCudaLossChunkBytes = int64_t{256} << 20;
constexpr int64_t kCudaHalfVocabMultiple = 64;

/// Elements a GPU thread computes in a fusion without reduces: a Philox
/// block's 4, a 16-byte f32 access.
constexpr unsigned kGpuElementsPerIndex = 4;
/// Two Philox blocks: a thread's 16-bit reads become 16-byte accesses too
/// ($KILN_CUDA_ELEMENTS_PER_THREAD=8; not the default until a GPU has
/// timed it).
constexpr unsigned kWideGpuElementsPerIndex = 8;
/// Points of a row a GPU thread without lanes reads before storing: 8
/// loads in flight, where one point's stores would come before the next
/// point's loads ($KILN_CUDA_ROW_UNROLL=1, that form, for the A/B).
constexpr unsigned kGpuRowUnroll = 8;

/// $name when it is `fallback` or one of `others` (unset: `fallback`;
/// anything else: refused with a warning and `fallback` kept).
unsigned choiceFromEnvironment(const char *name, unsigned fallback,
                               std::initializer_list<unsigned> others) {
  const char *env = std::getenv(name);
  if (!env || !*env || std::string_view(env) == std::to_string(fallback))
    return fallback;
  for (unsigned other : others)
    if (std::string_view(env) == std::to_string(other))
      return other;
  std::vector<unsigned> choices(others);
  choices.push_back(fallback);
  std::sort(choices.begin(), choices.end());
  std::string listed;
  for (size_t i = 0; i < choices.size(); ++i)
    absl::StrAppend(&listed,
                    i == 0                    ? ""
                    : i + 1 == choices.size() ? " or "
                                              : ", ",
                    choices[i]);
  std::fprintf(stderr, "kiln: warning: %s must be %s, not '%s'; using %u\n",
               name, listed.c_str(), env, fallback);
  return fallback;
}
} // namespace

unsigned gpuRowLanes() {
  static const unsigned lanes =
      choiceFromEnvironment("KILN_CUDA_ROW_LANES", kGpuRowLanes, {1});
  return lanes;
}

unsigned gpuElementsPerIndex() {
  static const unsigned elements = choiceFromEnvironment(
      "KILN_CUDA_ELEMENTS_PER_THREAD", kGpuElementsPerIndex,
      {1, kWideGpuElementsPerIndex});
  return elements;
}

unsigned gpuRowUnroll() {
  static const unsigned unroll =
      choiceFromEnvironment("KILN_CUDA_ROW_UNROLL", kGpuRowUnroll, {1});
  return unroll;
}

namespace {
/// Whether $name switches off a switch that is on by default (0, false,
/// no, off); unset or on: false; anything else refused with a warning.
bool switchedOffInEnvironment(const char *name) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return false;
  if (std::optional<bool> on = switchValue(env))
    return !*on;
  std::fprintf(stderr,
               "kiln: warning: %s must be %s, not '%s'; using the default "
               "(on)\n",
               name, kSwitchValues, env);
  return false;
}

/// $name as a whole number from 1 to `most` (of `unit`), else 0 (a
/// malformed value with a warning).
int64_t wholeNumberFromEnvironment(const char *name, int64_t most,
                                   const char *unit) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return 0;
  int64_t value = 0;
  if (absl::SimpleAtoi(env, &value) && value >= 1 && value <= most)
    return value;
  std::fprintf(stderr,
               "kiln: warning: %s must be a whole number%s from 1 to "
               "%lld, not '%s'; using the default\n",
               name, unit, static_cast<long long>(most), env);
  return 0;
}
} // namespace

bool gpuHoldRows() {
  static const bool on = !switchedOffInEnvironment("KILN_CUDA_HOLD_ROWS");
  return on;
}

bool gpuExclusiveBuffers() {
  static const bool on = !switchedOffInEnvironment("KILN_CUDA_NOALIAS");
  return on;
}

const LayoutOverrides &layoutOverrides() {
  static const LayoutOverrides overrides = [] {
    LayoutOverrides o;
    o.attentionMiB =
        wholeNumberFromEnvironment("KILN_ATTENTION_CHUNK_MB", 65536, " of MiB");
    o.lossMiB =
        wholeNumberFromEnvironment("KILN_LOSS_CHUNK_MB", 65536, " of MiB");
    o.vocabMultiple =
        wholeNumberFromEnvironment("KILN_VOCAB_MULTIPLE", 4096, "");
    o.noCostlyRecompute = switchedOffInEnvironment("KILN_RECOMPUTE_COSTLY");
    o.noGemmEpilogue = switchedOffInEnvironment("KILN_GEMM_EPILOGUE");
    o.noSmallProducts = switchedOffInEnvironment("KILN_SMALL_PRODUCTS");
    o.noGemmViews = switchedOffInEnvironment("KILN_GEMM_VIEWS");
    o.noColumnPieces = switchedOffInEnvironment("KILN_COLUMN_PIECES");
    o.noKernelGroups = switchedOffInEnvironment("KILN_KERNEL_GROUPS");
    if (const char *attention = std::getenv("KILN_CUDA_ATTENTION");
        attention && *attention) {
      // flash and cudnn compile the same attention thunks; the runtime
      // picks the library that runs them (runtime/cuda/AttentionRunner.h).
      std::string_view choice = attention;
      o.flashAttention = choice == "flash" || choice == "cudnn";
      if (!o.flashAttention && choice != "lowered")
        std::fprintf(stderr,
                     "kiln: warning: KILN_CUDA_ATTENTION must be flash, cudnn "
                     "or lowered, not '%s'; using the default (lowered)\n",
                     attention);
    }
    return o;
  }();
  return overrides;
}

PipelineOptions pipelineOptionsFor(const CompileOptions &options) {
  PipelineOptions pipeline;
  pipeline.memoryBudgetBytes = options.memoryBudgetBytes;
  pipeline.partition = options.partition;
  pipeline.productType = options.productType;
  pipeline.dumpDir = options.passDumpDir;
  if (options.backend == Backend::cuda) {
    // Measured on the H100 (docs/GPU.md, run 7: GPT-2 124M at batch 16):
    // logits in chunks of 256 MiB (7 of 1216 rows, not 25 of 328) take the
    // fp32 step from 216.6 to 202.5 ms, the lm_head GEMMs being thin and
    // the tied weight's gradient summed once per chunk; the vocabulary
    // padded to a multiple of 64 takes the bf16 step from 106.3 to 85.8 ms
    // (tensor-core tiles) and changes nothing in fp32 (217.4 ms), so it
    // comes with bf16 (and f16: the same tensor-core tiles). Attention keeps 64 MiB chunks: one chunk measured
    // the same (215.6 ms), and chunks skip the causal mask's empty blocks.
    pipeline.lossChunkBytes = kCudaLossChunkBytes;
    if (options.productType != DType::f32)
      pipeline.lossVocabMultiple = kCudaHalfVocabMultiple;
  }
  const LayoutOverrides &overrides = layoutOverrides();
  if (overrides.attentionMiB > 0)
    pipeline.attentionChunkBytes = overrides.attentionMiB << 20;
  if (overrides.lossMiB > 0)
    pipeline.lossChunkBytes = overrides.lossMiB << 20;
  if (overrides.vocabMultiple > 0)
    pipeline.lossVocabMultiple = overrides.vocabMultiple;
  pipeline.recomputeCostly = !overrides.noCostlyRecompute;
  pipeline.gemmEpilogue = !overrides.noGemmEpilogue;
  if (overrides.noSmallProducts)
    pipeline.smallProductContraction = 0;
  pipeline.attentionKernel =
      options.backend == Backend::cuda && overrides.flashAttention;
  return pipeline;
}

KernelTarget kernelTargetFor(const CompileOptions &options) {
  KernelTarget target;
  if (options.backend == Backend::cuda)
    target.device = runtime::Device::cuda;
  target.cudaArch = options.cudaArch;
  target.tf32 = options.tf32;
  target.gemmOperandViews = !layoutOverrides().noGemmViews;
  target.columnPieces = !layoutOverrides().noColumnPieces;
  return target;
}

} // namespace kiln::compiler::cpu
