// Column pieces of a column-blocked fusion (FusionKernelOptions::
// columnPieces): the columns where a pad's operand or a concatenation's
// input begins or ends, so that no block of columns straddles one. Within a
// piece each such op is known to read its operand, or its padding value, at
// every column: the emitter generates that one branch (padAt,
// concatenateAt), where a branch a point kept the block's loop scalar.
// attention's q, k and v gradients joined into the qkv product's gradient
// (three pads added) are the case that asked for it.
//
// Which ops fold is decided by index ranges, never by the trace below: a
// column index carries the piece it lies in (ranges_), an index offset
// from it the offset range, and padAt and concatenateAt fold only on
// ranges. The trace only proposes where pieces end; a wrong proposal makes
// a slower kernel, not a wrong one.
#include "compiler/cpu/FusionEmitter.h"
#include "compiler/cpu/ScalarOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <set>

namespace kiln::compiler::cpu::detail {

using namespace mlir;

namespace {

/// Per dim of a value: its index is the column plus this offset, or
/// kUnrelated.
constexpr int64_t kUnrelated = std::numeric_limits<int64_t>::min();
using ColumnOffsets = SmallVector<int64_t>;

/// `offsets` of a value of shape `from` seen as shape `to`: a dim that a
/// reshape keeps as it is (its group, reshapeGroups', is that one non-unit
/// dim on both sides) keeps its offset; the others are unrelated.
ColumnOffsets reshapeOffsets(ArrayRef<int64_t> from,
                             ArrayRef<int64_t> offsets, ArrayRef<int64_t> to) {
  ColumnOffsets out(to.size(), kUnrelated);
  std::optional<SmallVector<ReshapeGroup>> groups = reshapeGroups(from, to);
  if (!groups)
    return out;
  for (const ReshapeGroup &g : *groups) {
    SmallVector<size_t> sourceDims, targetDims;
    for (size_t k = g.fromBegin; k < g.fromEnd; ++k)
      if (from[k] != 1)
        sourceDims.push_back(k);
    for (size_t k = g.toBegin; k < g.toEnd; ++k)
      if (to[k] != 1)
        targetDims.push_back(k);
    if (sourceDims.size() == 1 && targetDims.size() == 1)
      out[targetDims[0]] = offsets[sourceDims[0]];
  }
  return out;
}

/// Walks the fusion body from the points the kernel generates values at,
/// collecting the columns where a pad's or concatenation's operand
/// switches.
class PieceTrace {
public:
  explicit PieceTrace(int64_t columns) : columns_(columns) {}

  void visit(Value v, const ColumnOffsets &offsets) {
    // (A rank that differs would be a trace that lost its way: no edges.)
    if (offsets.size() != shapeOf(v).size() ||
        llvm::all_of(offsets, [](int64_t o) { return o == kUnrelated; }))
      return;
    if (!visited_.insert({v.getAsOpaquePointer(),
                          std::vector<int64_t>(offsets.begin(), offsets.end())})
             .second)
      return;
    Operation *op = v.getDefiningOp();
    if (!op || isa<ReduceOp, ConstantOp, IotaOp, RngUniformOp>(op))
      return;
    if (isScalarizable(op)) {
      for (Value operand : op->getOperands())
        visit(operand, offsets);
      return;
    }
    auto at = [&](Value operand, auto &&offsetOfDim) {
      ColumnOffsets in(shapeOf(operand).size());
      for (size_t k = 0; k < in.size(); ++k)
        in[k] = offsetOfDim(k);
      visit(operand, in);
    };
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](ReshapeOp r) {
          visit(r.getOperand(), reshapeOffsets(shapeOf(r), offsets,
                                               shapeOf(r.getOperand())));
        })
        .Case([&](BroadcastInDimOp b) {
          ArrayRef<int64_t> dims = b.getBroadcastDimensions();
          ArrayRef<int64_t> in = shapeOf(b.getOperand());
          at(b.getOperand(), [&](size_t k) {
            return in[k] == 1 ? kUnrelated : offsets[dims[k]];
          });
        })
        .Case([&](TransposeOp t) {
          ArrayRef<int64_t> perm = t.getPermutation();
          ColumnOffsets in(perm.size());
          for (size_t k = 0; k < perm.size(); ++k)
            in[perm[k]] = offsets[k];
          visit(t.getOperand(), in);
        })
        .Case([&](SliceOp s) {
          ArrayRef<int64_t> start = s.getStartIndices(), step = s.getStrides();
          at(s.getOperand(), [&](size_t k) {
            return step[k] == 1 ? shifted(offsets[k], start[k]) : kUnrelated;
          });
        })
        .Case([&](PadOp p) {
          ArrayRef<int64_t> low = p.getEdgePaddingLow();
          ArrayRef<int64_t> in = shapeOf(p.getOperand());
          for (size_t k = 0; k < in.size(); ++k)
            if (offsets[k] != kUnrelated) {
              // The operand is read where 0 <= column + offset - low < in.
              addBreak(low[k] - offsets[k]);
              addBreak(low[k] + in[k] - offsets[k]);
            }
          at(p.getOperand(),
             [&](size_t k) { return shifted(offsets[k], -low[k]); });
        })
        .Case([&](ConcatenateOp c) {
          int64_t axis = c.getDimension();
          SmallVector<int64_t> starts = concatenationStarts(c);
          for (size_t n = 0; n < starts.size(); ++n) {
            if (offsets[axis] != kUnrelated && n > 0)
              addBreak(starts[n] - offsets[axis]);
            at(c.getInputs()[n], [&](size_t k) {
              return k == size_t(axis) ? shifted(offsets[k], -starts[n])
                                       : offsets[k];
            });
          }
        });
  }

