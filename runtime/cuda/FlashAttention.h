// Runs attention thunks on the GPU with kiln's flash attention kernels
// (runtime/kernels/FlashAttention.h, built into this library by nvcc as a
// fatbin from FlashAttention.cu):
// one kernel for the forward, two for the gradient (query side, then key
// side, which reads the row deltas the first leaves in a scratch buffer). Internal to runtime/cuda (CudaProgram loads it).
#ifndef KILN_RUNTIME_CUDA_FLASHATTENTION_H
#define KILN_RUNTIME_CUDA_FLASHATTENTION_H

#include "runtime/Executable.h"
#include "runtime/cuda/AttentionRunner.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/kernels/FlashAttention.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::runtime::cuda {

/// True when this library was built with the kernels (nvcc was found).
bool flashAttentionKernelsBuilt();

class FlashAttention : public AttentionRunner {
public:
  /// Bytes of scratch the gradients of `executable` need (the largest
  /// gradient thunk's row deltas; one thunk runs at a time).
  static uint64_t scratchBytes(const Executable &executable);

  /// Loads the kernels into the current context and fixes every attention
  /// thunk's launches: its slots through `slotPointer`, the gradients'
  /// deltas in `scratch`. FailedPrecondition when the library was built
  /// without the kernels or the GPU cannot run them (shared memory, compute
  /// capability below 8.0); DataLoss for a thunk the kernels cannot run.
  static absl::StatusOr<std::unique_ptr<FlashAttention>>
  create(std::shared_ptr<const CudaDriver> driver, const CudaDeviceInfo &device,
         const Executable &executable,
         const std::function<CUdeviceptr(uint32_t)> &slotPointer,
         CUdeviceptr scratch);
  ~FlashAttention() override;
  FlashAttention(const FlashAttention &) = delete;
  FlashAttention &operator=(const FlashAttention &) = delete;

  /// Enqueues thunk `index`'s kernels on `stream`; an error names the
  /// thunk, the kernel and its launch.
  absl::Status enqueue(size_t index, CUstream stream) const override;

private:
  struct Launch {
    std::string kernel;
    CUfunction function = nullptr;
    unsigned gridX = 1, gridY = 1, sharedBytes = 0;
  };
  struct Prepared {
    flash::AttentionParams params;
    std::vector<Launch> launches;
  };
  explicit FlashAttention(std::shared_ptr<const CudaDriver> driver)
      : driver_(std::move(driver)) {}
  absl::Status prepare(size_t index, const AttentionThunk &thunk,
                       const std::function<CUdeviceptr(uint32_t)> &slotPointer,
                       CUdeviceptr scratch, int sharedLimit);

  std::shared_ptr<const CudaDriver> driver_;
  CUmodule module_ = nullptr;
  /// Per thunk; empty for thunks that are not attention.
  std::vector<Prepared> byThunk_;
};

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_FLASHATTENTION_H
