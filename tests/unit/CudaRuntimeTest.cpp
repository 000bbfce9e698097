// The CUDA runtime against the fake driver (tests/fake-cuda): how it loads
// (driver, device, architecture and memory errors, kernels), what a run
// launches and copies, CUDA graph capture and replay, the entry-point
// versions it asks the driver for, profiled runs (events around each
// thunk), and that cpu and cuda executables are refused by each other's
// loader. GEMMs are in CudaGemmTest.cpp; outputs that stay on the device
// in CudaDeviceOutputsTest.cpp.
#include "CudaRuntimeTestPrograms.h"
#include "runtime/CpuExecutor.h"

#include "absl/strings/str_cat.h"

#include <cuda.h>

#include <thread>

namespace kiln {
namespace {

using namespace cudatest;
using CudaRuntime = FakeCudaTest;

//===--- Loading: driver, device, architecture, memory, kernels -----------===//

TEST_F(CudaRuntime, MissingDriverIsAFailedPreconditionThatSaysSo) {
  runtime::CudaRuntimeOptions options = fakeCudaOptions();
  options.driverLibrary = "/nonexistent/kiln/libcuda.so.1";
  auto program = runtime::loadCudaProgram(kernelExecutable(), options);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(program.status(),
                       "CUDA backend: no CUDA driver (/nonexistent/kiln/"
                       "libcuda.so.1 could not be loaded: "))
      << program.status();
  EXPECT_TRUE(contains(program.status(), "or use --backend cpu"));
  absl::Status available = runtime::cudaDeviceAvailable(options);
  EXPECT_EQ(available.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(available, "no CUDA driver")) << available;
}

TEST_F(CudaRuntime, NoDeviceIsAFailedPreconditionThatSaysSo) {
  // Initialised with a device first: a driver that already ran cuInit
  // finds no device through cuDeviceGetCount (before, cuInit says so).
  EXPECT_TRUE(runtime::cudaDeviceAvailable(fakeCudaOptions()).ok());
  FAKE_CUDA(fake_cuda_set_device_count)(0);
  auto program =
      runtime::loadCudaProgram(kernelExecutable(), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(program.status(), "CUDA backend: no CUDA device "
                                         "(cuDeviceGetCount returned 0)"))
      << program.status();
  EXPECT_TRUE(contains(runtime::cudaDeviceAvailable(fakeCudaOptions()),
                       "no CUDA device"));
}

TEST_F(CudaRuntime, DeviceOrdinalBeyondTheDevicesIsRefused) {
  runtime::CudaRuntimeOptions options = fakeCudaOptions();
  options.device = 3;
  auto program = runtime::loadCudaProgram(kernelExecutable(), options);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(program.status(), "device 3 requested, but 1 CUDA"))
      << program.status();
}

TEST_F(CudaRuntime, ArchitectureMismatchNamesBothArchitectures) {
  FAKE_CUDA(fake_cuda_set_compute_capability)(8, 0);
  auto program =
      runtime::loadCudaProgram(kernelExecutable(), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(program.status(),
                       "executable built for sm_90; this GPU (Fake CUDA "
                       "Device, compute capability 8.0) cannot run it; "
                       "recompile with --cuda_arch sm_80"))
      << program.status();
}

TEST_F(CudaRuntime, CubinRunsOnlyWithinItsMajorVersionAndPtxRunsForward) {
  runtime::Executable cubin = kernelExecutable();
  cubin.targetCpu = "sm_80";
  cubin.kernelLibrary = "\x7f"
                        "ELF cubin with kiln_kernel_0 and kiln_kernel_1";
  FAKE_CUDA(fake_cuda_set_compute_capability)(8, 6);
  EXPECT_NE(load(cubin), nullptr); // same major, newer minor
  FAKE_CUDA(fake_cuda_set_compute_capability)(9, 0);
  auto refused = runtime::loadCudaProgram(cubin, fakeCudaOptions());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  runtime::Executable ptx = kernelExecutable();
  ptx.targetCpu = "sm_80";
  EXPECT_NE(load(ptx), nullptr); // the driver compiles PTX for newer GPUs
}

