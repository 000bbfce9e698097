// Loading and launching kiln's flash attention kernels (FlashAttention.h).
#include "runtime/cuda/FlashAttention.h"
#include "runtime/AttentionKernels.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <string_view>

namespace kiln::runtime::cuda {

namespace {

/// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: what a kernel may
/// ask for beyond the default 48 KiB.
constexpr CUdevice_attribute kSharedOptIn =
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;

/// The widest grid's y extent: batch · heads blocks.
constexpr int64_t kMaxGridY = 65535;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The kernels' tile shapes and shared memory for head dims up to D.
template <int D> struct Shapes {
  using C = flash::FlashConfig<D>;
  static constexpr int64_t forwardShared =
      flash::ForwardShared<D, C::forwardRows, C::forwardKeys>::bytes;
  static constexpr int64_t queryShared =
      flash::QueryGradShared<D, C::queryRows, C::queryKeys>::bytes;
  static constexpr int64_t keyValueShared =
      flash::KeyValueGradShared<D, C::keyValueRows, C::keyValueKeys>::bytes;
};

struct KernelShape {
  int64_t headDimMax, rowsPerBlock, sharedBytes;
};

/// kind: 0 forward, 1 query side, 2 key side.
template <int D> KernelShape shapeFor(int kind) {
  using S = Shapes<D>;
  using C = typename S::C;
  if (kind == 0)
    return {D, C::forwardRows, S::forwardShared};
  if (kind == 1)
    return {D, C::queryRows, S::queryShared};
  return {D, C::keyValueKeys, S::keyValueShared};
}

} // namespace

bool flashAttentionKernelsBuilt() {
  return !flashAttentionFatbin().empty();
}

uint64_t FlashAttention::scratchBytes(const Executable &executable) {
  uint64_t bytes = 0;
  for (const Thunk &t : executable.thunks)
    if (t.kind == Thunk::Kind::attention && t.attention.gradient)
      bytes = std::max<uint64_t>(
          bytes, uint64_t(t.attention.batch * t.attention.heads *
                          t.attention.queries) *
                     sizeof(float));
  return bytes;
}

absl::StatusOr<std::unique_ptr<FlashAttention>> FlashAttention::create(
    std::shared_ptr<const CudaDriver> driver, const CudaDeviceInfo &device,
    const Executable &executable,
    const std::function<CUdeviceptr(uint32_t)> &slotPointer,
    CUdeviceptr scratch) {
  if (!flashAttentionKernelsBuilt())
    return absl::FailedPreconditionError(
        "CUDA backend: this build has no flash attention kernels (nvcc was "
        "not found when it was built); compile without KILN_CUDA_ATTENTION="
        "flash");
  if (device.computeMajor < 8)
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA backend: flash attention needs compute capability 8.0 or newer "
        "(bf16 tensor cores); ",
        device.name, " has ", device.computeMajor, ".", device.computeMinor,
        "; compile without KILN_CUDA_ATTENTION=flash"));
  const CudaDriver &d = *driver;
  int sharedLimit = 0;
  if (absl::Status s = d.check(
          d.deviceGetAttribute(&sharedLimit, kSharedOptIn, device.device),
          "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
      !s.ok())
    return s;
  std::unique_ptr<FlashAttention> attention(new FlashAttention(driver));
  if (absl::Status s = d.check(
          d.moduleLoadData(&attention->module_, flashAttentionFatbin().data()),
          "cuModuleLoadData (flash attention kernels)");
      !s.ok()) {
    attention->module_ = nullptr;
    return s;
  }
  attention->byThunk_.resize(executable.thunks.size());
  for (size_t i = 0; i < executable.thunks.size(); ++i) {
    const Thunk &t = executable.thunks[i];
    if (t.kind != Thunk::Kind::attention)
      continue;
    if (absl::Status s = attention->prepare(i, t.attention, slotPointer,
                                            scratch, sharedLimit);
        !s.ok())
      return s;
  }
  return attention;
}

FlashAttention::~FlashAttention() {
  if (module_)
    driver_->moduleUnload(module_);
}

