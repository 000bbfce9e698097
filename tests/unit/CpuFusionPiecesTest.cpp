// Column pieces (compiler/cpu/FusionPieces.cpp): a column-blocked fusion's
// blocks stop where a pad's operand or a concatenation's input begins or
// ends, and inside a piece those ops generate only the branch they take
// there, so the kernel has no branch a point. Each form matches the
// reference evaluator, with the pieces and without.
#include "CpuFusionSupport.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln::testing {
namespace {

/// scf.if ops in the kernel of `source`'s fusion, emitted with
/// FusionKernelOptions::columnPieces `pieces`.
int branchesInKernel(const std::string &source, bool pieces) {
  compiler::cpu::detail::FusionKernelOptions options;
  options.columnPieces = pieces;
  return opsInKernel<mlir::scf::IfOp>(source, options);
}

/// One kernel matching the reference, with column pieces and without.
void expectOneKernelWithAndWithoutPieces(
    const std::string &source, const std::vector<HostTensor> &inputs) {
  compiler::cpu::KernelTarget pieces, whole;
  whole.columnPieces = false;
  for (const compiler::cpu::KernelTarget &target : {pieces, whole})
    expectOneKernel(source, inputs, 1, target);
}

/// The pieces take away every branch the whole kernel has, and both forms
/// match the reference.
void expectPiecesRemoveEveryBranch(const std::string &source,
                                   const std::vector<HostTensor> &inputs) {
  EXPECT_EQ(branchesInKernel(source, /*pieces=*/true), 0);
  EXPECT_GT(branchesInKernel(source, /*pieces=*/false), 0);
  expectOneKernelWithAndWithoutPieces(source, inputs);
}

TEST(CpuFusion, ColumnPiecesReadEachPaddedOperandWithoutABranch) {
  // Attention's q, k and v gradients joined into the qkv product's
  // gradient, as kiln-lower-attention's backward leaves them: each head
  // layout transposed to [B, T, H·D] and padded to its third of the
  // columns, the three added, the bias gradient summed over the rows.
  std::string source = R"mlir(
func.func @main(%q: tensor<2x3x5x4xbf16>, %k: tensor<2x3x5x4xbf16>, %v: tensor<2x3x5x4xbf16>) -> (tensor<36xf32>, tensor<10x36xbf16>) {
  %r:2 = kiln.fusion multi_output(%q, %k, %v) : (tensor<2x3x5x4xbf16>, tensor<2x3x5x4xbf16>, tensor<2x3x5x4xbf16>) -> (tensor<36xf32>, tensor<10x36xbf16>) {
  ^bb0(%a: tensor<2x3x5x4xbf16>, %b: tensor<2x3x5x4xbf16>, %c: tensor<2x3x5x4xbf16>):
    %zero = kiln.constant dense<0.0> : tensor<f32>
    %a1 = kiln.convert %a : tensor<2x3x5x4xbf16> -> tensor<2x3x5x4xf32>
    %a2 = kiln.transpose %a1, perm = [0, 2, 1, 3] : tensor<2x3x5x4xf32> -> tensor<2x5x3x4xf32>
    %a3 = kiln.reshape %a2 : tensor<2x5x3x4xf32> -> tensor<2x5x12xf32>
    %ap = kiln.pad %a3, %zero, low = [0, 0, 0], high = [0, 0, 24] : tensor<2x5x12xf32>, tensor<f32> -> tensor<2x5x36xf32>
    %b1 = kiln.convert %b : tensor<2x3x5x4xbf16> -> tensor<2x3x5x4xf32>
    %b2 = kiln.transpose %b1, perm = [0, 2, 1, 3] : tensor<2x3x5x4xf32> -> tensor<2x5x3x4xf32>
    %b3 = kiln.reshape %b2 : tensor<2x5x3x4xf32> -> tensor<2x5x12xf32>
    %bp = kiln.pad %b3, %zero, low = [0, 0, 12], high = [0, 0, 12] : tensor<2x5x12xf32>, tensor<f32> -> tensor<2x5x36xf32>
    %c1 = kiln.convert %c : tensor<2x3x5x4xbf16> -> tensor<2x3x5x4xf32>
    %c2 = kiln.transpose %c1, perm = [0, 2, 1, 3] : tensor<2x3x5x4xf32> -> tensor<2x5x3x4xf32>
    %c3 = kiln.reshape %c2 : tensor<2x5x3x4xf32> -> tensor<2x5x12xf32>
    %cp = kiln.pad %c3, %zero, low = [0, 0, 24], high = [0, 0, 0] : tensor<2x5x12xf32>, tensor<f32> -> tensor<2x5x36xf32>
    %s1 = kiln.add %cp, %bp : tensor<2x5x36xf32>
    %s2 = kiln.add %s1, %ap : tensor<2x5x36xf32>
    %bias = kiln.reduce sum %s2, dims = [0, 1] : tensor<2x5x36xf32> -> tensor<36xf32>
    %flat = kiln.reshape %s2 : tensor<2x5x36xf32> -> tensor<10x36xf32>
    %out = kiln.convert %flat : tensor<10x36xf32> -> tensor<10x36xbf16>
    kiln.yield %bias, %out : tensor<36xf32>, tensor<10x36xbf16>
  }
  return %r#0, %r#1 : tensor<36xf32>, tensor<10x36xbf16>
}
)mlir";
  expectPiecesRemoveEveryBranch(source,
                                randomInputs({{DType::bf16, {2, 3, 5, 4}},
                                              {DType::bf16, {2, 3, 5, 4}},
                                              {DType::bf16, {2, 3, 5, 4}}},
                                             41));
}

