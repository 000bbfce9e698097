// Outputs a CUDA program hands back without copying them to the host. A run
// returns each output as a deferred HostTensor (support/HostTensor.h) whose
// contents stay in the program's device memory until the host reads them:
// parameters and optimizer state go from one training step to the next
// without crossing the bus, and a run need not wait for the GPU: the read
// of the loss is what waits.
//
// The device bytes behind a value are overwritten by the program's next
// run (its outputs and arena are fixed buffers). So before a run starts,
// every value still alive and on the device is kept, except the values the
// run consumes: donated back as inputs, whose bytes the run reads in place.
// A small value (a loss, a gradient norm: what a training loop reads only
// when it logs) is kept on the device: a copy on the stream into a block of
// its own, ahead of the run, so the host never waits for the device between
// steps. A large one, or one the device has no room for, is copied to host
// memory (staged), which waits. A value outlives its program the same way:
// the program stages everything when it is destroyed.
#ifndef KILN_RUNTIME_CUDA_DEVICEVALUES_H
#define KILN_RUNTIME_CUDA_DEVICEVALUES_H

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/CudaExecutor.h"
#include "support/HostTensor.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

namespace kiln::runtime::cuda {

class DeviceValues;

/// One output of one run, in device memory until first read or staged.
class DeviceValue final : public DeferredContents {
public:
  DeviceValue(std::shared_ptr<DeviceValues> owner, CUdeviceptr pointer,
              size_t bytes)
      : owner_(std::move(owner)), pointer_(pointer), bytes_(bytes) {}
  ~DeviceValue() override;
  absl::Status fetch(std::byte *dst, size_t bytes) override;
  CUdeviceptr pointer() const { return pointer_; }

private:
  friend class DeviceValues;
  std::shared_ptr<DeviceValues> owner_;
  CUdeviceptr pointer_;
  size_t bytes_;
  /// The host copy made before the device bytes were overwritten.
  std::unique_ptr<std::byte[]> staged_;
  bool onDevice_ = true;
  /// pointer_ is a keep block of the owner's (not an output buffer): no
  /// run writes it, and it goes back to the owner when the value dies.
  bool inKeepBlock_ = false;
};

/// The values a program has handed out, and the lock that its runs and the
/// values' reads share (recursive: a run reads staged inputs under it).
class DeviceValues : public std::enable_shared_from_this<DeviceValues> {
public:
  DeviceValues(std::shared_ptr<const CudaDriver> driver, CUcontext context,
               CUstream stream, CudaProgramStats *stats)
      : driver_(std::move(driver)), context_(context), stream_(stream),
        stats_(stats) {}

  std::recursive_mutex &mutex() const { return mutex_; }

  /// A new value of `bytes` at `pointer` (call with the lock held).
  std::shared_ptr<DeviceValue> issue(CUdeviceptr pointer, size_t bytes);
  /// `contents` when it is a value of this program still on the device,
  /// else null (another program's, staged, or a host tensor's).
  DeviceValue *find(const DeferredContents *contents) const;
  /// Keeps every live value that the next run would overwrite, except
  /// `consumed`: small ones in keep blocks, on the stream, without waiting;
  /// the rest in host memory, waiting for the copies.
  absl::Status keepAllExcept(const std::set<const DeviceValue *> &consumed);
  /// The program is going away: stages every value; they keep working
  /// from host memory and never touch the device again.
  void close();

  /// Values up to this size are kept on the device, up to kKeepCapacity
  /// bytes of blocks in all (a loop that reads its loss every N steps holds
  /// N of them).
  static constexpr size_t kKeepOnDeviceBytes = size_t(1) << 20;
  static constexpr size_t kKeepCapacity = size_t(64) << 20;

private:
  friend class DeviceValue;
  absl::Status fetch(DeviceValue &value, std::byte *dst);
  absl::Status wait(const char *what);
  /// Moves `value` into a keep block with a copy on the stream; false when
  /// it is too large or no block can be had (it is then staged).
  bool moveToKeepBlock(DeviceValue &value);
  /// Copies `values` to host memory and waits.
  absl::Status stage(const std::vector<std::shared_ptr<DeviceValue>> &values);
  /// A dead or staged value's block goes back for reuse: every use of a
  /// block is on the stream, so a later copy into it runs after earlier
  /// reads of it.
  void releaseKeepBlock(DeviceValue &value);
  /// The block size for a value of `bytes` (256-byte steps, at least one).
  static size_t keepBlockBytes(size_t bytes) {
    return (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  }
  /// The live values still on the device (forgetting the dead ones).
  std::vector<std::shared_ptr<DeviceValue>> liveOnDevice();

  mutable std::recursive_mutex mutex_;
  std::shared_ptr<const CudaDriver> driver_;
  CUcontext context_;
  CUstream stream_;
  CudaProgramStats *stats_;
  bool closed_ = false;
  std::unordered_map<const DeferredContents *, std::weak_ptr<DeviceValue>>
      live_;
  /// Free keep blocks by size, and the bytes of all blocks allocated.
  std::unordered_map<size_t, std::vector<CUdeviceptr>> freeKeepBlocks_;
  size_t keepBlockBytesAllocated_ = 0;
};

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_DEVICEVALUES_H
