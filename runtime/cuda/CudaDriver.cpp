// Loading the CUDA driver (see CudaDriver.h): dlopen, cuGetProcAddress_v2
// by dlsym, every entry point through it at its table version, the device
// query, and CUresult → text.
#include "runtime/cuda/CudaDriver.h"

#include "absl/strings/str_cat.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace kiln::runtime::cuda {

namespace {

std::mutex &driverCacheMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Drivers by library path: loaded once, kept for the process.
std::map<std::string, std::shared_ptr<const CudaDriver>> &driverCache() {
  static auto *cache =
      new std::map<std::string, std::shared_ptr<const CudaDriver>>();
  return *cache;
}

std::string versionText(int version) {
  return absl::StrCat(version / 1000, ".", version % 1000 / 10);
}

} // namespace

absl::StatusOr<std::shared_ptr<const CudaDriver>>
CudaDriver::load(const std::string &libraryPath) {
  std::lock_guard<std::mutex> lock(driverCacheMutex());
  auto cached = driverCache().find(libraryPath);
  if (cached != driverCache().end())
    return cached->second;
  void *library = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA backend: no CUDA driver (", libraryPath,
        " could not be loaded: ", error ? error : "unknown dlopen error",
        "); install the NVIDIA driver or use --backend cpu"));
  }
  std::shared_ptr<CudaDriver> driver(new CudaDriver());
  driver->libraryPath_ = libraryPath;
  if (absl::Status s = driver->resolveEntryPoints(library); !s.ok()) {
    dlclose(library); // nothing from it is in use yet
    return s;
  }
  driverCache()[libraryPath] = driver;
  return std::shared_ptr<const CudaDriver>(std::move(driver));
}

absl::Status CudaDriver::resolveEntryPoints(void *library) {
  // The _v2 name is the CUDA 12 ABI (with the symbol-status argument); it
  // is the only symbol ever looked up by name.
  auto getProcAddress = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
      dlsym(library, "cuGetProcAddress_v2"));
  if (!getProcAddress)
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA backend: the CUDA driver ", libraryPath_,
        " has no cuGetProcAddress_v2 (a driver for CUDA 12.0 or newer is "
        "needed); update the NVIDIA driver or use --backend cpu"));
  auto resolve = [&](const char *symbol, int version,
                     void **entry) -> absl::Status {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *entry = nullptr;
    CUresult result = getProcAddress(symbol, entry, version,
                                     CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS &&
        *entry != nullptr)
      return absl::OkStatus();
    std::string why = found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          ? "the driver is older than that version"
                          : "symbol not found";
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA backend: the CUDA driver ", libraryPath_, " does not provide ",
        symbol, " at CUDA ", versionText(version),
        " (cuGetProcAddress returned CUresult ", static_cast<int>(result), ": ",
        why, "); update the NVIDIA driver or use --backend cpu"));
  };
#define KILN_CUDA_RESOLVE_ENTRY_POINT(member, symbol, ver)                     \
  {                                                                            \
    void *entry = nullptr;                                                     \
    if (absl::Status s = resolve(#symbol, ver, &entry); !s.ok())               \
      return s;                                                                \
    member = reinterpret_cast<PFN_##symbol##_v##ver>(entry);                   \
  }
  KILN_CUDA_DRIVER_ENTRY_POINTS(KILN_CUDA_RESOLVE_ENTRY_POINT)
#undef KILN_CUDA_RESOLVE_ENTRY_POINT
  return check(driverGetVersion(&version_), "cuDriverGetVersion");
}

absl::StatusOr<CudaDeviceInfo> CudaDriver::openDevice(int ordinal) const {
  // cuInit is cheap after the first call, and reports "no device" itself
  // on machines with a driver but no GPU.
  CUresult initResult = init(0);
  if (initResult == CUDA_ERROR_NO_DEVICE)
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA backend: no CUDA device (cuInit returned ",
                     describe(initResult), ")"));
  if (initResult != CUDA_SUCCESS)
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA backend: cuInit failed: ", describe(initResult), " (driver ",
        libraryPath_, ", CUDA ", versionText(version_), ")"));
  int count = 0;
  if (absl::Status s = check(deviceGetCount(&count), "cuDeviceGetCount");
      !s.ok())
    return s;
  if (count == 0)
    return absl::FailedPreconditionError(
        "CUDA backend: no CUDA device (cuDeviceGetCount returned 0)");
  if (ordinal < 0 || ordinal >= count)
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA backend: device ", ordinal, " requested, but ",
                     count, " CUDA device(s) are present"));
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  if (absl::Status s = check(deviceGet(&info.device, ordinal), "cuDeviceGet");
      !s.ok())
    return s;
  char name[256] = {};
  if (absl::Status s = check(deviceGetName(name, sizeof(name) - 1, info.device),
                             "cuDeviceGetName");
      !s.ok())
    return s;
  info.name = name;
  if (absl::Status s =
          check(deviceGetAttribute(&info.computeMajor,
                                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                   info.device),
                "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
      !s.ok())
    return s;
  if (absl::Status s =
          check(deviceGetAttribute(&info.computeMinor,
                                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                   info.device),
                "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
      !s.ok())
    return s;
  return info;
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (getErrorName == nullptr || getErrorName(result, &name) != CUDA_SUCCESS ||
      name == nullptr)
    return absl::StrCat("CUresult ", static_cast<int>(result));
  std::string described = name;
  if (getErrorString != nullptr &&
      getErrorString(result, &text) == CUDA_SUCCESS && text != nullptr)
    absl::StrAppend(&described, " (", text, ")");
  return described;
}

absl::Status CudaDriver::check(CUresult result, std::string_view call) const {
  if (result == CUDA_SUCCESS)
    return absl::OkStatus();
  std::string message =
      absl::StrCat(std::string(call), " failed: ", describe(result));
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

} // namespace kiln::runtime::cuda
