// The CUDA runtime's public entry points (CudaExecutor.h): where the driver
// and cuBLASLt libraries come from (options, then the environment, read
// here at the edge, then the defaults), loading programs, the device check
// and free memory for tools and tests, and statistics.
#include "runtime/cuda/CudaExecutor.h"
#include "runtime/DeviceMemoryMeter.h"
#include "runtime/cuda/CudaProgram.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cstdlib>

namespace kiln::runtime {

namespace {

std::string fromEnvironment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

cuda::CudaLibraries librariesFor(const CudaRuntimeOptions &options) {
  cuda::CudaLibraries libraries;
  libraries.driver = options.driverLibrary;
  if (libraries.driver.empty())
    libraries.driver = fromEnvironment("KILN_CUDA_DRIVER");
  if (libraries.driver.empty())
    libraries.driver = "libcuda.so.1";
  std::string cublasLt = options.cublasLtLibrary;
  if (cublasLt.empty())
    cublasLt = fromEnvironment("KILN_CUBLASLT");
  if (cublasLt.empty())
    // The soname of the CUDA 13 toolkit's library, then the development
    // link a toolkit of another major version provides.
    libraries.cublasLt = {"libcublasLt.so.13", "libcublasLt.so"};
  else
    libraries.cublasLt = {cublasLt};
  return libraries;
}

} // namespace

absl::StatusOr<std::unique_ptr<Program>>
loadCudaProgram(Executable executable, const CudaRuntimeOptions &options) {
  auto program = std::make_unique<cuda::CudaProgram>(
      std::move(executable), options, librariesFor(options));
  if (absl::Status s = program->load(); !s.ok())
    return s;
  return std::unique_ptr<Program>(std::move(program));
}

absl::StatusOr<std::unique_ptr<Program>>
loadCudaProgram(std::string_view bytes, const CudaRuntimeOptions &options) {
  absl::StatusOr<Executable> executable = deserializeExecutable(bytes);
  if (!executable.ok())
    return executable.status();
  return loadCudaProgram(*std::move(executable), options);
}

absl::Status cudaDeviceAvailable(const CudaRuntimeOptions &options) {
  absl::StatusOr<std::shared_ptr<const cuda::CudaDriver>> driver =
      cuda::CudaDriver::load(librariesFor(options).driver);
  if (!driver.ok())
    return driver.status();
  return (*driver)->openDevice(options.device).status();
}

absl::StatusOr<uint64_t>
cudaMemoryAvailable(const CudaRuntimeOptions &options) {
  absl::StatusOr<std::shared_ptr<const cuda::CudaDriver>> loaded =
      cuda::CudaDriver::load(librariesFor(options).driver);
  if (!loaded.ok())
    return loaded.status();
  const cuda::CudaDriver &d = **loaded;
  absl::StatusOr<cuda::CudaDeviceInfo> device = d.openDevice(options.device);
  if (!device.ok())
    return device.status();
  // The primary context every program shares (made here if none exists
  // yet: its own memory is then not free, as it will not be for them).
  CUcontext context = nullptr;
  if (absl::Status s =
          d.check(d.devicePrimaryCtxRetain(&context, device->device),
                  "cuDevicePrimaryCtxRetain");
      !s.ok())
    return s;
  size_t freeBytes = 0, totalBytes = 0;
  absl::Status s = d.check(d.ctxSetCurrent(context), "cuCtxSetCurrent");
  if (s.ok())
    s = d.check(d.memGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
  d.devicePrimaryCtxRelease(device->device);
  if (!s.ok())
    return s;
  return std::min<uint64_t>(
      freeBytes, DeviceMemoryMeter::process().stats().headroom(freeBytes));
}

absl::StatusOr<CudaProgramStats> cudaProgramStats(const Program &program) {
  // Built without RTTI in places: the backend name says what it is.
  if (program.backendName() != "cuda")
    return absl::InvalidArgumentError(absl::StrCat(
        "cudaProgramStats: this is a ", std::string(program.backendName()),
        " program, not a cuda one"));
  return static_cast<const cuda::CudaProgram &>(program).stats();
}

} // namespace kiln::runtime
