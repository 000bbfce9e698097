#include "runtime/DeviceMemoryMeter.h"

#include "support/ByteSize.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace kiln::runtime {

DeviceMemoryMeter &DeviceMemoryMeter::process() {
  static DeviceMemoryMeter meter(std::getenv("KILN_DEVICE_MEMORY_LIMIT"));
  return meter;
}

DeviceMemoryMeter::DeviceMemoryMeter(const char *text) {
  if (!text || !*text)
    return;
  std::optional<uint64_t> limit = parseByteSize(text);
  if (!limit || *limit == 0)
    limitProblem_ = absl::InvalidArgumentError(
        absl::StrCat("KILN_DEVICE_MEMORY_LIMIT: expected a byte count such as "
                     "16GiB, got '",
                     text, "'"));
  else
    stats_.limitBytes = *limit;
}

absl::Status DeviceMemoryMeter::reserve(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!limitProblem_.ok())
    return limitProblem_;
  if (bytes > stats_.headroom(UINT64_MAX)) {
    ++stats_.refusals;
    return absl::ResourceExhaustedError(
        absl::StrCat("over the device memory limit (KILN_DEVICE_MEMORY_LIMIT ",
                     formatByteSize(stats_.limitBytes), "; ",
                     formatByteSize(stats_.inUseBytes), " in use, ",
                     formatByteSize(bytes), " asked)"));
  }
  stats_.inUseBytes += bytes;
  stats_.peakBytes = std::max(stats_.peakBytes, stats_.inUseBytes);
  return absl::OkStatus();
}

void DeviceMemoryMeter::release(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.inUseBytes -= std::min(bytes, stats_.inUseBytes);
}

DeviceMemoryMeter::Stats DeviceMemoryMeter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DeviceMemoryMeter::resetPeak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peakBytes = stats_.inUseBytes;
}

void DeviceMemoryMeter::setLimit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.limitBytes = bytes;
  limitProblem_ = absl::OkStatus();
}

} // namespace kiln::runtime