TEST_F(CudaRuntime, OutOfMemoryAtLoadReportsThePlanAndTheLargestSlots) {
  FAKE_CUDA(fake_cuda_set_total_memory)(5000); // the arena fits, no more
  auto program =
      runtime::loadCudaProgram(kernelExecutable(), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  const absl::Status &s = program.status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(contains(s, absl::StrCat("allocating the device copies of the "
                                       "inputs and outputs (",
                                       kKernelIoBytes, " bytes; ",
                                       5000 - kKernelArenaBytes,
                                       " of 5000 bytes free)")))
      << s;
  EXPECT_TRUE(
      contains(s, absl::StrCat("plans ", kKernelArenaBytes + kKernelIoBytes,
                               " bytes in all (arena 4096, inputs and "
                               "outputs ",
                               kKernelIoBytes, ", GEMM workspace 0)")))
      << s;
  EXPECT_TRUE(contains(s, "largest slots: slot 0 (input 0, 4000 bytes), slot "
                          "2 (arena at 0, 4000 bytes), slot 3 (output 0, 4000 "
                          "bytes)"))
      << s;
}

TEST_F(CudaRuntime, MissingKernelSymbolIsDataLoss) {
  runtime::Executable e = kernelExecutable();
  e.kernelLibrary = ptxDeclaring({"kiln_kernel_0"});
  auto program = runtime::loadCudaProgram(e, fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(contains(program.status(),
                       "kernel kiln_kernel_1 (thunk 1) missing from the "
                       "kernel library"))
      << program.status();
}

TEST_F(CudaRuntime, KernelModuleLoadsOnceAndEachSymbolResolvesOnce) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuModuleLoadData"), 1);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuModuleGetFunction"), 2);
}

TEST_F(CudaRuntime, ProgramWithoutGemmsNeedsNoCublasLt) {
  runtime::CudaRuntimeOptions options = fakeCudaOptions();
  options.cublasLtLibrary = "/nonexistent/kiln/libcublasLt.so";
  auto program = load(kernelExecutable(), options);
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  EXPECT_TRUE(runKernels(*program, x, 1).ok());
}

//===--- Runs: launches, parameters, copies, memory -----------------------===//

TEST_F(CudaRuntime, KernelsLaunchInThunkOrderWithTheirGrids) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  auto out = runKernels(*program, x, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(FAKE_CUDA(fake_cuda_launch_count)(), 3);
  struct Expected {
    const char *name;
    unsigned grid;
    long long range;
  };
  // One thread per index: ceil(range / 256) blocks of 256.
  const Expected expected[] = {{"kiln_kernel_0", 4, 1000},
                               {"kiln_kernel_1", 2, 257},
                               {"kiln_kernel_0", 1, 4}};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_STREQ(FAKE_CUDA(fake_cuda_launch_name)(i), expected[i].name);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_grid_x)(i), expected[i].grid);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_block_x)(i), 256u);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_param_count)(i), 3);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_range)(i), expected[i].range);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_captured)(i), 0);
  }
}

TEST_F(CudaRuntime, EmptyRangeStillLaunchesOneBlock) {
  runtime::Executable e = kernelExecutable();
  e.thunks[1].kernel.rangeSize = 0;
  auto program = load(e);
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  ASSERT_TRUE(runKernels(*program, x, 1).ok());
  EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_grid_x)(1), 1u);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_range)(1), 0);
}

TEST_F(CudaRuntime, NonSplittableKernelIsRefused) {
  runtime::Executable e = kernelExecutable();
  e.thunks[1].kernel.splittable = false;
  auto program = runtime::loadCudaProgram(e, fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(contains(program.status(),
                       "kernel thunk 1 (kiln_kernel_1) is not splittable"))
      << program.status();
}

TEST_F(CudaRuntime, KernelParametersAreEachSlotsFixedDevicePointer) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0.5f);
  HostTensor y = iota({4}, 7);
  auto out = program->run(
      runtime::inputList(runtime::ProgramInput::borrow(x),
                         runtime::ProgramInput::donate(std::move(y))));
  ASSERT_TRUE(out.ok()) << out.status();
  auto param = [](int launch, int index) {
    return FAKE_CUDA(fake_cuda_launch_param)(launch, index);
  };
  // "Device memory" is host memory in the fake: x's device copy is there.
  const float *xOnDevice = reinterpret_cast<const float *>(param(0, 0));
  for (int i = 0; i < 1000; i += 111)
    EXPECT_EQ(xOnDevice[i], x.getDouble(i)) << i;
  EXPECT_EQ(param(0, 1), param(1, 0)); // the arena value between them
  EXPECT_NE(param(1, 1), param(0, 1)); // output 0 has its own buffer
  EXPECT_EQ(param(2, 0), param(2, 1)); // y updated in place, as on the cpu
  // The (fake) kernel left y's device copy as it was; output 1 is that
  // buffer, on the device until read.
  ASSERT_EQ(out->size(), 2u);
  EXPECT_NE((*out)[1].deferredContents(), nullptr);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ((*out)[1].getDouble(i), 7 + i);
}

