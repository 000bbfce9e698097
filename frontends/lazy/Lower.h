// Lowering a lazy graph to a kiln-dialect module and compiling it. The only
// part of the frontend that touches MLIR: Lower.cpp is compiled without RTTI,
// like MLIR, and reports failures as absl::Status (no exceptions cross it).
#ifndef KILN_FRONTENDS_LAZY_LOWER_H
#define KILN_FRONTENDS_LAZY_LOWER_H

#include "compiler/CachedCompiler.h"
#include "compiler/Compiler.h"
#include "runtime/PersistentCache.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace kiln::lazy {

struct Graph;

/// How one graph is compiled, and where it is dumped.
struct GraphCompileRequest {
  compiler::Backend backend = compiler::Backend::reference;
  /// The persistent cache (cpu and cuda backends), or null.
  runtime::PersistentCache *cache = nullptr;
  /// When not empty: write `graph-<graphHash>.mlir` (canonical text) there
  /// and append a line to its `manifest.jsonl`. A dump that cannot be
  /// written is a warning (once; no dumps follow), never a failed compile.
  std::string dumpDir;
  /// Options::passDumpDir, Options::memoryBudgetBytes, Options::partition.
  std::string passDumpDir;
  uint64_t memoryBudgetBytes = 0;
  bool partition = true;
  /// cuda: Options::cudaArch and Options::tf32.
  std::string cudaArch = "sm_90";
  bool tf32 = false;
  /// Options::productType (cpu and cuda backends).
  DType productType = DType::f32;
  uint64_t graphHash = 0;
  /// The graph tag for the manifest ("step", "train step", ...).
  std::string tag;
  /// Locate each op at its node's call site (Options::checkNumerics): pass
  /// dumps show it; hashes and cache keys never include locations.
  bool locations = false;
};

struct GraphCompileResult {
  std::unique_ptr<runtime::Program> program;
  compiler::CacheOutcome cache;
};

/// graph → `func.func @main(inputs...) -> outputs...` in one process-wide
/// MLIRContext (kiln + func loaded), donated inputs marked `kiln.donate` →
/// compiler::compileCached for the request's backend and cache.
absl::StatusOr<GraphCompileResult>
compileGraph(const Graph &graph, const GraphCompileRequest &request);

/// graph → the planned peak bytes (arena, inputs, fresh outputs) of the
/// executable compileGraph would build for `request` (same pipeline,
/// lowering and planner), without generating code or loading anything;
/// ResourceExhausted when it stays over request.memoryBudgetBytes after
/// recomputation. Not for the reference backend (it plans nothing). With
/// request.dumpDir the graph is dumped first, as compileGraph dumps it.
absl::StatusOr<uint64_t> planGraph(const Graph &graph,
                                   const GraphCompileRequest &request);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_LOWER_H
