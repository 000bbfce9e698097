// Running a CUDA program (CudaProgram.h). All on the program's one stream:
// (1) keep in host memory the outputs of earlier runs that are still alive
// (their device bytes are about to be overwritten), except those donated
// back as inputs, (2) put each input a thunk reads into its fixed device
// buffer: an earlier output donated back is already there (or moves there
// device to device); anything else is copied from the host, (3) the
// thunks: launched one by one on the first run, captured as a CUDA graph
// on the second and replayed from then on (the graph only sees fixed
// device pointers, so it never needs capturing again), (4) return each
// output as a deferred tensor on the device (DeviceValues.h). A run does
// not wait for the GPU: reading an output does. An input returned as an
// output never goes through the device. With profiling on, (3) launches
// directly, an event before each thunk and after the last, and
// takeProfile() turns the events into the run's per-thunk times.
#include "runtime/ProgramChecks.h"
#include "runtime/cuda/CudaProgram.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace kiln::runtime::cuda {

namespace {

/// Waits for the stream when a run fails after enqueueing work, so no copy
/// still reads or writes a host buffer the failed run is about to free.
class DrainOnError {
public:
  DrainOnError(const CudaDriver &driver, CUstream stream)
      : driver_(driver), stream_(stream) {}
  ~DrainOnError() {
    if (!finished_)
      driver_.streamSynchronize(stream_);
  }
  void finished() { finished_ = true; }

private:
  const CudaDriver &driver_;
  CUstream stream_;
  bool finished_ = false;
};

} // namespace

AllocationStats CudaProgram::allocationStats() const {
  BufferPool::Stats stats = buffers_->stats();
  return {stats.allocations, stats.allocatedBytes};
}

CudaProgramStats CudaProgram::stats() const {
  std::lock_guard<std::recursive_mutex> lock(values_->mutex());
  return stats_;
}

CUdeviceptr CudaProgram::slotPointer(uint32_t slot) const {
  const BufferSlot &s = exe_.plan.slots[slot];
  switch (s.kind) {
  case BufferSlot::Kind::input:
    return inputDevice_[s.input];
  case BufferSlot::Kind::output:
    return outputDevice_[s.input];
  case BufferSlot::Kind::arena:
    break;
  }
  return arena_.get() + s.offset;
}

std::vector<DeviceValue *>
CudaProgram::residentInputs(const std::vector<ProgramInput> &inputs) const {
  std::vector<DeviceValue *> resident(inputs.size(), nullptr);
  // Only a donated value this run may consume: a borrowed one is kept by
  // the caller, and a returned one must outlive the run unchanged.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto &contents = inputs[i].tensor().deferredContents();
    if (contents && inputs[i].isDonated() && outputReaders_[i] == 0)
      resident[i] = values_->find(contents.get());
  }
  // A value that must move to its input's buffer moves device to device
  // before the thunks; when another input's buffer is where it lies, that
  // input's copy would overwrite it first, so it goes through the host.
  std::set<CUdeviceptr> written;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputReadByThunks_[i] &&
        !(resident[i] && resident[i]->pointer() == inputDevice_[i]))
      written.insert(inputDevice_[i]);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (resident[i] && inputReadByThunks_[i] &&
        resident[i]->pointer() != inputDevice_[i] &&
        written.count(resident[i]->pointer()))
      resident[i] = nullptr;
  return resident;
}

absl::Status
CudaProgram::copyInputsToDevice(const std::vector<ProgramInput> &inputs,
                                const std::vector<DeviceValue *> &resident) {
  const CudaDriver &d = *driver_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor &t = inputs[i].tensor();
    if (!inputReadByThunks_[i] || t.byteSize() == 0)
      continue;
    if (resident[i]) {
      if (resident[i]->pointer() == inputDevice_[i])
        continue; // already in place: a parameter updated last step
      if (absl::Status s = d.check(
              d.memcpyDtoDAsync(inputDevice_[i], resident[i]->pointer(),
                                t.byteSize(), stream_),
              absl::StrCat("cuMemcpyDtoDAsync (input ", i, ", ",
                           t.byteSize(), " bytes)"));
          !s.ok())
        return s;
      continue;
    }
    if (absl::Status s = d.check(
            d.memcpyHtoDAsync(inputDevice_[i], t.data(), t.byteSize(), stream_),
            absl::StrCat("cuMemcpyHtoDAsync (input ", i, ", ", t.byteSize(),
                         " bytes)"));
        !s.ok())
      return s;
    stats_.bytesCopiedToDevice += static_cast<int64_t>(t.byteSize());
  }
  return absl::OkStatus();
}