TEST_F(CudaRuntime, KernelLaunchFailureNamesTheThunkAndKernel) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  FAKE_CUDA(fake_cuda_fail_call)("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_FAILED);
  HostTensor x = iota({1000}, 0);
  auto failed = runKernels(*program, x, 1);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(contains(failed.status(),
                       "CUDA kernel thunk 1 (kiln_kernel_1) failed to launch "
                       "with grid 2x1x1 of 256 thread(s), rangeSize 257: "
                       "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED "
                       "(unspecified launch failure)"))
      << failed.status();
  EXPECT_TRUE(runKernels(*program, x, 1).ok()); // the program still runs
}

TEST_F(CudaRuntime, DeviceMemoryIsAllocatedOnceAtLoad) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_allocations)(), 2); // arena, device copies
  EXPECT_EQ(FAKE_CUDA(fake_cuda_allocated_bytes)(),
            kKernelArenaBytes + kKernelIoBytes);
  HostTensor x = iota({1000}, 0);
  for (int run = 0; run < 5; ++run)
    ASSERT_TRUE(runKernels(*program, x, float(run)).ok());
  EXPECT_EQ(FAKE_CUDA(fake_cuda_allocations)(), 2);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_live_allocations)(), 2);
  EXPECT_EQ(statsOf(*program).deviceBytes,
            int64_t(kKernelArenaBytes + kKernelIoBytes));
  // No host buffers: the outputs stay on the device (none was read).
  EXPECT_EQ(program->allocationStats().buffers, 0);
  program.reset();
  EXPECT_EQ(FAKE_CUDA(fake_cuda_live_allocations)(), 0);
}

TEST_F(CudaRuntime, RunsCopyInputsInAndNeitherCopyOutputsOutNorWait) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  for (int run = 1; run <= 4; ++run) {
    unsigned long long toDevice = FAKE_CUDA(fake_cuda_bytes_to_device)();
    unsigned long long toHost = FAKE_CUDA(fake_cuda_bytes_to_host)();
    int waits = FAKE_CUDA(fake_cuda_calls_of)("cuStreamSynchronize");
    auto out = runKernels(*program, x, float(run));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_device)() - toDevice, 4000u + 16u);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_host)() - toHost, 0u);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuStreamSynchronize") - waits, 0);
    // Reading a value copies just its bytes, and waits once.
    EXPECT_EQ((*out)[1].getDouble(0), run);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_host)() - toHost, 16u);
    EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuStreamSynchronize") - waits, 1);
  }
  runtime::CudaProgramStats stats = statsOf(*program);
  EXPECT_EQ(stats.bytesCopiedToDevice, 4 * 4016);
  EXPECT_EQ(stats.bytesCopiedToHost, 4 * 16);
}

TEST_F(CudaRuntime, CopiesAndReturnedValuesAreRightOnEveryRun) {
  auto program = load(copyExecutable());
  ASSERT_NE(program, nullptr);
  for (int run = 0; run < 5; ++run) { // direct, capture, replays
    SCOPED_TRACE(run);
    HostTensor x = iota({8}, 10.0f * run, 0.25f);
    auto out =
        program->run(runtime::inputList(runtime::ProgramInput::borrow(x)));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 3u);
    for (const HostTensor &t : *out)
      EXPECT_TRUE(t.bitwiseEqual(x));
    EXPECT_NE((*out)[1].data(), x.data()); // a borrowed buffer stays ours
  }
  runtime::CudaProgramStats stats = statsOf(*program);
  EXPECT_EQ(stats.graphLaunches, 4); // runs 2 (captured) to 5
  // The returned input never crosses the bus: x in, outputs 0 and 2 out.
  EXPECT_EQ(stats.bytesCopiedToDevice, 5 * 32);
  EXPECT_EQ(stats.bytesCopiedToHost, 5 * 64);
}