TEST(CpuFusion, ColumnPiecesFollowConcatenationsAndSlices) {
  // A concatenation along the columns of a slice that starts inside its
  // operand and of a padded input: the pieces end at the concatenation's
  // and the pad's edges, offset by the slice's start, and a pad whose
  // operand a piece never reaches is its padding value there.
  std::string source = R"mlir(
func.func @main(%x: tensor<6x9xf32>, %y: tensor<6x4xf32>) -> (tensor<13xf32>, tensor<6x13xf32>) {
  %r:2 = kiln.fusion multi_output(%x, %y) : (tensor<6x9xf32>, tensor<6x4xf32>) -> (tensor<13xf32>, tensor<6x13xf32>) {
  ^bb0(%a: tensor<6x9xf32>, %b: tensor<6x4xf32>):
    %one = kiln.constant dense<1.5> : tensor<f32>
    %s = kiln.slice %a, start = [0, 2], limit = [6, 9], strides = [1, 1] : tensor<6x9xf32> -> tensor<6x7xf32>
    %p = kiln.pad %b, %one, low = [0, 1], high = [0, 1] : tensor<6x4xf32>, tensor<f32> -> tensor<6x6xf32>
    %c = kiln.concatenate %s, %p, dim = 1 : (tensor<6x7xf32>, tensor<6x6xf32>) -> tensor<6x13xf32>
    %e = kiln.exp %c : tensor<6x13xf32>
    %sum = kiln.reduce sum %e, dims = [0] : tensor<6x13xf32> -> tensor<13xf32>
    kiln.yield %sum, %e : tensor<13xf32>, tensor<6x13xf32>
  }
  return %r#0, %r#1 : tensor<13xf32>, tensor<6x13xf32>
}
)mlir";
  expectPiecesRemoveEveryBranch(
      source, randomInputs({{DType::f32, {6, 9}}, {DType::f32, {6, 4}}}, 42));
}

TEST(CpuFusion, ColumnsMergedByAReshapeKeepTheirPadsBranches) {
  // The padded dim and another merge into the column dim: no column
  // is one index of the pad, so there are no pieces and the pad keeps its
  // test (and its values).
  std::string source = R"mlir(
func.func @main(%x: tensor<4x3x2xf32>) -> (tensor<12xf32>, tensor<4x12xf32>) {
  %r:2 = kiln.fusion multi_output(%x) : (tensor<4x3x2xf32>) -> (tensor<12xf32>, tensor<4x12xf32>) {
  ^bb0(%a: tensor<4x3x2xf32>):
    %zero = kiln.constant dense<0.0> : tensor<f32>
    %p = kiln.pad %a, %zero, low = [0, 0, 1], high = [0, 0, 1] : tensor<4x3x2xf32>, tensor<f32> -> tensor<4x3x4xf32>
    %m = kiln.reshape %p : tensor<4x3x4xf32> -> tensor<4x12xf32>
    %sum = kiln.reduce sum %m, dims = [0] : tensor<4x12xf32> -> tensor<12xf32>
    kiln.yield %sum, %m : tensor<12xf32>, tensor<4x12xf32>
  }
  return %r#0, %r#1 : tensor<12xf32>, tensor<4x12xf32>
}
)mlir";
  EXPECT_GT(branchesInKernel(source, /*pieces=*/true), 0);
  expectOneKernelWithAndWithoutPieces(
      source, randomInputs({{DType::f32, {4, 3, 2}}}, 43));
}

} // namespace
} // namespace kiln::testing
