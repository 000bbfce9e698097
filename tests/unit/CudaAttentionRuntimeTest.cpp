// Attention thunks in the CUDA runtime, against the fake driver: the flash
// attention kernels load from the library's embedded fatbin, each thunk
// launches its kernels (one forward, two for the gradient) with the grid,
// block and shared memory its tiles need and every pointer inside device
// memory (the fake checks kiln::flash::AttentionParams), a second run
// replays them from a CUDA graph, and a GPU that cannot run them is refused
// with a message that says why; so is cuDNN's attention
// (KILN_CUDA_ATTENTION=cudnn) where cuDNN cannot be loaded. What the kernels compute is checked on the
// host (FlashAttentionHostTest) and on the GPU (CudaFlashAttentionTest).
#include "FakeCudaSupport.h"

#include "runtime/cuda/CudnnAttention.h"
#include "runtime/cuda/FlashAttention.h"

#include <cuda.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace kiln {
namespace {

using namespace cudatest;
using Kind = runtime::BufferSlot::Kind;
using CudaAttentionRuntime = FakeCudaTest;

constexpr int64_t kBatch = 1, kHeads = 2, kKvHeads = 1, kRows = 70;

/// q [1,2,70,D], k and v [1,1,70,D], dO like q, the rng state: the forward
/// (→ output 0) and its gradient (→ outputs 1 to 3), causal with dropout.
runtime::Executable attentionExecutable(int64_t headDim,
                                        runtime::GemmType element) {
  runtime::Executable e = cudaExecutable();
  DType type = element == runtime::GemmType::bf16 ? DType::bf16 : DType::f16;
  std::vector<int64_t> q = {kBatch, kHeads, kRows, headDim};
  std::vector<int64_t> kv = {kBatch, kKvHeads, kRows, headDim};
  uint64_t qBytes = 2 * kBatch * kHeads * kRows * headDim;
  uint64_t kvBytes = 2 * kBatch * kKvHeads * kRows * headDim;
  uint64_t statsBytes = 4 * kBatch * kHeads * kRows; // the forward's f32 rows
  e.signature.inputs = {{type, q, false},
                        {type, kv, false},
                        {type, kv, false},
                        {type, q, false},
                        {DType::i64, {2}, false}};
  e.signature.outputs = {{type, q}, {type, q}, {type, kv}, {type, kv}};
  e.plan.slots = {slot(Kind::input, 0, 0, qBytes),
                  slot(Kind::input, 1, 0, kvBytes),
                  slot(Kind::input, 2, 0, kvBytes),
                  slot(Kind::input, 3, 0, qBytes),
                  slot(Kind::input, 4, 0, 16),
                  slot(Kind::output, 0, 0, qBytes),
                  slot(Kind::output, 1, 0, qBytes),
                  slot(Kind::output, 2, 0, kvBytes),
                  slot(Kind::output, 3, 0, kvBytes),
                  slot(Kind::arena, 0, 0, statsBytes)};
  e.plan.arenaBytes = statsBytes;
  runtime::AttentionThunk a;
  a.query = 0, a.key = 1, a.value = 2, a.rngState = 4;
  a.element = element;
  a.batch = kBatch, a.heads = kHeads, a.kvHeads = kKvHeads;
  a.queries = a.keys = kRows, a.headDim = headDim;
  a.scale = 0.125, a.dropout = 0.1, a.causal = true;
  runtime::Thunk forward;
  forward.kind = runtime::Thunk::Kind::attention;
  forward.attention = a;
  forward.attention.result = 5;
  forward.attention.rowStats = 9;
  runtime::Thunk gradient = forward; // reads the forward's result and stats
  gradient.attention.gradient = true;
  gradient.attention.resultGrad = 3;
  gradient.attention.queryGrad = 6;
  gradient.attention.keyGrad = 7;
  gradient.attention.valueGrad = 8;
  e.thunks = {forward, gradient};
  e.plan.outputSlots = {5, 6, 7, 8};
  e.plan.outputDonors = {-1, -1, -1, -1};
  return e;
}

std::vector<runtime::ProgramInput> attentionInputs(int64_t headDim) {
  std::vector<runtime::ProgramInput> in;
  DType type = DType::bf16;
  for (int64_t heads : {kHeads, kKvHeads, kKvHeads, kHeads})
    in.push_back(runtime::ProgramInput::donate(
        HostTensor(type, {kBatch, heads, kRows, headDim})));
  in.push_back(runtime::ProgramInput::donate(HostTensor(DType::i64, {2})));
  return in;
}

TEST_F(CudaAttentionRuntime, ThunksLaunchTheFlashKernelsAndReplayFromAGraph) {
  if (!runtime::cuda::flashAttentionKernelsBuilt())
    GTEST_SKIP() << "this build has no flash attention kernels (no nvcc)";
  auto program = runtime::loadCudaProgram(
      attentionExecutable(64, runtime::GemmType::bf16), fakeCudaOptions());
  ASSERT_TRUE(program.ok()) << program.status();
  for (int run = 0; run < 3; ++run)
    ASSERT_TRUE((*program)->run(attentionInputs(64)).ok()) << run;
  // One module, three functions, each allowed its shared memory once.
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuModuleGetFunction"), 3);
  EXPECT_EQ(FAKE_CUDA(fake_cuda_calls_of)("cuFuncSetAttribute"), 3);
  using C = flash::FlashConfig<64>;
  struct Expected {
    const char *name;
    unsigned gridX, gridY;
    int64_t shared;
  } expected[] = {
      {"kiln_flash_forward_bf16_d64", 2, 2,
       flash::ForwardShared<64, C::forwardRows, C::forwardKeys>::bytes},
      {"kiln_flash_query_grad_bf16_d64", 2, 2,
       flash::QueryGradShared<64, C::queryRows, C::queryKeys>::bytes},
      {"kiln_flash_key_value_grad_bf16_d64", 2, 1,
       flash::KeyValueGradShared<64, C::keyValueRows,
                                 C::keyValueKeys>::bytes}};
  // Run 1 launched directly, run 2 captured the graph and launched it, run
  // 3 launched it again.
  ASSERT_EQ(FAKE_CUDA(fake_cuda_launch_count)(), 6);
  for (int i = 0; i < 6; ++i) {
    const Expected &x = expected[i % 3];
    EXPECT_STREQ(FAKE_CUDA(fake_cuda_launch_name)(i), x.name) << i;
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_grid_x)(i), x.gridX) << i;
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_grid_y)(i), x.gridY) << i;
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_block_x)(i),
              unsigned(flash::kFlashThreads));
    EXPECT_EQ(int64_t(FAKE_CUDA(fake_cuda_launch_shared_bytes)(i)), x.shared)
        << i;
    EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_captured)(i), i >= 3 ? 1 : 0) << i;
  }
  EXPECT_EQ(FAKE_CUDA(fake_cuda_graph_launches)(), 2);
  // The gradients' row deltas: a float per query row and head (the
  // log-sum-exps are the forward's result).
  EXPECT_EQ(runtime::cuda::FlashAttention::scratchBytes(
                attentionExecutable(64, runtime::GemmType::bf16)),
            uint64_t(kBatch * kHeads * kRows * 4));
}

