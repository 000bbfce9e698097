// The persistent cache's key: SHA-256 over everything that decides what a
// compiled executable is: the canonical IR text (no locations, no SSA
// names), the compiler version and build id, the target CPU and features,
// and the result-changing options. Paths, dump directories and debug flags
// are left out on purpose, so a trial run that dumps graphs and the real
// run that does not share entries. docs/CACHE.md lists the fields.
#ifndef KILN_COMPILER_CACHEKEY_H
#define KILN_COMPILER_CACHEKEY_H

#include "compiler/Compiler.h"
#include "compiler/Version.h"
#include "runtime/PersistentCache.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::compiler {

/// What the key takes from outside the module; the host's by default,
/// replaceable so tests can change one part at a time.
struct KeyEnvironment {
  /// The CPU backend's version and the build id.
  std::string compilerVersion;
  std::string targetCpu;
  /// Sorted "+feature,-feature,..." (so the order LLVM lists them in does
  /// not matter).
  std::string targetFeatures;
};

/// The running compiler and host CPU → their key environment.
const KeyEnvironment &hostKeyEnvironment();

/// The options that change what is compiled; the key includes every field.
struct KeyOptions {
  Backend backend = Backend::cpu;
  /// The function compiled (empty: main or the only one).
  std::string function;
  /// Bytes the step's planned peak may take (0: no budget).
  uint64_t memoryBudget = 0;
  /// kiln-partition on (the default) or off.
  bool partition = true;
  /// Mixed precision: matrix products on bf16 or f16 inputs
  /// (kiln-autocast); f32: off.
  DType productType = DType::f32;
  /// cuda: the GPU architecture and TF32 GEMMs (ignored for other
  /// backends). A cuda key names this target instead of the host CPU, so
  /// `kilnc precompile` on a machine without a GPU fills the cache a GPU
  /// machine reads.
  std::string cudaArch = "sm_90";
  bool tf32 = false;
};

/// A computed key and the identity an entry records under it.
struct CacheKey {
  /// 64 hex characters: the file name in the cache.
  std::string hex;
  /// SHA-256 of the canonical IR and options only (version, target left
  /// out): entries of the same graph from another build share it.
  std::string graphId;
  /// SHA-256 of the canonical IR alone.
  std::string irDigest;
  runtime::CacheEntryIdentity identity;
};

/// module + options (+ environment) → its key. Pure: the same IR with other
/// locations or SSA names gives the same key.
CacheKey computeCacheKey(mlir::ModuleOp module, const KeyOptions &options,
                         const KeyEnvironment &environment =
                             hostKeyEnvironment());

/// The options' canonical text as hashed ("backend=cpu;function=main;...").
std::string keyOptionsText(const KeyOptions &options);

} // namespace kiln::compiler

#endif // KILN_COMPILER_CACHEKEY_H
