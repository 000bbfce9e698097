// kiln op → CPU kernel. Each kernel is a func.func in the kernel module with
// the ABI of KernelBuilder.h: buffers (the op's operands, then its results)
// through a pointer array, and a [begin, end) slice of its index space.
#ifndef KILN_COMPILER_CPU_KERNELEMITTER_H
#define KILN_COMPILER_CPU_KERNELEMITTER_H

#include "compiler/cpu/KernelBuilder.h"

#include "ir/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <optional>
#include <string>

namespace kiln::compiler::cpu {

/// What the runtime needs to launch a kernel.
struct KernelInfo {
  /// The size of the index space the runtime splits into [begin, end) ranges.
  int64_t rangeSize = 0;
  /// False when the kernel must see its whole range in one call.
  bool splittable = true;
  /// Rough work per index (e.g. a reduction's length), so the runtime splits
  /// only ranges whose work repays the hand-off to another thread.
  int64_t workPerIndex = 1;
  /// GPU kernels written for a warp per row: threads per row (32), each
  /// running its lane's share; rangeSize then counts threads (rows x
  /// lanes). 1 for every CPU kernel.
  unsigned lanes = 1;
  /// An elementwise or data-movement loop: no reduction, no stack array.
  /// Only such kernels join a group (KernelGroups.h), as XLA's horizontal
  /// loop fusion joins loops: a group's entry point holds every member's
  /// state at once, and a reduction's stash beside another member's made
  /// ptxas spill.
  bool loop = false;
};

/// True when emitOpKernel handles `op`: every kiln op but constant and
/// reshape, and every fusion FusionPlanner.cpp can plan as one kernel (the
/// compiler lowers any other fusion op by op).
bool hasKernel(mlir::Operation *op);

/// True when `op`'s kernel may write result `result` into the buffer of
/// operand `operand` (same type): every iteration reads that operand only at
/// the element it writes, before writing it. Holds for elementwise ops and
/// for fusion kernels that read the operand only at the output's own index;
/// a fusion that transposes, slices or broadcasts the operand does not.
bool mayWriteResultOverOperand(mlir::Operation *op, unsigned result,
                               unsigned operand);

/// op → a kernel func.func named `name` appended to `module`.
mlir::FailureOr<KernelInfo>
emitOpKernel(mlir::Operation *op, mlir::ModuleOp module, llvm::StringRef name);

namespace detail {
using BodyFn =
    std::function<void(KernelBuilder &kb, mlir::Value begin, mlir::Value end)>;
/// Creates `func.func @name(!llvm.ptr, i64, i64)` in `module` and fills it.
/// `parallel` (kParallelAttr) declares that no iteration of the kernel's
/// loops touches memory another iteration writes, even when an output is
/// an input updated in place; codegen then vectorises without alias checks.
void buildKernel(mlir::ModuleOp module, llvm::StringRef name,
                 unsigned numBuffers, const BodyFn &body, bool parallel = true);
inline constexpr llvm::StringLiteral kParallelAttr = "kiln.parallel";
/// The static shape and element type of a tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
mlir::Type elementOf(mlir::Value v);
int64_t numElementsOf(mlir::Value v);
/// Where each input of a kiln.concatenate starts along its dimension.
llvm::SmallVector<int64_t> concatenationStarts(mlir::Operation *concatenate);

// FusionPlanner.cpp plans and FusionEmitter.cpp emits a kiln.fusion as one
// kernel (docs/CPU-BACKEND.md).
/// Whether emitFusionKernel can emit `fusion`.
bool canEmitFusion(mlir::Operation *fusion);
/// See mayWriteResultOverOperand; `fusion` must satisfy canEmitFusion.
bool fusionReadsInputInPlace(mlir::Operation *fusion, unsigned result,
                             unsigned input);
/// Rows shorter than this keep a thread each: a warp would idle its lanes.
inline constexpr int64_t kMinLanedRow = 64;
/// Fusions of at most this many rows take a warp a row even where the
/// reduced dims are strided: a thread a row would leave the GPU all but
/// idle. They are split sums' last stages (768 columns of 256 partials: 3
/// blocks, each thread 256 loads one after another, 74 such kernels in the
/// GPT-2 step), whose few rows read what the stage before just wrote, so a
/// lane's strided reads cost L2 sectors rather than time.
inline constexpr int64_t kMostStridedLanedRows = 8192;
/// How a fusion kernel is laid out for its target (the defaults: the CPU).
struct FusionKernelOptions {
  /// With `lanes` > 1 (the GPU's 32), a row-reduction fusion whose rows are
  /// contiguous (its reduced dims innermost) or few (kMostStridedLanedRows),
  /// at least kMinLanedRow long
  /// and whose accumulators are f32 or f64 is written for `lanes` threads
  /// per row: each lane takes every lanes-th point of the row, the partial
  /// results meet by warp shuffles (kiln_shfl_xor_*, kiln_lane_id,
  /// kiln_syncwarp: defined by the CUDA code generator), and lane 0 stores
  /// the row's results. Any other fusion gets one thread per row
  /// (KernelInfo::lanes says which): where the innermost dim is kept,
  /// neighbouring threads then read neighbouring elements.
  unsigned lanes = 1;
  /// Rows shorter than this keep a thread each (kMinLanedRow on a GPU).
  int64_t minLanedRow = kMinLanedRow;
  /// Row mode: results shaped like the iteration space that read no reduce
  /// result are stored by the pass that accumulates, so the inputs are read
  /// once. For a GPU, where a strided row does not stay in cache until a
  /// second pass; the CPU's second pass re-reads a contiguous row from its
  /// cache and vectorises better without the accumulator.
  bool storeWhileReducing = false;
  /// Consecutive elements one index (a GPU thread) computes in a fusion
  /// without reduces, when the element count is a multiple: 4 on the GPU,
  /// so that a thread's four f32 reads and writes can each become one
  /// 16-byte access and one Philox block serves the four uniforms an
  /// rng_uniform draws for them (one element per index computes the whole
  /// block for each of its elements); 8 (two blocks) makes 16-bit reads
  /// 16-byte accesses too, falling back to 4 where 8 does not divide. The
  /// same count bounds a warp lane's step over a row. 1 on the cpu, whose
  /// loops vectorise.
  unsigned elementsPerIndex = 1;
  /// Points of a row one thread (lanes 1) reads per loop iteration before
  /// it stores any: a GPU thread walking a column's rows then has that
  /// many loads in flight, not one (the row's length permitting: the
  /// largest power of two up to this that divides it). The points come in
  /// the nest's order. 1: a loop nest per point, which the CPU vectorises.
  unsigned rowUnroll = 1;
  /// With lanes: a row of at most kMostHeldPoints points a lane is held,
  /// each lane's values generated once and kept (in registers) for every
  /// reduce pass and the stores, instead of each pass loading the inputs
  /// and computing the body (a dropout's Philox, an exp) again; the full
  /// results are stored after the last pass. What torch.compile's
  /// persistent reductions and hand-written layer norms do on a GPU.
  bool holdRows = false;
  /// A fusion without reduces as rows of its innermost dimension
  /// (splitInnermostRows), for a thread that walks a row with vector
  /// instructions: the CPU's. A GPU gives each element a thread instead.
  bool innermostRows = false;
  /// Row mode, one lane: a stash no result can hold (FusionPlan::stashResult
  /// -1: softmax's f32 exponentials beside its bf16 results) goes to a
  /// stack array a row long when that takes at most this many bytes, and
  /// is recomputed otherwise (0: always, as on a GPU, where a thread's
  /// array would live in local memory). A CPU's row stays in its L1 or L2
  /// cache between the passes.
  int64_t mostScratchStashBytes = 0;
  /// Column mode: blocks of columns never straddle a column where a pad's
  /// operand or a concatenation's input begins or ends (FusionPieces.cpp),
  /// and within a piece those ops generate only the branch they take there,
  /// so the block's loops have no branch a point and vectorise. On for the
  /// cpu; a GPU thread takes a column, whose branch a warp takes together.
  bool columnPieces = false;
};
/// The most pieces columnPieces cuts a fusion's columns into: each is a
/// copy of the block's loops.
inline constexpr int64_t kMostColumnPieces = 8;
/// The most points of a row one lane holds (FusionKernelOptions::holdRows):
/// rows of up to 1024 at 32 lanes (GPT-2's 768, attention's keys).
inline constexpr int64_t kMostHeldPoints = 32;
mlir::FailureOr<KernelInfo>
emitFusionKernel(mlir::Operation *fusion, mlir::ModuleOp module,
                 llvm::StringRef name, FusionKernelOptions options = {});

// ReductionKernels.cpp
/// The accumulator of a reduce of `kind` over elements of storage type
/// `elem`: f64 (floats) or i64 (ints) for sum and prod, the compute type for
/// max and min (exact in any type).
mlir::Type accumulatorType(mlir::OpBuilder &b, ReduceKind kind,
                           mlir::Type elem);
/// The reduction's identity (docs/IR.md 2.5) in `accType`.
mlir::Value reductionInit(KernelBuilder &kb, ReduceKind kind,
                          mlir::Type accType);
/// acc ⊕ x, with x (a compute-type scalar) widened to acc's type. Float sums
/// and products carry the `reassoc` fast-math flag so LLVM may reorder the
/// accumulation into vector lanes: the spec fixes the accumulator's
/// precision (f64) and the single rounding, not the summation order.
mlir::Value accumulate(KernelBuilder &kb, ReduceKind kind, mlir::Value acc,
                       mlir::Value x);
/// A finished accumulator → the compute type of `elem`, rounded once.
mlir::Value finishReduction(KernelBuilder &kb, mlir::Value acc,
                            mlir::Type elem);
/// A reduction whose reduced dims all come before its kept dims (unit dims
/// aside): the operand viewed as [rows, columns], reduced over the rows
/// (bias and layer-norm parameter gradients: sums over B*T of [B*T, C]).
struct ColumnSplit {
  int64_t rows = 1, columns = 1;
};
/// The split when `reducedDims` of `shape` are outer and both sides hold a
/// non-unit dim; such reductions are emitted column-blocked.
std::optional<ColumnSplit> outerReduction(llvm::ArrayRef<int64_t> shape,
                                          llvm::ArrayRef<int64_t> reducedDims);
/// Columns per block of a column-blocked reduction: one stack accumulator
/// per column of the block (16 KB of f64), rows streamed through it. Longer
/// row runs stream better (measured on [2048, 3072]: 256 → 0.7, 512 → 0.75,
/// 1024 → 0.9, 2048 → 1.1 × the triad); fusions with several reduces use
/// proportionally narrower blocks so their accumulators stay near 16 KB.
inline constexpr int64_t kColumnChunk = 2048;
mlir::FailureOr<KernelInfo>
emitReduce(mlir::Operation *op, mlir::ModuleOp module, llvm::StringRef name);
mlir::FailureOr<KernelInfo> emitDotGeneral(mlir::Operation *op,
                                           mlir::ModuleOp module,
                                           llvm::StringRef name);
mlir::FailureOr<KernelInfo>
emitGather(mlir::Operation *op, mlir::ModuleOp module, llvm::StringRef name);
mlir::FailureOr<KernelInfo> emitScatterAdd(mlir::Operation *op,
                                           mlir::ModuleOp module,
                                           llvm::StringRef name);
/// A float or integer kiln.scatter_add as one index per update: each adds
/// its update to the result with an atomic read-modify-write, so a result
/// element hit twice gets both (in either order: float sums may differ in
/// their last bits from run to run, as XLA's GPU scatter's do). The result
/// must hold the operand before the kernel runs (the caller copies it, or
/// gives the result the operand's buffer: the kernel never reads the
/// operand). Fails for 16-bit floats and i1 (hasAtomicScatterAdd).
mlir::FailureOr<KernelInfo> emitAtomicScatterAdd(mlir::Operation *op,
                                                 mlir::ModuleOp module,
                                                 llvm::StringRef name);
/// Whether emitAtomicScatterAdd handles `scatter`'s element type.
bool hasAtomicScatterAdd(ScatterAddOp scatter);

/// Element `i` (i64, row-major) of rng_uniform's result of element type
/// `elem` under state (key, counter), in elem's compute type (docs/IR.md §3).
mlir::Value philoxUniform(KernelBuilder &kb, mlir::Value key,
                          mlir::Value counter, mlir::Value i, mlir::Type elem);
/// The 32-bit lanes of one Philox-4x32-10 counter block: the draws of 4
/// consecutive elements.
constexpr int64_t kPhiloxLanes = 4;
/// The four 32-bit lanes of Philox-4x32-10 for counter block `group` (i64)
/// under state (key, counter): the bits of elements 4*group .. 4*group+3.
llvm::SmallVector<mlir::Value> philoxGroup(KernelBuilder &kb, mlir::Value key,
                                           mlir::Value counter,
                                           mlir::Value group);
/// The uniform value in elem's compute type that lane `lane` (i64, 0-3) of
/// a Philox group gives.
mlir::Value uniformFromLanes(KernelBuilder &kb, llvm::ArrayRef<mlir::Value> lanes,
                             mlir::Value lane, mlir::Type elem);
/// Element `i` (0 or 1) of rng_uniform's new state for `n` result elements.
mlir::Value rngNewState(KernelBuilder &kb, mlir::Value key, mlir::Value counter,
                        mlir::Value i, int64_t n);
mlir::FailureOr<KernelInfo> emitRngUniform(mlir::Operation *op,
                                           mlir::ModuleOp module,
                                           llvm::StringRef name);
} // namespace detail

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_KERNELEMITTER_H
