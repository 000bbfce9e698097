// Loading a CUDA program (CudaProgram.h): (1) check the executable and that
// this GPU can run its kernels, (2) retain the device's primary context and
// make one stream, (3) load the kernel module once and resolve each symbol,
// (4) allocate all device memory the program will ever use and fix each
// kernel's parameters, (5) plan every GEMM on cuBLASLt against its final
// pointers, (6) copy the constants in. Every device pointer is fixed from
// here on, which is what lets a run replay one captured CUDA graph.
#include "runtime/BufferLiveness.h"
#include "runtime/ProgramChecks.h"
#include "runtime/cuda/CudaProgram.h"
#include "runtime/cuda/CudnnAttention.h"
#include "runtime/cuda/FlashAttention.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>

namespace kiln::runtime::cuda {

namespace {

/// "sm_90" → 9.0; "sm_90a" (arch-specific: that GPU only) and "sm_100f"
/// (family-specific) keep their suffix.
struct GpuArch {
  int major = 0, minor = 0;
  char suffix = 0;
};

std::optional<GpuArch> parseArch(const std::string &target) {
  if (target.rfind("sm_", 0) != 0)
    return std::nullopt;
  size_t end = 3;
  while (end < target.size() &&
         std::isdigit(static_cast<unsigned char>(target[end])))
    ++end;
  std::string digits = target.substr(3, end - 3);
  std::string suffix = target.substr(end);
  if (digits.size() < 2 || digits.size() > 4 ||
      !(suffix.empty() || suffix == "a" || suffix == "f"))
    return std::nullopt;
  int number = std::stoi(digits);
  return GpuArch{number / 10, number % 10,
                 suffix.empty() ? char(0) : suffix[0]};
}

/// PTX is text the driver compiles for the GPU at hand; anything else
/// (an ELF cubin) is machine code for one architecture family.
bool isPtx(const std::string &library) {
  if (library.rfind("\x7f"
                    "ELF",
                    0) == 0)
    return false;
  return library.rfind("//", 0) == 0 ||
         library.find(".version") != std::string::npos;
}

bool hasThunkOf(const Executable &e, Thunk::Kind kind) {
  return std::any_of(e.thunks.begin(), e.thunks.end(),
                     [&](const Thunk &t) { return t.kind == kind; });
}

uint64_t roundUp(uint64_t bytes, uint64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

constexpr uint64_t kNoBuffer = std::numeric_limits<uint64_t>::max();
/// cudaMalloc's alignment; every device buffer starts on it.
constexpr uint64_t kDeviceAlignment = 256;

} // namespace

CudaProgram::CudaProgram(Executable executable,
                         const CudaRuntimeOptions &options,
                         CudaLibraries libraries)
    : exe_(std::move(executable)), options_(options),
      libraries_(std::move(libraries)), buffers_(BufferPool::create()) {}

CudaProgram::~CudaProgram() {
  if (!driver_ || !context_)
    return;
  const CudaDriver &d = *driver_;
  // Teardown runs on whatever thread drops the program: make the context
  // current, and let this program's work finish before memory goes away.
  // Its stream only: the context is shared (the primary context), and a
  // context-wide synchronize while another thread captures a CUDA graph
  // invalidates that capture (and crashed the H100's driver in
  // CudaRandomGraphTest's 8 threads).
  d.ctxSetCurrent(context_);
  if (stream_)
    d.streamSynchronize(stream_);
  // Outputs still on the device move to host memory before it goes (on
  // the stream, which close() waits for).
  if (values_)
    values_->close();
  if (graph_)
    d.graphExecDestroy(graph_);
  for (CUevent event : events_)
    if (event)
      d.eventDestroy(event);
  gemms_.clear();
  cublas_.reset();
  attention_.reset();
  if (module_)
    d.moduleUnload(module_);
  attentionScratch_.reset();
  workspace_.reset();
  io_.reset();
  arena_.reset();
  if (stream_)
    d.streamDestroy(stream_);
  d.devicePrimaryCtxRelease(device_.device);
}

absl::Status CudaProgram::load() {
  if (exe_.device != Device::cuda)
    return absl::InvalidArgumentError(
        absl::StrCat("this executable was compiled for ",
                     std::string(deviceName(exe_.device)), " (", exe_.targetCpu,
                     "), not for cuda; load it with loadCpuProgram "
                     "or recompile with --backend cuda"));
  if (absl::Status s = validateExecutable(exe_); !s.ok())
    return s;
  // Borrowed inputs are the caller's, read only (their device copies could
  // be written, but the cpu refuses such plans too: keep both alike).
  if (absl::Status s = checkInputsAreReadOnly(exe_); !s.ok())
    return s;
  for (auto step : {&CudaProgram::openDevice, &CudaProgram::loadKernels,
                    &CudaProgram::planOutputs, &CudaProgram::allocateMemory,
                    &CudaProgram::planGemms, &CudaProgram::loadAttention,
                    &CudaProgram::copyInitialData})
    if (absl::Status s = (this->*step)(); !s.ok())
      return s;
  stats_.deviceBytes =
      static_cast<int64_t>(arena_.bytes() + io_.bytes() + workspace_.bytes() +
                           attentionScratch_.bytes());
  values_ = std::make_shared<DeviceValues>(driver_, context_, stream_, &stats_);
  // A run needs at most one host buffer per output: idle storage beyond
  // that would only grow the process.
  std::map<size_t, int64_t> idleLimits;
  for (const ProgramValue &output : exe_.signature.outputs)
    ++idleLimits[BufferPool::storageCapacity(valueBytes(output))];
  buffers_->setIdleLimits(std::move(idleLimits));
  return absl::OkStatus();
}

absl::Status CudaProgram::openDevice() {
  absl::StatusOr<std::shared_ptr<const CudaDriver>> driver =
      CudaDriver::load(libraries_.driver);
  if (!driver.ok())
    return driver.status();
  driver_ = *std::move(driver);
  absl::StatusOr<CudaDeviceInfo> device = driver_->openDevice(options_.device);
  if (!device.ok())
    return device.status();
  device_ = *std::move(device);
  if (absl::Status s = checkArchitecture(); !s.ok())
    return s;
  // Data parallelism runs on the cpu (MPI) only so far: a GPU's all-reduce
  // would go through NCCL, which this runtime does not load yet.
  if (hasThunkOf(exe_, Thunk::Kind::allReduce))
    return absl::UnimplementedError(
        "this program sums values over the processes of a data-parallel run "
        "(kiln.all_reduce), which the cuda runtime cannot do yet: run it on "
        "the cpu backend, or as one process");
  const CudaDriver &d = *driver_;
  if (absl::Status s =
          d.check(d.devicePrimaryCtxRetain(&context_, device_.device),
                  "cuDevicePrimaryCtxRetain");
      !s.ok()) {
    context_ = nullptr;
    return s;
  }
  if (absl::Status s = d.check(d.ctxSetCurrent(context_), "cuCtxSetCurrent");
      !s.ok())
    return s;
  // Non-blocking: no implicit ordering with the legacy default stream,
  // which also could not be captured into a graph.
  if (absl::Status s = d.check(d.streamCreate(&stream_, CU_STREAM_NON_BLOCKING),
                               "cuStreamCreate");
      !s.ok()) {
    stream_ = nullptr;
    return s;
  }
  return absl::OkStatus();
}

absl::Status CudaProgram::checkArchitecture() const {
  // Nothing was compiled for the GPU when there are no kernels (GEMMs and
  // copies run on any device).
  if (!hasThunkOf(exe_, Thunk::Kind::kernel))
    return absl::OkStatus();
  std::optional<GpuArch> target = parseArch(exe_.targetCpu);
  if (!target)
    return absl::DataLossError(
        absl::StrCat("CUDA executable targets '", exe_.targetCpu,
                     "', which is not a CUDA architecture (sm_NN)"));
  int deviceVersion = device_.computeMajor * 10 + device_.computeMinor;
  int targetVersion = target->major * 10 + target->minor;
  bool runs;
  if (target->suffix == 'a') // arch-specific features: that GPU only
    runs = deviceVersion == targetVersion;
  else if (isPtx(exe_.kernelLibrary)) // the driver compiles PTX forward
    runs = deviceVersion >= targetVersion;
  else // a cubin runs within its major version, on equal or newer minors
    runs = device_.computeMajor == target->major &&
           device_.computeMinor >= target->minor;
  if (runs)
    return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "executable built for ", exe_.targetCpu, "; this GPU (", device_.name,
      ", compute capability ", device_.computeMajor, ".", device_.computeMinor,
      ") cannot run it; recompile with --cuda_arch sm_", device_.computeMajor,
      device_.computeMinor));
}