TEST_F(CudaAttentionRuntime, AGpuWithoutBf16TensorCoresIsRefused) {
  if (!runtime::cuda::flashAttentionKernelsBuilt())
    GTEST_SKIP() << "this build has no flash attention kernels (no nvcc)";
  FAKE_CUDA(fake_cuda_set_compute_capability)(7, 5);
  runtime::Executable e = attentionExecutable(64, runtime::GemmType::bf16);
  e.targetCpu = "sm_75";
  auto program = runtime::loadCudaProgram(std::move(e), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(program.status(), "compute capability 8.0"))
      << program.status();
}

TEST_F(CudaAttentionRuntime, TilesLargerThanTheGpusSharedMemoryAreRefused) {
  if (!runtime::cuda::flashAttentionKernelsBuilt())
    GTEST_SKIP() << "this build has no flash attention kernels (no nvcc)";
  // An sm_86 block may take 99 KiB; the head-dim-128 gradient needs more.
  FAKE_CUDA(fake_cuda_set_compute_capability)(8, 6);
  runtime::Executable e = attentionExecutable(128, runtime::GemmType::f16);
  e.targetCpu = "sm_86";
  auto program = runtime::loadCudaProgram(std::move(e), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(program.status(), "bytes of shared memory a block"))
      << program.status();
  EXPECT_TRUE(contains(program.status(), "kiln_flash_")) << program.status();
}

