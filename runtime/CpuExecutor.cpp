// CpuProgram: the loaded form of an executable. Loading (1) checks the host
// CPU's features against the target's, (2) writes the kernel library to a
// memfd and dlopens it, (3) resolves every kernel symbol, (4) allocates the
// arena once and copies constants in; the arena's pages are first touched
// by the first run rather than here, so loading a cached 2 GB plan takes
// milliseconds, and later runs reuse them. A run then only patches
// input and output pointers into the prepared argument arrays and runs the
// thunks. Kernels write outputs straight into the returned buffers: a
// donated input's, when the compiler found it safe to update in place,
// else one from the program's BufferPool; outputs that are inputs,
// constants or arena values are copied out at the end, into a donated
// input's buffer where one fits. Borrowed inputs are only read. Pooled
// outputs return to the pool when the caller drops them, so a training
// loop's steady state allocates nothing (allocationStats counts misses).
#include "runtime/CpuExecutor.h"
#include "runtime/AttentionKernels.h"
#include "runtime/BufferLiveness.h"
#include "runtime/HostLanes.h"
#include "runtime/ProgramChecks.h"
#include "runtime/ThreadPool.h"
#include "runtime/World.h"
#include "support/Collectives.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

namespace kiln::runtime {

namespace {

using KernelFn = void (*)(void **, int64_t, int64_t);

/// The features that decide whether generated x86 code may run here.
absl::Status checkHostFeatures(const std::string &features) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  struct Known {
    const char *name;
    bool present;
  };
  const Known known[] = {
      {"+avx", static_cast<bool>(__builtin_cpu_supports("avx"))},
      {"+avx2", static_cast<bool>(__builtin_cpu_supports("avx2"))},
      {"+fma", static_cast<bool>(__builtin_cpu_supports("fma"))},
      {"+f16c", static_cast<bool>(__builtin_cpu_supports("f16c"))},
      {"+avx512f", static_cast<bool>(__builtin_cpu_supports("avx512f"))},
      {"+avx512bw", static_cast<bool>(__builtin_cpu_supports("avx512bw"))},
      {"+avx512vl", static_cast<bool>(__builtin_cpu_supports("avx512vl"))},
      {"+avx512dq", static_cast<bool>(__builtin_cpu_supports("avx512dq"))},
  };
  for (const std::string &f :
       std::vector<std::string>(absl::StrSplit(features, ','))) {
    for (const Known &k : known)
      if (f == k.name && !k.present)
        return absl::FailedPreconditionError(absl::StrCat(
            "kiln executable needs CPU feature ", f.substr(1),
            ", which this host lacks; recompile for this machine"));
  }
#endif
  return absl::OkStatus();
}

/// The arena is mapped storage like large tensors' (fresh zero pages,
/// returned to the kernel when the program goes, and counted as tensor data
/// by residentMappedBytes, not as the process's own memory).
struct UnmapDeleter {
  size_t bytes = 0;
  void operator()(std::byte *p) const { freeMapped(p, bytes); }
};

class CpuProgram : public Program {
public:
  CpuProgram(Executable executable, const CpuRuntimeOptions &options)
      : exe_(std::move(executable)), options_(options),
        pool_(options.threads > 0 ? options.threads
                                  : ThreadPool::hostThreads()),
        buffers_(options.outputPool ? options.outputPool
                                    : BufferPool::create()) {}
  ~CpuProgram() override {
    if (library_)
      dlclose(library_);
    if (libraryFd_ >= 0)
      close(libraryFd_);
  }