absl::Status CudaProgram::loadKernels() {
  launches_.assign(exe_.thunks.size(), KernelLaunch());
  if (!hasThunkOf(exe_, Thunk::Kind::kernel))
    return absl::OkStatus();
  const CudaDriver &d = *driver_;
  if (exe_.kernelLibrary.empty())
    return absl::DataLossError(
        "CUDA executable has kernel thunks but no kernel library");
  // std::string keeps a NUL after its bytes, which PTX text needs.
  if (absl::Status s =
          d.check(d.moduleLoadData(&module_, exe_.kernelLibrary.c_str()),
                  absl::StrCat("cuModuleLoadData (",
                               isPtx(exe_.kernelLibrary) ? "PTX" : "cubin",
                               " for ", exe_.targetCpu, ", ",
                               exe_.kernelLibrary.size(), " bytes)"));
      !s.ok()) {
    module_ = nullptr;
    return s;
  }
  std::map<std::string, CUfunction> functions;
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    const Thunk &t = exe_.thunks[i];
    if (t.kind != Thunk::Kind::kernel)
      continue;
    const KernelThunk &k = t.kernel;
    if (k.rangeSize < 0)
      return absl::DataLossError(absl::StrCat(
          "kernel thunk ", i, " (", k.symbol, ") has a negative range"));
    auto [entry, inserted] = functions.try_emplace(k.symbol, nullptr);
    if (inserted) {
      CUresult r =
          d.moduleGetFunction(&entry->second, module_, k.symbol.c_str());
      if (r == CUDA_ERROR_NOT_FOUND)
        return absl::DataLossError(
            absl::StrCat("kernel ", k.symbol, " (thunk ", i,
                         ") missing from the kernel library"));
      if (absl::Status s =
              d.check(r, absl::StrCat("cuModuleGetFunction(", k.symbol, ")"));
          !s.ok())
        return s;
    }
    // A CUDA kernel runs index i on thread i: a kernel that must walk its
    // range on one thread has no CUDA form.
    if (!k.splittable)
      return absl::DataLossError(absl::StrCat(
          "kernel thunk ", i, " (", k.symbol,
          ") is not splittable; CUDA kernels run one thread per index"));
    KernelLaunch &launch = launches_[i];
    launch.function = entry->second;
    launch.rangeSize = k.rangeSize;
    // An empty range still launches one block (all its threads see
    // i >= rangeSize), as the cpu calls a kernel on an empty range once.
    int64_t blocks = std::max<int64_t>(1, (k.rangeSize + kCudaBlockSize - 1) /
                                              kCudaBlockSize);
    if (blocks > std::numeric_limits<int32_t>::max())
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel thunk ", i, " (", k.symbol, "): rangeSize ", k.rangeSize,
          " needs ", blocks, " blocks, more than one CUDA launch allows"));
    launch.grid = static_cast<unsigned>(blocks);
    launch.block = kCudaBlockSize;
  }
  return absl::OkStatus();
}

