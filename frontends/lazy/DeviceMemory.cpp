// Live device bytes: a counted buffer is wrapped in a shared_ptr whose
// deleter subtracts its bytes and releases the original; a set of counted
// buffers makes wrapping idempotent when nodes share one buffer.
#include "frontends/lazy/DeviceMemory.h"
#include "frontends/lazy/Step.h"

#include <algorithm>
#include <unordered_set>

namespace kiln::lazy {

namespace {

/// The buffers counted now. Never destroyed: tensors in static storage
/// (default_generator()'s state) release theirs during exit.
std::unordered_set<const HostTensor *> &counted() {
  static auto *buffers = new std::unordered_set<const HostTensor *>;
  return *buffers;
}

/// Uncounts the buffer, then lets the original owner go.
struct Release {
  std::shared_ptr<HostTensor> owner;
  int64_t bytes;
  void operator()(HostTensor *buffer) {
    counted().erase(buffer);
    mutableCounters().liveBytes -= bytes;
    owner.reset();
  }
};

} // namespace

std::shared_ptr<HostTensor>
trackDeviceBuffer(std::shared_ptr<HostTensor> value) {
  if (!value || counted().count(value.get()))
    return value;
  HostTensor *buffer = value.get();
  auto bytes = static_cast<int64_t>(buffer->byteSize());
  counted().insert(buffer);
  metrics::Counters &counters = mutableCounters();
  counters.liveBytes += bytes;
  counters.peakLiveBytes = std::max(counters.peakLiveBytes, counters.liveBytes);
  return std::shared_ptr<HostTensor>(buffer, Release{std::move(value), bytes});
}

} // namespace kiln::lazy
