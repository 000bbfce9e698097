// The GEMM a kiln.dot_general is: its operands viewed as [batch, M, K] and
// [batch, K, N] (or transposed), the dims each view takes in order, and
// the library's element types. Backend-neutral: the cpu and cuda
// lowerings both turn it into a runtime::GemmThunk.
#ifndef KILN_COMPILER_CPU_GEMMSHAPE_H
#define KILN_COMPILER_CPU_GEMMSHAPE_H

#include "ir/KilnDialect.h"
#include "runtime/Executable.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln::compiler::cpu {

struct GemmShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  runtime::GemmType input = runtime::GemmType::f32,
                    output = runtime::GemmType::f32;
  /// The operand already lies as A^T ([batch, K, M]) / B^T ([batch, N, K]).
  bool transA = false, transB = false;
  /// Otherwise the operand is transposed by these permutations first
  /// (the identity when it already lies as [batch, M, K] / [batch, K, N]).
  llvm::SmallVector<int64_t> aPerm, bPerm;
};

/// Whether a GEMM library runs `dot`: f32 into f32, or bf16 / f16 into f32
/// or the same 16-bit type (other types get a generated kernel).
bool isLibraryGemm(DotGeneralOp dot);

/// `dot`'s GEMM (row-major C = op(A) op(B), C as the result's
/// [batch..., lhs free..., rhs free...] layout).
GemmShape gemmShapeOf(DotGeneralOp dot);

/// Whether `perm` is the identity permutation.
bool isIdentityPermutation(llvm::ArrayRef<int64_t> perm);

/// Whether `dot`'s GEMM reads operand `operandNumber` (0: lhs, 1: rhs) as
/// it lies, a transpose flag at most, with no transpose kernel first.
bool readsOperandAsItLies(DotGeneralOp dot, unsigned operandNumber);

/// The view (runtime::GemmOperandView) through which a GEMM that takes
/// `slice`'s result with `batchDims` leading batch dims, as it lies, reads
/// it in place from the slice's source; none when the slice's elements are
/// not such matrices. They are when the slice has unit strides and keeps
/// every dim after its first cut whole, and the dims before that cut are
/// the batch dims (each matrix one run of the source's elements, the next
/// a source's run further on: attention's chunk of query rows) or hold one
/// element (the whole result one run: a block of a matrix's rows).
std::optional<runtime::GemmOperandView> gemmViewOfSlice(SliceOp slice,
                                                        int64_t batchDims);

/// A `kiln.fusion gemm` (kiln-fuse-gemm-epilogue): yield(add(product,
/// accumulator)), one GEMM adding the accumulator as it stores; the
/// product may be padded along its rows first (productPaddedAlongRows),
/// and C is then `cView`: each product matrix a block of the padded
/// sum's rows (offset: the rows padded before it; batch stride: the
/// padded matrix).
struct GemmEpilogue {
  DotGeneralOp dot;
  AddOp add;
  PadOp pad; // null when the product is added as it is
  runtime::GemmOperandView cView;
};

/// `fusion`'s GEMM and epilogue; none when it is not of that form with f32
/// sums and a library GEMM.
std::optional<GemmEpilogue> gemmEpilogueOf(FusionOp fusion);

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_GEMMSHAPE_H
