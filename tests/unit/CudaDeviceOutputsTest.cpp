// Outputs a CUDA run hands back on the device (runtime/cuda/DeviceValues),
// on the fake driver: a donated output comes back without crossing the bus
// (in place, or moved device to device); an output kept while the program
// runs again keeps its value, moved aside on the device without a wait (or
// staged to host memory where the device has no room); outputs outlive
// their program; a fault surfaces where the host first waits.
#include "CudaRuntimeTestPrograms.h"

#include <cuda.h>

#include <stdexcept>

namespace kiln {
namespace {

using namespace cudatest;
using CudaRuntime = FakeCudaTest;

//===--- Outputs that stay on the device ----------------------------------===//

// A training step's parameters come back as the next step's donated inputs:
// updated in place on the device, they never cross the bus; only the other
// inputs (the token batch) go in, and only what is read comes out.
TEST_F(CudaRuntime, DonatedOutputsComeBackWithoutCrossingTheBus) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({1000}, 0);
  HostTensor y = iota({4}, 7);
  unsigned long long toDevice = FAKE_CUDA(fake_cuda_bytes_to_device)();
  unsigned long long toHost = FAKE_CUDA(fake_cuda_bytes_to_host)();
  for (int step = 0; step < 5; ++step) {
    auto out = program->run(
        runtime::inputList(runtime::ProgramInput::borrow(x),
                           runtime::ProgramInput::donate(std::move(y))));
    ASSERT_TRUE(out.ok()) << out.status();
    y = std::move((*out)[1]);
    ASSERT_NE(y.deferredContents(), nullptr);
  }
  // x five times, y once (the first step's host tensor), nothing out.
  EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_device)() - toDevice, 5 * 4000u + 16u);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_host)() - toHost, 0u);
  // The fake kernels leave y's device bytes as they were.
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y.getDouble(i), 7 + i);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_host)() - toHost, 16u);
}

// An output donated back into an input whose buffer is not where it lies
// moves device to device.
TEST_F(CudaRuntime, ADonatedOutputElsewhereMovesDeviceToDevice) {
  auto program = load(kernelExecutable());
  ASSERT_NE(program, nullptr);
  auto first = runKernels(*program, iota({1000}, 3), 0);
  ASSERT_TRUE(first.ok());
  (*first)[1] = HostTensor(); // not kept: the run moves nothing else
  int moves = FAKE_CUDA(fake_cuda_calls_of)("cuMemcpyDtoDAsync");
  unsigned long long toDevice = FAKE_CUDA(fake_cuda_bytes_to_device)();
  auto second = program->run(runtime::inputList(
      runtime::ProgramInput::donate(std::move((*first)[0])),
      runtime::ProgramInput::donate(iota({4}, 0))));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuMemcpyDtoDAsync") - moves, 1);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_device)() - toDevice, 16u);
}

// Outputs the caller keeps while the program runs again keep their own
// run's values: before the run overwrites their buffers, they are copied
// on the device, on the stream, so the run does not wait; a read waits.
TEST_F(CudaRuntime, AKeptOutputKeepsItsValueThroughTheNextRun) {
  auto program = load(copyExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x1 = iota({8}, 1), x2 = iota({8}, 100);
  auto first = runCopy(*program, x1);
  ASSERT_TRUE(first.ok());
  unsigned long long toHost = FAKE_CUDA(fake_cuda_bytes_to_host)();
  int blocks = FAKE_CUDA(fake_cuda_live_allocations)();
  int waits = FAKE_CUDA(fake_cuda_calls_of)("cuStreamSynchronize");
  auto second = runCopy(*program, x2);
  ASSERT_TRUE(second.ok());
  // Outputs 0 and 2 of the first run were on the device: moved aside, into
  // a block each.
  EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_host)() - toHost, 0u);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_live_allocations)() - blocks, 2);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuStreamSynchronize") - waits, 0);
  // A third run leaves them where they are, and moves the second's.
  auto third = runCopy(*program, x1);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(FAKE_CUDA(fake_cuda_live_allocations)() - blocks, 4);
  for (int o = 0; o < 3; ++o) {
    SCOPED_TRACE(o);
    EXPECT_TRUE((*first)[o].bitwiseEqual(x1));
    EXPECT_TRUE((*second)[o].bitwiseEqual(x2));
    EXPECT_TRUE((*third)[o].bitwiseEqual(x1));
  }
  // Each read copies its own 32 bytes: two device outputs of three runs.
  EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_host)() - toHost, 192u);
}

// Outputs outlive their program, kept ones too; an output the device has
// no room to keep goes to host memory (the run waits for that copy).
TEST_F(CudaRuntime, OutputsOutliveTheirProgram) {
  auto program = load(copyExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({8}, 5, 0.5f), y = iota({8}, -3);
  auto out = runCopy(*program, x);
  ASSERT_TRUE(out.ok());
  unsigned long long toHost = FAKE_CUDA(fake_cuda_bytes_to_host)();
  FAKE_CUDA(fake_cuda_fail_next)("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  auto later = runCopy(*program, y);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(FAKE_CUDA(fake_cuda_bytes_to_host)() - toHost, 32u); // staged
  program.reset();
  EXPECT_EQ(FAKE_CUDA(fake_cuda_live_allocations)(), 0);
  for (const HostTensor &t : *out)
    EXPECT_TRUE(t.bitwiseEqual(x));
  for (const HostTensor &t : *later)
    EXPECT_TRUE(t.bitwiseEqual(y));
}

// A fault in a run surfaces where the host first waits: reading an output.
TEST_F(CudaRuntime, AFaultSurfacesWhenAnOutputIsRead) {
  auto program = load(copyExecutable());
  ASSERT_NE(program, nullptr);
  HostTensor x = iota({8}, 0);
  auto out = program->run(runtime::inputList(runtime::ProgramInput::borrow(x)));
  ASSERT_TRUE(out.ok());
  FAKE_CUDA(fake_cuda_fail_next)("cuStreamSynchronize",
                                 CUDA_ERROR_ILLEGAL_ADDRESS);
  try {
    (void)(*out)[0].getDouble(0);
    FAIL() << "expected the read to throw";
  } catch (const std::runtime_error &e) {
    std::string message = e.what();
    EXPECT_NE(message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos)
        << message;
    EXPECT_NE(message.find("an earlier run failed"), std::string::npos)
        << message;
  }
}

} // namespace
} // namespace kiln
