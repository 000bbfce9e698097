// Independent loop kernels run as one group kernel (compiler/cpu/
// KernelGroups.h; cuda's default, asked for here on the cpu): an
// optimizer-like step over parameters of awkward sizes is one thunk that
// matches the reference evaluator, split over the cpu's threads across its
// members' boundaries, in the cpu's kernel form and in the GPU's (4
// elements an index); which kernels may join (on hand-made
// thunk lists): not a reader of an earlier member's result, nor a write
// over a donated buffer an earlier member reads, nor a reduction, nor a
// warp-a-row kernel, within the buffers a launch takes; and the target
// switch turns groups off (the cpu's default).
#include "CpuTestSupport.h"

#include "compiler/cpu/KernelGroups.h"
#include "runtime/Executable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "absl/strings/str_cat.h"

namespace kiln::testing {
namespace {

// Five parameters updated as p - lr * g (one fusion each, sharing %lr),
// sized so that members start mid-block and the cpu's two parts split one
// member: 1 + 255 + 257 + 40000 + 30001 elements.
const std::vector<int64_t> kSizes = {1, 255, 257, 40000, 30001};

std::string updateModule() {
  std::string args = "%lr: tensor<f32>", results, body, returned, types;
  for (size_t i = 0; i < kSizes.size(); ++i) {
    std::string t = absl::StrCat("tensor<", kSizes[i], "xf32>");
    absl::StrAppend(&args, ", %p", i, ": ", t, " {kiln.donate, kiln.output_alias = ", i, " : i64}, %g", i, ": ", t);
    absl::StrAppend(&body, "  %l", i, " = kiln.broadcast_in_dim %lr, dims = [] : tensor<f32> -> ", t, "\n",
                    "  %s", i, " = kiln.mul %l", i, ", %g", i, " : ", t, "\n",
                    "  %u", i, " = kiln.sub %p", i, ", %s", i, " : ", t, "\n");
    absl::StrAppend(&returned, i ? ", " : "", "%u", i);
    absl::StrAppend(&types, i ? ", " : "", t);
  }
  return absl::StrCat("func.func @main(", args, ") -> (", types, ") {\n", body,
                      "  return ", returned, " : ", types, "\n}\n");
}

std::vector<HostTensor> updateInputs() {
  std::mt19937 rng(5);
  std::vector<HostTensor> inputs{randomTensor(DType::f32, {}, rng, 1, false)};
  for (int64_t n : kSizes) {
    inputs.push_back(randomTensor(DType::f32, {n}, rng, 4, false));
    inputs.push_back(randomTensor(DType::f32, {n}, rng, 4, false));
  }
  return inputs;
}

struct Kernels {
  int groups = 0, others = 0;
  std::vector<int64_t> groupRanges;
};

Kernels kernelsOf(const runtime::Executable &exe) {
  Kernels k;
  for (const runtime::Thunk &t : exe.thunks) {
    if (t.kind != runtime::Thunk::Kind::kernel)
      continue;
    if (t.kernel.symbol.rfind("kiln_kernel_group_", 0) == 0) {
      ++k.groups;
      k.groupRanges.push_back(t.kernel.rangeSize);
    } else {
      ++k.others;
    }
  }
  return k;
}

/// A cpu target that groups kernels, as cuda's does.
compiler::cpu::KernelTarget grouping() {
  compiler::cpu::KernelTarget target;
  target.kernelGroups = true;
  return target;
}

/// Programs of @main, through a serialization round trip, on `target`,
/// after checking that the executable has `groups` group kernels and
/// `others` other kernels.
ProgramFactory groupedPrograms(compiler::cpu::KernelTarget target, int groups,
                               int others) {
  return [=](mlir::ModuleOp module)
             -> absl::StatusOr<std::unique_ptr<runtime::Program>> {
    absl::StatusOr<runtime::Executable> exe = compileRoundTripped(module, target);
    if (!exe.ok())
      return exe.status();
    Kernels k = kernelsOf(*exe);
    if (k.groups != groups || k.others != others)
      return absl::InternalError(absl::StrCat(k.groups, " groups and ",
                                              k.others, " other kernels"));
    return compiler::cpu::loadProgram(*std::move(exe));
  };
}

// One group of five, its range the members' ranges each padded to a block
// of 256: in the cpu's form (an element an index) and the GPU's (4). The
// 40000-element member is split between the cpu's two threads.
TEST(KernelGroups, IndependentUpdatesAreOneKernelMatchingTheReference) {
  for (unsigned elements : {1u, 4u}) {
    SCOPED_TRACE(absl::StrCat(elements, " elements an index"));
    compiler::cpu::KernelTarget target = grouping();
    target.elementsPerIndex = elements;
    expectMatchesReferenceOn(groupedPrograms(target, 1, 0), updateModule(),
                             updateInputs());
    ParsedModule parsed = parseModule(updateModule());
    ASSERT_TRUE(parsed.module);
    absl::StatusOr<runtime::Executable> exe =
        compiler::cpu::compileExecutable(*parsed.module, "main", nullptr, {},
                                         target);
    ASSERT_TRUE(exe.ok()) << exe.status();
    int64_t padded = 0;
    for (int64_t n : kSizes) {
      int64_t indices = n % elements == 0 ? n / elements : n;
      padded += (indices + 255) / 256 * 256;
    }
    EXPECT_EQ(kernelsOf(*exe).groupRanges, std::vector<int64_t>{padded});
    // %lr once, then five parameters and five gradients, then five results.
    const runtime::KernelThunk &group = exe->thunks.back().kernel;
    EXPECT_EQ(group.slots.size(), 16u);
    EXPECT_EQ(group.numResults, 5u);
    EXPECT_TRUE(group.inPlaceOperands.empty());
  }
}

// The negative twin: with groups switched off (the cpu's default target,
// and cuda's under KILN_KERNEL_GROUPS=0), five kernels, the same results.
TEST(KernelGroups, SwitchedOffEveryKernelIsALaunch) {
  expectMatchesReferenceOn(groupedPrograms({}, 0, 5), updateModule(),
                           updateInputs());
}

// End to end: a slice of %p, then %p's update written over %p's buffer
// (donated, tied to output 0; in place because the slice comes first).
// Neither reads the other's result, but the slice must run first and
// alone: grouped, the update's threads would overwrite what it reads.
TEST(KernelGroups, AnUpdateOverADonatedInputRunsAfterItsReader) {
  const char *source = R"mlir(
func.func @main(%p: tensor<3000xf32> {kiln.donate, kiln.output_alias = 0 : i64}, %g: tensor<3000xf32>) -> (tensor<3000xf32>, tensor<1500xf32>) {
  %q = kiln.slice %p, start = [1000], limit = [2500], strides = [1] : tensor<3000xf32> -> tensor<1500xf32>
  %u = kiln.sub %p, %g : tensor<3000xf32>
  return %u, %q : tensor<3000xf32>, tensor<1500xf32>
}
)mlir";
  std::mt19937 rng(11);
  std::vector<HostTensor> inputs{
      randomTensor(DType::f32, {3000}, rng, 2, false),
      randomTensor(DType::f32, {3000}, rng, 2, false)};
  // Given, not lent: the program writes over %p's buffer.
  expectMatchesReferenceOn(groupedPrograms(grouping(), 0, 2), source, inputs,
                           /*scale=*/1, InputPassing::given);
}

// Which thunks join, on a hand-made thunk list: kernel functions that do
// nothing (only the decisions are looked at), slots 0-9 arena, 10 an input
// donated to output slot 11.
class GroupDecisions : public ::testing::Test {
protected:
  void SetUp() override {
    context_.loadDialect<mlir::func::FuncDialect, mlir::LLVM::LLVMDialect,
                         mlir::scf::SCFDialect, mlir::arith::ArithDialect>();
    std::string text;
    for (int k = 0; k < 3; ++k)
      absl::StrAppend(&text, "func.func @kiln_kernel_", k,
                      "(%t: !llvm.ptr, %b: i64, %e: i64) { return }\n");
    kernels_ = mlir::parseSourceString<mlir::ModuleOp>(text, &context_);
    ASSERT_TRUE(kernels_);
    for (int s = 0; s < 10; ++s)
      exe_.plan.slots.push_back({runtime::BufferSlot::Kind::arena, 0, 0, 64});
    exe_.plan.slots.push_back({runtime::BufferSlot::Kind::input, 0, 0, 64});
    exe_.plan.slots.push_back({runtime::BufferSlot::Kind::output, 0, 0, 64});
    exe_.plan.outputSlots = {11};
    exe_.plan.outputDonors = {0};
    // kiln_kernel_0 is a loop, 1 a reduction, 2 a loop with a warp a row.
    info_["kiln_kernel_0"].loop = true;
    info_["kiln_kernel_2"].loop = true;
    info_["kiln_kernel_2"].lanes = 32;
  }
  void add(int kernel, std::vector<uint32_t> reads,
           std::vector<uint32_t> writes) {
    runtime::Thunk t;
    t.kernel.symbol = absl::StrCat("kiln_kernel_", kernel);
    t.kernel.slots = reads;
    t.kernel.slots.insert(t.kernel.slots.end(), writes.begin(), writes.end());
    t.kernel.numResults = writes.size();
    t.kernel.rangeSize = 100;
    exe_.thunks.push_back(t);
  }
  /// Each thunk after grouping: its kernel and slots, e.g. "g0: 0 2 | 1 3".
  std::vector<std::string> grouped(unsigned maxBuffers =
                                       compiler::cpu::kMaxGroupBuffers) {
    compiler::cpu::groupIndependentKernels(exe_, *kernels_, info_,
                                           {.maxBuffers = maxBuffers});
    std::vector<std::string> out;
    for (const runtime::Thunk &t : exe_.thunks) {
      const runtime::KernelThunk &k = t.kernel;
      bool group = k.symbol.rfind("kiln_kernel_group_", 0) == 0;
      std::string line = group ? "g" + k.symbol.substr(18) + ":"
                               : "k" + k.symbol.substr(12) + ":";
      for (size_t i = 0; i < k.slots.size(); ++i)
        absl::StrAppend(&line, i == k.slots.size() - k.numResults ? " |" : "",
                        " ", k.slots[i]);
      out.push_back(line);
    }
    return out;
  }
  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> kernels_;
  runtime::Executable exe_;
  std::map<std::string, compiler::cpu::KernelInfo> info_;
};

TEST_F(GroupDecisions, AReaderOfAnEarlierMembersResultStartsANewGroup) {
  add(0, {0}, {1});
  add(0, {0}, {3}); // joins; slot 0, read by both, is one operand
  add(0, {1}, {4}); // reads the first's result
  add(0, {5}, {6});
  EXPECT_EQ(grouped(), (std::vector<std::string>{"g0: 0 | 1 3",
                                                 "g1: 1 5 | 4 6"}));
}

TEST_F(GroupDecisions, AWriteOverADonorWaitsForItsReaders) {
  add(0, {10}, {1});  // reads input 10
  add(0, {2}, {11});  // writes output 11, in input 10's buffer
  add(0, {11}, {3});  // reads it
  EXPECT_EQ(grouped(),
            (std::vector<std::string>{"k0: 10 | 1", "k0: 2 | 11", "k0: 11 | 3"}));
}

TEST_F(GroupDecisions, ReductionsWarpRowsAndLoneKernelsStayApart) {
  add(0, {0}, {1});
  add(1, {2}, {3}); // a reduction
  add(0, {4}, {5});
  add(2, {6}, {7}); // a warp a row
  add(0, {8}, {9});
  EXPECT_EQ(grouped(), (std::vector<std::string>{"k0: 0 | 1", "k1: 2 | 3",
                                                 "k0: 4 | 5", "k2: 6 | 7",
                                                 "k0: 8 | 9"}));
}

TEST_F(GroupDecisions, AGroupKeepsWithinItsBuffers) {
  add(0, {0}, {1});
  add(0, {2}, {3});
  add(0, {4}, {5});
  add(0, {6}, {7});
  add(0, {8}, {9});
  // Four buffers a group: two members each; equal groups share a kernel.
  EXPECT_EQ(grouped(4), (std::vector<std::string>{"g0: 0 2 | 1 3",
                                                  "g0: 4 6 | 5 7",
                                                  "k0: 8 | 9"}));
}

} // namespace
} // namespace kiln::testing
