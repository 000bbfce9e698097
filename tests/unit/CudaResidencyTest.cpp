// Through the frontend, on the fake driver (tests/fake-cuda): a GPT-2
// training loop on the cuda backend keeps its parameters and optimizer
// state on the device between steps. After the first step (which brings the
// initial weights over), a step sends only what changes from step to step
// (the token batch, the step's scalars) and brings back only what the loop
// reads (the loss). The fake runs no kernels, so the losses are not
// checked here: scripts/gpu-check.sh checks them on a GPU.
#include "FakeCudaSupport.h"
#include "TinyGPT2.h"

#include "frontends/lazy/Tensor.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/GradScaler.h"

#include <cstdlib>

namespace kiln {
namespace {

using namespace cudatest;

/// Graph mode on the cuda backend over the fake driver; restores the cpu
/// backend when it goes.
class FakeCudaBackend {
public:
  FakeCudaBackend() {
    // The frontend reaches the runtime through the environment (its edge):
    // the fake libraries, and no ptxas, so the executable carries the PTX
    // whose entry points the fake driver reads.
    setenv("KILN_CUDA_DRIVER", fakeLibraryPath(KILN_FAKE_CUDA_DRIVER).c_str(),
           1);
    setenv("KILN_CUBLASLT", fakeLibraryPath(KILN_FAKE_CUBLASLT).c_str(), 1);
    setenv("KILN_PTXAS", "/nonexistent/ptxas", 1);
    FAKE_CUDA(fake_cuda_reset)();
    Options o = options_from_env();
    o.backend = Backend::cuda;
    o.mode = Mode::graph;
    set_options(o);
  }
  ~FakeCudaBackend() {
    Options o = options();
    o.backend = Backend::cpu;
    set_options(o);
  }
};

TEST(CudaResidency, ATrainingStepMovesOnlyTheBatchInAndTheLossOut) {
  FakeCudaBackend cuda;

  testing::TinyGPT2Training training;
  nn::GPT2LMHeadModel &model = training.model;
  int64_t parameterBytes = 0;
  for (const Tensor &p : model.parameters())
    parameterBytes += p.to_host().byteSize();
  const uint64_t batchBytes = 4 * 32 * 8;
  std::vector<uint64_t> toDevice, toHost;
  for (int s = 0; s < 6; ++s) {
    uint64_t in = FAKE_CUDA(fake_cuda_bytes_to_device)();
    uint64_t out = FAKE_CUDA(fake_cuda_bytes_to_host)();
    (void)training.step().item();
    toDevice.push_back(FAKE_CUDA(fake_cuda_bytes_to_device)() - in);
    toHost.push_back(FAKE_CUDA(fake_cuda_bytes_to_host)() - out);
  }
  // The first step brings the weights (and the moments) over.
  EXPECT_GE(toDevice[0], uint64_t(parameterBytes));
  // Later steps: the batch and a few scalars in, the loss out. A step that
  // copied the parameters would move ~parameterBytes each way.
  for (int s = 2; s < 6; ++s) {
    SCOPED_TRACE(s);
    EXPECT_GE(toDevice[s], batchBytes);
    EXPECT_LE(toDevice[s], batchBytes + 256);
    EXPECT_LE(toHost[s], 64u);
  }
  EXPECT_GT(FAKE_CUDA(fake_cuda_graph_launches)(), 0);
  // Reading the parameters brings them back, once.
  uint64_t before = FAKE_CUDA(fake_cuda_bytes_to_host)();
  for (const Tensor &p : model.parameters())
    (void)p.to_host();
  EXPECT_GE(FAKE_CUDA(fake_cuda_bytes_to_host)() - before,
            uint64_t(parameterBytes));
}

/// Calls that make the host wait for the device (a copy to pageable host
/// memory returns only once it has completed).
int deviceWaits() {
  int waits = 0;
  for (const char *call : {"cuStreamSynchronize", "cuCtxSynchronize",
                           "cuEventSynchronize", "cuMemcpyDtoHAsync"})
    waits += FAKE_CUDA(fake_cuda_calls_of)(call);
  return waits;
}

// A loop that reads its loss only to log (the Trainer's, kiln-bench's
// --logging_steps): neither recording a step nor running it waits for the
// device, so on a GPU the host records step N+1 while the device runs step
// N. The last step's unread loss is kept on the device (a copy on the
// stream, ahead of the run that overwrites its buffer), and reading it
// later is what waits.
TEST(CudaResidency, RecordingTheNextStepWaitsForNoDevice) {
  FakeCudaBackend cuda;
  testing::TinyGPT2Training training;
  (void)training.step().item(); // compiled; the weights are on the device
  std::vector<Tensor> unread;
  for (int s = 0; s < 4; ++s) {
    SCOPED_TRACE(s);
    int before = deviceWaits();
    Tensor loss = training.model.loss(training.input, training.input);
    nn::backward_and_step(loss, training.opt, /*max_grad_norm=*/1.0,
                          /*scaler=*/nullptr);
    training.sched.step();
    EXPECT_EQ(deviceWaits(), before) << "recording waited for the device";
    before = deviceWaits();
    kiln::step();
    EXPECT_EQ(deviceWaits(), before) << "the run waited for the device";
    unread.push_back(loss);
  }
  // Kept on the device: each read copies its float and waits.
  for (const Tensor &loss : unread) {
    int before = deviceWaits();
    EXPECT_EQ(loss.to_host().byteSize(), sizeof(float));
    EXPECT_GT(deviceWaits(), before);
  }
}

} // namespace
} // namespace kiln
