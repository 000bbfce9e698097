// The CUDA code generator's contract with the CUDA runtime, checked without a
// GPU: every kernel thunk of a compiled GPT-2 training step names a PTX entry
// point that takes exactly one pointer per thunk slot and then the range
// size (the launch ABI of runtime/Executable.h), the executable says what it
// was built for, it survives serialisation, and the CPU loader refuses it.
#include "CpuTestSupport.h"
#include "FileTestSupport.h"

#include "compiler/KernelAliasing.h"
#include "compiler/cuda/CudaCodeGen.h"
#include "runtime/Executable.h"

#include <cstdio>
#include <map>
#include <regex>

namespace kiln::testing {
namespace {

/// Per `.entry` in `ptx`: its name → (pointer parameters, other parameters).
std::map<std::string, std::pair<int, int>> entryParameters(const std::string &ptx) {
  std::map<std::string, std::pair<int, int>> entries;
  std::regex entry(R"(\.entry (\w+)\(([^)]*)\))");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), entry), end; it != end;
       ++it) {
    std::string params = (*it)[2];
    int pointers = 0, others = 0;
    for (size_t at = params.find(".param"); at != std::string::npos;
         at = params.find(".param", at + 1)) {
      size_t stop = params.find_first_of(",", at);
      std::string param = params.substr(at, stop - at);
      (param.find(".ptr") != std::string::npos ? pointers : others) += 1;
    }
    entries[(*it)[1]] = {pointers, others};
  }
  return entries;
}

struct CompiledStep {
  runtime::Executable executable;
  compiler::cpu::CpuCompileStats stats;
};

CompiledStep compileForCuda(const std::string &arch) {
  std::string source =
      readWholeFile(KILN_SOURCE_DIR "/tests/passes/Inputs/gpt2_train_step.mlir");
  EXPECT_FALSE(source.empty());
  ParsedModule parsed = parseModule(source);
  EXPECT_TRUE(parsed.module);
  compiler::cpu::KernelTarget target;
  target.device = runtime::Device::cuda;
  target.cudaArch = arch;
  CompiledStep step;
  auto exe = compiler::cpu::compileExecutable(*parsed.module, "main",
                                              &step.stats, {}, target);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (exe.ok())
    step.executable = *std::move(exe);
  return step;
}

TEST(CudaCompile, EveryKernelThunkHasAnEntryWithItsSlotsAndTheRange) {
  CompiledStep step = compileForCuda("sm_90");
  const runtime::Executable &exe = step.executable;
  EXPECT_EQ(exe.device, runtime::Device::cuda);
  EXPECT_EQ(exe.targetCpu, "sm_90");
  EXPECT_FALSE(exe.allowTf32);
  auto entries = entryParameters(step.stats.ptx);
  ASSERT_FALSE(entries.empty()) << step.stats.ptx.substr(0, 2000);
  int kernels = 0, gemms = 0, copies = 0, launchesUngrouped = 0;
  for (const runtime::Thunk &thunk : exe.thunks) {
    if (thunk.kind == runtime::Thunk::Kind::gemm)
      ++gemms;
    if (thunk.kind == runtime::Thunk::Kind::copy)
      ++copies;
    if (thunk.kind != runtime::Thunk::Kind::kernel)
      continue;
    ++kernels;
    // A group kernel (compiler/cpu/KernelGroups.h) says how many it joins.
    int members = 1;
    std::sscanf(thunk.kernel.label.c_str(), "group of %d kernels", &members);
    launchesUngrouped += members;
    auto entry = entries.find(thunk.kernel.symbol);
    ASSERT_NE(entry, entries.end()) << thunk.kernel.symbol << " has no entry";
    EXPECT_EQ(entry->second.first, int(thunk.kernel.slots.size()))
        << thunk.kernel.symbol;
    EXPECT_EQ(entry->second.second, 1) << thunk.kernel.symbol;
    EXPECT_TRUE(thunk.kernel.splittable) << thunk.kernel.symbol;
  }
  // The CPU backend's thunk list (39 GEMMs, no copy) and what the GPU
  // adds: the kernels of reductions split into trees
  // (kiln-split-reductions), the global norm's trees joined into one
  // (kiln-join-sums: 121 -> 107 kernels). The atomic scatter_adds (the
  // token and position embeddings' gradients) add into the zeros filled
  // for them alone, with no copy. Runs of independent loop kernels are one launch
  // each (the AdamW updates, the weights' conversions...).
  EXPECT_EQ(launchesUngrouped, 107);
  EXPECT_EQ(kernels, 71);
  EXPECT_EQ(gemms, 39);
  EXPECT_EQ(copies, 0);
}

