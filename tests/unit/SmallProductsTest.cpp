// kiln-fuse-small-products on the backends: a product over a few contracted
// elements (LoRA's rank) is written as a loop and fused into the add that
// reads it. In every operand layout and type it agrees with the reference
// evaluator (which sums the exact products in double and rounds once), on
// the cpu's kernels and on the cuda kernel forms (a thread's 4 or 8 points,
// rows by host lanes); with the pass off the same modules run a GEMM, so
// each case does reach the pass.
#include "BackendTestModules.h"
#include "CpuTestSupport.h"

#include "absl/strings/str_cat.h"

namespace kiln::testing {
namespace {

struct SmallCase {
  std::vector<int64_t> lhs, rhs, out;
  std::string contract;
};

/// Either operand contracted along its rows or its columns, a 3-d lhs, and
/// the edges of the pass's rule: 1 and 16 contracted elements.
const SmallCase kCases[] = {
    {{37, 8}, {8, 29}, {37, 29}, "[1] x [0]"},
    {{8, 37}, {8, 29}, {37, 29}, "[0] x [0]"},
    {{37, 8}, {29, 8}, {37, 29}, "[1] x [1]"},
    {{8, 37}, {29, 8}, {37, 29}, "[0] x [1]"},
    {{2, 19, 3}, {3, 23}, {2, 19, 23}, "[2] x [0]"},
    {{40, 1}, {1, 24}, {40, 24}, "[1] x [0]"},
    {{48, 16}, {40, 16}, {48, 40}, "[1] x [1]"},
};

/// @main(%a, %b, %c) = dot(a, b) + c, the product's result type `out`.
std::string productPlusModule(const std::string &lhs, const std::string &rhs,
                              const std::string &out,
                              const std::string &contract) {
  return absl::StrCat("func.func @main(%a: ", lhs, ", %b: ", rhs, ", %c: ", out,
                      ") -> ", out, " {\n  %p = kiln.dot_general %a, %b, ",
                      "batch = [] x [], contract = ", contract, " : ", lhs,
                      ", ", rhs, " -> ", out,
                      "\n  %s = kiln.add %p, %c : ", out,
                      "\n  return %s : ", out, "\n}\n");
}

/// Programs for `target` whose executable holds a GEMM thunk exactly when
/// `expectGemm` (the pass off) and otherwise one kernel (the product fused
/// into the add).
ProgramFactory programsExpecting(bool expectGemm,
                                 compiler::cpu::KernelTarget target) {
  return [expectGemm, target](mlir::ModuleOp module)
             -> absl::StatusOr<std::unique_ptr<runtime::Program>> {
    PipelineOptions pipeline;
    pipeline.smallProductMinResultBytes = 0; // the cases are small
    if (expectGemm)
      pipeline.smallProductContraction = 0;
    absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
        module, "main", nullptr, pipeline, target);
    if (!exe.ok())
      return exe.status();
    int gemms = 0, kernels = 0;
    for (const runtime::Thunk &t : exe->thunks) {
      gemms += t.kind == runtime::Thunk::Kind::gemm;
      kernels += t.kind == runtime::Thunk::Kind::kernel;
    }
    if (expectGemm ? gemms != 1 : gemms != 0 || kernels != 1)
      return absl::InternalError(absl::StrCat(
          "expected ", expectGemm ? "one GEMM" : "one kernel and no GEMM",
          "; the executable has ", gemms, " GEMMs and ", kernels, " kernels"));
    return compiler::cpu::loadProgram(std::move(*exe));
  };
}

/// The cpu's kernels, and the cuda kernel forms run on the cpu.
std::vector<std::pair<std::string, compiler::cpu::KernelTarget>> targets() {
  std::vector<std::pair<std::string, compiler::cpu::KernelTarget>> all = {
      {"cpu", {}}};
  for (unsigned elements : {4u, 8u}) {
    compiler::cpu::KernelTarget gpu;
    gpu.rowLanes = 32;
    gpu.storeWhileReducing = true;
    gpu.elementsPerIndex = elements;
    all.push_back(
        {absl::StrCat("cuda form, ", elements, " points a thread"), gpu});
  }
  return all;
}

TEST(SmallProducts, WrittenAsLoopsMatchTheReferenceInEveryLayoutAndType) {
  const std::pair<DType, DType> types[] = {{DType::f32, DType::f32},
                                           {DType::bf16, DType::bf16},
                                           {DType::bf16, DType::f32},
                                           {DType::f16, DType::f16}};
  for (const auto &[name, target] : targets())
    for (auto [in, out] : types)
      for (const SmallCase &c : kCases)
        for (bool off : {false, true}) {
          SCOPED_TRACE(absl::StrCat(name, " ", std::string(dtypeName(in)),
                                    " -> ", std::string(dtypeName(out)), " ",
                                    c.contract, off ? " (pass off)" : ""));
          std::mt19937 rng(23);
          expectMatchesReferenceOn(
              programsExpecting(off, target),
              productPlusModule(tensorType(in, c.lhs), tensorType(in, c.rhs),
                                tensorType(out, c.out), c.contract),
              {randomTensor(in, c.lhs, rng, 4, false),
               randomTensor(in, c.rhs, rng, 4, false),
               randomTensor(out, c.out, rng, 4, false)},
              /*scale=*/40);
        }
}

} // namespace
} // namespace kiln::testing
