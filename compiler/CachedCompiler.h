// Compiling through the persistent cache: the module's key is looked up;
// a hit loads the stored executable (no MLIR pass, no codegen), a miss
// compiles with the CPU backend, stores the serialized executable and loads
// it. The reference backend and a null cache fall through to
// compiler::compile. Cache trouble never fails a compile.
#ifndef KILN_COMPILER_CACHEDCOMPILER_H
#define KILN_COMPILER_CACHEDCOMPILER_H

#include "compiler/CacheKey.h"
#include "compiler/Compiler.h"
#include "runtime/PersistentCache.h"
#include "runtime/Program.h"

#include "absl/status/statusor.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::compiler {

/// What happened to one compile, for metrics and tools.
struct CacheOutcome {
  /// False when the cache was not consulted (no cache, reference backend).
  bool consulted = false;
  bool hit = false;
  /// The key, when a cache was consulted (computing it prints the module).
  std::string key;
  runtime::CacheMiss reason = runtime::CacheMiss::noEntry;
  std::string detail;
  /// A miss whose executable was stored.
  bool stored = false;
  double compileSeconds = 0;
  /// The executable's planned peak memory (arena, inputs, fresh outputs)
  /// and kernel count, whether compiled or loaded; 0 for the reference
  /// backend, which plans nothing.
  uint64_t plannedPeakBytes = 0;
  int64_t thunks = 0;
};

/// The compile request a cache key's options stand for (and the reverse):
/// every compile derives its pipeline and kernel target from the request
/// (cpu::pipelineOptionsFor, cpu::kernelTargetFor), so a cached, an
/// uncached and a kilnc compile of one graph run the same passes.
CompileOptions compileOptionsFor(const KeyOptions &options,
                                 const std::string &passDumpDir = "");
KeyOptions keyOptionsFor(const CompileOptions &options);

/// module → executable through the cache: the stored one on a hit, else a
/// fresh CPU compile that is stored (unless the cache is read-only, full or
/// unusable). Verifies the module before compiling.
/// `passDumpDir` (debug only, not keyed): see CompileOptions::passDumpDir.
absl::StatusOr<runtime::Executable>
compileExecutableCached(mlir::ModuleOp module, const KeyOptions &options,
                        runtime::PersistentCache *cache,
                        CacheOutcome *outcome = nullptr,
                        const std::string &passDumpDir = "");

/// module → program: compileExecutableCached + loading for the CPU backend
/// (with or without a cache); compiler::compile for the reference backend.
absl::StatusOr<std::unique_ptr<runtime::Program>>
compileCached(mlir::ModuleOp module, const CompileOptions &options,
              runtime::PersistentCache *cache,
              CacheOutcome *outcome = nullptr);

} // namespace kiln::compiler

#endif // KILN_COMPILER_CACHEDCOMPILER_H
