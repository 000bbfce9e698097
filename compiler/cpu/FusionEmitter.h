// The fusion kernel emitter's class (private to compiler/cpu): the
// generators, indices and loops that FusionEmitter.cpp (rows, the kernel's
// entry) and FusionColumns.cpp (column reductions) share. See
// FusionEmitter.cpp for what a fusion kernel does.
#ifndef KILN_COMPILER_CPU_FUSIONEMITTER_H
#define KILN_COMPILER_CPU_FUSIONEMITTER_H

#include "compiler/cpu/FusionPlan.h"
#include "compiler/cpu/KernelEmitter.h"

#include <deque>
#include <functional>
#include <map>
#include <optional>

namespace kiln::compiler::cpu::detail {

using mlir::ArrayRef;
using mlir::Block;
using mlir::DenseMap;
using mlir::Operation;
using mlir::SmallVector;
using mlir::Value;
using mlir::ValueRange;

/// An element position in a value of `shape`: its flat index, its
/// per-dimension indices, or both; the missing form is built on first use,
/// so elementwise chains over one shape never split the flat index.
struct Index {
  SmallVector<int64_t> shape;
  Value flat;
  std::optional<SmallVector<Value>> multi;
};

/// Dims of `from` and of `to` that a reshape maps onto each other:
/// [fromBegin, fromEnd) of `from` and [toBegin, toEnd) of `to`, runs of
/// consecutive dims of equal product (unit dims join the run being built).
struct ReshapeGroup {
  size_t fromBegin, fromEnd, toBegin, toEnd;
};
/// The groups of a reshape from `from` to `to`, in order; none when the
/// sizes do not group so (then only the flat index relates them).
std::optional<SmallVector<ReshapeGroup>> reshapeGroups(ArrayRef<int64_t> from,
                                                       ArrayRef<int64_t> to);

/// Elements an index (a GPU thread, or a lane's step over a row) takes at a
/// time: the most whole Philox blocks, 8 or 4 elements, that are at most
/// `most` and divide `count`; else 1.
inline int64_t wholeBlocksDividing(int64_t count, unsigned most) {
  for (int64_t elements : {2 * kPhiloxLanes, kPhiloxLanes})
    if (elements <= int64_t(most) && count % elements == 0)
      return elements;
  return 1;
}

class FusionEmitter {
public:
  /// `rowsPerIndex`: the rows each index computes, 1, 4 or 8
  /// (emitFusionKernel decides).
  FusionEmitter(KernelBuilder &kb, FusionOp fusion, const FusionPlan &plan,
                FusionKernelOptions options, int64_t rowsPerIndex)
      : kb_(kb), fusion_(fusion), plan_(plan), body_(fusion.getBody().front()),
        numInputs_(body_.getNumArguments()), lanes_(options.lanes),
        storeWhileReducing_(options.storeWhileReducing),
        elementsPerIndex_(options.elementsPerIndex),
        rowUnroll_(options.rowUnroll), holdRows_(options.holdRows),
        mostScratchStashBytes_(options.mostScratchStashBytes),
        columnPieces_(options.columnPieces), rowsPerIndex_(rowsPerIndex) {}

