// cuDNN's fused attention for attention thunks (CudnnAttention.h). Built
// with cudnn-frontend's headers when CMake finds them
// (KILN_HAVE_CUDNN_FRONTEND); without them create() says so.
#include "runtime/cuda/CudnnAttention.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#ifdef KILN_HAVE_CUDNN_FRONTEND

#include "runtime/AttentionKernels.h"

// The frontend calls cuDNN and the CUDA runtime through dlsym on handles it
// is given (cudnn_dlhandle) or opens itself (libcudart), so kiln links
// neither and runs on a machine without them until this runner is asked
// for.
#define NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING
#include <cudnn_frontend.h>

#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

namespace cudnn_frontend {
/// The frontend's handle on libcudnn (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING
/// leaves its definition to the program).
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend

namespace kiln::runtime::cuda {
namespace {

namespace fe = cudnn_frontend;

/// Where the libraries are looked for: the loader's path first, then the
/// CUDA toolkit's own folder (not on the loader's path on every machine).
constexpr const char *kCudnnNames[] = {"libcudnn.so.9",
                                       "/usr/local/cuda/lib64/libcudnn.so.9"};
constexpr const char *kCudartNames[] = {
    "libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13",
    "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so.12"};

/// cuDNN compiles some of its attention engines at run time with NVRTC,
/// which it opens by soname, as NVRTC opens its builtins: where the
/// toolkit's folder is not on the loader's path those opens fail and the
/// graphs find no engine. Opening them here first by path makes the later
/// opens by soname find them loaded. Failing is no error (an engine that
/// needs none still runs).
void preloadNvrtc() {
  for (const char *name :
       {"libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13"})
    if (dlopen(name, RTLD_NOW | RTLD_GLOBAL))
      break;
  glob_t found{};
  if (glob("/usr/local/cuda/lib64/libnvrtc-builtins.so.13*", 0, nullptr,
           &found) == 0)
    for (size_t i = 0; i < found.gl_pathc; ++i)
      dlopen(found.gl_pathv[i], RTLD_NOW | RTLD_GLOBAL);
  globfree(&found);
}

/// Opens cuDNN (KILN_CUDNN_LIBRARY, else kCudnnNames) for the frontend and
/// points it at a CUDA runtime it can open (its own search knows neither
/// the toolkit's folder nor a path); once per process.
absl::Status loadLibraries() {
  static const absl::Status status = []() -> absl::Status {
    preloadNvrtc();
    std::vector<std::string> tried;
    const char *chosen = std::getenv("KILN_CUDNN_LIBRARY");
    std::vector<const char *> names(std::begin(kCudnnNames),
                                    std::end(kCudnnNames));
    if (chosen && *chosen)
      names = {chosen};
    for (const char *name : names) {
      fe::cudnn_dlhandle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (fe::cudnn_dlhandle)
        break;
      const char *why = dlerror();
      tried.push_back(absl::StrCat(name, " (", why ? why : "not found", ")"));
    }
    if (!fe::cudnn_dlhandle)
      return absl::FailedPreconditionError(absl::StrCat(
          "could not load cuDNN 9: tried ", absl::StrJoin(tried, ", "),
          "; set KILN_CUDNN_LIBRARY to its path"));
    if (std::getenv("CUDNN_FRONTEND_CUDART_LIB_NAME"))
      return absl::OkStatus();
    for (const char *name : kCudartNames)
      if (void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
        dlclose(handle); // the frontend opens it again by this name
        setenv("CUDNN_FRONTEND_CUDART_LIB_NAME", name, /*overwrite=*/0);
        return absl::OkStatus();
      }
    return absl::FailedPreconditionError(
        "could not load the CUDA runtime (libcudart.so.13 or .12, on the "
        "loader's path or in /usr/local/cuda/lib64) that cuDNN's frontend "
        "calls");
  }();
  return status;
}

/// The tensor uids of both graphs.
enum Uid : int64_t {
  kQuery = 1,
  kKey,
  kValue,
  kResult,
  kRowStats,
  kResultGrad,
  kQueryGrad,
  kKeyGrad,
  kValueGrad,
  kMask,
  kKeepScale,
  kKeepScaleInverse
};

/// Threads a block of the dropout-mask kernel.
constexpr unsigned kMaskThreads = 256;

/// Strides of a dense row-major tensor of shape `dims`.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

/// A dense row-major operand.
fe::graph::Tensor_attributes rowMajor(const char *name, Uid uid,
                                      const std::vector<int64_t> &dims) {
  return fe::graph::Tensor_attributes()
      .set_name(name)
      .set_uid(uid)
      .set_dim(dims)
      .set_stride(rowMajorStrides(dims));
}

/// Marks a graph's result as the dense row-major output `uid`.
void rowMajorOutput(fe::graph::Tensor_attributes &t, Uid uid,
                    const std::vector<int64_t> &dims) {
  t.set_output(true).set_uid(uid).set_dim(dims).set_stride(
      rowMajorStrides(dims));
}

/// kiln's causal mask (key j visible to query i when j <= i) and its
/// window (j > i - window) as cuDNN's diagonal band, whose left bound keeps
/// key j where j + bound > i; on forward or backward attributes alike.
template <class Attributes>
void setCausal(Attributes &options, int64_t window) {
  options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
      .set_diagonal_band_right_bound(0);
  if (window > 0)
    options.set_diagonal_band_left_bound(static_cast<int>(window));
}

std::string describe(fe::error_t e) {
  return absl::StrCat(e.get_message(), " (cudnn-frontend error ",
                      static_cast<int>(e.get_code()), ")");
}

/// One thunk's graph, the addresses it runs on, and its dropout mask's
/// kernel (null without dropout).
struct ThunkGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::unordered_map<int64_t, void *> pack;
  float keepScale = 1, keepScaleInverse = 1; // pass-by-value operands
  flash::AttentionParams params;
  CUfunction maskKernel = nullptr;
  int64_t maskItems = 0;
  std::string label;
};

} // namespace

struct CudnnAttention::State {
  std::shared_ptr<const CudaDriver> driver;
  cudnnHandle_t handle = nullptr;
  CUmodule module = nullptr; // the dropout-mask kernels
  std::vector<std::unique_ptr<ThunkGraph>> byThunk;
  int64_t workspaceBytes = 0, maskBytes = 0;
  CUdeviceptr memory = 0;
  /// The mask buffer is zeroed by the first enqueue that writes a mask (a
  /// direct launch: the step's CUDA graph is captured from the second run).
  bool maskZeroed = false;