/// Per `.entry` in `ptx`: its name → its text up to the next entry.
std::map<std::string, std::string> entryBodies(const std::string &ptx) {
  std::map<std::string, std::string> bodies;
  std::regex entry(R"(\.entry (\w+)\()");
  std::sregex_iterator it(ptx.begin(), ptx.end(), entry), end;
  while (it != end) {
    std::string name = (*it)[1];
    size_t from = it->position();
    size_t to = ++it == end ? ptx.size() : size_t(it->position());
    bodies[name] = ptx.substr(from, to - from);
  }
  return bodies;
}

TEST(CudaCompile, OnlyOperandsNoResultReachesAreReadThroughTheReadOnlyCache) {
  CompiledStep step = compileForCuda("sm_90");
  auto access = compiler::kernelBufferAccess(step.executable);
  auto bodies = entryBodies(step.stats.ptx);
  int readOnlyKernels = 0, sharedOnlyKernels = 0;
  for (const auto &[symbol, params] : access) {
    ASSERT_TRUE(bodies.count(symbol)) << symbol;
    bool anyExclusiveOperand =
        std::count(params.begin(), params.end(),
                   compiler::BufferAccess::exclusiveRead) > 0;
    bool readsNonCoherent =
        bodies[symbol].find("ld.global.nc") != std::string::npos;
    // ld.global.nc is only correct for memory nothing writes while the
    // kernel runs: a kernel without an exclusive operand must not use it.
    if (!anyExclusiveOperand) {
      EXPECT_FALSE(readsNonCoherent) << symbol << "\n" << bodies[symbol];
    }
    sharedOnlyKernels += !anyExclusiveOperand;
    readOnlyKernels += readsNonCoherent;
  }
  // Most kernels read something no result overlaps; some (results written
  // over a dying operand, parameters updated in their own buffer) do not.
  EXPECT_GT(readOnlyKernels, int(access.size()) / 2);
  EXPECT_GT(sharedOnlyKernels, 0);
  std::printf("%zu kernels: %d read through the read-only cache, %d have no "
              "exclusive operand\n",
              access.size(), readOnlyKernels, sharedOnlyKernels);
}

TEST(CudaCompile, TheKernelLibraryIsACubinForTheArchWhenPtxasIsThere) {
  CompiledStep step = compileForCuda("sm_80");
  const std::string &library = step.executable.kernelLibrary;
  ASSERT_FALSE(library.empty());
  if (compiler::cuda::findPtxas().empty()) {
    EXPECT_NE(library.find(".target sm_80"), std::string::npos);
    GTEST_SKIP() << "ptxas not found: the executable carries PTX";
  }
  EXPECT_EQ(library.substr(0, 4), std::string("\x7f" "ELF"));
  EXPECT_NE(step.stats.ptx.find(".target sm_80"), std::string::npos);
}

TEST(CudaCompile, TheExecutableRoundTripsAndTheCpuLoaderRefusesIt) {
  CompiledStep step = compileForCuda("sm_90");
  std::string bytes = runtime::serializeExecutable(step.executable);
  auto back = runtime::deserializeExecutable(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->device, runtime::Device::cuda);
  EXPECT_EQ(back->targetCpu, "sm_90");
  EXPECT_EQ(back->kernelLibrary, step.executable.kernelLibrary);
  auto program = runtime::loadCpuProgram(*std::move(back));
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("compiled for cuda (sm_90)"),
            std::string::npos)
      << program.status().message();
}

TEST(CudaCompile, AnUnknownArchitectureIsRefusedBeforeCodegen) {
  ParsedModule parsed = parseModule(R"mlir(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
})mlir");
  compiler::cpu::KernelTarget target;
  target.device = runtime::Device::cuda;
  target.cudaArch = "sm_75";
  auto exe = compiler::cpu::compileExecutable(*parsed.module, "main", nullptr,
                                              {}, target);
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(exe.status().message().find("expected sm_80 or sm_90"),
            std::string::npos)
      << exe.status().message();
}

} // namespace
} // namespace kiln::testing