absl::Status CudaProgram::enqueueKernel(size_t index) {
  const CudaDriver &d = *driver_;
  KernelLaunch &launch = launches_[index];
  // Parameters fixed at load (KernelLaunch): slot pointers, rangeSize.
  CUresult r = d.launchKernel(launch.function, launch.grid, 1, 1, launch.block,
                              1, 1, 0, stream_, launch.params.data(), nullptr);
  if (r == CUDA_SUCCESS)
    return absl::OkStatus();
  const KernelThunk &kernel = exe_.thunks[index].kernel;
  return absl::InternalError(absl::StrCat(
      "CUDA kernel thunk ", index, " (", kernel.symbol,
      kernel.label.empty() ? "" : ": ", kernel.label,
      ") failed to launch with grid ", launch.grid, "x1x1 of ", launch.block,
      " thread(s), rangeSize ", launch.rangeSize,
      ": cuLaunchKernel failed: ", d.describe(r)));
}

absl::Status CudaProgram::enqueueThunk(size_t index) {
  const CudaDriver &d = *driver_;
  const Thunk &t = exe_.thunks[index];
  switch (t.kind) {
  case Thunk::Kind::kernel:
    return enqueueKernel(index);
  case Thunk::Kind::gemm:
    return gemms_[index]->enqueue(d, stream_, workspace_.get(),
                                  workspace_.bytes());
  case Thunk::Kind::attention:
    return attention_->enqueue(index, stream_);
  case Thunk::Kind::allReduce: // refused when the program loaded
    return absl::UnimplementedError("all_reduce on cuda");
  case Thunk::Kind::copy: {
    CUdeviceptr src = slotPointer(t.copy.src), dst = slotPointer(t.copy.dst);
    // A copy onto itself is a no-op (and overlapping device copies are
    // undefined, unlike the cpu's memmove).
    if (t.copy.bytes == 0 || src == dst)
      return absl::OkStatus();
    return d.check(d.memcpyDtoDAsync(dst, src, t.copy.bytes, stream_),
                   absl::StrCat("copy thunk ", index, " (", t.copy.bytes,
                                " bytes): cuMemcpyDtoDAsync"));
  }
  }
  return absl::OkStatus();
}

absl::Status CudaProgram::enqueueThunks() {
  for (size_t i = 0; i < exe_.thunks.size(); ++i)
    if (absl::Status s = enqueueThunk(i); !s.ok())
      return s;
  return absl::OkStatus();
}

//===--- Profiling --------------------------------------------------------===//

void CudaProgram::setProfiling(bool on) {
  std::lock_guard<std::recursive_mutex> lock(values_->mutex());
  profiling_ = on;
}

absl::Status CudaProgram::createEvents() {
  const CudaDriver &d = *driver_;
  // All or none: a failure leaves no half-made set behind.
  std::vector<CUevent> events(exe_.thunks.size() + 2, nullptr);
  for (CUevent &event : events)
    if (absl::Status s = d.check(d.eventCreate(&event, CU_EVENT_DEFAULT),
                                 "cuEventCreate (profiling)");
        !s.ok()) {
      for (CUevent made : events)
        if (made)
          d.eventDestroy(made);
      return s;
    }
  events_ = std::move(events);
  thunkEvents_ = describeThunks(exe_);
  return absl::OkStatus();
}

absl::Status CudaProgram::recordEvent(size_t index) {
  if (events_.empty())
    if (absl::Status s = createEvents(); !s.ok())
      return s;
  return driver_->check(driver_->eventRecord(events_[index], stream_),
                        "cuEventRecord (profiling)");
}

