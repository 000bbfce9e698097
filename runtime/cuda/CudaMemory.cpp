// Device allocations and the out-of-memory report (see CudaMemory.h).
#include "runtime/cuda/CudaMemory.h"

#include "runtime/DeviceMemoryMeter.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace kiln::runtime::cuda {

namespace {

std::string_view slotKindName(BufferSlot::Kind kind) {
  switch (kind) {
  case BufferSlot::Kind::input:
    return "input";
  case BufferSlot::Kind::output:
    return "output";
  case BufferSlot::Kind::arena:
    break;
  }
  return "arena";
}

/// "slot 7 (arena at 4096, 1048576 bytes), slot 2 (output 0, 65536 bytes)".
std::string largestSlots(const BufferPlan &plan, size_t count) {
  std::vector<uint32_t> order(plan.slots.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return plan.slots[a].bytes > plan.slots[b].bytes;
  });
  order.resize(std::min(order.size(), count));
  std::vector<std::string> parts;
  for (uint32_t s : order) {
    const BufferSlot &slot = plan.slots[s];
    std::string where = slot.kind == BufferSlot::Kind::arena
                            ? absl::StrCat("arena at ", slot.offset)
                            : absl::StrCat(std::string(slotKindName(slot.kind)),
                                           " ", slot.input);
    parts.push_back(
        absl::StrCat("slot ", s, " (", where, ", ", slot.bytes, " bytes)"));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

} // namespace

DeviceAllocation &
DeviceAllocation::operator=(DeviceAllocation &&other) noexcept {
  if (this != &other) {
    reset();
    driver_ = std::move(other.driver_);
    base_ = other.base_;
    bytes_ = other.bytes_;
    other.base_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceAllocation::reset() {
  // A failed free cannot be reported from a destructor; the memory goes
  // with the context.
  if (base_ != 0 && driver_) {
    driver_->memFree(base_);
    DeviceMemoryMeter::process().release(bytes_);
  }
  base_ = 0;
  bytes_ = 0;
}

absl::StatusOr<DeviceAllocation>
allocateDevice(const std::shared_ptr<const CudaDriver> &driver, uint64_t bytes,
               const std::string &what, const DeviceMemoryPlan &planned,
               const Executable &executable) {
  if (bytes == 0)
    return DeviceAllocation();
  // The process's cap (KILN_DEVICE_MEMORY_LIMIT) refuses as the device
  // does: the same report, naming the cap instead of the device.
  DeviceMemoryMeter &meter = DeviceMemoryMeter::process();
  absl::Status reserved = meter.reserve(bytes);
  if (absl::IsInvalidArgument(reserved))
    return reserved;
  CUdeviceptr base = 0;
  CUresult result = CUDA_ERROR_OUT_OF_MEMORY;
  if (reserved.ok()) {
    result = driver->memAlloc(&base, bytes);
    if (result == CUDA_SUCCESS)
      return DeviceAllocation(driver, base, bytes);
    meter.release(bytes);
  }
  if (result != CUDA_ERROR_OUT_OF_MEMORY)
    return driver->check(result, absl::StrCat("cuMemAlloc of the ", what, " (",
                                              bytes, " bytes)"));
  size_t freeBytes = 0, totalBytes = 0;
  std::string deviceMemory =
      !reserved.ok() ? std::string(reserved.message())
      : driver->memGetInfo(&freeBytes, &totalBytes) == CUDA_SUCCESS
          ? absl::StrCat(freeBytes, " of ", totalBytes, " bytes free")
          : "free memory unknown";
  return absl::ResourceExhaustedError(absl::StrCat(
      "CUDA backend: out of device memory allocating the ", what, " (", bytes,
      " bytes; ", deviceMemory, "); this program plans ", planned.total(),
      " bytes in all (arena ", planned.arenaBytes, ", inputs and outputs ",
      planned.ioBytes, ", GEMM workspace ", planned.workspaceBytes,
      "); largest slots: ", largestSlots(executable.plan, 5),
      "; compile with a smaller batch or a --memory-budget"));
}

} // namespace kiln::runtime::cuda
