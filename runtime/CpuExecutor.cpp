// CpuProgram: the loaded form of an executable. Loading (1) checks the host
// CPU's features against the target's, (2) writes the kernel library to a
// memfd and dlopens it, (3) resolves every kernel symbol, (4) allocates and
// touches the arena once and copies constants in. A run then only patches
// input and output pointers into the prepared argument arrays and runs the
// thunks. Kernels write outputs straight into the returned buffers: a
// donated input's, when the compiler found it safe to update in place,
// else a fresh one; outputs that are inputs, constants or arena values are
// copied out at the end, into a donated input's buffer where one fits.
#include "runtime/CpuExecutor.h"
#include "runtime/ThreadPool.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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

struct FreeDeleter {
  void operator()(std::byte *p) const { std::free(p); }
};

class CpuProgram : public Program {
public:
  CpuProgram(Executable executable, const CpuRuntimeOptions &options)
      : exe_(std::move(executable)), options_(options),
        pool_(std::max(1, options.threads)) {}
  ~CpuProgram() override {
    if (library_)
      dlclose(library_);
    if (libraryFd_ >= 0)
      close(libraryFd_);
  }

  absl::Status load();
  const ProgramSignature &signature() const override { return exe_.signature; }
  std::string_view backendName() const override { return "cpu"; }
  absl::StatusOr<std::vector<HostTensor>>
  run(std::vector<HostTensor> inputs) override;

private:
  absl::Status loadLibrary();
  absl::Status checkInputs(const std::vector<HostTensor> &inputs) const;
  void *slotPointer(uint32_t slot);
  void runKernel(size_t index);
  absl::Status runThunks();
  /// Gives every output with its own slot a buffer before the thunks run.
  void prepareOutputs(std::vector<HostTensor> &inputs,
                      std::vector<HostTensor> &outputs,
                      std::vector<bool> &taken);
  /// Copies the remaining outputs (inputs, constants, arena values) out.
  void finishOutputs(std::vector<HostTensor> &inputs,
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
  std::unique_ptr<std::byte, FreeDeleter> arena_;
  /// Per thunk: the kernel entry and its argument array.
  std::vector<KernelFn> kernels_;
  std::vector<std::vector<void *>> args_;
  /// This run's input and output buffers, by position.
  std::vector<void *> inputPtrs_, outputPtrs_;
  std::mutex runMutex_;
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
  return absl::OkStatus();
}

absl::Status CpuProgram::load() {
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
  // One arena, touched once here so no run pays for fresh pages.
  size_t bytes = (exe_.plan.arenaBytes + 63) / 64 * 64 + 64;
  arena_.reset(static_cast<std::byte *>(std::aligned_alloc(64, bytes)));
  if (!arena_)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate a ", bytes, "-byte arena"));
  std::memset(arena_.get(), 0, bytes);
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
  return absl::OkStatus();
}

absl::Status
CpuProgram::checkInputs(const std::vector<HostTensor> &inputs) const {
  const auto &expected = exe_.signature.inputs;
  if (inputs.size() != expected.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "program takes ", expected.size(), " inputs, got ", inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype() != expected[i].dtype ||
        inputs[i].shape() != expected[i].shape)
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, ": expected ", std::string(dtypeName(expected[i].dtype)),
          "[", absl::StrJoin(expected[i].shape, "x"), "], got ",
          inputs[i].typeString()));
  return absl::OkStatus();
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

absl::Status CpuProgram::runThunks() {
  for (size_t i = 0; i < exe_.thunks.size(); ++i) {
    const Thunk &t = exe_.thunks[i];
    switch (t.kind) {
    case Thunk::Kind::kernel:
      for (size_t a = 0; a < t.kernel.slots.size(); ++a)
        args_[i][a] = slotPointer(t.kernel.slots[a]);
      runKernel(i);
      break;
    case Thunk::Kind::gemm: {
      const GemmThunk &g = t.gemm;
      auto *a = static_cast<const float *>(slotPointer(g.a));
      auto *b = static_cast<const float *>(slotPointer(g.b));
      auto *c = static_cast<float *>(slotPointer(g.c));
      for (int64_t batch = 0; batch < g.batch; ++batch) {
        absl::Status s = sgemm(options_.gemm, g.transA, g.transB, g.m, g.n, g.k,
                               a + batch * g.m * g.k, g.transA ? g.m : g.k,
                               b + batch * g.k * g.n, g.transB ? g.k : g.n,
                               c + batch * g.m * g.n, g.n);
        if (!s.ok())
          return s;
      }
      break;
    }
    case Thunk::Kind::copy:
      std::memmove(slotPointer(t.copy.dst), slotPointer(t.copy.src),
                   t.copy.bytes);
      break;
    }
  }
  return absl::OkStatus();
}

void CpuProgram::prepareOutputs(std::vector<HostTensor> &inputs,
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
      outputs[o] = std::move(inputs[donor]); // inputPtrs_ still points at it
    } else {
      const ProgramValue &type = exe_.signature.outputs[o];
      outputs[o] = HostTensor(type.dtype, type.shape);
    }
    outputPtrs_[o] = outputs[o].data();
  }
}

void CpuProgram::finishOutputs(std::vector<HostTensor> &inputs,
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
      outputs[o] = std::move(inputs[slot.input]);
      continue;
    }
    HostTensor out;
    for (size_t i = 0; i < inputs.size() && out.data() == nullptr; ++i) {
      if (!sig.inputs[i].donated || taken[i] || readers[i] != 0 ||
          sig.inputs[i].dtype != type.dtype ||
          sig.inputs[i].shape != type.shape)
        continue;
      taken[i] = true;
      out = std::move(inputs[i]);
    }
    if (out.data() == nullptr)
      out = HostTensor(type.dtype, type.shape);
    if (slot.kind == BufferSlot::Kind::input)
      --readers[slot.input];
    std::memcpy(out.data(), slotPointer(plan.outputSlots[o]), out.byteSize());
    outputs[o] = std::move(out);
  }
}

absl::StatusOr<std::vector<HostTensor>>
CpuProgram::run(std::vector<HostTensor> inputs) {
  if (absl::Status s = checkInputs(inputs); !s.ok())
    return s;
  std::lock_guard<std::mutex> lock(runMutex_);
  inputPtrs_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    inputPtrs_[i] = inputs[i].data();
  std::vector<HostTensor> outputs(exe_.signature.outputs.size());
  outputPtrs_.assign(outputs.size(), nullptr);
  std::vector<bool> taken(inputs.size(), false);
  prepareOutputs(inputs, outputs, taken);
  if (absl::Status s = runThunks(); !s.ok())
    return s;
  finishOutputs(inputs, outputs, taken);
  return outputs;
}

} // namespace

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