  /// The whole kernel body over rows (or column blocks) [begin, end).
  void emit(Value begin, Value end);

private:
  void emitRows(Value begin, Value end);
  /// Row r's passes and stores (emitRows' loop body).
  /// `givenKept`: r's kept indices when the caller has them (else split
  /// from r as needed).
  void emitRow(Value r, ArrayRef<Value> givenKept = {});
  /// Stores the draws of `draw` (FusionPlan::draws) at each point of the
  /// row with kept indices `keptIdx` into scratch row `row`, in the
  /// row's point order.
  void fillDraws(const FusionPlan::Draw &draw, Value row,
                 ArrayRef<Value> keptIdx);
  /// Loops over a row's reduced points, calling body(ivs, carried): all of
  /// them (one lane: the nest the CPU vectorises), or this lane's share,
  /// flat points lane, lane + lanes, ... (neighbouring lanes read
  /// neighbouring elements).
  SmallVector<Value> overRow(
      ArrayRef<int64_t> reducedShape, ValueRange inits,
      const std::function<SmallVector<Value>(ArrayRef<Value>, ValueRange)>
          &body);
  /// overRow for one lane with FusionKernelOptions::rowUnroll: `unroll`
  /// consecutive points an iteration, their stores after all their loads.
  SmallVector<Value> overRowUnrolled(
      ArrayRef<int64_t> reducedShape, int64_t length, int64_t unroll,
      ValueRange inits,
      const std::function<SmallVector<Value>(ArrayRef<Value>, ValueRange)>
          &body);
  /// Neighbouring points a lane takes at a time over a row (overRow,
  /// heldPoints): with lanes, elements an index and one reduced dim, 8
  /// when elementsPerIndex_ allows and every lane gets whole steps of 8
  /// (16-byte loads of 16-bit values), else 4 when the row's length is a
  /// multiple (one Philox block, 16-byte loads of f32); else 1.
  int64_t lanePointsPerStep(ArrayRef<int64_t> reducedShape) const;
  /// With FusionKernelOptions::holdRows, lanes and a row short enough
  /// (whole groups of the lane's points, at most kMostHeldPoints of them):
  /// this lane's points of the row in overRow's order, at the row's scope,
  /// in the groups overRow's iterations take (4 neighbours, or 1); else
  /// none.
  std::optional<SmallVector<SmallVector<Index *>>>
  heldPoints(ArrayRef<Value> keptIdx);
  /// Makes the stores groupStores_ collected, result by result, and ends
  /// the group.
  void storeGroup();
  /// A lane's partial `acc` of a `kind` reduction → the row's total, in
  /// every lane (a butterfly over the warp's shuffles).
  Value acrossLanes(ReduceKind kind, Value acc);
  /// Runs `fn` in lane 0 only (every lane when there is one).
  void inFirstLane(const std::function<void()> &fn);
  void emitColumns(Value begin, Value end);
  /// emitColumns' blocks of `chunk` columns over [begin, end), accumulating
  /// `reduces` in the stack arrays `accs` (of `accTypes`).
  void emitColumnBlocks(Value begin, Value end, int64_t chunk,
                        ArrayRef<Value> accs, ArrayRef<mlir::Type> accTypes,
                        ArrayRef<ReduceOp> reduces);
  /// Column mode with FusionKernelOptions::columnPieces: the columns where
  /// a pad's operand or a concatenation's input begins or ends, 0 and the
  /// column count included (FusionPieces.cpp); {0, columns} without.
  SmallVector<int64_t> columnPieces() const;
  /// [lo, hi) that index `index` lies in, where known (ranges_).
  std::optional<std::pair<int64_t, int64_t>> rangeOf(Value index) const;
  /// index + delta, with its range where index has one.
  Value offsetIndex(Value index, int64_t delta);
  /// Results of ResultKind::once, stored by the range starting at 0.
  void emitOnceResults(Value begin);
  /// Each rng_uniform's (key, counter), generated once at kernel scope.
  void prepareRng();
  /// The kept indices of row (or column) `r`.
  SmallVector<Value> keptIndices(Value r, ArrayRef<int64_t> rowShape);
  Index *index(ArrayRef<int64_t> shape, Value flat,
               std::optional<SmallVector<Value>> multi = std::nullopt) {
    indices_.push_back(Index{SmallVector<int64_t>(shape), flat, multi});
    return &indices_.back();
  }
  Value flatOf(Index *idx) {
    if (!idx->flat) {
      idx->flat = kb_.linearize(*idx->multi, rowMajorStrides(idx->shape));
      filled_.push_back({idx, /*flat=*/true});
    }
    return idx->flat;
  }
  ArrayRef<Value> multiOf(Index *idx) {
    if (!idx->multi) {
      idx->multi = kb_.delinearize(idx->flat, idx->shape);
      filled_.push_back({idx, /*flat=*/false});
    }
    return *idx->multi;
  }
  /// The index in `shape` of the point with per-dim indices `multi` of a
  /// shape equal to `shape` up to unit dims (else through the flat index).
  Index *reshaped(Index *idx, ArrayRef<int64_t> shape);
  Index *reshapedUncached(Index *idx, ArrayRef<int64_t> shape);