absl::Status CudaProgram::planOutputs() {
  const BufferPlan &plan = exe_.plan;
  size_t numInputs = exe_.signature.inputs.size();
  outputReaders_.assign(numInputs, 0);
  outputSources_.assign(plan.outputSlots.size(), OutputSource());
  for (size_t o = 0; o < plan.outputSlots.size(); ++o) {
    const BufferSlot &slot = plan.slots[plan.outputSlots[o]];
    OutputSource &source = outputSources_[o];
    source.slot = plan.outputSlots[o];
    if (slot.kind == BufferSlot::Kind::output && slot.input == o) {
      source.kind = OutputSource::Kind::ownBuffer;
    } else if (slot.kind == BufferSlot::Kind::input) {
      source.kind = OutputSource::Kind::input;
      ++outputReaders_[slot.input];
    }
  }
  inputReadByThunks_.assign(numInputs, false);
  for (const Thunk &t : exe_.thunks)
    forEachSlotUse(t, [&](uint32_t slot, bool) {
      if (plan.slots[slot].kind == BufferSlot::Kind::input)
        inputReadByThunks_[plan.slots[slot].input] = true;
    });
  return absl::OkStatus();
}

absl::Status CudaProgram::allocateMemory() {
  const ProgramSignature &sig = exe_.signature;
  const BufferPlan &plan = exe_.plan;
  // Device copies of inputs and outputs share one allocation, each buffer
  // on its own 256-byte boundary.
  uint64_t ioBytes = 0;
  auto place = [&](uint64_t bytes) {
    uint64_t at = ioBytes;
    ioBytes += roundUp(bytes, kDeviceAlignment);
    return at;
  };
  std::vector<uint64_t> inputOffset(sig.inputs.size(), kNoBuffer);
  std::vector<uint64_t> outputOffset(sig.outputs.size(), kNoBuffer);
  std::vector<int32_t> outputDonor(sig.outputs.size(), -1);
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    if (inputReadByThunks_[i])
      inputOffset[i] = place(valueBytes(sig.inputs[i]));
  // An output with a donor is written over the donor's device copy, as the
  // cpu writes it over the donated buffer. The device copy is the
  // program's own, so this holds even when the caller only lends the host
  // buffer; it is not shared when two outputs name one donor or an output
  // returns the donor as is.
  std::vector<bool> donorShared(sig.inputs.size(), false);
  for (size_t o = 0; o < sig.outputs.size(); ++o) {
    if (outputSources_[o].kind != OutputSource::Kind::ownBuffer)
      continue;
    int32_t d = plan.outputDonors[o];
    if (d >= 0 && !donorShared[d] && outputReaders_[d] == 0) {
      donorShared[d] = true;
      outputDonor[o] = d;
      if (inputOffset[d] == kNoBuffer)
        inputOffset[d] = place(valueBytes(sig.inputs[d]));
    } else {
      outputOffset[o] = place(valueBytes(sig.outputs[o]));
    }
  }
  memoryPlan_.arenaBytes = plan.arenaBytes;
  memoryPlan_.ioBytes = ioBytes;
  memoryPlan_.workspaceBytes =
      hasThunkOf(exe_, Thunk::Kind::gemm) ? kMaxGemmWorkspaceBytes : 0;
  struct Request {
    DeviceAllocation *target;
    uint64_t bytes;
    const char *what;
  };
  for (const Request &r :
       {Request{&arena_, plan.arenaBytes, "arena"},
        Request{&io_, ioBytes, "device copies of the inputs and outputs"}}) {
    absl::StatusOr<DeviceAllocation> allocation =
        allocateDevice(driver_, r.bytes, r.what, memoryPlan_, exe_);
    if (!allocation.ok())
      return allocation.status();
    *r.target = *std::move(allocation);
  }
  inputDevice_.assign(sig.inputs.size(), 0);
  outputDevice_.assign(sig.outputs.size(), 0);
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    if (inputOffset[i] != kNoBuffer)
      inputDevice_[i] = io_.get() + inputOffset[i];
  for (size_t o = 0; o < sig.outputs.size(); ++o) {
    if (outputDonor[o] >= 0)
      outputDevice_[o] = inputDevice_[outputDonor[o]];
    else if (outputOffset[o] != kNoBuffer)
      outputDevice_[o] = io_.get() + outputOffset[o];
  }
  // Every kernel's parameters, once: no pointer ever changes, and the
  // driver copies the values at each launch (and into a captured graph).
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    const Thunk &t = exe_.thunks[i];
    if (t.kind != Thunk::Kind::kernel)
      continue;
    KernelLaunch &launch = launches_[i];
    for (uint32_t slot : t.kernel.slots)
      launch.buffers.push_back(slotPointer(slot));
    for (CUdeviceptr &buffer : launch.buffers)
      launch.params.push_back(&buffer);
    launch.params.push_back(&launch.rangeSize);
  }
  return absl::OkStatus();
}

