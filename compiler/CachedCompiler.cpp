// compileCached: key, lookup, and on a miss verify + CPU compile + store.
// The stored bytes are exactly what serializeExecutable wrote, so a later
// hit deserializes (and checks) the same executable this process loads.
#include "compiler/CachedCompiler.h"

#include "compiler/MemoryPlanner.h"
#include "compiler/cpu/CpuCompiler.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/BuiltinOps.h"

#include <chrono>
#include <optional>

namespace kiln::compiler {


absl::StatusOr<runtime::Executable>
compileExecutableCached(mlir::ModuleOp module, const KeyOptions &options,
                        runtime::PersistentCache *cache,
                        CacheOutcome *outcome, const std::string &passDumpDir) {
  CacheOutcome local;
  CacheOutcome &out = outcome ? *outcome : local;
  if (options.backend != Backend::cpu && options.backend != Backend::cuda)
    return absl::InvalidArgumentError(
        "only the cpu and cuda backends produce executables");
  // The key prints and hashes the whole module: only worth it with a cache.
  std::optional<CacheKey> key;
  if (cache) {
    key = computeCacheKey(module, options);
    out.key = key->hex;
    out.consulted = true;
    runtime::CacheLookup found = cache->lookup(key->identity);
    if (found.executable) {
      out.hit = true;
      return std::move(*found.executable);
    }
    out.reason = found.reason;
    out.detail = found.detail;
  }
  if (absl::Status s = verifyModule(module); !s.ok())
    return s;
  auto start = std::chrono::steady_clock::now();
  PipelineOptions pipeline;
  pipeline.memoryBudgetBytes = options.memoryBudget;
  pipeline.partition = options.partition;
  pipeline.dumpDir = passDumpDir;
  cpu::KernelTarget target;
  if (options.backend == Backend::cuda)
    target.device = runtime::Device::cuda;
  target.cudaArch = options.cudaArch;
  target.tf32 = options.tf32;
  absl::StatusOr<runtime::Executable> executable = cpu::compileExecutable(
      module, options.function, nullptr, pipeline, target);
  out.compileSeconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  if (!executable.ok())
    return executable.status();
  if (cache)
    out.stored = cache->store(key->identity,
                              runtime::serializeExecutable(*executable));
  return executable;
}

absl::StatusOr<std::unique_ptr<runtime::Program>>
compileCached(mlir::ModuleOp module, const CompileOptions &options,
              runtime::PersistentCache *cache, CacheOutcome *outcome) {
  if (options.backend == Backend::reference)
    return compile(module, options);
  KeyOptions keyOptions;
  keyOptions.backend = options.backend;
  keyOptions.function = options.function;
  keyOptions.memoryBudget = options.memoryBudgetBytes;
  keyOptions.partition = options.partition;
  keyOptions.cudaArch = options.cudaArch;
  keyOptions.tf32 = options.tf32;
  CacheOutcome local;
  CacheOutcome &out = outcome ? *outcome : local;
  absl::StatusOr<runtime::Executable> executable = compileExecutableCached(
      module, keyOptions, cache, &out, options.passDumpDir);
  if (!executable.ok())
    return executable.status();
  out.plannedPeakBytes = describeMemoryPlan(*executable).peakBytes;
  out.thunks = static_cast<int64_t>(executable->thunks.size());
  return cpu::loadProgram(std::move(*executable));
}

} // namespace kiln::compiler
