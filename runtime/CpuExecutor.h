// Runs CPU executables: loads the kernel library (dlopen of an in-memory
// file), allocates one arena per loaded program and reuses it for every
// run, recycles output buffers through a pool once the caller drops them,
// and executes the thunk list, splitting kernel ranges over a thread pool. No MLIR or LLVM here: a warm-cache training job never needs them.
#ifndef KILN_RUNTIME_CPUEXECUTOR_H
#define KILN_RUNTIME_CPUEXECUTOR_H

#include "runtime/Executable.h"
#include "runtime/Gemm.h"
#include "runtime/Program.h"

#include <memory>
#include <string_view>

namespace kiln::runtime {

struct CpuRuntimeOptions {
  /// Threads for kernel ranges, the caller included; 0: as many as the
  /// GEMM library's OpenMP runtime uses (ThreadPool::hostThreads).
  int threads = 0;
  GemmLibrary gemm = GemmLibrary::onednn;
  /// A check of the memory plan, for tests (slow): after each thunk, fill
  /// with 0xFF (NaN in every float type) the arena bytes of every slot
  /// whose last use was that thunk, except bytes a still-live slot holds;
  /// also poison the arena at load and every output buffer before the
  /// thunks write it. A plan that reuses memory too early, or a kernel
  /// that reads bytes it never wrote, then changes the results.
  /// (KILN_POISON_DEAD_BUFFERS=1 sets it through the frontend's options.)
  bool poisonDeadBuffers = false;
  /// Where a run's outputs take their storage, which returns there when the
  /// caller drops it, for the next runs (fresh pages cost a fault each).
  /// Null: each program has its own pool, keeping one idle buffer per
  /// output. Set: every program loaded with it shares this pool, as eager
  /// mode's hundreds of single-op programs do (each keeping its own would
  /// hold ~1.2 GB for GPT-2 124M at batch 1).
  std::shared_ptr<BufferPool> outputPool;
};

/// The options a load without explicit ones uses: the compiler and the
/// compile caches load programs that way, so a frontend sets its runtime
/// options here (kiln::set_options does). Programs already loaded keep
/// theirs.
CpuRuntimeOptions defaultCpuRuntimeOptions();
void setDefaultCpuRuntimeOptions(const CpuRuntimeOptions &options);

/// executable → a runnable program. Fails when the host lacks a CPU feature
/// the kernels were built for, or the kernel library does not load.
absl::StatusOr<std::unique_ptr<Program>>
loadCpuProgram(Executable executable,
               const CpuRuntimeOptions &options = defaultCpuRuntimeOptions());

/// Serialised executable bytes → a runnable program; a damaged blob is
/// refused (see deserializeExecutable) and never run.
absl::StatusOr<std::unique_ptr<Program>>
loadCpuProgram(std::string_view bytes,
               const CpuRuntimeOptions &options = defaultCpuRuntimeOptions());

} // namespace kiln::runtime

#endif // KILN_RUNTIME_CPUEXECUTOR_H