TEST_F(CudaRuntime, WrongInputsFailAsOnTheCpu) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  auto wrong = program->run(
      runtime::inputList(runtime::ProgramInput::borrow(x),
                         runtime::ProgramInput::donate(iota({5}, 0))));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(wrong.status(),
                       "donated input 1: expected f32[4], got tensor<5xf32>"))
      << wrong.status();
  auto tooFew =
      program->run(runtime::inputList(runtime::ProgramInput::borrow(x)));
  EXPECT_TRUE(contains(tooFew.status(), "program takes 2 inputs, got 1"));
  EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_count)(), 0);
}

TEST_F(CudaRuntime, RunsFromAnotherThreadMakeTheContextCurrent) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  absl::Status status = absl::UnknownError("did not run");
  std::thread other([&] { status = runKernels(*program, x, 1).status(); });
  other.join();
  EXPECT_TRUE(status.ok()) << status;
}

//===--- CUDA graphs ------------------------------------------------------===//

TEST_F(CudaRuntime, SecondRunCapturesAGraphThatLaterRunsReplay) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  for (int run = 1; run <= 10; ++run)
    ASSERT_TRUE(runKernels(*program, x, float(run)).ok()) << run;
  runtime::CudaProgramStats stats = statsOf(*program);
  EXPECT_EQ(stats.directRuns, 1);
  EXPECT_EQ(stats.graphCaptures, 1);
  EXPECT_EQ(stats.graphLaunches, 9);
  EXPECT_EQ(stats.graphCaptureFailures, 0);
  // Run 1 launched the three kernels, run 2 recorded them into the graph;
  // nothing launched one by one after that.
  ASSERT_EQ(FAKE_CUDA(fake_cuda_launch_count)(), 6);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_captured)(i), i >= 3 ? 1 : 0) << i;
  // The graph holds the very parameters the direct launches had: every
  // pointer is fixed, so replays never need capturing again.
  for (int i = 0; i < 3; ++i)
    for (int p = 0; p < 3; ++p)
      EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_param)(i, p),
                FAKE_CUDA(fake_cuda_launch_param)(i + 3, p))
          << i << ", " << p;
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuStreamBeginCapture"), 1);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_graphs_instantiated)(), 1);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_graph_launches)(), 9);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_replayed_kernels)(), 27);
}

TEST_F(CudaRuntime, FailedCaptureFallsBackToDirectLaunchesForGood) {
  auto program = load(copyExecutable());
  ASSERT_NE(program, nullptr);
  FAKE_CUDA(fake_cuda_fail_next)
  ("cuGraphInstantiateWithFlags", CUDA_ERROR_UNKNOWN);
  for (int run = 0; run < 6; ++run) {
    HostTensor x = iota({8}, float(run));
    auto out =
        program->run(runtime::inputList(runtime::ProgramInput::borrow(x)));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE((*out)[0].bitwiseEqual(x)) << run;
  }
  runtime::CudaProgramStats stats = statsOf(*program);
  EXPECT_EQ(stats.graphCaptures, 0);
  EXPECT_EQ(stats.graphCaptureFailures, 1);
  EXPECT_EQ(stats.directRuns, 6);
  EXPECT_EQ(stats.graphLaunches, 0);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuStreamBeginCapture"), 1);
}

TEST_F(CudaRuntime, DroppingAProgramLeavesAnotherThreadsCaptureAlone) {
  // Another thread's program is capturing its step when this one is
  // dropped: the teardown waits for its own stream only. A context-wide
  // synchronize would invalidate that capture (and crashed the H100's
  // driver: docs/GPU.md, run 4).
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  ASSERT_TRUE(runKernels(*program, x, 1).ok());
  FAKE_CUDA(fake_cuda_begin_foreign_capture)();
  program.reset();
  EXPECT_EQ(FAKE_CUDA(fake_cuda_end_foreign_capture)(), 0);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuCtxSynchronize"), 0);
}

TEST_F(CudaRuntime, GraphsCanBeTurnedOff) {
  runtime::CudaRuntimeOptions options = fakeCudaOptions();
  options.captureGraphs = false;
  auto program = load(kernelExecutable(), options);
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  for (int run = 0; run < 4; ++run)
    ASSERT_TRUE(runKernels(*program, x, 0).ok());
  EXPECT_EQ(statsOf(*program).directRuns, 4);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuStreamBeginCapture"), 0);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_count)(), 12);
}

//===--- Profiling --------------------------------------------------------===//