  absl::Status load();
  const ProgramSignature &signature() const override { return exe_.signature; }
  std::string_view backendName() const override { return "cpu"; }
  AllocationStats allocationStats() const override {
    BufferPool::Stats stats = buffers_->stats();
    return {stats.allocations, stats.allocatedBytes};
  }
  void setProfiling(bool on) override {
    std::lock_guard<std::mutex> lock(runMutex_);
    profiling_ = on;
  }
  std::optional<RunProfile> takeProfile() override {
    std::lock_guard<std::mutex> lock(runMutex_);
    std::optional<RunProfile> out = std::move(profile_);
    profile_.reset();
    return out;
  }

protected:
  absl::StatusOr<std::vector<HostTensor>>
  execute(std::vector<ProgramInput> inputs) override;

private:
  absl::Status loadLibrary();
  /// Fills poisonAfter_ from the slots' lifetimes (poisonDeadBuffers).
  void planPoison();
  void *slotPointer(uint32_t slot);
  void runKernel(size_t index);
  absl::Status runThunks();
  /// An attention thunk, by the flash attention kernels' host run
  /// (AttentionKernels.h) over this program's threads.
  absl::Status runAttention(const AttentionThunk &attention);
  /// Gives every output with its own slot a buffer before the thunks run.
  /// `taken[i]`: input i's buffer is not (or no longer) the program's to
  /// give.
  absl::Status prepareOutputs(std::vector<ProgramInput> &inputs,
                              std::vector<HostTensor> &outputs,
                              std::vector<bool> &taken);
  /// Copies the remaining outputs (inputs, constants, arena values) out.
  absl::Status finishOutputs(std::vector<ProgramInput> &inputs,
                             std::vector<HostTensor> &outputs,
                             std::vector<bool> &taken);