  /// Runs `emit` in a nested region: values generated there do not
  /// dominate what follows, so they must not stay memoised.
  /// Index forms filled in there are forgotten for the same reason.
  template <typename Fn> auto scoped(Fn &&emit) {
    auto saved = memo_;
    auto savedReshapes = reshapes_;
    size_t savedFilled = filled_.size();
    auto out = emit();
    memo_ = std::move(saved);
    reshapes_ = std::move(savedReshapes);
    for (size_t k = filled_.size(); k > savedFilled; --k) {
      auto [idx, flat] = filled_[k - 1];
      if (flat)
        idx->flat = Value();
      else
        idx->multi.reset();
    }
    filled_.resize(savedFilled);
    return out;
  }

  Value generate(Value v, Index *idx);
  Value generateOp(Operation *op, Index *idx);
  Value constantAt(ConstantOp c, Index *idx);
  Value padAt(PadOp p, Index *idx);
  Value concatenateAt(ConcatenateOp c, Index *idx);
  /// The iteration point (kept indices of the row, reduced loop ivs).
  Index *point(ArrayRef<Value> keptIdx, ArrayRef<Value> reducedIvs);
  /// Stores every result of `kind` at `idx` (its flat index in the result's
  /// buffer); every value is generated before any store, so an output may
  /// overwrite an input read here.
  void storeResults(ResultKind kind, Index *idx);
  /// The sizes of iteration dims `dims` of S.
  SmallVector<int64_t> sizesOf(ArrayRef<int64_t> dims) const {
    SmallVector<int64_t> sizes;
    for (int64_t d : dims)
      sizes.push_back(plan_.space[d]);
    return sizes;
  }

  KernelBuilder &kb_;
  FusionOp fusion_;
  const FusionPlan &plan_;
  Block &body_;
  unsigned numInputs_;
  std::deque<Index> indices_;
  DenseMap<std::pair<Value, Index *>, Value> memo_;
  /// (index, shape) → the same position in that shape, so every value read
  /// at one point shares one Index (and its memoised generators).
  std::map<std::pair<Index *, std::vector<int64_t>>, Index *> reshapes_;
  SmallVector<std::pair<Index *, bool>> filled_;
  DenseMap<Value, Value> rowScalars_; // reduce result → this row's value
  DenseMap<Operation *, std::pair<Value, Value>> rngState_;
  /// Threads per row (1, or a warp's 32) and this thread's lane among them.
  unsigned lanes_;
  /// FusionKernelOptions::storeWhileReducing.
  bool storeWhileReducing_;
  Value lane_;
  /// FusionKernelOptions::elementsPerIndex (4 or 8 when set: whole Philox
  /// blocks).
  unsigned elementsPerIndex_;
  /// FusionKernelOptions::rowUnroll.
  unsigned rowUnroll_;
  /// FusionKernelOptions::holdRows.
  bool holdRows_;
  /// FusionKernelOptions::mostScratchStashBytes.
  int64_t mostScratchStashBytes_;
  /// FusionKernelOptions::columnPieces.
  bool columnPieces_;
  int64_t rowsPerIndex_;
  /// Index values known to lie in [lo, hi): a column in its piece
  /// (emitColumns), and indices offset from one (offsetIndex). padAt and
  /// concatenateAt generate only the branch such a range allows.
  DenseMap<Value, std::pair<int64_t, int64_t>> ranges_;
  /// The piece emitColumns is emitting, if it split the columns.
  std::optional<std::pair<int64_t, int64_t>> piece_;
  /// With several elements per index: each row value of the index's group
  /// → its position k in the group, and each rng_uniform's Philox lanes
  /// for the group (computed at the group's scope, shared by its rows).
  DenseMap<Value, int64_t> rowInGroup_;
  DenseMap<Operation *, SmallVector<Value>> groupLanes_;
  /// The group's stores (result, flat index, value), made after all its
  /// rows (or unrolled points) are generated: LLVM may not move a load
  /// above a store that could alias it, so interleaved rows would keep
  /// every access scalar (and a GPU thread one load in flight).
  struct Store {
    unsigned result;
    Value flat, value;
  };
  std::optional<SmallVector<Store>> groupStores_;
};

} // namespace kiln::compiler::cpu::detail

#endif // KILN_COMPILER_CPU_FUSIONEMITTER_H