absl::Status CudaProgram::planGemms() {
  if (!hasThunkOf(exe_, Thunk::Kind::gemm)) {
    memoryPlan_.workspaceBytes = 0;
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const CublasLt>> library =
      CublasLt::load(libraries_.cublasLt);
  if (!library.ok())
    return library.status();
  absl::StatusOr<std::unique_ptr<CublasLtHandle>> handle =
      CublasLtHandle::create(*std::move(library));
  if (!handle.ok())
    return handle.status();
  cublas_ = *std::move(handle);
  gemms_.resize(exe_.thunks.size());
  uint64_t workspace = 0;
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    const Thunk &t = exe_.thunks[i];
    if (t.kind != Thunk::Kind::gemm)
      continue;
    // A viewed operand starts its view's offset into the slot.
    CudaGemm::Operands operands{
        slotPointer(t.gemm.a) + t.gemm.aByteOffset(),
        slotPointer(t.gemm.b) + t.gemm.bByteOffset(), slotPointer(t.gemm.c),
        t.gemm.accumulates() ? slotPointer(t.gemm.accumulator) : 0};
    absl::StatusOr<std::unique_ptr<CudaGemm>> gemm =
        CudaGemm::create(*cublas_, t.gemm, i, exe_.allowTf32, operands);
    if (!gemm.ok())
      return gemm.status();
    workspace = std::max(workspace, (*gemm)->workspaceBytes());
    gemms_[i] = *std::move(gemm);
  }
  // One workspace for every GEMM: they run one after another on the
  // program's stream.
  memoryPlan_.workspaceBytes = workspace;
  absl::StatusOr<DeviceAllocation> allocation =
      allocateDevice(driver_, workspace, "GEMM workspace", memoryPlan_, exe_);
  if (!allocation.ok())
    return allocation.status();
  workspace_ = *std::move(allocation);
  return absl::OkStatus();
}