  /// 0, the breaks, the column count.
  SmallVector<int64_t> pieces() const {
    SmallVector<int64_t> out = {0};
    out.append(breaks_.begin(), breaks_.end());
    out.push_back(columns_);
    return out;
  }

private:
  static int64_t shifted(int64_t offset, int64_t delta) {
    return offset == kUnrelated ? kUnrelated : offset + delta;
  }
  void addBreak(int64_t column) {
    if (column > 0 && column < columns_)
      breaks_.insert(column);
  }

  int64_t columns_;
  std::set<int64_t> breaks_;
  std::set<std::pair<const void *, std::vector<int64_t>>> visited_;
};

} // namespace

SmallVector<int64_t> FusionEmitter::columnPieces() const {
  int64_t columns = plan_.columns->columns;
  SmallVector<int64_t> whole = {0, columns};
  // The column is one dim's index only when one kept dim is not a unit.
  SmallVector<int64_t> live;
  for (int64_t d : plan_.kept)
    if (plan_.space[d] != 1)
      live.push_back(d);
  if (!columnPieces_ || live.size() != 1)
    return whole;
  ColumnOffsets space(plan_.space.size(), kUnrelated);
  space[live[0]] = 0;
  PieceTrace trace(columns);
  for (auto [reduce, level] : plan_.reduces) {
    Value operand = reduce.getOperand();
    trace.visit(operand,
                reshapeOffsets(plan_.space, space, shapeOf(operand)));
  }
  auto yielded = body_.getTerminator()->getOperands();
  for (size_t k = 0; k < yielded.size(); ++k)
    if (plan_.resultKind[k] == ResultKind::full)
      trace.visit(yielded[k],
                  reshapeOffsets(plan_.space, space, shapeOf(yielded[k])));
  SmallVector<int64_t> pieces = trace.pieces();
  // Each piece is a copy of the block's loops.
  return pieces.size() - 1 <= kMostColumnPieces ? pieces : whole;
}

std::optional<std::pair<int64_t, int64_t>>
FusionEmitter::rangeOf(Value index) const {
  auto it = ranges_.find(index);
  if (it == ranges_.end())
    return std::nullopt;
  return it->second;
}

Value FusionEmitter::offsetIndex(Value index, int64_t delta) {
  if (delta == 0)
    return index;
  Value out = arith::AddIOp::create(kb_.b, index, kb_.index(delta));
  if (auto range = rangeOf(index))
    ranges_[out] = {range->first + delta, range->second + delta};
  return out;
}

} // namespace kiln::compiler::cpu::detail
