// The GPU's scatter_add (KernelTarget::atomicScatterAdd: a copy of the
// operand, then one atomic add per update) run on the CPU backend's threads
// against the reference evaluator: repeated indices add up, indices out of
// range are skipped, both axes, float and integer types; 16-bit floats
// keep the partitioned kernel. On the CPU the atomics are real too (two
// worker threads), so a lost update would show.
#include "CpuTestSupport.h"

#include "compiler/Pipeline.h"
#include "compiler/cpu/CpuCompiler.h"

#include "absl/strings/str_cat.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using testing::randomTensor;

HostTensor ints(DType dtype, std::vector<int64_t> shape,
                std::vector<int64_t> values) {
  HostTensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    t.setInt(static_cast<int64_t>(i), values[i]);
  return t;
}

/// `count` i64 token ids below `vocab`.
HostTensor randomTokens(int64_t count, int64_t vocab, std::mt19937 &rng) {
  HostTensor tokens(DType::i64, {count});
  for (int64_t t = 0; t < count; ++t)
    tokens.setInt(t, static_cast<int64_t>(rng() % vocab));
  return tokens;
}

testing::ProgramFactory atomicCpu() {
  compiler::cpu::KernelTarget target;
  target.atomicScatterAdd = true;
  return testing::cpuPrograms({}, target);
}

TEST(AtomicScatterAdd, MatchesTheReferenceOnBothAxesAndEveryType) {
  for (const char *e : {"f32", "f64", "i32", "i64", "f16"}) {
    std::string source = absl::StrCat(
        "func.func @main(%a: tensor<5x3x", e, ">, %i: tensor<2x4xi32>, %u: tensor<2x4x3x", e,
        ">, %j: tensor<6xi64>, %w: tensor<5x6x", e, ">) -> (tensor<5x3x", e,
        ">, tensor<5x6x", e, ">) {\n"
        "  %s = kiln.scatter_add %a[%i], %u, axis = 0 : tensor<5x3x", e,
        ">, tensor<2x4xi32>, tensor<2x4x3x", e, ">\n"
        "  %t = kiln.scatter_add %w[%j], %w, axis = 1 : tensor<5x6x", e,
        ">, tensor<6xi64>, tensor<5x6x", e, ">\n"
        "  return %s, %t : tensor<5x3x", e, ">, tensor<5x6x", e, ">\n}\n");
    DType dtype = *parseDType(e);
    std::mt19937 rng(11);
    // Row 1 three times, 0 twice (axis 1), -2, 7, 9 and -1 out of range.
    HostTensor rows = ints(DType::i32, {2, 4}, {0, 4, -2, 7, 1, 1, 3, 1});
    HostTensor columns = ints(DType::i64, {6}, {5, 0, 0, 9, -1, 2});
    testing::expectMatchesReferenceOn(
        atomicCpu(), source,
        {randomTensor(dtype, {5, 3}, rng, 4, false), rows,
         randomTensor(dtype, {2, 4, 3}, rng, 4, false), columns,
         randomTensor(dtype, {5, 6}, rng, 4, false)});
  }
}

TEST(AtomicScatterAdd, ManyUpdatesOnFewRowsLoseNone) {
  // An embedding gradient with a small vocabulary: 4096 tokens of 64
  // values onto 7 rows, so threads race on every row.
  std::string source =
      "func.func @main(%a: tensor<7x64xf32>, %i: tensor<4096xi64>, %u: "
      "tensor<4096x64xf32>) -> tensor<7x64xf32> {\n"
      "  %s = kiln.scatter_add %a[%i], %u, axis = 0 : tensor<7x64xf32>, "
      "tensor<4096xi64>, tensor<4096x64xf32>\n"
      "  return %s : tensor<7x64xf32>\n}\n";
  std::mt19937 rng(12);
  HostTensor tokens = randomTokens(4096, 7, rng);
  // Sums of ~585 terms of |u| <= 1 added in f32 in the threads' order:
  // within the base tolerance here (AMD EPYC, 3 runs); 20x leaves room for
  // another interleaving, while one lost update (mean |u| 0.5 against a
  // tolerance of ~3e-3 on sums near 14) still fails.
  testing::expectMatchesReferenceOn(
      atomicCpu(), source,
      {randomTensor(DType::f32, {7, 64}, rng, 1, false), tokens,
       randomTensor(DType::f32, {4096, 64}, rng, 1, false)},
      20);
}