absl::Status FlashAttention::prepare(
    size_t index, const AttentionThunk &a,
    const std::function<CUdeviceptr(uint32_t)> &slotPointer,
    CUdeviceptr scratch, int sharedLimit) {
  const CudaDriver &d = *driver_;
  if (a.headDim % 8 != 0 || a.headDim > 128 || a.heads % a.kvHeads != 0 ||
      a.batch * std::max(a.heads, a.kvHeads) > kMaxGridY)
    return absl::DataLossError(absl::StrCat(
        "attention thunk ", index, " (", a.label(),
        ") is outside what the flash attention kernels run (head dim a "
        "multiple of 8 up to 128, batch x heads up to ",
        kMaxGridY, ")"));
  Prepared &prepared = byThunk_[index];
  flash::AttentionParams &p = prepared.params;
  p = attentionParams(a, [&](uint32_t slot) {
    return reinterpret_cast<void *>(slotPointer(slot));
  });
  p.rowDeltas = a.gradient ? reinterpret_cast<float *>(scratch) : nullptr;

  std::string type = a.element == GemmType::bf16 ? "bf16" : "f16";
  std::vector<int> kinds = a.gradient ? std::vector<int>{1, 2}
                                      : std::vector<int>{0};
  for (int kind : kinds) {
    KernelShape shape =
        a.headDim <= 64 ? shapeFor<64>(kind) : shapeFor<128>(kind);
    static const char *const kNames[] = {"forward", "query_grad",
                                         "key_value_grad"};
    Launch launch;
    launch.kernel = absl::StrCat("kiln_flash_", kNames[kind], "_", type, "_d",
                                 shape.headDimMax);
    if (shape.sharedBytes > sharedLimit)
      return absl::FailedPreconditionError(absl::StrCat(
          "CUDA backend: ", launch.kernel, " needs ", shape.sharedBytes,
          " bytes of shared memory a block; this GPU allows ", sharedLimit,
          "; compile without KILN_CUDA_ATTENTION=flash"));
    if (absl::Status s = d.check(
            d.moduleGetFunction(&launch.function, module_,
                                launch.kernel.c_str()),
            absl::StrCat("cuModuleGetFunction(", launch.kernel, ")"));
        !s.ok())
      return s;
    if (absl::Status s = d.check(
            d.funcSetAttribute(launch.function,
                               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(shape.sharedBytes)),
            absl::StrCat("cuFuncSetAttribute(", launch.kernel,
                         ", MAX_DYNAMIC_SHARED_SIZE_BYTES)"));
        !s.ok())
      return s;
    int64_t rows = kind == 2 ? a.keys : a.queries;
    int64_t heads = kind == 2 ? a.kvHeads : a.heads;
    launch.gridX = static_cast<unsigned>(ceilDiv(rows, shape.rowsPerBlock));
    launch.gridY = static_cast<unsigned>(a.batch * heads);
    launch.sharedBytes = static_cast<unsigned>(shape.sharedBytes);
    prepared.launches.push_back(std::move(launch));
  }
  return absl::OkStatus();
}

absl::Status FlashAttention::enqueue(size_t index, CUstream stream) const {
  const CudaDriver &d = *driver_;
  const Prepared &prepared = byThunk_[index];
  // The driver copies the parameter's bytes at each launch (and into a
  // captured graph), so it may live here.
  void *params[] = {const_cast<flash::AttentionParams *>(&prepared.params)};
  for (const Launch &launch : prepared.launches) {
    CUresult r = d.launchKernel(launch.function, launch.gridX, launch.gridY, 1,
                                flash::kFlashThreads, 1, 1, launch.sharedBytes,
                                stream, params, nullptr);
    if (r != CUDA_SUCCESS)
      return absl::InternalError(absl::StrCat(
          "attention thunk ", index, ": ", launch.kernel, " (",
          prepared.params.batch, "x", prepared.params.heads, "x",
          prepared.params.queries, "x", prepared.params.headDim,
          ") failed to launch with grid ", launch.gridX, "x", launch.gridY,
          " of ", flash::kFlashThreads, " threads and ", launch.sharedBytes,
          " bytes of shared memory: cuLaunchKernel failed: ", d.describe(r)));
  }
  return absl::OkStatus();
}

} // namespace kiln::runtime::cuda
