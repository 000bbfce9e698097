// kiln's flash attention kernels on the GPU, against the reference
// evaluator: kiln.fused_attention and its gradient in bf16 and f16,
// compiled for cuda with the attention kernel on (the thunk count shows the
// op reached the kernels whole) and held to the tolerances the host run of
// the same kernel bodies is held to (FlashAttentionCases.h says why). GPT-2
// 124M's shape (head dim 64, seq 512 in tiles of 64, causal, dropout 0.1)
// and Llama's (head dim 128, grouped query heads, and with Mistral's sliding
// window). Every test skips without
// a GPU, but for FlashAttentionTrainStep, which runs the same kernels on
// the cpu executor's host run.
#include "CudaTestSupport.h"
#include "FlashAttentionCases.h"
#include "TrainStepComparison.h"

namespace kiln::testing {
namespace {

using CudaFlashAttention = CudaDeviceTest;

/// Runs case `c` forward and backward on the GPU and compares with the
/// reference.
void expectOnGpuMatchesReference(const FlashCase &c, uint32_t seed) {
  PipelineOptions pipeline;
  pipeline.attentionKernel = true;
  for (bool grad : {false, true}) {
    double error = compiledError(c, grad, seed, pipeline, cudaTestTarget(),
                                 [](runtime::Executable exe) {
                                   return runtime::loadCudaProgram(
                                       std::move(exe));
                                 });
    EXPECT_LE(error, tolerance(c.element, grad))
        << c.name() << (grad ? ", gradient" : ", forward");
    std::printf("%s%s: worst error %.3g of the reference's RMS (tolerance "
                "%.3g)\n",
                c.name().c_str(), grad ? ", gradient" : "", error,
                tolerance(c.element, grad));
  }
}

TEST_F(CudaFlashAttention, Gpt2ShapedAttentionMatchesTheReference) {
  for (DType element : {DType::bf16, DType::f16}) {
    FlashCase c;
    c.element = element;
    c.batch = 1, c.heads = c.kvHeads = 3;
    c.queries = c.keys = 512;
    c.dropout = 0.1;
    expectOnGpuMatchesReference(c, 11);
  }
}

TEST_F(CudaFlashAttention, LlamaShapedGroupedHeadsMatchTheReference) {
  FlashCase c;
  c.headDim = 128;
  c.batch = 1, c.heads = 4, c.kvHeads = 2;
  c.queries = c.keys = 200;
  expectOnGpuMatchesReference(c, 12);
}

TEST_F(CudaFlashAttention, MistralShapedSlidingWindowMatchesTheReference) {
  // A window of 100 over 300 rows in tiles of 64: row and key blocks
  // skipped, grouped heads, dropout.
  FlashCase c;
  c.headDim = 128;
  c.batch = 1, c.heads = 4, c.kvHeads = 2;
  c.queries = c.keys = 300;
  c.window = 100;
  c.dropout = 0.1;
  expectOnGpuMatchesReference(c, 14);
}

TEST_F(CudaFlashAttention, UnmaskedPartialTilesAndPaddedHeadDims) {
  FlashCase c;
  c.causal = false;
  c.headDim = 40;
  c.queries = 70, c.keys = 130;
  c.dropout = 0.2;
  c.element = DType::f16;
  expectOnGpuMatchesReference(c, 13);
}

} // namespace
} // namespace kiln::testing

// The flash attention kernels inside a training step: the tiny GPT-2 step
// with fused attention (tests/passes/Inputs/gpt2_train_step_fused.mlir)
// in bf16, three steps.

namespace kiln::testing {
namespace {

constexpr const char *kFusedStep =
    "tests/passes/Inputs/gpt2_train_step_fused.mlir";

PipelineOptions bf16Pipeline(bool attentionKernel) {
  PipelineOptions pipeline;
  pipeline.productType = DType::bf16;
  pipeline.attentionKernel = attentionKernel;
  return pipeline;
}

ProgramMaker cpuMaker(PipelineOptions pipeline) {
  return [pipeline](mlir::ModuleOp m) {
    return compiler::cpu::createCpuProgram(m, "main", pipeline);
  };
}

TEST(FlashAttentionTrainStep, HostKernelsOnTheCpuTrackTheChunks) {
  // No GPU: the attention thunks run on the cpu executor's host run of the
  // kernels, against the same step with attention written out in chunks
  // (both in bf16, the same dropout masks), within half a bf16 unit as
  // cpu against cuda: the kernels round P and dS to bf16 where the chunks
  // round the probabilities for their products; measured 1.8e-4 at most.
  expectProgramsAgreeForThreeSteps("chunks", cpuMaker(bf16Pipeline(false)),
                                   "kernels", cpuMaker(bf16Pipeline(true)),
                                   kBf16Agreement, kFusedStep);
}

TEST_F(CudaFlashAttention, TinyGpt2StepOnTheGpuMatchesTheHostKernels) {
  // The same kernel bodies on both sides: only the tensor cores' summation
  // order and __expf differ, so half a bf16 unit, as cpu against cuda.
  expectProgramsAgreeForThreeSteps(
      "cpu kernels", cpuMaker(bf16Pipeline(true)), "cuda kernels",
      cudaProgramFactory(nullptr, bf16Pipeline(true)), kBf16Agreement,
      kFusedStep);
}

} // namespace
} // namespace kiln::testing