/// The thunks of @main compiled for the atomic form (cpu: run on threads),
/// or with `atomic` false for the cpu's own partitioned kernel.
std::vector<runtime::Thunk> compiledThunks(const std::string &source,
                                           bool atomic) {
  testing::ParsedModule parsed = testing::parseModule(source);
  EXPECT_TRUE(parsed.module);
  if (!parsed.module)
    return {};
  compiler::cpu::KernelTarget target;
  target.atomicScatterAdd = atomic;
  absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
      *parsed.module, "main", nullptr, PipelineOptions(), target);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? exe->thunks : std::vector<runtime::Thunk>{};
}

int copies(const std::vector<runtime::Thunk> &thunks) {
  int n = 0;
  for (const runtime::Thunk &t : thunks)
    n += t.kind == runtime::Thunk::Kind::copy;
  return n;
}

// An embedding's gradient: a scatter_add into a large zero splat only it
// reads adds where the splat was filled, with no copy of the table (154 MB
// in GPT-2), with the atomic kernel and the cpu's partitioned one (each of
// its ranges copies its own part onto itself, then adds); a splat
// something else reads too keeps its copy. All match the reference.
TEST(AtomicScatterAdd, AZeroTableOnlyTheScatterReadsIsAddedInPlace) {
  for (auto [atomic, readTwice] :
       {std::pair{true, false}, {true, true}, {false, false}, {false, true}}) {
    SCOPED_TRACE(
        absl::StrCat(atomic ? "atomic, " : "partitioned, ",
                     readTwice ? "the splat read twice" : "read once"));
    std::string source = absl::StrCat(
        "func.func @main(%i: tensor<300xi64>, %u: tensor<300x64xf32>) -> ",
        readTwice ? "(tensor<50x64xf32>, tensor<50x64xf32>)"
                  : "tensor<50x64xf32>",
        " {\n  %z = kiln.constant dense<0.0> : tensor<50x64xf32>\n"
        "  %s = kiln.scatter_add %z[%i], %u, axis = 0 : tensor<50x64xf32>, "
        "tensor<300xi64>, tensor<300x64xf32>\n",
        readTwice ? "  %e = kiln.exp %z : tensor<50x64xf32>\n"
                    "  return %s, %e : tensor<50x64xf32>, tensor<50x64xf32>\n}\n"
                  : "  return %s : tensor<50x64xf32>\n}\n");
    std::vector<runtime::Thunk> thunks = compiledThunks(source, atomic);
    bool inPlace = false;
    for (const runtime::Thunk &t : thunks)
      inPlace |= t.kind == runtime::Thunk::Kind::kernel &&
                 t.kernel.label.rfind("scatter_add", 0) == 0 &&
                 t.kernel.slots[0] == t.kernel.slots[3];
    EXPECT_EQ(inPlace, !readTwice);
    // The atomic kernel adds into a copy; the partitioned one copies as it
    // goes.
    EXPECT_EQ(copies(thunks), atomic && readTwice ? 1 : 0);
    std::mt19937 rng(13);
    HostTensor tokens = randomTokens(300, 50, rng);
    testing::expectMatchesReferenceOn(
        atomic ? atomicCpu() : testing::cpuPrograms(), source,
        {tokens, randomTensor(DType::f32, {300, 64}, rng, 1, false)}, 20);
  }
}

} // namespace
} // namespace kiln
