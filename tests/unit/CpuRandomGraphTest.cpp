// Random-graph differential testing of the CPU backend: 1000 random
// well-typed graphs (tests/unit/RandomGraph.h), each compiled as one
// executable and compared with the reference evaluator value by value, and
// run a second time with dead arena bytes poisoned (bitwise equal). On a
// mismatch the graph is reduced to the ancestors of the first wrong value
// and written as a reproducer .mlir (path in the failure message). The
// check itself is RandomGraphCheck.h, shared with the CUDA backend.
#include "CpuTestSupport.h"
#include "RandomGraphCheck.h"

namespace kiln::testing {
namespace {

BackendRuns runOnCpu(mlir::ModuleOp module,
                     const std::vector<HostTensor> &inputs,
                     const PipelineOptions &pipeline = {},
                     const compiler::cpu::KernelTarget &target = {}) {
  auto exe = compiler::cpu::compileExecutable(module, "main", nullptr,
                                              pipeline, target);
  if (!exe.ok())
    return BackendRuns::failure("compile: " + exe.status().ToString());
  // The same executable twice: as planned, and with every dead arena byte
  // poisoned with NaN after each thunk. A plan that reuses memory too early
  // makes the two differ.
  runtime::CpuRuntimeOptions poisoned;
  poisoned.poisonDeadBuffers = true;
  auto program = runtime::loadCpuProgram(*exe);
  auto poisonedProgram = runtime::loadCpuProgram(*exe, poisoned);
  if (!program.ok() || !poisonedProgram.ok())
    return BackendRuns::failure(
        "load: " + (program.ok() ? poisonedProgram.status() : program.status())
                       .ToString());
  auto actual = (*program)->run(runtime::borrowAll(inputs));
  auto again = (*poisonedProgram)->run(runtime::borrowAll(inputs));
  if (!actual.ok() || !again.ok())
    return BackendRuns::failure(
        "run: " + (actual.ok() ? again.status() : actual.status()).ToString());
  return {"", *std::move(actual), *std::move(again),
          "differs when dead arena bytes are poisoned"};
}

TEST(CpuRandomGraphs, ThousandGraphsAgreeWithReference) {
  RandomGraphCheck check;
  check.backend = "cpu";
  check.testName = "CpuRandomGraphTest";
  check.graphs = 1000;
  check.threads = 2; // each graph has its own MLIRContext
  check.run = [](mlir::ModuleOp module, const std::vector<HostTensor> &inputs) {
    return runOnCpu(module, inputs);
  };
  expectRandomGraphsMatchReference(check);
}

/// The kernel forms and the pipeline compileExecutable gives a GPU, here
/// on the CPU's threads: scatter_add by atomics, rows of at least 8 points
/// by 4 lanes each (a warp, scaled down; host lanes run them:
/// runtime/HostLanes.h) holding a short row's points for every pass, full
/// results stored while reducing, four
/// elements an index in fusions without reduces, rows read 8 points an
/// iteration (KILN_CUDA_ROW_UNROLL's form), independent loop kernels run
/// as group kernels, and reductions split into trees, with limits scaled
/// down to the generator's small tensors so that its reductions are split
/// (the pass counts 4 threads per row of at least 8).
BackendRuns runGpuFormsOnCpu(mlir::ModuleOp module,
                             const std::vector<HostTensor> &inputs,
                             unsigned elementsPerIndex = 4) {
  PipelineOptions pipeline;
  pipeline.splitReductionsBelow = 64;
  pipeline.splitReductionsMaxSerial = 2;
  pipeline.splitReductionsRowLanes = 4;
  pipeline.splitReductionsMinLanedRow = 8;
  compiler::cpu::KernelTarget target;
  target.atomicScatterAdd = true;
  target.rowLanes = 4;
  target.minLanedRow = 8;
  target.holdRows = true;
  target.storeWhileReducing = true;
  target.elementsPerIndex = elementsPerIndex;
  target.rowUnroll = 8;
  target.kernelGroups = true;
  return runOnCpu(module, inputs, pipeline, target);
}

/// `graphs` of the generator's graphs in runGpuFormsOnCpu's forms with
/// `elementsPerIndex`, against the reference.
void expectGpuFormsMatchReference(const char *testName, uint32_t graphs,
                                  unsigned elementsPerIndex) {
  RandomGraphCheck check;
  check.backend = "cpu";
  check.testName = testName;
  check.graphs = graphs;
  check.threads = 2;
  check.run = [elementsPerIndex](mlir::ModuleOp module,
                                 const std::vector<HostTensor> &inputs) {
    return runGpuFormsOnCpu(module, inputs, elementsPerIndex);
  };
  check.floatAtomicsReorder = true; // the atomic scatter_add
  expectRandomGraphsMatchReference(check);
}

TEST(CpuRandomGraphs, GpuKernelFormsAgreeWithReference) {
  expectGpuFormsMatchReference("CpuRandomGraphTest (GPU forms)", 1000, 4);
}

/// The same forms with $KILN_CUDA_ELEMENTS_PER_THREAD=8's: eight elements
/// an index (two Philox blocks) where the count allows, else four, and a
/// lane's steps of 8 points over rows whose lanes all get whole steps.
TEST(CpuRandomGraphs, GpuKernelFormsWithEightElementsAgreeWithReference) {
  expectGpuFormsMatchReference("CpuRandomGraphTest (GPU forms, 8 elements)",
                               300, 8);
}

} // namespace
} // namespace kiln::testing
