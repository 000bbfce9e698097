// dot_general's dimension numbers → the GEMM library's view (GemmShape.h).
#include "compiler/cpu/GemmShape.h"

#include "passes/FusionUtils.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln::compiler::cpu {

namespace {

using llvm::ArrayRef;
using llvm::SmallVector;

/// The dims of a rank-`rank` operand that are neither batch nor contracted,
/// ascending (the order the result takes them in).
SmallVector<int64_t> freeDims(int64_t rank, ArrayRef<int64_t> batch,
                              ArrayRef<int64_t> contracted) {
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracted, d))
      out.push_back(d);
  return out;
}

SmallVector<int64_t> concat(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                            ArrayRef<int64_t> c) {
  SmallVector<int64_t> out(a);
  out.append(b.begin(), b.end());
  out.append(c.begin(), c.end());
  return out;
}

int64_t product(ArrayRef<int64_t> shape, ArrayRef<int64_t> which) {
  int64_t n = 1;
  for (int64_t d : which)
    n *= shape[d];
  return n;
}

runtime::GemmType gemmTypeOf(mlir::Value v) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(v.getType()).getElementType();
  return element.isBF16()  ? runtime::GemmType::bf16
         : element.isF16() ? runtime::GemmType::f16
                           : runtime::GemmType::f32;
}

} // namespace

bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (size_t k = 0; k < perm.size(); ++k)
    if (perm[k] != static_cast<int64_t>(k))
      return false;
  return true;
}

bool isLibraryGemm(DotGeneralOp dot) {
  auto element = [](mlir::Value v) {
    return mlir::cast<mlir::ShapedType>(v.getType()).getElementType();
  };
  mlir::Type in = element(dot.getLhs()), out = element(dot.getResult());
  return (in.isF32() && out.isF32()) ||
         ((in.isBF16() || in.isF16()) && (out.isF32() || out == in));
}

GemmShape gemmShapeOf(DotGeneralOp dot) {
  ArrayRef<int64_t> ls =
      mlir::cast<mlir::ShapedType>(dot.getLhs().getType()).getShape();
  ArrayRef<int64_t> rs =
      mlir::cast<mlir::ShapedType>(dot.getRhs().getType()).getShape();
  ArrayRef<int64_t> lb = dot.getLhsBatchingDimensions();
  ArrayRef<int64_t> rb = dot.getRhsBatchingDimensions();
  ArrayRef<int64_t> lc = dot.getLhsContractingDimensions();
  ArrayRef<int64_t> rc = dot.getRhsContractingDimensions();
  SmallVector<int64_t> lf = freeDims(ls.size(), lb, lc);
  SmallVector<int64_t> rf = freeDims(rs.size(), rb, rc);
  GemmShape g;
  g.input = gemmTypeOf(dot.getLhs());
  g.output = gemmTypeOf(dot.getResult());
  g.batch = product(ls, lb);
  g.m = product(ls, lf);
  g.k = product(ls, lc);
  g.n = product(rs, rf);
  // A as [batch, M, K] or, with transA, [batch, K, M]; B as [batch, K, N]
  // or, with transB, [batch, N, K]; anything else is transposed first.
  g.aPerm = concat(lb, lf, lc);
  g.transA = !isIdentityPermutation(g.aPerm) &&
             isIdentityPermutation(concat(lb, lc, lf));
  g.bPerm = concat(rb, rc, rf);
  g.transB = !isIdentityPermutation(g.bPerm) &&
             isIdentityPermutation(concat(rb, rf, rc));
  return g;
}

bool readsOperandAsItLies(DotGeneralOp dot, unsigned operandNumber) {
  GemmShape g = gemmShapeOf(dot);
  return operandNumber == 0
             ? g.transA || isIdentityPermutation(g.aPerm)
             : g.transB || isIdentityPermutation(g.bPerm);
}

std::optional<runtime::GemmOperandView> gemmViewOfSlice(SliceOp slice,
                                                        int64_t batchDims) {
  ArrayRef<int64_t> source =
      mlir::cast<mlir::ShapedType>(slice.getOperand().getType()).getShape();
  ArrayRef<int64_t> start = slice.getStartIndices();
  int64_t rank = source.size();
  // The first cut dim; every later one is whole, so that a fixed index of
  // the dims before it selects one run of the source.
  std::optional<int64_t> firstCut = contiguousSliceCut(slice);
  if (!firstCut)
    return std::nullopt;
  const int64_t cut = *firstCut;
  if (cut == rank)
    return runtime::GemmOperandView{};
  int64_t run = 1, outer = 1;
  for (int64_t d = cut + 1; d < rank; ++d)
    run *= source[d];
  for (int64_t d = 0; d < cut; ++d)
    outer *= source[d];
  runtime::GemmOperandView view;
  view.offset = start[cut] * run;
  if (outer == 1)
    return view;
  if (cut != batchDims)
    return std::nullopt;
  view.batchStride = source[cut] * run;
  return view;
}

std::optional<GemmEpilogue> gemmEpilogueOf(FusionOp fusion) {
  mlir::Block &body = fusion.getBody().front();
  auto add = fusion->getNumResults() == 1
                 ? body.getTerminator()->getOperand(0).getDefiningOp<AddOp>()
                 : AddOp();
  DotGeneralOp dot = add ? productPaddedAlongRows(add.getLhs()) : DotGeneralOp();
  if (!dot || !dot->hasOneUse() || !isLibraryGemm(dot) ||
      !mlir::cast<mlir::ShapedType>(add.getType()).getElementType().isF32() ||
      !mlir::cast<mlir::ShapedType>(dot.getType()).getElementType().isF32())
    return std::nullopt;
  GemmEpilogue e{dot, add, add.getLhs().getDefiningOp<PadOp>(), {}};
  if (e.pad) {
    // [batch..., M, N] padded in dim M: rows `low` on of each padded matrix.
    ArrayRef<int64_t> padded =
        mlir::cast<mlir::ShapedType>(e.pad.getType()).getShape();
    int64_t rows = padded.size() - 2, n = padded.back();
    e.cView.offset = e.pad.getEdgePaddingLow()[rows] * n;
    e.cView.batchStride = padded[rows] * n;
  }
  return e;
}

} // namespace kiln::compiler::cpu
