// Support for the tests that need an NVIDIA GPU (CudaBackendTest,
// CudaRandomGraphTest): a fixture that skips each test, printing why, when
// no GPU is usable (no driver, no device: every CI machine); the target
// they compile for ($KILN_CUDA_ARCH, else sm_90); programs compiled for it
// and loaded on the GPU; and paths into the source tree ($KILN_SOURCE_DIR
// at run time first: scripts/gpu-check.sh runs these binaries from a
// bundle, far from the tree they were built from).
#ifndef KILN_TESTS_UNIT_CUDATESTSUPPORT_H
#define KILN_TESTS_UNIT_CUDATESTSUPPORT_H

#include "CpuTestSupport.h"

#include "runtime/cuda/CudaExecutor.h"

#include <cstdlib>
#include <string>

namespace kiln::testing {

/// The kernels' target: cuda for $KILN_CUDA_ARCH, else sm_90 (the H100).
inline compiler::cpu::KernelTarget cudaTestTarget() {
  compiler::cpu::KernelTarget target;
  target.device = runtime::Device::cuda;
  if (const char *arch = std::getenv("KILN_CUDA_ARCH"); arch && *arch)
    target.cudaArch = arch;
  return target;
}

/// Compiles a module's @main for cudaTestTarget() (recording the compile
/// statistics in `stats` when given) and loads it on GPU 0.
inline ProgramFactory
cudaProgramFactory(compiler::cpu::CpuCompileStats *stats = nullptr,
                   PipelineOptions pipeline = PipelineOptions()) {
  return [stats, pipeline](mlir::ModuleOp module)
             -> absl::StatusOr<std::unique_ptr<runtime::Program>> {
    absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
        module, "main", stats, pipeline, cudaTestTarget());
    if (!exe.ok())
      return exe.status();
    return runtime::loadCudaProgram(*std::move(exe));
  };
}

/// Skips every test of a suite when no GPU is usable, with the runtime's
/// reason (asked once per process).
class CudaDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    static const absl::Status available = runtime::cudaDeviceAvailable();
    if (!available.ok())
      GTEST_SKIP() << "no usable CUDA device: " << available.message();
  }
};

/// `relative` (e.g. "tests/passes/Inputs/x.mlir") under the source tree:
/// $KILN_SOURCE_DIR when set, else the tree this test was built from.
inline std::string sourcePath(const std::string &relative) {
  if (const char *root = std::getenv("KILN_SOURCE_DIR"); root && *root)
    return std::string(root) + "/" + relative;
#ifdef KILN_SOURCE_DIR
  return std::string(KILN_SOURCE_DIR) + "/" + relative;
#else
  return relative;
#endif
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_CUDATESTSUPPORT_H
