// The CPU executable as an artifact: serialise → load → run gives
// bit-identical outputs; truncated, bit-flipped or foreign blobs are refused
// with a clear error and never run; runs reuse the arena and honour
// donation; GEMMs give the same answers through oneDNN and OpenBLAS.
#include "CpuTestSupport.h"

#include "runtime/Executable.h"

#include "llvm/Support/CommandLine.h"

namespace kiln::testing {
namespace {

const char *kSource = R"mlir(
func.func @main(%x: tensor<8x16xf32> {kiln.donate}, %w: tensor<16x4xf32>)
    -> (tensor<8x16xf32>, tensor<8x4xf32>, tensor<4xf32>) {
  %t = kiln.tanh %x : tensor<8x16xf32>
  %y = kiln.dot_general %t, %w, batch = [] x [], contract = [1] x [0]
      : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %s = kiln.reduce sum %y, dims = [0] : tensor<8x4xf32> -> tensor<4xf32>
  return %t, %y, %s : tensor<8x16xf32>, tensor<8x4xf32>, tensor<4xf32>
}
)mlir";

runtime::Executable compileSource() {
  ParsedModule parsed = parseModule(kSource);
  EXPECT_TRUE(parsed.module);
  auto exe = compiler::cpu::compileExecutable(*parsed.module, "main");
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  return exe.ok() ? *std::move(exe) : runtime::Executable();
}

std::vector<HostTensor> inputs() {
  std::mt19937 rng(1);
  return {randomTensor(DType::f32, {8, 16}, rng, 2, false),
          randomTensor(DType::f32, {16, 4}, rng, 2, false)};
}

std::vector<HostTensor> mustRun(runtime::Program &program,
                                std::vector<HostTensor> in) {
  auto out = program.run(std::move(in));
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *std::move(out) : std::vector<HostTensor>();
}

TEST(CpuExecutable, SerializeLoadRunIsBitIdentical) {
  runtime::Executable exe = compileSource();
  std::string bytes = runtime::serializeExecutable(exe);
  auto direct = runtime::loadCpuProgram(exe);
  auto loaded = runtime::loadCpuProgram(std::string_view(bytes));
  ASSERT_TRUE(direct.ok() && loaded.ok()) << loaded.status().ToString();
  std::vector<HostTensor> a = mustRun(**direct, inputs());
  std::vector<HostTensor> b = mustRun(**loaded, inputs());
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i].bitwiseEqual(b[i])) << "output " << i;
  // A second serialisation of the loaded form is byte-identical.
  auto again = runtime::deserializeExecutable(bytes);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(runtime::serializeExecutable(*again), bytes);
}

