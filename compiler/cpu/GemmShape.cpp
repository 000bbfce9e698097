// dot_general's dimension numbers → the GEMM library's view (GemmShape.h).
#include "compiler/cpu/GemmShape.h"

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

} // namespace kiln::compiler::cpu