TEST_F(CudaRuntime, AProfiledRunTimesEachThunkBetweenEventsOutsideTheGraph) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  // Two plain runs: the second captures the graph and launches it.
  for (int run = 0; run < 2; ++run)
    ASSERT_TRUE(runKernels(*program, x, 0).ok());
  EXPECT_FALSE(program->takeProfile()) << "profiling is off";
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuEventRecord"), 0);

  program->setProfiling(true);
  for (int run = 0; run < 3; ++run) {
    auto out = runKernels(*program, x, float(run));
    ASSERT_TRUE(out.ok()) << out.status();
    std::optional<runtime::RunProfile> profile = program->takeProfile();
    ASSERT_TRUE(profile) << run;
    EXPECT_FALSE(program->takeProfile()) << "a profile is taken once";
    EXPECT_EQ(profile->device, "cuda");
    // "Fake CUDA Device": no known limits (ProfileTest checks the H100's).
    EXPECT_EQ(profile->limits.bytesPerSecond, 0);
    ASSERT_EQ(profile->events.size(), 3u);
    double previousEnd = 0;
    for (size_t i = 0; i < 3; ++i) {
      const runtime::ThunkEvent &e = profile->events[i];
      EXPECT_EQ(e.thunk, i);
      EXPECT_EQ(e.category, "kernel");
      EXPECT_EQ(e.name, i == 1 ? "kiln_kernel_1" : "kiln_kernel_0");
      EXPECT_GE(e.startUs, previousEnd) << "thunks run in order";
      EXPECT_GE(e.durationUs, 0);
      previousEnd = e.startUs + e.durationUs;
    }
    EXPECT_EQ(profile->events[0].bytes, 8000u) << "two 4000-byte slots";
    EXPECT_LE(previousEnd, profile->durationUs + 1e-9);
  }
  // Profiled runs launch directly, an event before each thunk and after
  // the last plus one at the run's start; the graph is not replayed.
  runtime::CudaProgramStats stats = statsOf(*program);
  EXPECT_EQ(stats.graphLaunches, 1);
  EXPECT_EQ(stats.directRuns, 4);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuEventRecord"), 3 * 5);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuEventCreate"), 5);
  for (int i = 6; i < FAKE_CUDA(fake_cuda_launch_count)(); ++i)
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_captured)(i), 0) << i;

  // Off again: the captured graph replays, and no profile is left.
  program->setProfiling(false);
  ASSERT_TRUE(runKernels(*program, x, 0).ok());
  EXPECT_FALSE(program->takeProfile());
  EXPECT_EQ(statsOf(*program).graphLaunches, 2);
  EXPECT_EQ(statsOf(*program).graphCaptures, 1);
}

TEST_F(CudaRuntime, AProfileLostToAFaultDoesNotFailTheRun) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  program->setProfiling(true);
  HostTensor x = iota({1000}, 0);
  // Events are made all or none: the third cuEventCreate fails, the run
  // fails naming it, and the two made are destroyed (the fixture checks
  // that no object is left); the next run makes the whole set.
  FAKE_CUDA(fake_cuda_fail_call)("cuEventCreate", 2, CUDA_ERROR_OUT_OF_MEMORY);
  auto noEvents = runKernels(*program, x, 0);
  ASSERT_FALSE(noEvents.ok());
  EXPECT_NE(noEvents.status().message().find("cuEventCreate (profiling)"),
            std::string::npos)
      << noEvents.status();
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuEventDestroy"), 2);
  ASSERT_TRUE(runKernels(*program, x, 0).ok());
  EXPECT_TRUE(program->takeProfile());
  FAKE_CUDA(fake_cuda_fail_next)("cuEventSynchronize", CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_FALSE(program->takeProfile());
  // A failed event record fails the run that needed it, naming the call.
  FAKE_CUDA(fake_cuda_fail_next)("cuEventRecord", CUDA_ERROR_UNKNOWN);
  auto failed = runKernels(*program, x, 0);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("cuEventRecord (profiling)"),
            std::string::npos)
      << failed.status();
}

//===--- Devices, formats and the driver ABI ------------------------------===//

TEST_F(CudaRuntime, CpuExecutableIsRefusedByTheCudaLoader) {
  runtime::Executable e = copyExecutable();
  e.device = runtime::Device::cpu;
  e.targetCpu = "x86-64";
  auto program = runtime::loadCudaProgram(e, fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(program.status(),
                       "this executable was compiled for cpu (x86-64), not "
                       "for cuda"))
      << program.status();
}

TEST_F(CudaRuntime, CudaExecutableIsRefusedByTheCpuLoader) {
  auto program = runtime::loadCpuProgram(kernelExecutable());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(program.status(),
                       "this executable was compiled for cuda (sm_90), not "
                       "for the cpu"))
      << program.status();
}