  Executable exe_;
  CpuRuntimeOptions options_;
  ThreadPool pool_;
  void *library_ = nullptr;
  /// The memfd stays open while the library is loaded: dlopen knows a
  /// library by its path, /proc/self/fd/N, so N must not be reused for
  /// another program's kernels meanwhile.
  int libraryFd_ = -1;
  std::unique_ptr<std::byte, UnmapDeleter> arena_;
  /// Per thunk: the kernel entry and its argument array.
  std::vector<KernelFn> kernels_;
  std::vector<std::vector<void *>> args_;
  /// This run's input and output buffers, by position.
  std::vector<void *> inputPtrs_, outputPtrs_;
  /// Storage of outputs that have no donor, recycled across runs.
  std::shared_ptr<BufferPool> buffers_;
  /// Per thunk (poisonDeadBuffers only): arena [begin, end) byte ranges
  /// that hold no live value once the thunk has run.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> poisonAfter_;
  std::mutex runMutex_;
  /// Profiling (setProfiling): each thunk timed by the wall clock, the run
  /// kept until takeProfile().
  bool profiling_ = false;
  std::optional<RunProfile> profile_;
  std::chrono::steady_clock::time_point runStart_;
  /// describeThunks(exe_), made by the first profiled run.
  std::vector<ThunkEvent> thunkEvents_;
};

absl::Status CpuProgram::loadLibrary() {
  int fd = memfd_create("kiln-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return absl::InternalError("memfd_create failed for the kernel library");
  const std::string &lib = exe_.kernelLibrary;
  for (size_t done = 0; done < lib.size();) {
    ssize_t n = write(fd, lib.data() + done, lib.size() - done);
    if (n <= 0) {
      close(fd);
      return absl::InternalError("cannot write the kernel library to memfd");
    }
    done += n;
  }
  std::string path = absl::StrCat("/proc/self/fd/", fd);
  library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  libraryFd_ = fd;
  if (!library_)
    return absl::InternalError(
        absl::StrCat("cannot load the kernel library: ", dlerror()));
  // Kernels written for a GPU's warp (a test form: runtime/HostLanes.h).
  installHostLaneHooks(library_);
  return absl::OkStatus();
}

absl::Status CpuProgram::load() {
  if (exe_.device != Device::cpu)
    return absl::InvalidArgumentError(absl::StrCat(
        "this executable was compiled for ", std::string(deviceName(exe_.device)),
        " (", exe_.targetCpu, "), not for the cpu"));
  if (absl::Status s = checkHostFeatures(exe_.targetFeatures); !s.ok())
    return s;
  if (absl::Status s = validateExecutable(exe_); !s.ok())
    return s;
  bool hasKernels = false;
  for (const Thunk &t : exe_.thunks)
    hasKernels |= t.kind == Thunk::Kind::kernel;
  if (hasKernels)
    if (absl::Status s = loadLibrary(); !s.ok())
      return s;
  // A program that sums over the processes runs in their world.
  for (const Thunk &t : exe_.thunks)
    if (t.kind == Thunk::Kind::allReduce) {
      if (absl::Status s = joinWorld(); !s.ok())
        return s;
      break;
    }
  // One arena for every run: only the first run pays for fresh pages.
  size_t bytes = (exe_.plan.arenaBytes + 63) / 64 * 64 + 64;
  arena_ = std::unique_ptr<std::byte, UnmapDeleter>(allocateMapped(bytes),
                                                     UnmapDeleter{bytes});
  if (!arena_)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate a ", bytes, "-byte arena"));
  // Poisoned, bytes no thunk has written read as NaN. Otherwise no memset:
  // every slot is written before it is read (BufferLiveness), and touching
  // gigabytes at ~2 GB/s would dominate a warm-cache start.
  if (options_.poisonDeadBuffers)
    std::memset(arena_.get(), 0xFF, bytes);
  for (const ConstantInit &c : exe_.plan.constants)
    std::memcpy(arena_.get() + exe_.plan.slots[c.slot].offset, c.bytes.data(),
                c.bytes.size());
  kernels_.assign(exe_.thunks.size(), nullptr);
  args_.resize(exe_.thunks.size());
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    const Thunk &t = exe_.thunks[i];
    if (t.kind != Thunk::Kind::kernel)
      continue;
    void *symbol = dlsym(library_, t.kernel.symbol.c_str());
    if (!symbol)
      return absl::DataLossError(absl::StrCat(
          "kernel ", t.kernel.symbol, " missing from the kernel library"));
    kernels_[i] = reinterpret_cast<KernelFn>(symbol);
    args_[i].resize(t.kernel.slots.size());
  }
  if (options_.poisonDeadBuffers)
    planPoison();
  // A run needs at most one buffer per output: idle storage beyond that
  // would only grow the process.
  // (A shared pool's limits are its owner's.)
  if (!options_.outputPool) {
    std::map<size_t, int64_t> idleLimits;
    for (const ProgramValue &output : exe_.signature.outputs)
      ++idleLimits[BufferPool::storageCapacity(valueBytes(output))];
    buffers_->setIdleLimits(std::move(idleLimits));
  }
  // Borrowed inputs are the caller's, read only.
  return checkInputsAreReadOnly(exe_);
}

void CpuProgram::planPoison() {
  const BufferPlan &plan = exe_.plan;
  std::vector<SlotLifetime> lifetimes = computeSlotLifetimes(exe_);
  const int64_t numThunks = static_cast<int64_t>(exe_.thunks.size());
  std::vector<std::vector<uint32_t>> born(numThunks), dying(numThunks);
  std::vector<uint32_t> live; // arena slots holding a value now
  for (uint32_t s = 0; s < plan.slots.size(); ++s) {
    const SlotLifetime &l = lifetimes[s];
    if (plan.slots[s].kind != BufferSlot::Kind::arena ||
        plan.slots[s].bytes == 0 || !l.used())
      continue;
    if (l.first < 0)
      live.push_back(s); // a constant, loaded before the first thunk
    else if (l.first < numThunks)
      born[l.first].push_back(s);
    // Returned slots and constants die after the last thunk: never poisoned.
    if (l.last >= 0 && l.last < numThunks)
      dying[l.last].push_back(s);
  }
  poisonAfter_.assign(numThunks, {});
  std::vector<bool> dead(plan.slots.size(), false);
  for (int64_t t = 0; t < numThunks; ++t) {
    live.insert(live.end(), born[t].begin(), born[t].end());
    for (uint32_t s : dying[t])
      dead[s] = true;
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](uint32_t s) { return dead[s]; }),
               live.end());
    // Each dead slot's range, minus the bytes of slots still live (an
    // in-place result written over its operand, or any planned overlap).
    for (uint32_t s : dying[t]) {
      uint64_t begin = plan.slots[s].offset, end = begin + plan.slots[s].bytes;
      std::vector<std::pair<uint64_t, uint64_t>> held;
      for (uint32_t l : live) {
        uint64_t b = plan.slots[l].offset, e = b + plan.slots[l].bytes;
        if (b < end && e > begin)
          held.push_back({std::max(b, begin), std::min(e, end)});
      }
      std::sort(held.begin(), held.end());
      uint64_t at = begin;
      for (auto [b, e] : held) {
        if (b > at)
          poisonAfter_[t].push_back({at, b});
        at = std::max(at, e);
      }
      if (at < end)
        poisonAfter_[t].push_back({at, end});
    }
  }
}

