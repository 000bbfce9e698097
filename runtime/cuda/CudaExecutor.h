// Runs CUDA executables on an NVIDIA GPU through the driver API, loaded at
// run time (never linked: CudaDriver.h), with GEMMs on cuBLASLt (also
// loaded at run time). A loaded program owns its device memory for its
// whole life (one arena, device copies of inputs and outputs, the GEMM
// workspace), so every device pointer, and so every kernel's parameters,
// is fixed at load: a run copies the inputs in, enqueues the thunks
// (replayed as one CUDA graph from the second run on), copies the outputs
// out and waits once. No MLIR or LLVM here.
#ifndef KILN_RUNTIME_CUDA_CUDAEXECUTOR_H
#define KILN_RUNTIME_CUDA_CUDAEXECUTOR_H

#include "runtime/Executable.h"
#include "runtime/Program.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::runtime {

struct CudaRuntimeOptions {
  /// The device ordinal (cuDeviceGet).
  int device = 0;
  /// Capture the thunk sequence as a CUDA graph on the second run and
  /// replay it from then on (one launch instead of one per thunk).
  bool captureGraphs = true;
  /// The driver library; empty: $KILN_CUDA_DRIVER, else "libcuda.so.1".
  std::string driverLibrary;
  /// cuBLASLt; empty: $KILN_CUBLASLT, else "libcublasLt.so.13", then
  /// "libcublasLt.so". Loaded only by programs with GEMM thunks.
  std::string cublasLtLibrary;
};

/// What a CUDA program did since it was loaded, for tests and tools.
struct CudaProgramStats {
  /// Thunk sequences captured and instantiated as a graph (0 or 1).
  int64_t graphCaptures = 0;
  /// Captures that failed: the program then launches directly for good.
  int64_t graphCaptureFailures = 0;
  /// Runs that replayed the graph.
  int64_t graphLaunches = 0;
  /// Runs that launched the thunks one by one (the first, and every run
  /// when graphs are off or capture failed).
  int64_t directRuns = 0;
  /// Bytes runs copied host → device (inputs) and device → host (outputs).
  int64_t bytesCopiedToDevice = 0;
  int64_t bytesCopiedToHost = 0;
  /// Device memory the program holds (allocated once, at load).
  int64_t deviceBytes = 0;
};

/// executable → a runnable program on the GPU. Refuses an executable built
/// for another device, a GPU whose compute capability cannot run its
/// kernels (FailedPrecondition naming both), a missing driver or device
/// (FailedPrecondition with the reason), device memory too small
/// (ResourceExhausted with the plan's largest buffers), and a kernel the
/// library lacks (DataLoss).
absl::StatusOr<std::unique_ptr<Program>>
loadCudaProgram(Executable executable, const CudaRuntimeOptions &options = {});

/// Serialised executable bytes → a runnable program; a damaged blob is
/// refused (see deserializeExecutable) and never run.
absl::StatusOr<std::unique_ptr<Program>>
loadCudaProgram(std::string_view bytes, const CudaRuntimeOptions &options = {});

/// OK when the driver loads and device `options.device` exists; else the
/// reason (the same message loadCudaProgram would give), for tests and
/// tools that skip or exit without a GPU.
absl::Status cudaDeviceAvailable(const CudaRuntimeOptions &options = {});

/// The device memory programs may still allocate on device
/// `options.device`: the driver's free memory (cuMemGetInfo in the primary
/// context: what the context itself and other processes hold is not free),
/// and no more than KILN_DEVICE_MEMORY_LIMIT leaves (DeviceMemoryMeter).
/// Errors as cudaDeviceAvailable's.
absl::StatusOr<uint64_t>
cudaMemoryAvailable(const CudaRuntimeOptions &options = {});

/// A CUDA program's statistics; InvalidArgument for another backend's.
absl::StatusOr<CudaProgramStats> cudaProgramStats(const Program &program);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_CUDA_CUDAEXECUTOR_H
