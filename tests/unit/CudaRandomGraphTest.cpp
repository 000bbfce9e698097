// Random-graph differential testing of the CUDA backend: the CPU backend's
// check (RandomGraphCheck.h: 1000 random well-typed graphs, each compared
// with the reference evaluator value by value, reproducers reduced to the
// first wrong value in /tmp/kiln-cuda-repro-<seed>.mlir), with each graph
// compiled for $KILN_CUDA_ARCH (default sm_90) and run on the GPU twice:
// launched thunk by thunk, then replayed as the captured CUDA graph, which
// must give the same bits. $KILN_RANDOM_GRAPHS changes the count. Skips
// without a GPU.
#include "CudaTestSupport.h"
#include "RandomGraphCheck.h"

#include <algorithm>
#include <thread>

namespace kiln::testing {
namespace {

using CudaRandomGraphs = CudaDeviceTest;

/// $KILN_RANDOM_GRAPHS, else 1000; a value that is not a positive integer
/// is a test failure (and 1000 are checked).
uint32_t graphCount() {
  const char *env = std::getenv("KILN_RANDOM_GRAPHS");
  if (!env || !*env)
    return 1000;
  char *end = nullptr;
  unsigned long count = std::strtoul(env, &end, 10);
  if (*end || count == 0 || count > 1000000) {
    ADD_FAILURE() << "KILN_RANDOM_GRAPHS='" << env
                  << "' is not a count of graphs (1 to 1000000)";
    return 1000;
  }
  return static_cast<uint32_t>(count);
}

BackendRuns runOnCuda(mlir::ModuleOp module,
                      const std::vector<HostTensor> &inputs) {
  auto exe = compiler::cpu::compileExecutable(
      module, "main", nullptr, PipelineOptions(), cudaTestTarget());
  if (!exe.ok())
    return BackendRuns::failure("compile: " + exe.status().ToString());
  auto program = runtime::loadCudaProgram(*std::move(exe));
  if (!program.ok())
    return BackendRuns::failure("load: " + program.status().ToString());
  // The first run launches the thunks one by one; the second captures them
  // as a CUDA graph and launches that (CudaRuntimeOptions::captureGraphs).
  auto actual = (*program)->run(runtime::borrowAll(inputs));
  auto again = (*program)->run(runtime::borrowAll(inputs));
  if (!actual.ok() || !again.ok())
    return BackendRuns::failure(
        "run: " + (actual.ok() ? again.status() : actual.status()).ToString());
  return {"", *std::move(actual), *std::move(again),
          "differs when replayed as a captured CUDA graph"};
}

TEST_F(CudaRandomGraphs, ThousandGraphsAgreeWithReference) {
  RandomGraphCheck check;
  check.backend = "cuda";
  check.testName = "CudaRandomGraphTest (" + cudaTestTarget().cudaArch + ")";
  check.graphs = graphCount();
  // Compiling (LLVM's NVPTX back end, then ptxas) is the cost, on the
  // host: one graph per thread, each with its own MLIRContext and program.
  check.threads = static_cast<int>(
      std::clamp(std::thread::hardware_concurrency(), 2u, 8u));
  check.run = runOnCuda;
  check.floatAtomicsReorder = true; // the atomic scatter_add
  expectRandomGraphsMatchReference(check);
}

} // namespace
} // namespace kiln::testing
