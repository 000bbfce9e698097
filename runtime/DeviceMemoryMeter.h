// The device memory a process's programs hold, counted where device
// runtimes allocate it, and an optional cap on it: the counterpart of
// torch.cuda.max_memory_allocated and set_per_process_memory_fraction, or
// JAX's XLA_PYTHON_CLIENT_MEM_FRACTION. A runtime asks reserve() before it
// allocates device memory and calls release() when it frees it, so the
// peak is the most the process's programs (arenas, input and output
// buffers, workspaces, kept values) held at once. The driver's own context
// and libraries' internal allocations are not counted, as PyTorch's
// allocator does not count them.
//
// The cap comes from KILN_DEVICE_MEMORY_LIMIT (a byte count: "16GiB") or
// setLimit(); an allocation that would pass it is refused as the device
// itself refuses one past its memory, so a job capped at 16 GiB on an
// 80 GiB GPU fails where a 16 GiB GPU would. Host-memory backends (cpu)
// allocate no device memory and count nothing here.
#ifndef KILN_RUNTIME_DEVICEMEMORYMETER_H
#define KILN_RUNTIME_DEVICEMEMORYMETER_H

#include "absl/status/status.h"

#include <algorithm>
#include <cstdint>
#include <mutex>

namespace kiln::runtime {

class DeviceMemoryMeter {
public:
  struct Stats {
    uint64_t inUseBytes = 0;
    /// The most in use at once since the process started or resetPeak().
    uint64_t peakBytes = 0;
    /// The cap; 0 when there is none.
    uint64_t limitBytes = 0;
    /// Allocations refused by the cap.
    int64_t refusals = 0;
    /// What the cap still allows (all of `unlimited` without one).
    uint64_t headroom(uint64_t unlimited) const {
      return limitBytes == 0 ? unlimited
                             : limitBytes - std::min(limitBytes, inUseBytes);
    }
  };

  /// The process's meter. Its limit starts as KILN_DEVICE_MEMORY_LIMIT.
  static DeviceMemoryMeter &process();

  /// A meter whose limit is `limitText` (a byte count; null or empty: no
  /// limit), as process() reads the variable.
  explicit DeviceMemoryMeter(const char *limitText);

  /// Counts `bytes` as allocated → OK; ResourceExhausted (nothing counted)
  /// when that would pass the limit, saying the limit and what is in use;
  /// InvalidArgument when KILN_DEVICE_MEMORY_LIMIT is not a byte count.
  absl::Status reserve(uint64_t bytes);
  /// Counts `bytes` reserved earlier as freed.
  void release(uint64_t bytes);

  Stats stats() const;
  /// The peak restarts from what is in use now.
  void resetPeak();
  /// Replaces the limit (0: none), whatever the environment said.
  void setLimit(uint64_t bytes);

private:
  mutable std::mutex mutex_;
  Stats stats_;
  /// KILN_DEVICE_MEMORY_LIMIT when it is not a byte count (reported by
  /// every reserve() until setLimit()).
  absl::Status limitProblem_;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_DEVICEMEMORYMETER_H
