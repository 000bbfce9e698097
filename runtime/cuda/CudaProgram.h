// CudaProgram: the loaded form of a CUDA executable (internal to
// runtime/cuda; the public API is CudaExecutor.h). Loading is in
// CudaProgramLoad.cpp, running in CudaProgramRun.cpp.
#ifndef KILN_RUNTIME_CUDA_CUDAPROGRAM_H
#define KILN_RUNTIME_CUDA_CUDAPROGRAM_H

#include "runtime/Executable.h"
#include "runtime/Program.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/CudaExecutor.h"
#include "runtime/cuda/CudaGemm.h"
#include "runtime/cuda/CudaMemory.h"
#include "runtime/cuda/DeviceValues.h"
#include "runtime/cuda/AttentionRunner.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::runtime::cuda {

/// Where the library paths come from is decided at the API's edge
/// (CudaExecutor.cpp: options, then the environment, then defaults).
struct CudaLibraries {
  std::string driver;
  std::vector<std::string> cublasLt;
};

class CudaProgram final : public Program {
public:
  CudaProgram(Executable executable, const CudaRuntimeOptions &options,
              CudaLibraries libraries);
  ~CudaProgram() override;

  /// Everything a run needs, in order: device and context, kernels,
  /// device memory and kernel parameters, GEMM plans, then constants.
  absl::Status load();

  const ProgramSignature &signature() const override { return exe_.signature; }
  std::string_view backendName() const override { return "cuda"; }
  AllocationStats allocationStats() const override;
  CudaProgramStats stats() const;
  void setProfiling(bool on) override;
  std::optional<RunProfile> takeProfile() override;

protected:
  absl::StatusOr<std::vector<HostTensor>>
  execute(std::vector<ProgramInput> inputs) override;

private:
  /// A kernel thunk's launch, fixed at load. The kernel ABI (KernelThunk):
  /// one device pointer per slot, then int64 rangeSize; `params` points at
  /// `buffers` and `rangeSize`, so neither may move once set (the vector
  /// holding these is sized once, before `params` is filled).
  struct KernelLaunch {
    CUfunction function = nullptr;
    std::vector<CUdeviceptr> buffers;
    int64_t rangeSize = 0;
    std::vector<void *> params;
    unsigned grid = 1, block = 1;
  };
  /// Where output o's bytes come from after the thunks.
  struct OutputSource {
    enum class Kind { ownBuffer, device, input } kind = Kind::device;
    uint32_t slot = 0;
  };
  /// A returned input copied on the host once the stream is idle.
  struct HostCopy {
    size_t output;
    const std::byte *source;
  };

  // Loading (CudaProgramLoad.cpp).
  absl::Status openDevice();
  absl::Status checkArchitecture() const;
  absl::Status loadKernels();
  absl::Status planOutputs();
  absl::Status allocateMemory();
  absl::Status planGemms();
  /// Attention thunks: the library that runs them (kiln's flash kernels or
  /// cuDNN, AttentionRunner.h) and the device memory it needs.
  absl::Status loadAttention();
  absl::Status copyInitialData();

  // Running (CudaProgramRun.cpp).
  CUdeviceptr slotPointer(uint32_t slot) const;
  /// Per input: the device value (an output of an earlier run) it is and
  /// whose bytes this run reads in place, or null for a host copy.
  std::vector<DeviceValue *>
  residentInputs(const std::vector<ProgramInput> &inputs) const;
  absl::Status copyInputsToDevice(const std::vector<ProgramInput> &inputs,
                                  const std::vector<DeviceValue *> &resident);
  absl::Status runThunks();
  absl::Status enqueueThunk(size_t index);
  absl::Status enqueueThunks();
  absl::Status enqueueKernel(size_t index);
  bool captureGraph();
  /// Profiled runs: each thunk launched directly between two events (a
  /// replayed graph cannot be timed thunk by thunk).
  absl::Status createEvents();
  absl::Status recordEvent(size_t index);
  absl::Status enqueueTimedThunks();
  absl::Status collectOutputs(std::vector<ProgramInput> &inputs,
                              std::vector<HostTensor> &outputs,
                              std::vector<bool> &taken,
                              std::vector<HostCopy> &hostCopies);

  Executable exe_;
  CudaRuntimeOptions options_;
  CudaLibraries libraries_;
  std::shared_ptr<const CudaDriver> driver_;
  CudaDeviceInfo device_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUmodule module_ = nullptr;
  /// Per thunk (kernel thunks only).
  std::vector<KernelLaunch> launches_;
  /// Per thunk (GEMM thunks only); they need `cublas_`.
  std::unique_ptr<CublasLtHandle> cublas_;
  std::vector<std::unique_ptr<CudaGemm>> gemms_;
  /// Attention thunks' runner (absent without them), and the device
  /// memory its thunks share (one runs at a time): the flash gradients'
  /// row deltas, or cuDNN's workspace and dropout mask.
  std::unique_ptr<AttentionRunner> attention_;
  DeviceAllocation attentionScratch_;
  DeviceMemoryPlan memoryPlan_;
  DeviceAllocation arena_, io_, workspace_;
  /// Device buffers by input / output position (0: none). An output with
  /// a donor shares the donor's buffer, as on the cpu.
  std::vector<CUdeviceptr> inputDevice_, outputDevice_;
  /// Inputs a thunk reads: copied to the device by every run.
  std::vector<bool> inputReadByThunks_;
  std::vector<OutputSource> outputSources_;
  /// Per input: how many outputs return it as is.
  std::vector<int> outputReaders_;
  CUgraphExec graph_ = nullptr;
  bool graphsDisabled_ = false;
  int64_t thunkSequences_ = 0;
  CudaProgramStats stats_;
  /// Profiling (setProfiling): events_[0] marks a run's start (before its
  /// inputs move), events_[1 + i] the end of thunk i's predecessor, the
  /// last one the end of the thunks; created on the first profiled run.
  bool profiling_ = false, profiledRunPending_ = false;
  std::vector<CUevent> events_;
  /// describeThunks(exe_), made with the events.
  std::vector<ThunkEvent> thunkEvents_;
  /// Host storage of returned inputs, recycled across runs.
  std::shared_ptr<BufferPool> buffers_;
  /// The outputs runs handed out; its lock serialises runs and reads.
  std::shared_ptr<DeviceValues> values_;
};

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_CUDAPROGRAM_H
