// GEMMs that read a slice in place (runtime::GemmOperandView): which slices
// are matrices at one stride (gemmViewOfSlice), that the lowering then
// emits no slice kernel, that such GEMMs match the reference evaluator on
// both GEMM libraries in f32 and bf16 through a serialization round trip,
// and that a view reaching past its slot is refused at load.
#include "CpuTestSupport.h"

#include "compiler/cpu/GemmShape.h"
#include "runtime/Executable.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace kiln::testing {
namespace {

using compiler::cpu::gemmViewOfSlice;

// @main's slices, in order: a chunk of query rows (dims before the cut are
// the batch dims), the whole leading block, a cut in the last dim, a cut
// followed by another, a stride, and a block of a matrix's rows.
const char *kSlices = R"mlir(
func.func @main(%q: tensor<2x3x8x4xf32>, %m: tensor<10x6xf32>)
    -> (tensor<2x3x4x4xf32>, tensor<1x3x8x4xf32>, tensor<2x3x8x2xf32>,
        tensor<2x2x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3x6xf32>) {
  %rows = kiln.slice %q, start = [0, 0, 2, 0], limit = [2, 3, 6, 4], strides = [1, 1, 1, 1] : tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
  %lead = kiln.slice %q, start = [1, 0, 0, 0], limit = [2, 3, 8, 4], strides = [1, 1, 1, 1] : tensor<2x3x8x4xf32> -> tensor<1x3x8x4xf32>
  %cols = kiln.slice %q, start = [0, 0, 0, 1], limit = [2, 3, 8, 3], strides = [1, 1, 1, 1] : tensor<2x3x8x4xf32> -> tensor<2x3x8x2xf32>
  %two = kiln.slice %q, start = [0, 1, 2, 0], limit = [2, 3, 6, 4], strides = [1, 1, 1, 1] : tensor<2x3x8x4xf32> -> tensor<2x2x4x4xf32>
  %step = kiln.slice %q, start = [0, 0, 0, 0], limit = [2, 3, 8, 4], strides = [1, 1, 2, 1] : tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
  %block = kiln.slice %m, start = [4, 0], limit = [7, 6], strides = [1, 1] : tensor<10x6xf32> -> tensor<3x6xf32>
  return %rows, %lead, %cols, %two, %step, %block : tensor<2x3x4x4xf32>, tensor<1x3x8x4xf32>, tensor<2x3x8x2xf32>, tensor<2x2x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3x6xf32>
}
)mlir";

std::vector<SliceOp> slicesOf(mlir::ModuleOp module) {
  std::vector<SliceOp> slices;
  module.walk([&](SliceOp s) { slices.push_back(s); });
  return slices;
}

std::string describe(std::optional<runtime::GemmOperandView> view) {
  return view ? absl::StrCat(view->offset, "/", view->batchStride) : "none";
}

TEST(GemmViewOfSlice, MatricesAtOneStrideOnly) {
  ParsedModule parsed = parseModule(kSlices);
  ASSERT_TRUE(parsed.module);
  std::vector<SliceOp> s = slicesOf(*parsed.module);
  ASSERT_EQ(s.size(), 6u);
  // Rows 2..5 of each [8, 4] matrix: 8 elements in, 32 apart; a product
  // with one batch dim would take two runs a matrix.
  EXPECT_EQ(describe(gemmViewOfSlice(s[0], 2)), "8/32");
  EXPECT_EQ(describe(gemmViewOfSlice(s[0], 1)), "none");
  // The second of two [3, 8, 4] blocks: one run, packed from 96 on, for
  // any batch dims.
  EXPECT_EQ(describe(gemmViewOfSlice(s[1], 2)), "96/0");
  EXPECT_EQ(describe(gemmViewOfSlice(s[1], 0)), "96/0");
  // Columns 1..2 of each row: matrices of one row each (three batch
  // dims), 4 apart; with two batch dims a matrix would take eight runs.
  EXPECT_EQ(describe(gemmViewOfSlice(s[2], 3)), "1/4");
  EXPECT_EQ(describe(gemmViewOfSlice(s[2], 2)), "none");
  // A second cut after the first, a stride: none.
  EXPECT_EQ(describe(gemmViewOfSlice(s[3], 2)), "none");
  EXPECT_EQ(describe(gemmViewOfSlice(s[4], 2)), "none");
  // Rows 4..6 of a [10, 6] matrix: one run 24 elements in.
  EXPECT_EQ(describe(gemmViewOfSlice(s[5], 0)), "24/0");
}

