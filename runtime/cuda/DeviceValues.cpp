// Device-resident outputs (DeviceValues.h).
#include "runtime/cuda/DeviceValues.h"

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

absl::Status
DeviceValues::stageAllExcept(const std::set<const DeviceValue *> &consumed) {
  std::vector<std::shared_ptr<DeviceValue>> staging;
  for (auto it = live_.begin(); it != live_.end();) {
    std::shared_ptr<DeviceValue> value = it->second.lock();
    if (!value || !value->onDevice_) {
      it = live_.erase(it);
      continue;
    }
    if (!consumed.count(value.get()))
      staging.push_back(std::move(value));
    ++it;
  }
  if (staging.empty())
    return absl::OkStatus();
  const CudaDriver &d = *driver_;
  absl::Status status = absl::OkStatus();
  for (const std::shared_ptr<DeviceValue> &value : staging) {
    value->onDevice_ = false;
    live_.erase(value.get());
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
    for (const std::shared_ptr<DeviceValue> &value : staging)
      value->staged_.reset(); // their reads say the bytes are gone
  return status;
}

void DeviceValues::close() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (closed_)
    return;
  // A failure here leaves the values unreadable; their fetch then says so.
  (void)stageAllExcept({});
  closed_ = true;
  live_.clear();
}

} // namespace kiln::runtime::cuda
