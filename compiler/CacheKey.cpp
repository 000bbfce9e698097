// Computing the persistent cache key: each part enters SHA-256 as a named,
// length-prefixed field, so no two different part lists hash the same
// bytes. The IR part is ir/Serialization's canonicalText (no locations;
// SSA values are printed by number, so source names do not survive).
#include "compiler/CacheKey.h"

#include "compiler/cpu/CpuCompiler.h"
#include "ir/Serialization.h"
#include "ir/StructuralHash.h"
#include "runtime/Executable.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SHA256.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <vector>

#ifndef KILN_BUILD_ID
#define KILN_BUILD_ID "unknown"
#endif

namespace kiln::compiler {

namespace {

void addField(llvm::SHA256 &hasher, llvm::StringRef name,
              llvm::StringRef value) {
  hasher.update(name);
  std::string length = absl::StrCat(":", value.size(), ":");
  hasher.update(length);
  hasher.update(value);
}

std::string hexOf(llvm::SHA256 &hasher) {
  std::array<uint8_t, 32> digest = hasher.final();
  return toHex(digest);
}

} // namespace

const KeyEnvironment &hostKeyEnvironment() {
  static const KeyEnvironment environment = [] {
    KeyEnvironment e;
    e.compilerVersion =
        absl::StrCat(kKilnVersion, " build ", std::string(buildId()),
                     " exe-format ", runtime::kExecutableFormatVersion);
    e.targetCpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.push_back(
          absl::StrCat(feature.getValue() ? "+" : "-", feature.getKey().str()));
    std::sort(features.begin(), features.end());
    for (const std::string &f : features)
      absl::StrAppend(&e.targetFeatures, e.targetFeatures.empty() ? "" : ",",
                      f);
    return e;
  }();
  return environment;
}

std::string keyOptionsText(const KeyOptions &options) {
  std::string text =
      absl::StrCat("backend=", std::string(backendName(options.backend)),
                   ";function=", options.function,
                   ";memory-budget=", options.memoryBudget);
  if (!options.partition)
    absl::StrAppend(&text, ";partition=0");
  // "bf16=1" as before f16 existed, so bf16 entries keep their keys.
  if (options.productType == DType::bf16)
    absl::StrAppend(&text, ";bf16=1");
  else if (options.productType != DType::f32)
    absl::StrAppend(&text, ";products=",
                    std::string(dtypeName(options.productType)));
  if (options.backend == Backend::cuda) {
    absl::StrAppend(&text, ";cuda-arch=", options.cudaArch,
                    ";tf32=", options.tf32 ? 1 : 0);
    if (unsigned lanes = cpu::gpuRowLanes(); lanes != 32)
      absl::StrAppend(&text, ";row-lanes=", lanes);
    if (unsigned elements = cpu::gpuElementsPerIndex(); elements != 4)
      absl::StrAppend(&text, ";elements-per-thread=", elements);
    if (unsigned unroll = cpu::gpuRowUnroll(); unroll != 8)
      absl::StrAppend(&text, ";row-unroll=", unroll);
    if (!cpu::gpuHoldRows())
      absl::StrAppend(&text, ";hold-rows=0");
    if (!cpu::gpuExclusiveBuffers())
      absl::StrAppend(&text, ";noalias=0");
    if (cpu::layoutOverrides().noKernelGroups)
      absl::StrAppend(&text, ";kernel-groups=0");
  }
  const cpu::LayoutOverrides &layout = cpu::layoutOverrides();
  if (layout.attentionMiB > 0)
    absl::StrAppend(&text, ";attention-chunk-mb=", layout.attentionMiB);
  if (layout.lossMiB > 0)
    absl::StrAppend(&text, ";loss-chunk-mb=", layout.lossMiB);
  if (layout.vocabMultiple > 0)
    absl::StrAppend(&text, ";vocab-multiple=", layout.vocabMultiple);
  if (layout.noCostlyRecompute && options.memoryBudget != 0)
    absl::StrAppend(&text, ";recompute-costly=0");
  if (layout.noGemmEpilogue)
    absl::StrAppend(&text, ";gemm-epilogue=0");
  if (layout.noSmallProducts)
    absl::StrAppend(&text, ";small-products=0");
  if (layout.noGemmViews)
    absl::StrAppend(&text, ";gemm-views=0");
  if (layout.noColumnPieces && options.backend == Backend::cpu)
    absl::StrAppend(&text, ";column-pieces=0");
  if (layout.flashAttention && options.backend == Backend::cuda)
    absl::StrAppend(&text, ";attention=flash");
  return text;
}

CacheKey computeCacheKey(mlir::ModuleOp module, const KeyOptions &options,
                         const KeyEnvironment &environment) {
  std::string ir = canonicalText(module);
  // "" means @main when there is one: name it, so a caller that says "main"
  // and one that leaves it empty share entries.
  KeyOptions normalized = options;
  if (normalized.function.empty() && module.lookupSymbol("main"))
    normalized.function = "main";
  std::string optionsText = keyOptionsText(normalized);
  CacheKey key;
  {
    llvm::SHA256 hasher;
    hasher.update(ir);
    key.irDigest = hexOf(hasher);
  }
  {
    llvm::SHA256 hasher;
    addField(hasher, "kiln-graph-v1", "");
    addField(hasher, "ir", ir);
    addField(hasher, "options", optionsText);
    key.graphId = hexOf(hasher);
  }
  std::string target =
      options.backend == Backend::cuda
          ? absl::StrCat("cuda:", options.cudaArch)
          : absl::StrCat(environment.targetCpu, " ",
                         environment.targetFeatures);
  llvm::SHA256 hasher;
  addField(hasher, "kiln-cache-key-v1", "");
  addField(hasher, "ir", ir);
  addField(hasher, "options", optionsText);
  addField(hasher, "compiler", environment.compilerVersion);
  addField(hasher, "target", target);
  key.hex = hexOf(hasher);
  key.identity.key = key.hex;
  key.identity.graphId = key.graphId;
  key.identity.compilerVersion = environment.compilerVersion;
  key.identity.target = target;
  return key;
}

} // namespace kiln::compiler