// Attention-like chunks (T is the element type): the chunk's query rows
// against a prefix of the keys (transB), those scores against a later
// block of the values (as they lie), a block of a matrix's rows against a
// weight (transB); and two slices that must stay kernels: one returned as
// well as multiplied, and one whose product transposes it first (batch dim
// 1 before its rows).
std::string chunkModule(const std::string &t) {
  std::string text = R"mlir(
func.func @main(%q: tensor<2x3x8x4xT>, %k: tensor<2x3x8x4xT>,
                %v: tensor<2x3x8x4xT>, %m: tensor<10x6xT>, %w: tensor<5x6xT>,
                %p: tensor<4x3x5xT>, %r: tensor<3x5x2xT>)
    -> (tensor<2x3x4x4xT>, tensor<7x5xT>, tensor<2x3x4x4xT>,
        tensor<2x3x4x4xT>, tensor<3x3x2xT>) {
  %qc = kiln.slice %q, start = [0, 0, 4, 0], limit = [2, 3, 8, 4], strides = [1, 1, 1, 1] : tensor<2x3x8x4xT> -> tensor<2x3x4x4xT>
  %kc = kiln.slice %k, start = [0, 0, 0, 0], limit = [2, 3, 6, 4], strides = [1, 1, 1, 1] : tensor<2x3x8x4xT> -> tensor<2x3x6x4xT>
  %s = kiln.dot_general %qc, %kc, batch = [0, 1] x [0, 1], contract = [3] x [3] : tensor<2x3x4x4xT>, tensor<2x3x6x4xT> -> tensor<2x3x4x6xT>
  %vc = kiln.slice %v, start = [0, 0, 2, 0], limit = [2, 3, 8, 4], strides = [1, 1, 1, 1] : tensor<2x3x8x4xT> -> tensor<2x3x6x4xT>
  %o = kiln.dot_general %s, %vc, batch = [0, 1] x [0, 1], contract = [3] x [2] : tensor<2x3x4x6xT>, tensor<2x3x6x4xT> -> tensor<2x3x4x4xT>
  %mc = kiln.slice %m, start = [3, 0], limit = [10, 6], strides = [1, 1] : tensor<10x6xT> -> tensor<7x6xT>
  %y = kiln.dot_general %mc, %w, batch = [] x [], contract = [1] x [1] : tensor<7x6xT>, tensor<5x6xT> -> tensor<7x5xT>
  %kr = kiln.slice %k, start = [0, 0, 1, 0], limit = [2, 3, 5, 4], strides = [1, 1, 1, 1] : tensor<2x3x8x4xT> -> tensor<2x3x4x4xT>
  %z = kiln.dot_general %qc, %kr, batch = [0, 1] x [0, 1], contract = [3] x [3] : tensor<2x3x4x4xT>, tensor<2x3x4x4xT> -> tensor<2x3x4x4xT>
  %pc = kiln.slice %p, start = [1, 0, 0], limit = [4, 3, 5], strides = [1, 1, 1] : tensor<4x3x5xT> -> tensor<3x3x5xT>
  %u = kiln.dot_general %pc, %r, batch = [1] x [0], contract = [2] x [1] : tensor<3x3x5xT>, tensor<3x5x2xT> -> tensor<3x3x2xT>
  return %o, %y, %z, %kr, %u : tensor<2x3x4x4xT>, tensor<7x5xT>, tensor<2x3x4x4xT>, tensor<2x3x4x4xT>, tensor<3x3x2xT>
}
)mlir";
  return absl::StrReplaceAll(text, {{"xT>", absl::StrCat("x", t, ">")}});
}

/// Programs of @main through a serialization round trip whose executable
/// holds `sliceKernels` slice kernels and `views` GEMM operands read in
/// place, loaded with `library`.
ProgramFactory viewedGemmPrograms(runtime::GemmLibrary library, bool views,
                                  int sliceKernels, int viewedOperands) {
  return [=](mlir::ModuleOp module)
             -> absl::StatusOr<std::unique_ptr<runtime::Program>> {
    compiler::cpu::KernelTarget target;
    target.gemmOperandViews = views;
    absl::StatusOr<runtime::Executable> exe = compileRoundTripped(module, target);
    if (!exe.ok())
      return exe.status();
    int slices = 0, viewed = 0;
    for (const runtime::Thunk &t : exe->thunks) {
      if (t.kind == runtime::Thunk::Kind::kernel)
        slices += t.kernel.label.rfind("slice", 0) == 0;
      if (t.kind == runtime::Thunk::Kind::gemm)
        viewed += !t.gemm.aView.packed() + !t.gemm.bView.packed();
    }
    if (slices != sliceKernels || viewed != viewedOperands)
      return absl::InternalError(absl::StrCat(slices, " slice kernels and ",
                                              viewed, " viewed operands"));
    runtime::CpuRuntimeOptions options;
    options.gemm = library;
    return runtime::loadCpuProgram(*std::move(exe), options);
  };
}