absl::Status CudaProgram::enqueueTimedThunks() {
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    if (absl::Status s = recordEvent(1 + i); !s.ok())
      return s;
    if (absl::Status s = enqueueThunk(i); !s.ok())
      return s;
  }
  if (absl::Status s = recordEvent(1 + exe_.thunks.size()); !s.ok())
    return s;
  profiledRunPending_ = true;
  return absl::OkStatus();
}

std::optional<RunProfile> CudaProgram::takeProfile() {
  std::lock_guard<std::recursive_mutex> lock(values_->mutex());
  if (!profiledRunPending_)
    return std::nullopt;
  profiledRunPending_ = false;
  // A failure here (a faulted device) loses only the profile: reading the
  // run's outputs reports the fault itself.
  const CudaDriver &d = *driver_;
  if (d.ctxSetCurrent(context_) != CUDA_SUCCESS ||
      d.eventSynchronize(events_.back()) != CUDA_SUCCESS)
    return std::nullopt;
  auto sinceStart = [&](size_t event) -> std::optional<double> {
    float ms = 0;
    if (d.eventElapsedTime(&ms, events_[0], events_[event]) != CUDA_SUCCESS)
      return std::nullopt;
    return 1e3 * double(ms);
  };
  RunProfile run;
  run.program = reinterpret_cast<uintptr_t>(this);
  run.device = "cuda";
  run.limits = deviceLimits(device_.name);
  run.events.reserve(exe_.thunks.size());
  std::optional<double> before = sinceStart(1);
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    std::optional<double> after = sinceStart(2 + i);
    if (!before || !after)
      return std::nullopt;
    ThunkEvent e = thunkEvents_[i];
    e.startUs = *before;
    e.durationUs = std::max(0.0, *after - *before);
    run.events.push_back(std::move(e));
    before = after;
  }
  run.durationUs = before.value_or(0);
  return run;
}

bool CudaProgram::captureGraph() {
  const CudaDriver &d = *driver_;
  auto giveUp = [&] {
    // Launching directly is always correct, only slower: do it for good
    // rather than retrying a capture that failed once.
    graphsDisabled_ = true;
    ++stats_.graphCaptureFailures;
    return false;
  };
  if (d.streamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) !=
      CUDA_SUCCESS)
    return giveUp();
  absl::Status enqueued = enqueueThunks();
  CUgraph graph = nullptr;
  CUresult ended = d.streamEndCapture(stream_, &graph);
  if (!enqueued.ok() || ended != CUDA_SUCCESS || graph == nullptr) {
    if (graph)
      d.graphDestroy(graph);
    return giveUp();
  }
  CUgraphExec exec = nullptr;
  CUresult instantiated = d.graphInstantiateWithFlags(&exec, graph, 0);
  // The executable graph is independent of the graph it was made from.
  d.graphDestroy(graph);
  if (instantiated != CUDA_SUCCESS || exec == nullptr)
    return giveUp();
  graph_ = exec;
  ++stats_.graphCaptures;
  return true;
}

absl::Status CudaProgram::runThunks() {
  bool firstRun = thunkSequences_++ == 0;
  // The first run launches directly: a program run once never pays for a
  // capture, launch errors name their thunk, and libraries that initialise
  // lazily on first use (cuBLASLt) do so outside the capture, where
  // allocating or setting attributes would invalidate it.
  if (graph_ == nullptr && !firstRun && options_.captureGraphs &&
      !graphsDisabled_ && !exe_.thunks.empty() && !profiling_)
    captureGraph();
  if (graph_ != nullptr && !profiling_) {
    if (absl::Status s = driver_->check(driver_->graphLaunch(graph_, stream_),
                                        "cuGraphLaunch");
        !s.ok())
      return s;
    ++stats_.graphLaunches;
    return absl::OkStatus();
  }
  ++stats_.directRuns;
  return profiling_ ? enqueueTimedThunks() : enqueueThunks();
}

