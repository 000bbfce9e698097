// Loading cuBLASLt (see CublasLt.h): dlopen of the first candidate path
// that works, dlsym of each entry point by its plain name (cuBLASLt's
// exported names carry no ABI versions, unlike the driver's).
#include "runtime/cuda/CublasLt.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace kiln::runtime::cuda {

namespace {

std::mutex &cublasCacheMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, std::shared_ptr<const CublasLt>> &cublasCache() {
  static auto *cache =
      new std::map<std::string, std::shared_ptr<const CublasLt>>();
  return *cache;
}

} // namespace

absl::StatusOr<std::shared_ptr<const CublasLt>>
CublasLt::load(const std::vector<std::string> &candidates) {
  std::string key = absl::StrJoin(candidates, "\n");
  std::lock_guard<std::mutex> lock(cublasCacheMutex());
  auto cached = cublasCache().find(key);
  if (cached != cublasCache().end())
    return cached->second;
  std::vector<std::string> failures;
  for (const std::string &path : candidates) {
    void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *error = dlerror();
      failures.push_back(
          absl::StrCat(path, ": ", error ? error : "unknown dlopen error"));
      continue;
    }
    std::shared_ptr<CublasLt> lt(new CublasLt());
    lt->libraryPath_ = path;
    std::string missing;
#define KILN_CUBLASLT_RESOLVE_ENTRY_POINT(member, symbol)                      \
  lt->member = reinterpret_cast<decltype(&::symbol)>(dlsym(library, #symbol)); \
  if (lt->member == nullptr && missing.empty())                                \
    missing = #symbol;
    KILN_CUBLASLT_ENTRY_POINTS(KILN_CUBLASLT_RESOLVE_ENTRY_POINT)
#undef KILN_CUBLASLT_RESOLVE_ENTRY_POINT
    if (!missing.empty()) {
      dlclose(library);
      failures.push_back(absl::StrCat(path, ": has no ", missing));
      continue;
    }
    cublasCache()[key] = lt;
    return std::shared_ptr<const CublasLt>(std::move(lt));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("CUDA backend: cuBLASLt could not be loaded (",
                   absl::StrJoin(failures, "; "),
                   "); install the CUDA toolkit's cuBLAS, set KILN_CUBLASLT to "
                   "libcublasLt.so, or use --backend cpu"));
}

std::string CublasLt::statusName(cublasStatus_t status) const {
  const char *name = getStatusName ? getStatusName(status) : nullptr;
  if (name == nullptr)
    return absl::StrCat("cublasStatus_t ", static_cast<int>(status));
  return name;
}

} // namespace kiln::runtime::cuda