void *CpuProgram::slotPointer(uint32_t slot) {
  const BufferSlot &s = exe_.plan.slots[slot];
  switch (s.kind) {
  case BufferSlot::Kind::input:
    return inputPtrs_[s.input];
  case BufferSlot::Kind::output:
    return outputPtrs_[s.input];
  case BufferSlot::Kind::arena:
    break;
  }
  return arena_.get() + s.offset;
}

void CpuProgram::runKernel(size_t index) {
  const KernelThunk &k = exe_.thunks[index].kernel;
  KernelFn fn = kernels_[index];
  void **args = args_[index].data();
  int64_t n = k.rangeSize;
  // Split only when each part has enough work to repay the hand-off.
  constexpr int64_t kMinWorkPerPart = 1 << 15;
  int64_t parts = 1;
  if (k.splittable && n > 1) {
    int64_t work = n * std::max<int64_t>(k.workPerIndex, 1);
    parts = std::min<int64_t>({pool_.size(), n, work / kMinWorkPerPart});
    parts = std::max<int64_t>(parts, 1);
  }
  if (parts == 1) {
    fn(args, 0, n); // also runs kernels with an empty range once
    return;
  }
  pool_.parallelFor(
      parts, [&](int64_t p) { fn(args, n * p / parts, n * (p + 1) / parts); });
}

absl::Status CpuProgram::runAttention(const AttentionThunk &a) {
  flash::AttentionParams p =
      attentionParams(a, [&](uint32_t slot) { return slotPointer(slot); });
  absl::Status s = runAttentionOnHost(a.element, a.gradient, p, pool_);
  if (!s.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(a.label(), ": ", s.message()));
  return absl::OkStatus();
}

absl::Status CpuProgram::runThunks() {
  using Clock = std::chrono::steady_clock;
  auto sinceStart = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - runStart_).count();
  };
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    const Thunk &t = exe_.thunks[i];
    Clock::time_point thunkStart = profiling_ ? Clock::now() : runStart_;
    switch (t.kind) {
    case Thunk::Kind::kernel:
      for (size_t a = 0; a < t.kernel.slots.size(); ++a)
        args_[i][a] = slotPointer(t.kernel.slots[a]);
      runKernel(i);
      break;
    case Thunk::Kind::gemm: {
      const GemmThunk &g = t.gemm;
      uint64_t out = gemmTypeBytes(g.output);
      auto *a = static_cast<const char *>(slotPointer(g.a)) + g.aByteOffset();
      auto *b = static_cast<const char *>(slotPointer(g.b)) + g.bByteOffset();
      auto *c = static_cast<char *>(slotPointer(g.c));
      // The libraries add into C itself: an accumulator in a slot of its
      // own is copied there first (the plan shares one when it can), with
      // what lies outside a viewed C's matrices.
      if (g.accumulates() && slotPointer(g.accumulator) != c)
        std::memmove(c, slotPointer(g.accumulator), g.cElements() * out);
      if (absl::Status s = batchedGemm(
              options_.gemm, g.input, g.output, g.transA, g.transB, g.batch,
              g.m, g.n, g.k, a, g.transA ? g.m : g.k, g.aBatchStride(), b,
              g.transB ? g.k : g.n, g.bBatchStride(), c + g.cByteOffset(), g.n,
              g.cBatchStride(), g.accumulates());
          !s.ok())
        return s;
      break;
    }
    case Thunk::Kind::copy:
      std::memmove(slotPointer(t.copy.dst), slotPointer(t.copy.src),
                   t.copy.bytes);
      break;
    case Thunk::Kind::attention:
      if (absl::Status s = runAttention(t.attention); !s.ok())
        return s;
      break;
    case Thunk::Kind::allReduce: {
      const AllReduceThunk &a = t.allReduce;
      void *dst = slotPointer(a.dst);
      if (dst != slotPointer(a.src))
        std::memmove(dst, slotPointer(a.src), a.bytes());
      if (absl::Status s = allReduceSumInPlace(dst, a.count, a.element);
          !s.ok())
        return absl::Status(s.code(),
                            absl::StrCat("all_reduce thunk ", i, " (", a.count,
                                         " elements): ", s.message()));
      break;
    }
    }
    if (profiling_) {
      ThunkEvent e = thunkEvents_[i];
      e.startUs = sinceStart(thunkStart);
      e.durationUs = sinceStart(Clock::now()) - e.startUs;
      profile_->events.push_back(std::move(e));
    }
    if (!poisonAfter_.empty())
      for (auto [begin, end] : poisonAfter_[i])
        std::memset(arena_.get() + begin, 0xFF, end - begin);
  }
  return absl::OkStatus();
}

