// The plan of a kiln.fusion kernel: WHAT the kernel does (its iteration
// space, reduce passes, how each result is stored, the stash), decided by
// planFusion in FusionPlanner.cpp and carried out by FusionEmitter.cpp, the
// only two files that include this header.
#ifndef KILN_COMPILER_CPU_FUSIONPLAN_H
#define KILN_COMPILER_CPU_FUSIONPLAN_H

#include "compiler/cpu/KernelEmitter.h"

#include "ir/KilnDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <utility>

namespace kiln::compiler::cpu::detail {

/// The non-unit sizes of a shape, in order.
inline llvm::SmallVector<int64_t> nonUnit(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> out;
  for (int64_t s : shape)
    if (s != 1)
      out.push_back(s);
  return out;
}

/// How a result is stored: per point of S, per row, or once per kernel.
enum class ResultKind { full, row, once };

/// What one fusion kernel does; FusionEmitter carries it out as given.
struct FusionPlan {
  llvm::SmallVector<int64_t> space; // S
  llvm::SmallVector<int64_t> kept, reduced;
  int64_t rowCount = 1, rowLength = 1;
  /// Reduces in body order with their level (1-based pass number).
  llvm::SmallVector<std::pair<ReduceOp, unsigned>> reduces;
  unsigned levels = 0;
  /// Per result: stored once per point of S, once per row, or (a small
  /// result of neither size: an rng state) once per kernel, by the range
  /// that starts at 0.
  llvm::SmallVector<ResultKind> resultKind;
  /// Set when the reduced dims are all outer (S viewed as [rows, columns],
  /// summed over rows): the kernel is column-blocked (emitColumns).
  std::optional<ColumnSplit> columns;
  /// Column mode: a full-shaped result reads a reduce result, so full
  /// results are stored in a second pass over the block.
  bool fullReadsReduce = false;
  /// Row mode: a loop before reduce pass `stashLevel` stores that pass's
  /// operand `stashValue` (f32 or f64, computed) at each point into full
  /// result `stashResult`'s buffer; that pass, the later ones and the
  /// output pass read it back instead of recomputing it (softmax's exp).
  /// Inputs read after the stash is written (by those passes) are never
  /// written over by that result (fusionReadsInputInPlace). With
  /// `stashValue` set and `stashResult` -1, no result holds the stash (the
  /// results are 16-bit, or the stash is an earlier pass's exponential):
  /// the emitter keeps it in a row-long scratch array where its target
  /// allows one (FusionKernelOptions::mostScratchStashBytes), else
  /// recomputes it.
  mlir::Value stashValue;
  int stashResult = -1;
  unsigned stashLevel = 0;
  llvm::SmallVector<bool> readAfterStash;
  /// Row mode: each rng_uniform draw the passes read at the point itself,
  /// as they read it (`value`: the draw, or its reshape or transpose, of
  /// S's shape). Where its target allows scratch, the emitter generates a
  /// row's draws once into a scratch row that every pass reads: each pass
  /// would otherwise compute the point's Philox block again (attention's
  /// backward reads its dropout mask in two), and for each of the block's
  /// four draws. `strides`: the draw's flat index at point i of S is
  /// sum_d strides[d] * i_d (empty when the views make it no such sum);
  /// where a row's draws are then whole Philox blocks in a row, the
  /// emitter computes each block once.
  struct Draw {
    mlir::Value value;
    RngUniformOp rng;
    llvm::SmallVector<int64_t> strides;
  };
  llvm::SmallVector<Draw> draws;
  /// Per input: read only at `full` / only at `row` indices.
  llvm::SmallVector<bool> inputOnlyFull, inputOnlyRow;
  int64_t bodyOps = 0;
};

/// The plan of fusion op `op`, or failure when it cannot be one kernel
/// (then the compiler lowers it op by op). Without `allowColumns` a
/// reduction over outer dims is planned as rows too (a row a reduced
/// column), the form lanes take (emitFusionKernel).
mlir::FailureOr<FusionPlan> planFusion(mlir::Operation *op,
                                       bool allowColumns = true);

/// The shortest innermost dimension splitInnermostRows walks as a row.
inline constexpr int64_t kMinInnermostRow = 16;

/// Turns `plan`, of fusion `op` without reduces (one row per element, a
/// flat loop), into rows of its innermost dimension: the leading dims index
/// the rows (the kernel's range), a loop inside each walks the innermost
/// dim and stores every result per point. What depends on the leading
/// dims only (a row's log-sum-exp, its label, a broadcast bias column) is
/// then computed once per row, where the flat loop divided every element's
/// index and gathered them, and the inner loop reads neighbouring elements,
/// which the CPU vectorises. Returns false, leaving `plan` as it was, where
/// that does not apply: reduces or column mode, fewer than two dims, an
/// innermost dim shorter than kMinInnermostRow, an rng draw (its Philox
/// blocks go by groups of elements), a result that is not one per element.
bool splitInnermostRows(FusionPlan &plan, mlir::Operation *op);

} // namespace kiln::compiler::cpu::detail

#endif // KILN_COMPILER_CPU_FUSIONPLAN_H