  ~State() {
    byThunk.clear(); // graphs before the handle they were built with
    if (handle)
      fe::detail::destroy_handle(handle);
    if (module)
      driver->moduleUnload(module);
  }

  /// Builds thunk `index`'s forward or gradient graph.
  absl::Status build(size_t index, const AttentionThunk &a,
                     const std::function<CUdeviceptr(uint32_t)> &slotPointer);
};

absl::Status
CudnnAttention::State::build(size_t index, const AttentionThunk &a,
                             const std::function<CUdeviceptr(uint32_t)> &slotPointer) {
  auto t = std::make_unique<ThunkGraph>();
  t->label = absl::StrCat("attention thunk ", index, " (", a.label(), ")");
  if (a.element == GemmType::f32)
    return absl::FailedPreconditionError(absl::StrCat(
        t->label, ": cuDNN's fused attention takes 16-bit operands"));
  const fe::DataType_t type = a.element == GemmType::bf16
                                  ? fe::DataType_t::BFLOAT16
                                  : fe::DataType_t::HALF;
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(type)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const int64_t B = a.batch, H = a.heads, Hkv = a.kvHeads, T = a.queries,
                S = a.keys, D = a.headDim;
  auto q = graph->tensor(rowMajor("q", kQuery, {B, H, T, D}));
  auto k = graph->tensor(rowMajor("k", kKey, {B, Hkv, S, D}));
  auto v = graph->tensor(rowMajor("v", kValue, {B, Hkv, S, D}));
  auto address = [&](uint32_t slot) {
    return slot == kNoSlot ? nullptr
                           : reinterpret_cast<void *>(slotPointer(slot));
  };
  // A forward whose row statistics nothing reads has no slot for them.
  const bool stats = a.gradient || a.rowStats != kNoSlot;
  t->pack = {{kQuery, address(a.query)},
             {kKey, address(a.key)},
             {kValue, address(a.value)},
             {kResult, address(a.result)}};
  if (stats)
    t->pack[kRowStats] = address(a.rowStats);

  std::shared_ptr<fe::graph::Tensor_attributes> mask, keep, keepInverse;
  const bool dropout = a.dropout > 0 && a.rngState != kNoSlot;
  if (dropout) {
    mask = graph->tensor(rowMajor("dropout_mask", kMask, {B, H, T, S})
                             .set_data_type(type));
    auto scalar = [&](const char *name, Uid uid) {
      return graph->tensor(rowMajor(name, uid, {1, 1, 1, 1})
                               .set_is_pass_by_value(true)
                               .set_data_type(fe::DataType_t::FLOAT));
    };
    keep = scalar("keep_scale", kKeepScale);
    keepInverse = scalar("keep_scale_inverse", kKeepScaleInverse);
    t->keepScale = static_cast<float>(1.0 / (1.0 - a.dropout));
    t->keepScaleInverse = static_cast<float>(1.0 - a.dropout);
    t->pack[kKeepScale] = &t->keepScale;
    t->pack[kKeepScaleInverse] = &t->keepScaleInverse;
    maskBytes = std::max<int64_t>(maskBytes, B * H * T * S * 2);
  }

  if (!a.gradient) {
    // The composite (flash) implementation for every forward: the frontend
    // would pick its newer unified operation for a forward without mask
    // or dropout, and one path for all is the one the gradient pairs with.
    auto options =
        fe::graph::SDPA_attributes()
            .set_name("attention")
            .set_implementation(fe::AttentionImplementation_t::COMPOSITE)
            .set_generate_stats(stats)
            .set_attn_scale(static_cast<float>(a.scale));
    if (a.causal)
      setCausal(options, a.window);
    // The scale first, as NVIDIA's custom-dropout sample passes them: the
    // graph then multiplies the probabilities by the mask and then by the
    // scale, the order of its Philox dropout and of the backward's (the
    // product is the same either way).
    if (dropout)
      options.set_dropout(keep, mask);
    auto [o, rowStats] = graph->sdpa(q, k, v, options);
    rowMajorOutput(*o, kResult, {B, H, T, D});
    if (stats) {
      rowMajorOutput(*rowStats, kRowStats, {B, H, T, 1});
      rowStats->set_data_type(fe::DataType_t::FLOAT);
    }
  } else {
    auto o = graph->tensor(rowMajor("o", kResult, {B, H, T, D}));
    auto dO = graph->tensor(rowMajor("dO", kResultGrad, {B, H, T, D}));
    auto rowStats = graph->tensor(rowMajor("stats", kRowStats, {B, H, T, 1})
                                      .set_data_type(fe::DataType_t::FLOAT));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("attention_grad")
                       .set_attn_scale(static_cast<float>(a.scale));
    if (a.causal)
      setCausal(options, a.window);
    if (dropout)
      options.set_dropout(mask, keep, keepInverse);
    auto [dQ, dK, dV] =
        graph->sdpa_backward(q, k, v, o, dO, rowStats, options);
    rowMajorOutput(*dQ, kQueryGrad, {B, H, T, D});
    rowMajorOutput(*dK, kKeyGrad, {B, Hkv, S, D});
    rowMajorOutput(*dV, kValueGrad, {B, Hkv, S, D});
    t->pack[kResultGrad] = address(a.resultGrad);
    t->pack[kQueryGrad] = address(a.queryGrad);
    t->pack[kKeyGrad] = address(a.keyGrad);
    t->pack[kValueGrad] = address(a.valueGrad);
  }
  if (fe::error_t e =
          graph->build(handle, {fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
      e.is_bad())
    return absl::FailedPreconditionError(absl::StrCat(
        t->label, ": cuDNN has no fused attention for it: ", describe(e),
        "; unset KILN_CUDA_ATTENTION=cudnn to run kiln's flash attention "
        "kernels"));
  int64_t workspace = 0;
  if (fe::error_t e = graph->get_workspace_size(workspace); e.is_bad())
    return absl::InternalError(
        absl::StrCat(t->label, ": cuDNN's workspace size: ", describe(e)));
  workspaceBytes = std::max(workspaceBytes, workspace);
  t->graph = std::move(graph);

  if (dropout) {
    if (!module) {
      if (flashAttentionFatbin().empty())
        return absl::FailedPreconditionError(absl::StrCat(
            t->label, ": its dropout mask is written by a kiln kernel, and "
                      "this build has none (nvcc was not found)"));
      if (absl::Status s = driver->check(
              driver->moduleLoadData(&module, flashAttentionFatbin().data()),
              "cuModuleLoadData (attention dropout-mask kernels)");
          !s.ok()) {
        module = nullptr;
        return s;
      }
    }
    const char *kernel = a.element == GemmType::bf16
                             ? "kiln_flash_dropout_mask_bf16"
                             : "kiln_flash_dropout_mask_f16";
    if (absl::Status s = driver->check(
            driver->moduleGetFunction(&t->maskKernel, module, kernel),
            absl::StrCat("cuModuleGetFunction(", kernel, ")"));
        !s.ok())
      return s;
    t->params = attentionParams(a, address);
    t->maskItems = flash::dropoutMaskItems(t->params);
  }
  byThunk[index] = std::move(t);
  return absl::OkStatus();
}

bool CudnnAttention::built() { return true; }

CudnnAttention::CudnnAttention(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
CudnnAttention::~CudnnAttention() = default;

absl::StatusOr<std::unique_ptr<CudnnAttention>> CudnnAttention::create(
    std::shared_ptr<const CudaDriver> driver, const Executable &executable,
    const std::function<CUdeviceptr(uint32_t)> &slotPointer) {
  if (absl::Status s = loadLibraries(); !s.ok())
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA backend: KILN_CUDA_ATTENTION=cudnn: ", s.message()));
  auto state = std::make_unique<State>();
  state->driver = std::move(driver);
  state->byThunk.resize(executable.thunks.size());
  // The frontend reports most failures as error_t, but throws where it
  // opens the CUDA runtime or meets a version it does not know.
  try {
    if (cudnnStatus_t s = fe::detail::create_handle(&state->handle);
        s != CUDNN_STATUS_SUCCESS) {
      state->handle = nullptr;
      return absl::FailedPreconditionError(absl::StrCat(
          "CUDA backend: KILN_CUDA_ATTENTION=cudnn: cudnnCreate failed: ",
          fe::detail::get_error_string(s),
          " (cuDNN starts through the CUDA runtime, which needs a GPU and "
          "its driver)"));
    }
    for (size_t i = 0; i < executable.thunks.size(); ++i)
      if (executable.thunks[i].kind == Thunk::Kind::attention)
        if (absl::Status s =
                state->build(i, executable.thunks[i].attention, slotPointer);
            !s.ok())
          return s;
  } catch (const std::exception &e) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA backend: KILN_CUDA_ATTENTION=cudnn: ", e.what()));
  }
  return std::unique_ptr<CudnnAttention>(new CudnnAttention(std::move(state)));
}

uint64_t CudnnAttention::deviceBytes() const {
  // The mask starts at a 256-byte boundary after the workspace.
  return uint64_t((state_->workspaceBytes + 255) / 256 * 256 +
                  state_->maskBytes);
}

void CudnnAttention::bind(CUdeviceptr memory) {
  state_->memory = memory;
  void *mask = reinterpret_cast<void *>(
      memory + CUdeviceptr((state_->workspaceBytes + 255) / 256 * 256));
  for (auto &t : state_->byThunk)
    if (t && t->maskKernel)
      t->pack[kMask] = mask;
}

absl::Status CudnnAttention::enqueue(size_t index, CUstream stream) const {
  ThunkGraph &t = *state_->byThunk[index];
  const CudaDriver &d = *state_->driver;
  if (t.maskKernel) {
    void *mask = t.pack.at(kMask);
    if (!state_->maskZeroed) {
      if (CUresult r = d.memsetD8Async(reinterpret_cast<CUdeviceptr>(mask), 0,
                                       size_t(state_->maskBytes), stream);
          r != CUDA_SUCCESS)
        return absl::InternalError(absl::StrCat(
            t.label, ": zeroing the dropout mask failed: ", d.describe(r)));
      state_->maskZeroed = true;
    }
    void *params[] = {&t.params, &mask};
    unsigned blocks =
        static_cast<unsigned>((t.maskItems + kMaskThreads - 1) / kMaskThreads);
    if (CUresult r = d.launchKernel(t.maskKernel, blocks, 1, 1, kMaskThreads,
                                    1, 1, 0, stream, params, nullptr);
        r != CUDA_SUCCESS)
      return absl::InternalError(absl::StrCat(
          t.label, ": the dropout-mask kernel failed to launch: ",
          d.describe(r)));
  }
  try {
    if (cudnnStatus_t s = fe::detail::set_stream(
            state_->handle, reinterpret_cast<cudaStream_t>(stream));
        s != CUDNN_STATUS_SUCCESS)
      return absl::InternalError(absl::StrCat(
          t.label, ": cudnnSetStream failed: ", fe::detail::get_error_string(s)));
    void *workspace = reinterpret_cast<void *>(state_->memory);
    if (fe::error_t e = t.graph->execute(state_->handle, t.pack, workspace);
        e.is_bad())
      return absl::InternalError(
          absl::StrCat(t.label, ": cuDNN's attention failed: ", describe(e)));
  } catch (const std::exception &e) {
    return absl::InternalError(absl::StrCat(t.label, ": ", e.what()));
  }
  return absl::OkStatus();
}

} // namespace kiln::runtime::cuda

#else // !KILN_HAVE_CUDNN_FRONTEND

namespace kiln::runtime::cuda {

struct CudnnAttention::State {};

bool CudnnAttention::built() { return false; }
CudnnAttention::CudnnAttention(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
CudnnAttention::~CudnnAttention() = default;

absl::StatusOr<std::unique_ptr<CudnnAttention>>
CudnnAttention::create(std::shared_ptr<const CudaDriver>, const Executable &,
                       const std::function<CUdeviceptr(uint32_t)> &) {
  return absl::FailedPreconditionError(
      "CUDA backend: KILN_CUDA_ATTENTION=cudnn, but this build has no cuDNN "
      "support (cudnn-frontend's headers were not found when it was built: "
      "scripts/setup.sh fetches them); unset it to run kiln's flash "
      "attention kernels");
}
uint64_t CudnnAttention::deviceBytes() const { return 0; }
void CudnnAttention::bind(CUdeviceptr) {}
absl::Status CudnnAttention::enqueue(size_t, CUstream) const {
  return absl::InternalError("CUDA backend: this build has no cuDNN support");
}

} // namespace kiln::runtime::cuda

#endif
