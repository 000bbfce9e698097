// The evaluator's kernels: one function per kiln op (or family of ops) on
// host tensors, free of MLIR so that each reads as the loop nest it is.
// Evaluator.cpp maps ops and their attributes onto these calls; the kernels
// re-check the shapes they index with, so a malformed call fails instead of
// reading out of bounds. Semantics: docs/IR.md.
#ifndef KILN_IR_REFERENCE_KERNELS_H
#define KILN_IR_REFERENCE_KERNELS_H

#include "support/HostTensor.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <utility>

namespace kiln::reference {

enum class UnaryKind {
  Neg, Abs, Sign, Exp, Log, Log1p, Tanh, Sqrt, Rsqrt, Logistic, Erf, Floor, Not
};
enum class BinaryKind { Add, Sub, Mul, Div, Max, Min, Pow, And, Or };
enum class CompareKind { EQ, NE, LT, LE, GT, GE };
enum class ReductionKind { Sum, Max, Min, Prod };

/// Two's-complement wrapping int64 arithmetic (unsigned arithmetic is
/// defined to wrap; signed overflow is not). Narrower ints wrap the same way
/// once HostTensor::setInt keeps their low bits.
inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

//===--- ElementwiseOps.cpp ----------------------------------------------===//

/// Float max/min with the spec's rules: NaN wins, max(-0, +0) = +0 and
/// min(-0, +0) = -0. Shared by kiln.max/min, kiln.clamp and kiln.reduce.
double floatMax(double a, double b);
double floatMin(double a, double b);

/// x → op(x), same type.
absl::StatusOr<HostTensor> evalUnary(UnaryKind kind, const HostTensor &x);
/// (a, b) of one type → op(a, b) of that type.
absl::StatusOr<HostTensor> evalBinary(BinaryKind kind, const HostTensor &a,
                                      const HostTensor &b);
/// (a, b) of one type → i1 of their shape.
absl::StatusOr<HostTensor> evalCompare(CompareKind kind, const HostTensor &a,
                                       const HostTensor &b);
/// (i1 pred, onTrue, onFalse) → pred ? onTrue : onFalse, bit for bit.
absl::StatusOr<HostTensor> evalSelect(const HostTensor &pred,
                                      const HostTensor &onTrue,
                                      const HostTensor &onFalse);
/// (lo, x, hi) of one type → min(max(x, lo), hi).
absl::StatusOr<HostTensor> evalClamp(const HostTensor &lo, const HostTensor &x,
                                     const HostTensor &hi);
/// x → x converted to `to`.
absl::StatusOr<HostTensor> evalConvert(const HostTensor &x, DType to);

//===--- ShapeOps.cpp ----------------------------------------------------===//

/// x → x broadcast into `shape`, operand dim i feeding result dim dims[i].
absl::StatusOr<HostTensor> evalBroadcastInDim(const HostTensor &x,
                                              llvm::ArrayRef<int64_t> dims,
                                              llvm::ArrayRef<int64_t> shape);
/// x → the same row-major elements under `shape`.
absl::StatusOr<HostTensor> evalReshape(const HostTensor &x,
                                       llvm::ArrayRef<int64_t> shape);
/// x → x with result dim k taken from operand dim perm[k].
absl::StatusOr<HostTensor> evalTranspose(const HostTensor &x,
                                         llvm::ArrayRef<int64_t> perm);
/// x → x[start:limit:strides].
absl::StatusOr<HostTensor> evalSlice(const HostTensor &x,
                                     llvm::ArrayRef<int64_t> start,
                                     llvm::ArrayRef<int64_t> limit,
                                     llvm::ArrayRef<int64_t> strides);
/// inputs → their concatenation along `dim`.
absl::StatusOr<HostTensor>
evalConcatenate(llvm::ArrayRef<const HostTensor *> inputs, int64_t dim);
/// (x, scalar value) → x with low/high edge padding filled with value.
absl::StatusOr<HostTensor> evalPad(const HostTensor &x,
                                   const HostTensor &value,
                                   llvm::ArrayRef<int64_t> low,
                                   llvm::ArrayRef<int64_t> high);
/// (dtype, shape, dim) → each element's index along dim.
absl::StatusOr<HostTensor> evalIota(DType dtype, llvm::ArrayRef<int64_t> shape,
                                    int64_t dim);

//===--- ReductionOps.cpp ------------------------------------------------===//

/// x → x reduced over `dims`, which the result drops.
absl::StatusOr<HostTensor> evalReduce(ReductionKind kind, const HostTensor &x,
                                      llvm::ArrayRef<int64_t> dims);
/// (lhs, rhs) → their contraction: batch dims, lhs free dims, rhs free dims,
/// summed in double and rounded once to `resultType` (the operands' type, or
/// f32 for 16-bit float operands).
absl::StatusOr<HostTensor>
evalDotGeneral(const HostTensor &lhs, const HostTensor &rhs,
               llvm::ArrayRef<int64_t> lhsBatch,
               llvm::ArrayRef<int64_t> rhsBatch,
               llvm::ArrayRef<int64_t> lhsContract,
               llvm::ArrayRef<int64_t> rhsContract, DType resultType);
/// (x, indices) → x's slices along axis at the clamped indices.
absl::StatusOr<HostTensor> evalGather(const HostTensor &x,
                                      const HostTensor &indices, int64_t axis);
/// (x, indices, updates) → x plus each update at its in-range index.
absl::StatusOr<HostTensor> evalScatterAdd(const HostTensor &x,
                                          const HostTensor &indices,
                                          const HostTensor &updates,
                                          int64_t axis);

//===--- Philox.cpp ------------------------------------------------------===//

/// (state [key, counter], float dtype, shape) → (uniform values, new state).
absl::StatusOr<std::pair<HostTensor, HostTensor>>
evalRngUniform(const HostTensor &state, DType dtype,
               llvm::ArrayRef<int64_t> shape);

//===--- AttentionOps.cpp ------------------------------------------------===//

/// The attributes of kiln.fused_attention and its gradient.
struct AttentionConfig {
  double scale = 1;
  bool causal = false;
  double dropout = 0;
  /// Causal only: query i sees keys (i - window, i]; 0: every key up to i.
  int64_t window = 0;
  /// Scores capped at softcap · tanh(s / softcap) before the masks; 0: none.
  double softcap = 0;
  /// [key, counter]; required when dropout > 0.
  const HostTensor *rngState = nullptr;
};

/// (query [B,H,T,D], key, value [B,Hkv,S,D]) → the attention result
/// [B,H,T,D] and each row's log-sum-exp [B,H,T] (f32).
absl::StatusOr<std::array<HostTensor, 2>>
evalFusedAttention(const HostTensor &q, const HostTensor &k,
                   const HostTensor &v, const AttentionConfig &config);
/// (query, key, value, the forward's result and row statistics, result
/// gradient) → gradients of query, key, value. The forward's results are
/// checked for shape only: the reference recomputes everything from the
/// scores, the definition a kernel that reads them is held to.
absl::StatusOr<std::array<HostTensor, 3>>
evalFusedAttentionGrad(const HostTensor &q, const HostTensor &k,
                       const HostTensor &v, const HostTensor &result,
                       const HostTensor &rowStats, const HostTensor &resultGrad,
                       const AttentionConfig &config);

//===--- LossOps.cpp -----------------------------------------------------===//

/// (hidden [N, C], weight [V, C], labels [N]) → per-row cross-entropy of
/// hidden · weightᵀ [N] (0 where the label is ignoreIndex); softcap > 0
/// caps the logits at softcap · tanh(z / softcap).
absl::StatusOr<HostTensor> evalFusedLinearCrossEntropy(const HostTensor &hidden,
                                                       const HostTensor &weight,
                                                       const HostTensor &labels,
                                                       int64_t ignoreIndex,
                                                       double softcap = 0);
/// (hidden, weight, labels, loss gradient [N]) → gradients of hidden and
/// weight.
absl::StatusOr<std::array<HostTensor, 2>> evalFusedLinearCrossEntropyGrad(
    const HostTensor &hidden, const HostTensor &weight,
    const HostTensor &labels, const HostTensor &lossGrad, int64_t ignoreIndex,
    double softcap = 0);

} // namespace kiln::reference

#endif // KILN_IR_REFERENCE_KERNELS_H
