// Helpers shared by the fusion passes: sizes of tensor types, the cycle
// check every fusion decision needs, outlining a group of top-level ops
// into one kiln.fusion (inlining fusions already in the group), and the
// row shape GPU reduction kernels give a warp to.
#ifndef KILN_PASSES_FUSIONUTILS_H
#define KILN_PASSES_FUSIONUTILS_H

#include "ir/KilnDialect.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace kiln {

/// Whether every reduced dim of `shape` (unit dims aside) lies inside every
/// kept one, so each output's elements are contiguous: the rows the GPU's
/// reduction kernels give a warp (kiln-split-reductions counts their
/// threads so; the fusion emitter gives them lanes).
bool reducesInnermost(llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> dims);

/// Tensor type → its element count (1 for a non-tensor type).
int64_t numElementsOf(mlir::Type type);

/// Tensor type → its size in bytes (i1 counts one byte).
int64_t byteSizeOf(mlir::Type type);

/// Elementwise ops and the cheap index remappings that fuse like them:
/// broadcast_in_dim, reshape, transpose, iota, convert.
bool isElementwiseLike(mlir::Operation *op);

/// Whether `value` is made by an elementwise-like op (or a convert) from
/// fewer bytes than it has, or is a constant: a broadcast, a widening, an
/// iota. A loop reading it reads those fewer bytes; a GEMM reading it as
/// its accumulator would need it stored whole.
bool isMadeFromFewerBytes(mlir::Value value);

/// Whether a sum is stored whatever fuses: returned, tied by a barrier,
/// read by a GEMM, a gather or a scatter, or the accumulator of the next
/// term of a sum of products whose sum is stored. Only then does adding it
/// in a GEMM's epilogue save bytes; a sum a loop reads (a loop would sum
/// the chain from the products' 16-bit bytes) costs more as a stored f32.
bool isSumStoredAnyway(mlir::Value sum);

/// Results of at most this many elements (an rng state, a scalar) are
/// computed and written once by a fusion kernel, whatever it walks (the
/// fusion planner's "once" results); kiln-fuse-siblings does not count them
/// against what a reduction kernel walks.
inline constexpr int64_t kOnceResultElements = 64;

/// The product `value` is: a dot_general's result, or one placed in a
/// larger tensor of zeros by a kiln.pad of its matrices' rows alone (the
/// product [batch..., M, N] with one M and one N dim, padded in dim M
/// only, with a zero padding value), which a GEMM adds into blocks of the
/// padded sum's rows (runtime::GemmThunk's cView: attention's key and
/// value gradients summed over chunks of queries). Null otherwise.
DotGeneralOp productPaddedAlongRows(mlir::Value value);

/// The first dim `slice` cuts (its rank when it cuts none), where the
/// slice takes runs of its operand: unit strides and every later dim whole,
/// so that each index of the dims before the cut selects one contiguous
/// run. nullopt otherwise. What isOneRunOfItsSource and the backend's
/// gemmViewOfSlice both read.
std::optional<int64_t> contiguousSliceCut(SliceOp slice);

/// Whether `slice` takes one contiguous run of its operand (unit strides;
/// after the first dim it cuts, every dim whole; before it, only dims of
/// size 1): a GEMM library reads such a slice in place, reshaped or not
/// (compiler/cpu/GemmShape.h, gemmViewOfSlice).
bool isOneRunOfItsSource(SliceOp slice);

/// The other operand of `add` when add(term, it) is an f32 sum worth
/// adding in the GEMM that makes `term`: of term's type, stored anyway
/// (not isMadeFromFewerBytes), into a sum stored anyway
/// (isSumStoredAnyway); else null. kiln-autocast keeps such terms f32 and
/// kiln-fuse-gemm-epilogue fuses them, by this one rule.
mlir::Value gemmAccumulatorOf(AddOp add, mlir::Value term);

/// A tie: a barrier operand whose matching result nothing reads, so it only
/// orders (what reads the barrier's other results waits for it). A
/// gradient-seed barrier marks where the backward pass starts and has none.
bool isTie(mlir::OpOperand &use);

/// Ops worth duplicating into a fusion rather than keeping for other users.
bool isCheapToDuplicate(mlir::Operation *op);

/// Top-level ops of one block → true when some op outside `group` both
/// depends on the group and feeds it, so outlining the group would make a
/// cycle. The search visits at most `maxVisited` outside ops and answers
/// true (the safe answer) when it would need more.
bool wouldCreateCycle(llvm::ArrayRef<mlir::Operation *> group,
                      unsigned maxVisited = ~0u);

/// The values defined outside `group` (constants excepted, they are cloned
/// into a fusion) that ops of `group` read.
llvm::SetVector<mlir::Value>
collectFusionInputs(llvm::ArrayRef<mlir::Operation *> group);

/// The ops the body of a fusion outlined from `group` would hold (a
/// fusion's body counts whole); kMaxFusionOps (Passes.h) bounds it.
size_t fusedBodyOps(llvm::ArrayRef<mlir::Operation *> group);

/// Top-level ops → one kiln.fusion of `kind` in their place. `members` move
/// into it and their results with other users become its results; `copies`
/// are cloned in and kept for their other users (erased once unused).
/// Fusions among them are inlined. The block is re-sorted when a new result
/// is used before the fusion. The caller checks wouldCreateCycle first.
FusionOp outlineFusion(llvm::ArrayRef<mlir::Operation *> members,
                       llvm::ArrayRef<mlir::Operation *> copies,
                       FusionKind kind);

} // namespace kiln

#endif // KILN_PASSES_FUSIONUTILS_H
