// kiln-split-reductions: rewrites a reduction with few outputs and many
// elements per output into two reductions, repeatedly, so that every
// reduction kernel has enough outputs to spread over a GPU's threads (see
// Passes.td). The code generators map one output (a "row") to one thread
// or one index of a CPU split; without this pass the global norm that
// gradient clipping takes is a single thread's loop over every gradient.
//
// For a reduce of operand shape S over dimensions D, with O outputs and K
// elements per output, on t threads per output (`row-lanes` when the
// reduced dims are innermost and K >= `min-laned-row`: a GPU row kernel's
// warp; else 1):
//   1. it qualifies when K / t > max-serial and O * t < parallelism (and it
//      is a sum of floats, a max or a min);
//   2. the target number of parts per output is P* = min(parallelism /
//      (O * t), K / 32): enough threads, at least 32 elements each;
//   3. candidates are (d, p) for each reduced dimension d and each divisor
//      p of S[d]; p = S[d] (keep d whole, no reshape) only when D has
//      another dimension; the candidate with p closest to P* in ratio
//      wins (ties: no reshape, then the outer dimension);
//      with contiguous-parts (a CPU), only reductions over innermost dims
//      qualify and d is their outermost reduced dimension;
//   4. stage 1 reduces the operand, reshaped so that d becomes [p, S[d]/p],
//      over every reduced dimension but the p slices; stage 2 reduces those.
#include "passes/Passes.h"

#include "passes/FusionUtils.h"
#include "passes/TensorBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <deque>
#include <optional>

namespace kiln {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Fewest elements a first-stage output reduces: below this a third of the
/// work would be writing and re-reading partial results.
constexpr int64_t kMinPartElements = 32;

struct Split {
  int64_t dim = 0;   // the reduced dimension that is split
  int64_t parts = 0; // into this many slices (= its extent: kept whole)
};

SmallVector<int64_t> divisors(int64_t n) {
  SmallVector<int64_t> small, large;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      small.push_back(i);
      if (i != n / i)
        large.push_back(n / i);
    }
  small.append(large.rbegin(), large.rend());
  return small;
}

bool qualifies(ReduceOp op) {
  Type element = TensorBuilder::elementOf(op.getOperand());
  switch (op.getKind()) {
  case ReduceKind::sum:
    return isa<FloatType>(element);
  case ReduceKind::max:
  case ReduceKind::min:
    return true;
  case ReduceKind::prod:
    return false;
  }
  return false;
}

/// The pass's options, as chooseSplit reads them.
struct SplitLimits {
  int64_t parallelism, maxSerial, rowLanes, minLanedRow;
  bool contiguousParts;
};

/// The outermost reduced dimension that is not 1, or -1.
int64_t outermostReduced(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  int64_t outer = -1;
  for (int64_t d : dims)
    if (shape[d] != 1 && (outer < 0 || d < outer))
      outer = d;
  return outer;
}

std::optional<Split> chooseSplit(ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> dims,
                                 const SplitLimits &limits) {
  int64_t total = 1, perOutput = 1;
  for (int64_t extent : shape)
    total *= extent;
  for (int64_t d : dims)
    perOutput *= shape[d];
  if (perOutput == 0)
    return std::nullopt;
  int64_t lanes = limits.rowLanes > 1 && perOutput >= limits.minLanedRow &&
                          reducesInnermost(shape, dims)
                      ? limits.rowLanes
                      : 1;
  int64_t threads = total / perOutput * lanes;
  if (perOutput / lanes <= limits.maxSerial || threads >= limits.parallelism)
    return std::nullopt;
  double target = std::max<double>(
      2.0, std::min<double>(double(limits.parallelism) / double(threads),
                            double(perOutput) / double(kMinPartElements)));
  // Contiguous parts: a part is a block of the outermost reduced
  // dimension's slices, each slice one run when the reduced dims are
  // innermost.
  int64_t onlyDim = -1;
  if (limits.contiguousParts) {
    if (!reducesInnermost(shape, dims))
      return std::nullopt;
    onlyDim = outermostReduced(shape, dims);
  }
  std::optional<Split> best;
  double bestScore = 0;
  for (int64_t d : dims) {
    if (onlyDim >= 0 && d != onlyDim)
      continue;
    for (int64_t p : divisors(shape[d])) {
      bool whole = p == shape[d];
      if (p < 2 || (whole && dims.size() < 2) || perOutput / p < 2)
        continue;
      // Ratio distance; a whole dimension (no reshape) wins a near tie.
      double score = std::abs(std::log(double(p) / target)) - (whole ? 1e-3 : 0);
      if (!best || score < bestScore) {
        best = Split{d, p};
        bestScore = score;
      }
    }
  }
  return best;
}

/// Replaces `op` by its two stages; returns them.
std::array<ReduceOp, 2> splitReduce(ReduceOp op, Split split) {
  OpBuilder builder(op);
  TensorBuilder tb(builder, op.getLoc());
  Value x = op.getOperand();
  Type element = TensorBuilder::elementOf(x);
  bool widen = op.getKind() == ReduceKind::sum &&
               element.getIntOrFloatBitWidth() < 64;
  if (widen)
    x = tb.convert(x, builder.getF64Type());
  SmallVector<int64_t> shape(TensorBuilder::shapeOf(x));
  ArrayRef<int64_t> dims = op.getDimensions();
  int64_t d = split.dim;
  // The parts' position among stage 1's results: kept dimensions before d.
  int64_t position = 0;
  for (int64_t i = 0; i < d; ++i)
    position += !llvm::is_contained(dims, i);
  SmallVector<int64_t> firstDims;
  if (split.parts == shape[d]) {
    for (int64_t e : dims)
      if (e != d)
        firstDims.push_back(e);
  } else {
    SmallVector<int64_t> reshaped(shape.begin(), shape.begin() + d);
    reshaped.push_back(split.parts);
    reshaped.push_back(shape[d] / split.parts);
    reshaped.append(shape.begin() + d + 1, shape.end());
    x = tb.reshape(x, reshaped);
    for (int64_t e : dims)
      firstDims.push_back(e < d ? e : e + 1);
  }
  Value partial = tb.reduce(op.getKind(), x, firstDims);
  Value result = tb.reduce(op.getKind(), partial, {position});
  std::array<ReduceOp, 2> stages = {partial.getDefiningOp<ReduceOp>(),
                                    result.getDefiningOp<ReduceOp>()};
  if (widen)
    result = tb.convert(result, element);
  op.getResult().replaceAllUsesWith(result);
  op->erase();
  return stages;
}

struct SplitReductionsPass
    : public impl::SplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    std::deque<ReduceOp> work;
    // Top-level reduces only: one inside a fusion is already a kernel.
    getOperation().walk([&](ReduceOp reduce) {
      if (reduce->getParentOp() == getOperation().getOperation())
        work.push_back(reduce);
    });
    while (!work.empty()) {
      ReduceOp op = work.front();
      work.pop_front();
      if (!qualifies(op))
        continue;
      std::optional<Split> split = chooseSplit(
          TensorBuilder::shapeOf(op.getOperand()), op.getDimensions(),
          {parallelism, maxSerial, rowLanes, minLanedRow, contiguousParts});
      if (!split)
        continue;
      for (ReduceOp stage : splitReduce(op, *split))
        work.push_back(stage);
      ++numSplit;
    }
  }
};

} // namespace
} // namespace kiln