TEST_F(CudaAttentionRuntime, AHeadDimTheKernelsDoNotTileIsDataLoss) {
  if (!runtime::cuda::flashAttentionKernelsBuilt())
    GTEST_SKIP() << "this build has no flash attention kernels (no nvcc)";
  runtime::Executable e = attentionExecutable(64, runtime::GemmType::bf16);
  for (runtime::Thunk &t : e.thunks)
    t.attention.headDim = 60; // slots still large enough; 60 % 8 != 0
  auto program = runtime::loadCudaProgram(std::move(e), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(contains(program.status(), "head dim a multiple of 8"))
      << program.status();
}

/// Sets an environment variable for one scope.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnvironment() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

TEST_F(CudaAttentionRuntime, CudnnThatCannotBeLoadedIsAClearError) {
  // A path that does not exist: the same answer on every machine (a real
  // cuDNN would run its kernels on the fake driver's pointers).
  ScopedEnvironment library("KILN_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.9");
  ScopedEnvironment choice("KILN_CUDA_ATTENTION", "cudnn");
  auto program = runtime::loadCudaProgram(
      attentionExecutable(64, runtime::GemmType::bf16), fakeCudaOptions());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(program.status(), "KILN_CUDA_ATTENTION=cudnn"))
      << program.status();
  if (runtime::cuda::CudnnAttention::built()) {
    EXPECT_TRUE(contains(program.status(), "/nonexistent/libcudnn.so.9"))
        << program.status();
  }
  // Nothing of the refused program is left running.
  EXPECT_EQ(FAKE_CUDA(fake_cuda_launch_count)(), 0);
}

TEST_F(CudaAttentionRuntime, AttentionThunksSurviveSerialization) {
  runtime::Executable e = attentionExecutable(64, runtime::GemmType::f16);
  absl::StatusOr<runtime::Executable> back =
      runtime::deserializeExecutable(runtime::serializeExecutable(e));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->thunks.size(), 2u);
  const runtime::AttentionThunk &a = back->thunks[1].attention;
  EXPECT_EQ(back->thunks[1].kind, runtime::Thunk::Kind::attention);
  EXPECT_TRUE(a.gradient);
  EXPECT_EQ(a.resultGrad, 3u);
  EXPECT_EQ(a.rngState, 4u);
  EXPECT_EQ(a.result, 5u);
  EXPECT_EQ(a.rowStats, 9u);
  EXPECT_EQ(a.valueGrad, 8u);
  EXPECT_EQ(a.element, runtime::GemmType::f16);
  EXPECT_EQ(a.kvHeads, kKvHeads);
  EXPECT_EQ(a.scale, 0.125);
  EXPECT_EQ(a.dropout, 0.1);
  EXPECT_TRUE(a.causal);
  EXPECT_EQ(a.label(),
            "attention_grad f16 1x2x70x64 (kv heads 1, keys 70) causal "
            "dropout 0.1");
  // A slot too small for the tensors the thunk names is refused.
  e.plan.slots[1].bytes -= 2;
  EXPECT_FALSE(runtime::validateExecutable(e).ok());
}

TEST_F(CudaAttentionRuntime, SlidingWindowThunksSurviveSerialization) {
  runtime::Executable e = attentionExecutable(64, runtime::GemmType::bf16);
  for (runtime::Thunk &t : e.thunks)
    t.attention.window = 33;
  absl::StatusOr<runtime::Executable> back =
      runtime::deserializeExecutable(runtime::serializeExecutable(e));
  ASSERT_TRUE(back.ok()) << back.status();
  const runtime::AttentionThunk &a = back->thunks[1].attention;
  EXPECT_EQ(a.window, 33);
  EXPECT_EQ(a.label(), "attention_grad bf16 1x2x70x64 (kv heads 1, keys 70) "
                       "causal window 33 dropout 0.1");
  // Rows 0..32 see i + 1 keys, the other 37 see 33: 561 + 1221 pairs, each
  // 2·D flops in each of the gradient's four products, per head.
  EXPECT_EQ(a.flops(), 4.0 * 2 * kBatch * kHeads * (561 + 1221) * 64);
  // A window without the causal mask, or a negative one, is refused.
  runtime::Executable bad = e;
  bad.thunks[0].attention.causal = false;
  EXPECT_FALSE(runtime::validateExecutable(bad).ok());
  bad = e;
  bad.thunks[1].attention.window = -1;
  EXPECT_FALSE(runtime::validateExecutable(bad).ok());
}

} // namespace
} // namespace kiln
