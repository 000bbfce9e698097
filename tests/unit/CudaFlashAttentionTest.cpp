// kiln's flash attention kernels on the GPU, against the reference
// evaluator: kiln.fused_attention and its gradient in bf16 and f16,
// compiled for cuda with the attention kernel on (the thunk count shows the
// op reached the kernels whole) and held to the tolerances the host run of
// the same kernel bodies is held to (FlashAttentionCases.h says why). GPT-2
// 124M's shape (head dim 64, seq 512 in tiles of 64, causal, dropout 0.1)
// and Llama's (head dim 128, grouped query heads). Every test skips without
// a GPU.
#include "CudaTestSupport.h"
#include "FlashAttentionCases.h"

namespace kiln::testing {
namespace {

using CudaFlashAttention = CudaDeviceTest;

/// Runs case `c` forward and backward on the GPU and compares with the
/// reference.
void expectOnGpuMatchesReference(const FlashCase &c, uint32_t seed) {
  PipelineOptions pipeline;
  pipeline.attentionKernel = true;
  for (bool grad : {false, true}) {
    SCOPED_TRACE(c.name() + (grad ? ", gradient" : ", forward"));
    std::vector<HostTensor> in = c.inputs(seed);
    std::vector<HostTensor> want = referenceResults(c, in, grad);
    if (!grad)
      in.erase(in.begin() + 3);
    ParsedModule parsed =
        parseModule(grad ? c.gradModule() : c.forwardModule());
    ASSERT_TRUE(parsed.module);
    absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
        *parsed.module, "main", nullptr, pipeline, cudaTestTarget());
    ASSERT_TRUE(exe.ok()) << exe.status();
    int attention = 0;
    for (const runtime::Thunk &t : exe->thunks)
      attention += t.kind == runtime::Thunk::Kind::attention;
    EXPECT_EQ(attention, 1);
    auto program = runtime::loadCudaProgram(*std::move(exe));
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<std::vector<HostTensor>> got =
        (*program)->run(runtime::borrowAll(in));
    ASSERT_TRUE(got.ok()) << got.status();
    double error = worstRelativeError(*got, want);
    EXPECT_LE(error, tolerance(c.element, grad));
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