std::vector<HostTensor> chunkInputs(DType dtype) {
  std::mt19937 rng(17);
  std::vector<std::vector<int64_t>> shapes = {
      {2, 3, 8, 4}, {2, 3, 8, 4}, {2, 3, 8, 4}, {10, 6}, {5, 6}, {4, 3, 5},
      {3, 5, 2}};
  std::vector<HostTensor> inputs;
  for (const auto &shape : shapes)
    inputs.push_back(randomTensor(dtype, shape, rng, 4, false));
  return inputs;
}

// Five operands read in place (the chunk of queries twice, the keys'
// prefix, the values' block, the matrix's rows); the returned slice and the
// transposed one stay kernels. Without views (the negative twin) all six
// slices are kernels and no operand is viewed; the results are the same.
TEST(GemmOperandViews, ChunksMatchTheReferenceOnBothLibraries) {
  for (runtime::GemmLibrary library :
       {runtime::GemmLibrary::onednn, runtime::GemmLibrary::openblas})
    for (DType dtype : {DType::f32, DType::bf16})
      for (bool views : {true, false}) {
        SCOPED_TRACE(absl::StrCat(
            library == runtime::GemmLibrary::onednn ? "onednn " : "openblas ",
            std::string(dtypeName(dtype)), views ? " views" : " copies"));
        expectMatchesReferenceOn(
            viewedGemmPrograms(library, views, views ? 2 : 6, views ? 5 : 0),
            chunkModule(std::string(dtypeName(dtype))), chunkInputs(dtype),
            /*scale=*/40);
      }
}

// A donated input that a GEMM reads through a view is still read by that
// GEMM: an update of the input written over its buffer (the donation) must
// wait for it, although the slice op itself comes first. Here the GEMM's
// other operand is made from the update, so it runs after it: the update
// takes a buffer of its own, and the product reads the old rows.
TEST(GemmOperandViews, ADonatedInputOutlivesTheGemmsThatViewIt) {
  const char *source = R"mlir(
func.func @main(%w: tensor<4x8xf32> {kiln.donate}) -> (tensor<4x8xf32>, tensor<3x8xf32>) {
  %s = kiln.slice %w, start = [1, 0], limit = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
  %u = kiln.mul %w, %w : tensor<4x8xf32>
  %a = kiln.slice %u, start = [0, 0], limit = [3, 3], strides = [1, 1] : tensor<4x8xf32> -> tensor<3x3xf32>
  %y = kiln.dot_general %a, %s, batch = [] x [], contract = [1] x [0] : tensor<3x3xf32>, tensor<3x8xf32> -> tensor<3x8xf32>
  return %u, %y : tensor<4x8xf32>, tensor<3x8xf32>
}
)mlir";
  std::mt19937 rng(23);
  std::vector<HostTensor> inputs{
      randomTensor(DType::f32, {4, 8}, rng, 4, false)};
  // Given, not lent: the program may write over the input's buffer.
  expectMatchesReferenceOn(
      viewedGemmPrograms(runtime::GemmLibrary::onednn, true, 1, 1), source,
      inputs, /*scale=*/8, InputPassing::given);
}

// The executable's check: a view whose last matrix ends past its slot, or
// with a negative offset, is refused at load rather than read out of bounds.
TEST(GemmOperandViews, AViewPastItsSlotIsRefusedAtLoad) {
  ParsedModule parsed = parseModule(chunkModule("f32"));
  ASSERT_TRUE(parsed.module);
  absl::StatusOr<runtime::Executable> exe =
      compiler::cpu::compileExecutable(*parsed.module, "main");
  ASSERT_TRUE(exe.ok()) << exe.status();
  runtime::GemmThunk *viewed = nullptr;
  for (runtime::Thunk &t : exe->thunks)
    if (t.kind == runtime::Thunk::Kind::gemm && t.gemm.batch > 1 &&
        !t.gemm.aView.packed())
      viewed = &t.gemm;
  ASSERT_NE(viewed, nullptr);
  ASSERT_TRUE(runtime::deserializeExecutable(
                  runtime::serializeExecutable(*exe))
                  .ok());
  uint64_t slotElements = exe->plan.slots[viewed->a].bytes / 4;
  for (runtime::GemmOperandView bad :
       {runtime::GemmOperandView{int64_t(slotElements), 0},
        runtime::GemmOperandView{viewed->aView.offset,
                                 viewed->aView.batchStride + 1},
        runtime::GemmOperandView{-1, viewed->aView.batchStride}}) {
    runtime::GemmOperandView good = viewed->aView;
    viewed->aView = bad;
    absl::StatusOr<runtime::Executable> loaded =
        runtime::deserializeExecutable(runtime::serializeExecutable(*exe));
    viewed->aView = good;
    ASSERT_FALSE(loaded.ok()) << bad.offset << "/" << bad.batchStride;
    EXPECT_NE(loaded.status().message().find("too small slot"),
              std::string::npos)
        << loaded.status();
  }
}

} // namespace
} // namespace kiln::testing
