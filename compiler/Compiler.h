// The compiler driver: a kiln-dialect module → a runnable program for one
// backend. The reference backend wraps the reference evaluator; the CPU
// backend (compiler/cpu) generates native kernels; the CUDA backend
// (compiler/cuda) generates the same kernels for an NVIDIA GPU.
#ifndef KILN_COMPILER_COMPILER_H
#define KILN_COMPILER_COMPILER_H

#include "runtime/Program.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::compiler {

enum class Backend { reference, cpu, cuda };

/// "reference" / "cpu" / "cuda" → Backend; anything else is an InvalidArgument error.
absl::StatusOr<Backend> parseBackend(std::string_view name);
std::string_view backendName(Backend backend);

struct CompileOptions {
  Backend backend = Backend::reference;
  /// The function to compile; empty means `main`, or the only function.
  std::string function;
  /// CPU backend: the most bytes the step's planned peak may take (0: no
  /// budget); over it, compiling fails with the largest live buffers.
  uint64_t memoryBudgetBytes = 0;
  /// Run kiln-partition (PipelineOptions::partition).
  bool partition = true;
  /// Mixed precision (PipelineOptions::productType): matrix products in
  /// bf16 or f16 (kiln-autocast); f32: off. The reference backend ignores
  /// it.
  DType productType = DType::f32;
  /// CPU backend: when set, the module is written there after every pass
  /// (KILN_DUMP_DIR, XLA's --xla_dump_to). Debug only: not in cache keys.
  std::string passDumpDir;
  /// CUDA backend: the GPU architecture kernels are built for (sm_80,
  /// sm_90), and whether f32 GEMMs may use TF32 (PyTorch's default is
  /// exact f32, and so is kiln's).
  std::string cudaArch = "sm_90";
  bool tf32 = false;
};

/// OK when programs for `backend` can run on this machine; else why not
/// (cuda: no driver, no GPU, or a build without the CUDA runtime), so a
/// tool can stop before it traces or compiles anything.
absl::Status backendAvailable(Backend backend);

/// The memory `backend`'s programs may still allocate on this machine, for
/// a budget nobody gave (kiln-train --auto_find_batch_size): cuda, the
/// GPU's free memory within KILN_DEVICE_MEMORY_LIMIT
/// (runtime::cudaMemoryAvailable); cpu and reference, whose tensors are
/// host memory, the host's (MemAvailable in /proc/meminfo). Errors: no
/// GPU, as backendAvailable; no /proc/meminfo, Unavailable.
absl::StatusOr<uint64_t> memoryAvailable(Backend backend);

/// Runs MLIR's verifier; the error carries every diagnostic it emitted.
absl::Status verifyModule(mlir::ModuleOp module);

/// module → program. The program does not refer to `module` or its context
/// afterwards: it may outlive both.
absl::StatusOr<std::unique_ptr<runtime::Program>>
compile(mlir::ModuleOp module, const CompileOptions &options);

} // namespace kiln::compiler

#endif // KILN_COMPILER_COMPILER_H