absl::Status CudaProgram::loadAttention() {
  if (!hasThunkOf(exe_, Thunk::Kind::attention))
    return absl::OkStatus();
  auto slotAddress = [&](uint32_t slot) { return slotPointer(slot); };
  auto allocate = [&](uint64_t bytes, const char *what) -> absl::Status {
    memoryPlan_.workspaceBytes += bytes;
    absl::StatusOr<DeviceAllocation> allocation =
        allocateDevice(driver_, bytes, what, memoryPlan_, exe_);
    if (!allocation.ok())
      return allocation.status();
    attentionScratch_ = *std::move(allocation);
    return absl::OkStatus();
  };
  if (attentionLibraryFromEnvironment() == AttentionLibrary::cudnn) {
    absl::StatusOr<std::unique_ptr<CudnnAttention>> cudnn =
        CudnnAttention::create(driver_, exe_, slotAddress);
    if (!cudnn.ok())
      return cudnn.status();
    if (absl::Status s = allocate((*cudnn)->deviceBytes(),
                                  "cuDNN attention workspace and mask");
        !s.ok())
      return s;
    (*cudnn)->bind(attentionScratch_.get());
    attention_ = *std::move(cudnn);
    return absl::OkStatus();
  }
  if (absl::Status s = allocate(FlashAttention::scratchBytes(exe_),
                                "flash attention row deltas");
      !s.ok())
    return s;
  absl::StatusOr<std::unique_ptr<FlashAttention>> attention =
      FlashAttention::create(driver_, device_, exe_, slotAddress,
                             attentionScratch_.get());
  if (!attention.ok())
    return attention.status();
  attention_ = *std::move(attention);
  return absl::OkStatus();
}

absl::Status CudaProgram::copyInitialData() {
  const CudaDriver &d = *driver_;
  for (const ConstantInit &c : exe_.plan.constants) {
    if (c.bytes.empty())
      continue;
    if (absl::Status s =
            d.check(d.memcpyHtoDAsync(slotPointer(c.slot), c.bytes.data(),
                                      c.bytes.size(), stream_),
                    absl::StrCat("cuMemcpyHtoDAsync (constant into slot ",
                                 c.slot, ")"));
        !s.ok())
      return s;
  }
  // The constants' bytes live in exe_, so only the end needs a wait.
  return d.check(d.streamSynchronize(stream_),
                 "cuStreamSynchronize (after loading the constants)");
}

} // namespace kiln::runtime::cuda
