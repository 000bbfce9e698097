// Device memory of a CUDA program: an owning handle for one cuMemAlloc, and
// the allocation call that turns "out of memory" into a report a user can
// act on (what was asked, what the device has, what the program plans in
// all, and its largest buffers).
#ifndef KILN_RUNTIME_CUDA_CUDAMEMORY_H
#define KILN_RUNTIME_CUDA_CUDAMEMORY_H

#include "runtime/Executable.h"
#include "runtime/cuda/CudaDriver.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace kiln::runtime::cuda {

/// One cuMemAlloc, freed when the handle dies (the program makes its
/// context current first). An empty handle holds no memory: pointer 0.
class DeviceAllocation {
public:
  DeviceAllocation() = default;
  DeviceAllocation(std::shared_ptr<const CudaDriver> driver, CUdeviceptr base,
                   uint64_t bytes)
      : driver_(std::move(driver)), base_(base), bytes_(bytes) {}
  ~DeviceAllocation() { reset(); }
  DeviceAllocation(DeviceAllocation &&other) noexcept {
    *this = std::move(other);
  }
  DeviceAllocation &operator=(DeviceAllocation &&other) noexcept;
  DeviceAllocation(const DeviceAllocation &) = delete;
  DeviceAllocation &operator=(const DeviceAllocation &) = delete;

  CUdeviceptr get() const { return base_; }
  uint64_t bytes() const { return bytes_; }
  void reset();

private:
  std::shared_ptr<const CudaDriver> driver_;
  CUdeviceptr base_ = 0;
  uint64_t bytes_ = 0;
};

/// Everything a program allocates on the device, for the report.
struct DeviceMemoryPlan {
  uint64_t arenaBytes = 0;
  uint64_t ioBytes = 0;        // device copies of inputs and outputs
  uint64_t workspaceBytes = 0; // cuBLASLt workspace (an upper bound before
                               // the GEMMs are planned)
  uint64_t total() const { return arenaBytes + ioBytes + workspaceBytes; }
};

/// `bytes` of device memory (an empty handle for 0). On
/// CUDA_ERROR_OUT_OF_MEMORY: ResourceExhausted naming `what`, the bytes
/// asked, the device's free and total memory (cuMemGetInfo), the planned
/// total and the five largest slots of `executable`'s plan.
absl::StatusOr<DeviceAllocation>
allocateDevice(const std::shared_ptr<const CudaDriver> &driver, uint64_t bytes,
               const std::string &what, const DeviceMemoryPlan &planned,
               const Executable &executable);

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_CUDAMEMORY_H