TEST_F(CudaRuntime, StatsAreOnlyForCudaPrograms) {
  runtime::Executable e = copyExecutable();
  e.device = runtime::Device::cpu;
  auto cpu = runtime::loadCpuProgram(e);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  auto stats = runtime::cudaProgramStats(**cpu);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  auto cuda = load(copyExecutable());
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->backendName(), "cuda");
  EXPECT_TRUE(runtime::cudaProgramStats(*cuda).ok());
}

TEST_F(CudaRuntime, SerializedCudaExecutableRoundTripsAndLoads) {
  runtime::Executable e = kernelExecutable();
  e.allowTf32 = true;
  std::string bytes = runtime::serializeExecutable(e);
  auto back = runtime::deserializeExecutable(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->device, runtime::Device::cuda);
  EXPECT_EQ(back->targetCpu, "sm_90");
  EXPECT_EQ(back->targetFeatures, "+ptx80");
  EXPECT_TRUE(back->allowTf32);
  EXPECT_EQ(back->kernelLibrary, e.kernelLibrary);
  ASSERT_EQ(back->thunks.size(), 3u);
  EXPECT_EQ(back->thunks[1].kernel.symbol, "kiln_kernel_1");
  EXPECT_EQ(back->thunks[1].kernel.rangeSize, 257);
  EXPECT_EQ(runtime::serializeExecutable(*back), bytes);
  auto program =
      runtime::loadCudaProgram(std::string_view(bytes), fakeCudaOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  HostTensor x = iota({1000}, 0);
  EXPECT_TRUE(runKernels(**program, x, 1).ok());
  // A damaged blob never reaches the device.
  bytes[bytes.size() - 3] ^= 1;
  auto damaged =
      runtime::loadCudaProgram(std::string_view(bytes), fakeCudaOptions());
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(CudaRuntime, EntryPointsAreRequestedAtTheVersionsKilnCalls) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  // The PFN_cuXxx_vNNNN typedef (cudaTypedefs.h) each call goes through.
  // cuCtxSynchronize above all: at 13000 the driver hands out the CUDA 13
  // ABI that takes a context (GPU.md's trap).
  const std::pair<const char *, int> expected[] = {
      {"cuInit", 2000},
      {"cuDriverGetVersion", 2020},
      {"cuDeviceGetCount", 2000},
      {"cuDeviceGet", 2000},
      {"cuDeviceGetName", 2000},
      {"cuDeviceGetAttribute", 2000},
      {"cuDevicePrimaryCtxRetain", 7000},
      {"cuDevicePrimaryCtxRelease", 11000},
      {"cuCtxSetCurrent", 4000},
      {"cuCtxSynchronize", 2000},
      {"cuMemAlloc", 3020},
      {"cuMemFree", 3020},
      {"cuMemGetInfo", 3020},
      {"cuMemcpyHtoDAsync", 3020},
      {"cuMemcpyDtoHAsync", 3020},
      {"cuMemcpyDtoDAsync", 3020},
      {"cuMemsetD8Async", 3020},
      {"cuStreamCreate", 2000},
      {"cuStreamDestroy", 4000},
      {"cuStreamSynchronize", 2000},
      {"cuModuleLoadData", 2000},
      {"cuModuleUnload", 2000},
      {"cuModuleGetFunction", 2000},
      {"cuLaunchKernel", 4000},
      {"cuStreamBeginCapture", 10010},
      {"cuStreamEndCapture", 10000},
      {"cuGraphInstantiateWithFlags", 11040},
      {"cuGraphLaunch", 10000},
      {"cuGraphExecDestroy", 10000},
      {"cuGraphDestroy", 10000},
      {"cuEventCreate", 2000},
      {"cuEventDestroy", 4000},
      {"cuEventRecord", 2000},
      {"cuEventSynchronize", 2000},
      {"cuEventElapsedTime", 2000},
      {"cuGetErrorName", 6000},
      {"cuGetErrorString", 6000},
  };
  for (const auto &[name, version] : expected)
    EXPECT_EQ(FAKE_CUDA(fake_cuda_requested_version)(name), version) << name;
  // Nothing is taken under a guessed _v2 name.
  EXPECT_EQ(FAKE_CUDA(fake_cuda_requested_version)("cuMemAlloc_v2"), -1);
}

} // namespace
} // namespace kiln
