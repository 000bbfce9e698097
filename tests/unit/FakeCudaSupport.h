// Test support for the CUDA runtime without a GPU: typed access to the fake
// driver's and fake cuBLASLt's control functions (dlopen of the same paths
// kiln loads, so both see one instance), runtime options pointing at the
// fakes, a fixture that resets them and checks nothing leaked, and helpers
// that build executables by hand.
#ifndef KILN_TESTS_UNIT_FAKECUDASUPPORT_H
#define KILN_TESTS_UNIT_FAKECUDASUPPORT_H

#include "ExecutableTestSupport.h"
#include "runtime/Executable.h"
#include "runtime/cuda/CudaExecutor.h"
#include "tests/fake-cuda/FakeCuda.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace kiln::cudatest {

/// One fake library, opened for the process's life.
class FakeLibrary {
public:
  explicit FakeLibrary(const std::string &path)
      : path_(path), handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) {
      std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(), dlerror());
      std::abort();
    }
  }
  /// The function `name`, typed as its declaration in FakeCuda.h.
  template <typename Function> Function *get(const char *name) const {
    void *symbol = dlsym(handle_, name);
    if (!symbol) {
      std::fprintf(stderr, "%s has no %s\n", path_.c_str(), name);
      std::abort();
    }
    return reinterpret_cast<Function *>(symbol);
  }

private:
  std::string path_;
  void *handle_;
};

/// A fake library's path: the build's (compiled in), or the one of the
/// same name in $KILN_FAKE_CUDA_DIR (a bundle run away from the build tree,
/// scripts/gpu-check.sh).
inline std::string fakeLibraryPath(const std::string &built) {
  const char *dir = std::getenv("KILN_FAKE_CUDA_DIR");
  if (!dir || !*dir)
    return built;
  return std::string(dir) + "/" + built.substr(built.find_last_of('/') + 1);
}

inline const FakeLibrary &fakeDriver() {
  static const FakeLibrary library(fakeLibraryPath(KILN_FAKE_CUDA_DRIVER));
  return library;
}

inline const FakeLibrary &fakeCublasLt() {
  static const FakeLibrary library(fakeLibraryPath(KILN_FAKE_CUBLASLT));
  return library;
}

/// FAKE_CUDA(fake_cuda_launch_count)() calls the fake driver's function.
#define FAKE_CUDA(function)                                                    \
  (*::kiln::cudatest::fakeDriver().get<decltype(function)>(#function))
#define FAKE_CUBLASLT(function)                                                \
  (*::kiln::cudatest::fakeCublasLt().get<decltype(function)>(#function))

inline runtime::CudaRuntimeOptions fakeCudaOptions() {
  runtime::CudaRuntimeOptions options;
  options.driverLibrary = fakeLibraryPath(KILN_FAKE_CUDA_DRIVER);
  options.cublasLtLibrary = fakeLibraryPath(KILN_FAKE_CUBLASLT);
  return options;
}

/// Resets both fakes before each test; after it, every program is gone,
/// so nothing may be left on the "device".
class FakeCudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    FAKE_CUDA(fake_cuda_reset)();
    FAKE_CUBLASLT(fake_cublaslt_reset)();
  }
  void TearDown() override {
    EXPECT_EQ(FAKE_CUDA(fake_cuda_live_allocations)(), 0);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_live_objects)(), 0);
    EXPECT_EQ(FAKE_CUBLASLT(fake_cublaslt_live_objects)(), 0);
  }
};

using testing::copyThunk;
using testing::kernelThunk;
using testing::slot;

inline runtime::Executable cudaExecutable() {
  runtime::Executable e;
  e.device = runtime::Device::cuda;
  e.compilerVersion = "test";
  e.targetCpu = "sm_90";
  e.targetFeatures = "+ptx80";
  return e;
}

/// f32 tensor [first, first + 1, ...].
inline HostTensor iota(std::vector<int64_t> shape, float first,
                       float step = 1.0f) {
  HostTensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, first + step * static_cast<float>(i));
  return t;
}

inline bool contains(const absl::Status &status, const std::string &text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

} // namespace kiln::cudatest

#endif // KILN_TESTS_UNIT_FAKECUDASUPPORT_H
