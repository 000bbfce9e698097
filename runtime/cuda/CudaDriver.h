// The CUDA driver API, loaded at run time: dlopen of the driver library,
// `cuGetProcAddress_v2` by dlsym, and every other entry point through it at
// the CUDA version whose signature kiln calls. kiln never links libcuda, so
// binaries built on a machine without a GPU run on one with a driver, and a
// missing driver is a clear error instead of a loader failure.
//
// Why versions matter (docs: /work/shared/GPU.md): cuGetProcAddress returns
// the newest ABI of a symbol not newer than the version asked. Asked at
// 13000, `cuCtxSynchronize` is the CUDA 13 function that takes a context;
// called without one it fails (709). So each entry point is asked for at
// the version of the PFN_cuXxx_vNNNN typedef kiln calls it through, and the
// table below is the one place that pairs them.
#ifndef KILN_RUNTIME_CUDA_CUDADRIVER_H
#define KILN_RUNTIME_CUDA_CUDADRIVER_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <memory>
#include <string>
#include <string_view>

namespace kiln::runtime::cuda {

/// X(member, driver symbol, CUDA version): the member has type
/// PFN_<symbol>_v<version> and is taken with cuGetProcAddress(symbol,
/// version). Symbols are never spelled with a _v2 suffix here: the version
/// argument picks the ABI.
#define KILN_CUDA_DRIVER_ENTRY_POINTS(X)                                       \
  X(init, cuInit, 2000)                                                        \
  X(driverGetVersion, cuDriverGetVersion, 2020)                                \
  X(deviceGetCount, cuDeviceGetCount, 2000)                                    \
  X(deviceGet, cuDeviceGet, 2000)                                              \
  X(deviceGetName, cuDeviceGetName, 2000)                                      \
  X(deviceGetAttribute, cuDeviceGetAttribute, 2000)                            \
  X(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000)                    \
  X(devicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000)                 \
  X(ctxSetCurrent, cuCtxSetCurrent, 4000)                                      \
  X(ctxSynchronize, cuCtxSynchronize, 2000)                                    \
  X(memAlloc, cuMemAlloc, 3020)                                                \
  X(memFree, cuMemFree, 3020)                                                  \
  X(memGetInfo, cuMemGetInfo, 3020)                                            \
  X(memcpyHtoDAsync, cuMemcpyHtoDAsync, 3020)                                  \
  X(memcpyDtoHAsync, cuMemcpyDtoHAsync, 3020)                                  \
  X(memcpyDtoDAsync, cuMemcpyDtoDAsync, 3020)                                  \
  X(memsetD8Async, cuMemsetD8Async, 3020)                                      \
  X(streamCreate, cuStreamCreate, 2000)                                        \
  X(streamDestroy, cuStreamDestroy, 4000)                                      \
  X(streamSynchronize, cuStreamSynchronize, 2000)                              \
  X(moduleLoadData, cuModuleLoadData, 2000)                                    \
  X(moduleUnload, cuModuleUnload, 2000)                                        \
  X(moduleGetFunction, cuModuleGetFunction, 2000)                              \
  X(launchKernel, cuLaunchKernel, 4000)                                        \
  X(funcSetAttribute, cuFuncSetAttribute, 9000)                                \
  X(streamBeginCapture, cuStreamBeginCapture, 10010)                           \
  X(streamEndCapture, cuStreamEndCapture, 10000)                               \
  X(graphInstantiateWithFlags, cuGraphInstantiateWithFlags, 11040)             \
  X(graphLaunch, cuGraphLaunch, 10000)                                         \
  X(graphExecDestroy, cuGraphExecDestroy, 10000)                               \
  X(graphDestroy, cuGraphDestroy, 10000)                                       \
  X(eventCreate, cuEventCreate, 2000)                                          \
  X(eventDestroy, cuEventDestroy, 4000)                                        \
  X(eventRecord, cuEventRecord, 2000)                                          \
  X(eventSynchronize, cuEventSynchronize, 2000)                                \
  X(eventElapsedTime, cuEventElapsedTime, 2000)                                \
  X(getErrorName, cuGetErrorName, 6000)                                        \
  X(getErrorString, cuGetErrorString, 6000)

/// One GPU as the driver describes it.
struct CudaDeviceInfo {
  CUdevice device = 0;
  int ordinal = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
};

/// A loaded driver: its entry points and error formatting. Loaded once per
/// library path per process and never unloaded (drivers do not support
/// being unloaded while contexts may exist); shared by every program.
class CudaDriver {
public:
  /// library path → the driver, or FailedPrecondition "CUDA backend: no
  /// CUDA driver (...)" when the library cannot be loaded, or a message
  /// naming the entry point that cannot be resolved.
  static absl::StatusOr<std::shared_ptr<const CudaDriver>>
  load(const std::string &libraryPath);

  /// cuInit, then device `ordinal`'s handle, name and compute capability;
  /// FailedPrecondition "CUDA backend: no CUDA device (...)" when there is
  /// none, InvalidArgument when `ordinal` is out of range.
  absl::StatusOr<CudaDeviceInfo> openDevice(int ordinal) const;

  /// CUDA_SUCCESS → OK; anything else → Internal "<call> failed:
  /// CUDA_ERROR_X (description)" (ResourceExhausted for out of memory).
  absl::Status check(CUresult result, std::string_view call) const;
  /// "CUDA_ERROR_X (description)".
  std::string describe(CUresult result) const;

  const std::string &libraryPath() const { return libraryPath_; }
  /// The driver's CUDA version, e.g. 13000.
  int version() const { return version_; }

#define KILN_CUDA_DECLARE_ENTRY_POINT(member, symbol, ver)                     \
  PFN_##symbol##_v##ver member = nullptr;
  KILN_CUDA_DRIVER_ENTRY_POINTS(KILN_CUDA_DECLARE_ENTRY_POINT)
#undef KILN_CUDA_DECLARE_ENTRY_POINT

private:
  CudaDriver() = default;
  absl::Status resolveEntryPoints(void *library);

  std::string libraryPath_;
  int version_ = 0;
};

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_CUDADRIVER_H
