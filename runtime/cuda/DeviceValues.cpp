// Device-resident outputs (DeviceValues.h).
#include "runtime/cuda/DeviceValues.h"

#include "runtime/DeviceMemoryMeter.h"

#include "absl/strings/str_cat.h"

#include <cstring>
#include <vector>

namespace kiln::runtime::cuda {

absl::Status DeviceValue::fetch(std::byte *dst, size_t bytes) {
  std::lock_guard<std::recursive_mutex> lock(owner_->mutex());
  if (bytes != bytes_)
    return absl::InternalError(absl::StrCat("a device value of ", bytes_,
                                            " bytes read as ", bytes));
  return owner_->fetch(*this, dst);
}

std::shared_ptr<DeviceValue> DeviceValues::issue(CUdeviceptr pointer,
                                                 size_t bytes) {
  auto value =
      std::make_shared<DeviceValue>(shared_from_this(), pointer, bytes);
  live_[value.get()] = value;
  return value;
}

DeviceValue *DeviceValues::find(const DeferredContents *contents) const {
  auto it = live_.find(contents);
  if (it == live_.end())
    return nullptr;
  std::shared_ptr<DeviceValue> value = it->second.lock();
  return value && value->onDevice_ ? value.get() : nullptr;
}

absl::Status DeviceValues::wait(const char *what) {
  absl::Status s = driver_->check(driver_->streamSynchronize(stream_), what);
  if (s.ok())
    return s;
  // Kernel and GEMM faults of a run surface at the next wait.
  return absl::Status(
      s.code(), absl::StrCat(std::string(s.message()),
                             " (a kernel, GEMM or copy of an earlier run "
                             "failed; CUDA_LAUNCH_BLOCKING=1 makes the failing "
                             "launch report itself)"));
}

absl::Status DeviceValues::fetch(DeviceValue &value, std::byte *dst) {
  if (!value.onDevice_) {
    if (!value.staged_)
      return absl::DataLossError(
          "this output's device bytes are gone: keeping a host copy before "
          "its program ran again (or was destroyed) failed");
    std::memcpy(dst, value.staged_.get(), value.bytes_);
    value.staged_.reset();
    return absl::OkStatus();
  }
  value.onDevice_ = false;
  live_.erase(&value);
  // The copy below is on the stream, ahead of any reuse of the block.
  releaseKeepBlock(value);
  if (value.bytes_ == 0)
    return absl::OkStatus();
  const CudaDriver &d = *driver_;
  if (absl::Status s = d.check(d.ctxSetCurrent(context_), "cuCtxSetCurrent");
      !s.ok())
    return s;
  if (absl::Status s = d.check(
          d.memcpyDtoHAsync(dst, value.pointer_, value.bytes_, stream_),
          absl::StrCat("cuMemcpyDtoHAsync (", value.bytes_, " bytes)"));
      !s.ok())
    return s;
  stats_->bytesCopiedToHost += static_cast<int64_t>(value.bytes_);
  return wait("cuStreamSynchronize (reading an output)");
}

bool DeviceValues::moveToKeepBlock(DeviceValue &value) {
  if (value.bytes_ > kKeepOnDeviceBytes)
    return false;
  const size_t bytes = keepBlockBytes(value.bytes_);
  const CudaDriver &d = *driver_;
  CUdeviceptr block = 0;
  std::vector<CUdeviceptr> &free = freeKeepBlocks_[bytes];
  if (!free.empty()) {
    block = free.back();
    free.pop_back();
  } else {
    // Out of room (or out of memory, or past the process's cap) is no
    // error: the value is staged.
    if (keepBlockBytesAllocated_ + bytes > kKeepCapacity ||
        !DeviceMemoryMeter::process().reserve(bytes).ok())
      return false;
    if (d.memAlloc(&block, bytes) != CUDA_SUCCESS) {
      DeviceMemoryMeter::process().release(bytes);
      return false;
    }
    keepBlockBytesAllocated_ += bytes;
  }
  if (value.bytes_ &&
      d.memcpyDtoDAsync(block, value.pointer_, value.bytes_, stream_) !=
          CUDA_SUCCESS) {
    free.push_back(block);
    return false;
  }
  value.pointer_ = block;
  value.inKeepBlock_ = true;
  return true;
}

void DeviceValues::releaseKeepBlock(DeviceValue &value) {
  if (!value.inKeepBlock_)
    return;
  value.inKeepBlock_ = false;
  freeKeepBlocks_[keepBlockBytes(value.bytes_)].push_back(value.pointer_);
}

DeviceValue::~DeviceValue() {
  if (!inKeepBlock_)
    return;
  std::lock_guard<std::recursive_mutex> lock(owner_->mutex());
  owner_->releaseKeepBlock(*this);
}

absl::Status
DeviceValues::stage(const std::vector<std::shared_ptr<DeviceValue>> &values) {
  if (values.empty())
    return absl::OkStatus();
  const CudaDriver &d = *driver_;
  absl::Status status = absl::OkStatus();
  for (const std::shared_ptr<DeviceValue> &value : values) {
    value->onDevice_ = false;
    live_.erase(value.get());
    releaseKeepBlock(*value); // the copy below runs before any reuse
    value->staged_.reset(new std::byte[std::max<size_t>(value->bytes_, 1)]);
    if (value->bytes_ && status.ok()) {
      status = d.check(d.memcpyDtoHAsync(value->staged_.get(), value->pointer_,
                                         value->bytes_, stream_),
                       absl::StrCat("cuMemcpyDtoHAsync (keeping a ",
                                    value->bytes_,
                                    "-byte output before the next run)"));
      stats_->bytesCopiedToHost += static_cast<int64_t>(value->bytes_);
    }
  }
  if (status.ok())
    status = wait("cuStreamSynchronize (keeping earlier outputs)");
  if (!status.ok())
    for (const std::shared_ptr<DeviceValue> &value : values)
      value->staged_.reset(); // their reads say the bytes are gone
  return status;
}

std::vector<std::shared_ptr<DeviceValue>> DeviceValues::liveOnDevice() {
  std::vector<std::shared_ptr<DeviceValue>> values;
  for (auto it = live_.begin(); it != live_.end();) {
    std::shared_ptr<DeviceValue> value = it->second.lock();
    if (!value || !value->onDevice_) {
      it = live_.erase(it);
      continue;
    }
    values.push_back(std::move(value));
    ++it;
  }
  return values;
}

absl::Status
DeviceValues::keepAllExcept(const std::set<const DeviceValue *> &consumed) {
  std::vector<std::shared_ptr<DeviceValue>> staging;
  for (std::shared_ptr<DeviceValue> &value : liveOnDevice())
    // A value in a keep block is safe from the run already.
    if (!consumed.count(value.get()) && !value->inKeepBlock_ &&
        !moveToKeepBlock(*value))
      staging.push_back(std::move(value));
  return stage(staging);
}

void DeviceValues::close() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (closed_)
    return;
  // Everything still on the device, kept blocks included, goes to host
  // memory; a failure leaves the values unreadable, and their fetch says so.
  (void)stage(liveOnDevice());
  closed_ = true;
  live_.clear();
  // Every block is free now: the staged values gave theirs back.
  for (auto &[bytes, blocks] : freeKeepBlocks_)
    for (CUdeviceptr block : blocks) {
      driver_->memFree(block);
      DeviceMemoryMeter::process().release(bytes);
    }
  freeKeepBlocks_.clear();
  keepBlockBytesAllocated_ = 0;
}

} // namespace kiln::runtime::cuda