namespace kiln::testing {
namespace {

/// Attention and its gradient on f32 tensors [2, 4, 64, headDim], causal
/// with dropout, as the lazy frontend records them.
std::string attentionStep(int64_t headDim) {
  std::string t = "tensor<2x4x64x" + std::to_string(headDim) + "xf32>";
  return "func.func @main(%q: " + t + ", %k: " + t + ", %v: " + t +
         ", %g: " + t + ", %s: tensor<2xi64>) -> (" + t + ", " + t + ", " +
         t + ", " + t + ") {\n"
         "  %o, %l = kiln.fused_attention %q, %k, %v, rng = %s {causal, "
         "dropout = 0.1 : f64, scale = 0.125 : f64} : " + t + ", " + t +
         ", " + t + ", tensor<2xi64> -> " + t + ", tensor<2x4x64xf32>\n"
         "  %dq, %dk, %dv = kiln.fused_attention_grad %q, %k, %v, %o, %l, %g, "
         "rng = %s {causal, dropout = 0.1 : f64, scale = 0.125 : f64} : " + t +
         ", " + t + ", " + t + ", " + t + ", tensor<2x4x64xf32>, " + t +
         ", tensor<2xi64> -> " + t + ", " + t + ", " + t + "\n"
         "  return %o, %dq, %dk, %dv : " + t + ", " + t + ", " + t + ", " + t +
         "\n}\n";
}

struct AttentionCompile {
  absl::StatusOr<runtime::Executable> executable;
  int attention = 0, gemms = 0;
};

AttentionCompile compileAttention(int64_t headDim, DType product,
                                  runtime::Device device) {
  ParsedModule parsed = parseModule(attentionStep(headDim));
  EXPECT_TRUE(parsed.module);
  PipelineOptions pipeline;
  pipeline.productType = product;
  pipeline.attentionKernel = true;
  compiler::cpu::KernelTarget target;
  target.device = device;
  AttentionCompile out;
  out.executable = compiler::cpu::compileExecutable(*parsed.module, "main",
                                                    nullptr, pipeline, target);
  if (out.executable.ok())
    for (const runtime::Thunk &t : out.executable->thunks) {
      out.attention += t.kind == runtime::Thunk::Kind::attention;
      out.gemms += t.kind == runtime::Thunk::Kind::gemm;
    }
  return out;
}

TEST(CudaCompile, SixteenBitAttentionStaysWholeForTheAttentionKernel) {
  AttentionCompile c = compileAttention(64, DType::bf16, runtime::Device::cuda);
  ASSERT_TRUE(c.executable.ok()) << c.executable.status();
  EXPECT_EQ(c.attention, 2);
  EXPECT_EQ(c.gemms, 0); // no scores written out
  for (const runtime::Thunk &t : c.executable->thunks)
    if (t.kind == runtime::Thunk::Kind::attention) {
      EXPECT_EQ(t.attention.element, runtime::GemmType::bf16);
      EXPECT_EQ(t.attention.headDim, 64);
      EXPECT_TRUE(t.attention.causal);
      EXPECT_EQ(t.attention.dropout, 0.1);
      EXPECT_NE(t.attention.rngState, runtime::kNoSlot);
    }
  // It survives the executable's serialisation.
  absl::StatusOr<runtime::Executable> back = runtime::deserializeExecutable(
      runtime::serializeExecutable(*c.executable));
  ASSERT_TRUE(back.ok()) << back.status();
}

TEST(CudaCompile, AttentionNoKernelRunsIsWrittenOut) {
  // f32 products, and a head dim beyond the kernel's tiles: chunks of GEMMs.
  for (auto [headDim, product] :
       {std::pair<int64_t, DType>{64, DType::f32}, {256, DType::bf16}}) {
    AttentionCompile c =
        compileAttention(headDim, product, runtime::Device::cuda);
    ASSERT_TRUE(c.executable.ok()) << c.executable.status();
    EXPECT_EQ(c.attention, 0) << headDim;
    EXPECT_GT(c.gemms, 0) << headDim;
  }
}

TEST(CudaCompile, TheCpuBackendKeepsAttentionWholeWhenAskedToo) {
  // Its executor runs the thunks with the kernels' host run (tests only:
  // FlashAttentionHostTest runs such programs).
  AttentionCompile c = compileAttention(64, DType::bf16, runtime::Device::cpu);
  ASSERT_TRUE(c.executable.ok()) << c.executable.status();
  EXPECT_EQ(c.attention, 2);
}

} // namespace
} // namespace kiln::testing
