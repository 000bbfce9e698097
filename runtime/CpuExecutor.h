// Runs CPU executables: loads the kernel library (dlopen of an in-memory
// file), allocates one arena per loaded program and reuses it for every
// run, and executes the thunk list, splitting kernel ranges over a thread
// pool. No MLIR or LLVM here: a warm-cache training job never needs them.
#ifndef KILN_RUNTIME_CPUEXECUTOR_H
#define KILN_RUNTIME_CPUEXECUTOR_H

#include "runtime/Executable.h"
#include "runtime/Gemm.h"
#include "runtime/Program.h"

#include <memory>
#include <string_view>

namespace kiln::runtime {

struct CpuRuntimeOptions {
  /// Threads for kernel ranges, the caller included.
  int threads = 2;
  GemmLibrary gemm = GemmLibrary::onednn;
};

/// executable → a runnable program. Fails when the host lacks a CPU feature
/// the kernels were built for, or the kernel library does not load.
absl::StatusOr<std::unique_ptr<Program>>
loadCpuProgram(Executable executable, const CpuRuntimeOptions &options = {});

/// Serialised executable bytes → a runnable program; a damaged blob is
/// refused (see deserializeExecutable) and never run.
absl::StatusOr<std::unique_ptr<Program>>
loadCpuProgram(std::string_view bytes, const CpuRuntimeOptions &options = {});

} // namespace kiln::runtime

#endif // KILN_RUNTIME_CPUEXECUTOR_H