absl::Status CpuProgram::prepareOutputs(std::vector<ProgramInput> &inputs,
                                        std::vector<HostTensor> &outputs,
                                        std::vector<bool> &taken) {
  const auto &plan = exe_.plan;
  for (size_t o = 0; o < plan.outputSlots.size(); ++o) {
    const BufferSlot &slot = plan.slots[plan.outputSlots[o]];
    if (slot.kind != BufferSlot::Kind::output || slot.input != o)
      continue;
    int32_t donor = plan.outputDonors[o];
    if (donor >= 0 && !taken[donor]) {
      taken[donor] = true;
      outputs[o] = inputs[donor].take(); // inputPtrs_ still points at it
    } else {
      // No donor, or it was borrowed: the kernel reads the input and
      // writes here, out of place.
      const ProgramValue &type = exe_.signature.outputs[o];
      absl::StatusOr<HostTensor> buffer =
          buffers_->acquire(type.dtype, type.shape);
      if (!buffer.ok())
        return buffer.status();
      outputs[o] = *std::move(buffer);
      if (options_.poisonDeadBuffers)
        std::memset(outputs[o].data(), 0xFF, outputs[o].byteSize());
    }
    outputPtrs_[o] = outputs[o].data();
  }
  return absl::OkStatus();
}

absl::Status CpuProgram::finishOutputs(std::vector<ProgramInput> &inputs,
                                       std::vector<HostTensor> &outputs,
                                       std::vector<bool> &taken) {
  const auto &plan = exe_.plan;
  const auto &sig = exe_.signature;
  // Inputs an output reads directly must stay intact until copied.
  std::vector<int> readers(inputs.size(), 0);
  for (uint32_t slot : plan.outputSlots)
    if (plan.slots[slot].kind == BufferSlot::Kind::input)
      ++readers[plan.slots[slot].input];
  for (size_t o = 0; o < plan.outputSlots.size(); ++o) {
    const BufferSlot &slot = plan.slots[plan.outputSlots[o]];
    if (slot.kind == BufferSlot::Kind::output && slot.input == o)
      continue; // written in place by its thunk
    const ProgramValue &type = sig.outputs[o];
    if (slot.kind == BufferSlot::Kind::input && readers[slot.input] == 1 &&
        !taken[slot.input]) {
      taken[slot.input] = true;
      outputs[o] = inputs[slot.input].take();
      continue;
    }
    HostTensor out;
    for (size_t i = 0; i < inputs.size() && out.data() == nullptr; ++i) {
      if (!sig.inputs[i].donated || taken[i] || readers[i] != 0 ||
          sig.inputs[i].dtype != type.dtype ||
          sig.inputs[i].shape != type.shape)
        continue;
      taken[i] = true;
      out = inputs[i].take();
    }
    if (out.data() == nullptr) {
      absl::StatusOr<HostTensor> buffer =
          buffers_->acquire(type.dtype, type.shape);
      if (!buffer.ok())
        return buffer.status();
      out = *std::move(buffer);
    }
    if (slot.kind == BufferSlot::Kind::input)
      --readers[slot.input];
    std::memcpy(out.data(), slotPointer(plan.outputSlots[o]), out.byteSize());
    outputs[o] = std::move(out);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<HostTensor>>
CpuProgram::execute(std::vector<ProgramInput> inputs) {
  if (absl::Status s = checkRunInputs(exe_.signature, inputs); !s.ok())
    return s;
  std::lock_guard<std::mutex> lock(runMutex_);
  // A profile spans the whole run: inputs, thunks, outputs.
  runStart_ = std::chrono::steady_clock::now();
  if (profiling_) {
    if (thunkEvents_.empty())
      thunkEvents_ = describeThunks(exe_);
    profile_.emplace();
    profile_->program = reinterpret_cast<uintptr_t>(this);
    profile_->device = "cpu";
    profile_->events.reserve(exe_.thunks.size());
  }
  inputPtrs_.resize(inputs.size());
  // Borrowed buffers are only read (checkInputsAreReadOnly at load).
  for (size_t i = 0; i < inputs.size(); ++i)
    inputPtrs_[i] = const_cast<std::byte *>(inputs[i].tensor().data());
  std::vector<HostTensor> outputs(exe_.signature.outputs.size());
  outputPtrs_.assign(outputs.size(), nullptr);
  // A borrowed buffer is never the program's to return or overwrite.
  std::vector<bool> taken(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    taken[i] = !inputs[i].isDonated();
  if (absl::Status s = prepareOutputs(inputs, outputs, taken); !s.ok())
    return s;
  if (absl::Status s = runThunks(); !s.ok())
    return s;
  if (absl::Status s = finishOutputs(inputs, outputs, taken); !s.ok())
    return s;
  // Donated buffers no output took would be freed here; the pool keeps
  // them instead. (A frontend's donated buffers change roles from step to
  // step, e.g. an old parameter's buffer for the next moment estimate, so
  // without this a loop keeps freeing and allocating.)
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!taken[i]) {
      HostTensor unused = inputs[i].take();
      buffers_->adopt(unused);
    }
  if (profiling_)
    profile_->durationUs = std::chrono::duration<double, std::micro>(
                               std::chrono::steady_clock::now() - runStart_)
                               .count();
  return outputs;
}

std::mutex &defaultOptionsMutex() {
  static std::mutex mutex;
  return mutex;
}

CpuRuntimeOptions &defaultOptions() {
  static CpuRuntimeOptions options;
  return options;
}

} // namespace

CpuRuntimeOptions defaultCpuRuntimeOptions() {
  std::lock_guard<std::mutex> lock(defaultOptionsMutex());
  return defaultOptions();
}

void setDefaultCpuRuntimeOptions(const CpuRuntimeOptions &options) {
  std::lock_guard<std::mutex> lock(defaultOptionsMutex());
  defaultOptions() = options;
}

absl::StatusOr<std::unique_ptr<Program>>
loadCpuProgram(Executable executable, const CpuRuntimeOptions &options) {
  auto program = std::make_unique<CpuProgram>(std::move(executable), options);
  if (absl::Status s = program->load(); !s.ok())
    return s;
  return std::unique_ptr<Program>(std::move(program));
}

absl::StatusOr<std::unique_ptr<Program>>
loadCpuProgram(std::string_view bytes, const CpuRuntimeOptions &options) {
  absl::StatusOr<Executable> executable = deserializeExecutable(bytes);
  if (!executable.ok())
    return executable.status();
  return loadCpuProgram(std::move(*executable), options);
}

} // namespace kiln::runtime