TEST(CpuExecutable, KernelsCarryALabelNamingTheirOpsAndTypes) {
  runtime::Executable exe = compileSource();
  std::vector<std::string> labels;
  for (const runtime::Thunk &t : exe.thunks)
    if (t.kind == runtime::Thunk::Kind::kernel)
      labels.push_back(t.kernel.label);
  // tanh and the reduction (fused or not) are kernels; the product a GEMM.
  ASSERT_FALSE(labels.empty());
  std::string all;
  for (const std::string &label : labels) {
    EXPECT_NE(label.find(" -> ("), std::string::npos) << label;
    all += label + "\n";
  }
  EXPECT_NE(all.find("tanh"), std::string::npos) << all;
  EXPECT_NE(all.find("(tensor<8x16xf32>) -> (tensor<8x16xf32>)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("reduce"), std::string::npos) << all;
  auto loaded =
      runtime::deserializeExecutable(runtime::serializeExecutable(exe));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (size_t i = 0; i < exe.thunks.size(); ++i)
    EXPECT_EQ(loaded->thunks[i].kernel.label, exe.thunks[i].kernel.label);
}

TEST(CpuExecutable, RefusesTruncatedBlobs) {
  std::string bytes = runtime::serializeExecutable(compileSource());
  for (size_t keep :
       {size_t{0}, size_t{7}, size_t{23}, bytes.size() / 2, bytes.size() - 1}) {
    auto program =
        runtime::loadCpuProgram(std::string_view(bytes.data(), keep));
    ASSERT_FALSE(program.ok()) << "kept " << keep << " bytes";
    EXPECT_EQ(program.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(program.status().message().find("invalid kiln executable"),
              std::string::npos)
        << program.status().ToString();
  }
}

TEST(CpuExecutable, RefusesBitFlipsAnywhere) {
  std::string bytes = runtime::serializeExecutable(compileSource());
  std::mt19937 rng(7);
  // Header fields, the signature, and random places in the kernel library.
  std::vector<size_t> positions = {0, 8, 12, 20, 30, 60};
  for (int i = 0; i < 40; ++i)
    positions.push_back(rng() % bytes.size());
  for (size_t pos : positions) {
    std::string flipped = bytes;
    flipped[pos] ^= static_cast<char>(1u << (rng() % 8));
    auto program = runtime::loadCpuProgram(std::string_view(flipped));
    ASSERT_FALSE(program.ok()) << "flip at byte " << pos << " was accepted";
  }
}

TEST(CpuExecutable, RefusesAnArenaSlotOffTheSlotAlignment) {
  // Kernels may access a slot in 16-byte vectors: a (hand-made) plan whose
  // arena slot is not on a slot boundary is refused before anything runs.
  runtime::Executable exe = compileSource();
  runtime::BufferSlot misaligned;
  misaligned.offset = exe.plan.arenaBytes + 4;
  misaligned.bytes = 4;
  exe.plan.arenaBytes += runtime::kSlotAlignment;
  exe.plan.slots.push_back(misaligned);
  auto program = runtime::loadCpuProgram(exe);
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("not 64-byte aligned"),
            std::string::npos)
      << program.status().ToString();
}

TEST(CpuExecutable, ChecksumMessageNamesTheProblem) {
  std::string bytes = runtime::serializeExecutable(compileSource());
  bytes[bytes.size() - 10] ^= 0x10;
  auto exe = runtime::deserializeExecutable(bytes);
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(exe.status().message().find("checksum"), std::string::npos)
      << exe.status().ToString();
}

TEST(CpuExecutable, RepeatedRunsGiveIdenticalResultsAndHonourDonation) {
  auto program = runtime::loadCpuProgram(compileSource());
  ASSERT_TRUE(program.ok());
  std::vector<HostTensor> first = mustRun(**program, inputs());
  std::vector<HostTensor> in = inputs();
  const std::byte *donated = in[0].data();
  std::vector<HostTensor> second = mustRun(**program, std::move(in));
  ASSERT_EQ(second.size(), 3u);
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_TRUE(first[i].bitwiseEqual(second[i]));
  // tanh(x) has x's type, so it reuses the donated buffer.
  EXPECT_EQ(second[0].data(), donated);
}

TEST(CpuExecutable, RejectsInputsThatDoNotMatchTheSignature) {
  auto program = runtime::loadCpuProgram(compileSource());
  ASSERT_TRUE(program.ok());
  std::vector<HostTensor> in = inputs();
  in[1] = HostTensor(DType::f32, {4, 16});
  auto out = (*program)->run(std::move(in));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CpuExecutable, OneDnnAndOpenBlasAgree) {
  runtime::Executable exe = compileSource();
  runtime::CpuRuntimeOptions blas;
  blas.gemm = runtime::GemmLibrary::openblas;
  auto a = runtime::loadCpuProgram(exe);
  auto b = runtime::loadCpuProgram(exe, blas);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<HostTensor> x = mustRun(**a, inputs());
  std::vector<HostTensor> y = mustRun(**b, inputs());
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(compareTensors(x[i], y[i], 20), "") << "output " << i;
}

TEST(CpuExecutable, ResultsDoNotDependOnTheThreadCount) {
  // The runtime takes as many threads as OpenMP gives it (one per core by
  // default), so the same executable runs on 2 threads here and 64 on a
  // bigger host: rows, columns, a sum split into parts and a dropout draw,
  // each kernel large enough to be split, give the same bits on any count.
  ParsedModule parsed = parseModule(R"mlir(
func.func @main(%x: tensor<64x2048xf32>, %c: tensor<4096x96xf32>, %f: tensor<1031x96xf32>, %key: tensor<2xi64>)
    -> (tensor<64x2048xf32>, tensor<96xf32>, tensor<f32>, tensor<256x512xf32>) {
  %m = kiln.reduce max %x, dims = [1] : tensor<64x2048xf32> -> tensor<64xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : tensor<64xf32> -> tensor<64x2048xf32>
  %d = kiln.sub %x, %mb : tensor<64x2048xf32>
  %e = kiln.exp %d : tensor<64x2048xf32>
  %s = kiln.reduce sum %e, dims = [1] : tensor<64x2048xf32> -> tensor<64xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0] : tensor<64xf32> -> tensor<64x2048xf32>
  %p = kiln.div %e, %sb : tensor<64x2048xf32>
  %cs = kiln.reduce sum %c, dims = [0] : tensor<4096x96xf32> -> tensor<96xf32>
  %f2 = kiln.mul %f, %f : tensor<1031x96xf32>
  %fs = kiln.reduce sum %f2, dims = [0, 1] : tensor<1031x96xf32> -> tensor<f32>
  %u, %next = kiln.rng_uniform %key : tensor<2xi64> -> tensor<256x512xf32>
  return %p, %cs, %fs, %u : tensor<64x2048xf32>, tensor<96xf32>, tensor<f32>, tensor<256x512xf32>
}
)mlir");
  ASSERT_TRUE(parsed.module);
  auto exe = compiler::cpu::compileExecutable(*parsed.module, "main");
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  std::mt19937 rng(3);
  std::vector<HostTensor> in = {randomTensor(DType::f32, {64, 2048}, rng),
                                randomTensor(DType::f32, {4096, 96}, rng),
                                randomTensor(DType::f32, {1031, 96}, rng),
                                HostTensor(DType::i64, {2})};
  std::vector<HostTensor> one;
  for (int threads : {1, 3, 7, 0}) {
    runtime::CpuRuntimeOptions options;
    options.threads = threads;
    auto program = runtime::loadCpuProgram(*exe, options);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    std::vector<HostTensor> out = mustRun(**program, in);
    ASSERT_EQ(out.size(), 4u);
    if (one.empty()) {
      one = std::move(out);
      continue;
    }
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_TRUE(out[i].bitwiseEqual(one[i]))
          << "output " << i << " on " << threads << " threads";
  }
}

TEST(CpuExecutable, LoopsAreVectorizedAtTheirNarrowestType) {
  // The cpu codegen turns on LLVM's vectorizer-maximize-bandwidth (f32
  // kernels summing in f64 ran at half the vector width without it); an
  // LLVM that renames the option fails here instead of silently slowing
  // every reduction kernel. lld resets LLVM's options at each link, while
  // another thread's compile may be vectorizing: the option is on after
  // compiles and after a reset with no compile following (set as a value
  // and again after each link, it was off there, and a compile running on
  // another thread crashed in the vectorizer when it flipped).
  compileSource();
  compileSource();
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("vectorizer-maximize-bandwidth");
  ASSERT_NE(it, options.end());
  auto *option = static_cast<llvm::cl::opt<bool> *>(it->second);
  EXPECT_TRUE(option->getValue());
  llvm::cl::ResetAllOptionOccurrences();
  EXPECT_TRUE(option->getValue());
}

TEST(CpuExecutable, IdenticalKernelsAreCompiledOnce) {
  ParsedModule parsed = parseModule(R"mlir(
func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %0 = kiln.add %a, %b : tensor<64xf32>
  %1 = kiln.add %0, %b : tensor<64xf32>
  %2 = kiln.add %1, %a : tensor<64xf32>
  %3 = kiln.mul %2, %2 : tensor<64xf32>
  return %3 : tensor<64xf32>
}
)mlir");
  // Fusion off: each op stays its own kernel, so the three adds of one shape
  // share one compiled kernel.
  PipelineOptions noFusion;
  noFusion.fuse = false;
  compiler::cpu::CpuCompileStats stats;
  auto exe = compiler::cpu::compileExecutable(*parsed.module, "main", &stats,
                                              noFusion);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(stats.opKernels, 4);
  EXPECT_EQ(stats.uniqueKernels, 2);
}

} // namespace
} // namespace kiln::testing
