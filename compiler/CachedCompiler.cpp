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


CompileOptions compileOptionsFor(const KeyOptions &options,
                                 const std::string &passDumpDir) {
  CompileOptions request;
  request.backend = options.backend;
  request.function = options.function;
  request.memoryBudgetBytes = options.memoryBudget;
  request.partition = options.partition;
  request.productType = options.productType;
  request.passDumpDir = passDumpDir;
  request.cudaArch = options.cudaArch;
  request.tf32 = options.tf32;
  return request;
}

KeyOptions keyOptionsFor(const CompileOptions &options) {
  KeyOptions key;
  key.backend = options.backend;
  key.function = options.function;
  key.memoryBudget = options.memoryBudgetBytes;
  key.partition = options.partition;
  key.productType = options.productType;
  key.cudaArch = options.cudaArch;
  key.tf32 = options.tf32;
  return key;
}

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
  CompileOptions request = compileOptionsFor(options, passDumpDir);
  absl::StatusOr<runtime::Executable> executable = cpu::compileExecutable(
      module, options.function, nullptr, cpu::pipelineOptionsFor(request),
      cpu::kernelTargetFor(request));
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
  KeyOptions keyOptions = keyOptionsFor(options);
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