absl::Status CudaProgram::collectOutputs(std::vector<ProgramInput> &inputs,
                                         std::vector<HostTensor> &outputs,
                                         std::vector<bool> &taken,
                                         std::vector<HostCopy> &hostCopies) {
  const ProgramSignature &sig = exe_.signature;
  const BufferPlan &plan = exe_.plan;
  // Input storage does not move when a tensor is taken: note it first.
  // (Only for inputs some output returns: data() would bring a value
  // that is on the device to the host.)
  std::vector<const std::byte *> hostInput(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (outputReaders_[i] > 0)
      hostInput[i] = inputs[i].tensor().data();
  std::vector<int> readers = outputReaders_;
  auto acquire = [&](size_t o) -> absl::Status {
    absl::StatusOr<HostTensor> buffer =
        buffers_->acquire(sig.outputs[o].dtype, sig.outputs[o].shape);
    if (!buffer.ok())
      return buffer.status();
    outputs[o] = *std::move(buffer);
    return absl::OkStatus();
  };
  for (size_t o = 0; o < outputs.size(); ++o) {
    const OutputSource &source = outputSources_[o];
    const ProgramValue &type = sig.outputs[o];
    if (source.kind != OutputSource::Kind::input) {
      // Computed on the device: it stays there until read.
      CUdeviceptr pointer = source.kind == OutputSource::Kind::ownBuffer
                                ? outputDevice_[o]
                                : slotPointer(source.slot);
      outputs[o] = HostTensor::deferred(
          type.dtype, type.shape, values_->issue(pointer, valueBytes(type)));
      continue;
    }
    // A returned input, as the cpu's finishOutputs: the input's own buffer
    // when nothing else returns it and the caller gave it up, else a copy.
    uint32_t returned = plan.slots[source.slot].input;
    if (readers[returned] == 1 && !taken[returned]) {
      taken[returned] = true;
      outputs[o] = inputs[returned].take();
      continue;
    }
    if (absl::Status s = acquire(o); !s.ok())
      return s;
    --readers[returned];
    hostCopies.push_back({o, hostInput[returned]});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<HostTensor>>
CudaProgram::execute(std::vector<ProgramInput> inputs) {
  if (absl::Status s = checkRunInputs(exe_.signature, inputs); !s.ok())
    return s;
  std::lock_guard<std::recursive_mutex> lock(values_->mutex());
  const CudaDriver &d = *driver_;
  // The context is current per thread, and runs may come from any thread.
  if (absl::Status s = d.check(d.ctxSetCurrent(context_), "cuCtxSetCurrent");
      !s.ok())
    return s;
  DrainOnError drain(d, stream_);
  std::vector<DeviceValue *> resident = residentInputs(inputs);
  std::set<const DeviceValue *> consumed(resident.begin(), resident.end());
  consumed.erase(nullptr);
  if (absl::Status s = values_->keepAllExcept(consumed); !s.ok())
    return s;
  // A profiled run is timed from here: its inputs' copies are part of it.
  profiledRunPending_ = false;
  if (profiling_)
    if (absl::Status s = recordEvent(0); !s.ok())
      return s;
  if (absl::Status s = copyInputsToDevice(inputs, resident); !s.ok())
    return s;
  if (absl::Status s = runThunks(); !s.ok())
    return s;
  std::vector<HostTensor> outputs(exe_.signature.outputs.size());
  // A borrowed buffer is never the program's to return or overwrite.
  std::vector<bool> taken(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    taken[i] = !inputs[i].isDonated();
  std::vector<HostCopy> hostCopies;
  if (absl::Status s = collectOutputs(inputs, outputs, taken, hostCopies);
      !s.ok())
    return s;
  drain.finished();
  // Returned inputs, copied on the host: no device work reads or writes
  // these buffers (a copy from pageable memory has read its source by the
  // time cuMemcpyHtoDAsync returns).
  for (const HostCopy &copy : hostCopies)
    std::memcpy(outputs[copy.output].data(), copy.source,
                outputs[copy.output].byteSize());
  // Donated buffers no output took feed the pool (as on the cpu).
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!taken[i]) {
      HostTensor unused = inputs[i].take();
      buffers_->adopt(unused);
    }
  return outputs;
}

} // namespace kiln::runtime::cuda
