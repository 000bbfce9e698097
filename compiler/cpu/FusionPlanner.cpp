// Planning a kiln.fusion as ONE kernel: planFusion decides WHAT the kernel
// does (the FusionPlan of FusionPlan.h); FusionEmitter.cpp generates its code.
//
// The kernel's iteration space is the shape S of its reduces' operand (they
// share one: kiln-fuse-reductions groups reduces of one signature), split
// into the kept dims K (the "rows", the kernel's [begin, end) range) and the
// reduced dims D. A fusion without reduces is the case D = {} with S the
// results' shape: one row per output element, and the kernel a flat loop.
// For each row the kernel
//   1. runs one loop nest over S[D] per reduce level (a reduce whose operand
//      reads another reduce's result comes a level later: layer norm's
//      variance after its mean), accumulating all reduces of the level
//      together (sum x and sum x*x share one pass);
//   2. runs one loop nest over S[D] storing the results shaped like S
//      (softmax's output, layer norm's y);
//   3. stores the results shaped like a row (one element per row).
// Reduce results are per-row scalars, so they may only be read at the
// current row: planFusion traces symbolically at which index every value is
// read and refuses a fusion that reads a reduce result anywhere else (that
// would recompute the reduction per element); the compiler then lowers the
// fusion op by op. hasKernel() is exactly planFusion's verdict, and
// fusionReadsInputInPlace reads the plan too.
#include "compiler/cpu/FusionPlan.h"
#include "compiler/cpu/ScalarOps.h"
#include "passes/FusionUtils.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace kiln::compiler::cpu::detail {

using namespace mlir;

namespace {

/// Non-splat constants up to this many elements become a select chain.
constexpr int64_t kMaxDenseConstant = 16;

// ---------------------------------------------------------------------------
// Planning: the iteration space and a symbolic trace of read indices.
// ---------------------------------------------------------------------------

/// Where a value is read, relative to the iteration point x ∈ S: `full`
/// when its flat index is x's flat index in S, `row` when it is the row's
/// flat index in S[K]; `dims[k]` names the iteration dim whose index dim k
/// takes, kZero for a constant 0, kUnknown when it is something else.
constexpr int kZero = -1, kUnknown = -2;
struct SymIndex {
  bool full = false, row = false;
  std::optional<SmallVector<int>> dims;
  std::vector<int> key() const {
    std::vector<int> k = {full, row, dims.has_value()};
    if (dims)
      k.insert(k.end(), dims->begin(), dims->end());
    return k;
  }
};

/// Rough cost of one rng_uniform element in body ops (10 Philox rounds).
constexpr int64_t kRngCost = 40;

class Planner {
public:
  Planner(FusionOp fusion, bool allowColumns)
      : fusion_(fusion), allowColumns_(allowColumns) {}
  FailureOr<FusionPlan> run();

private:
  /// Fills in whichever of full / row / dims `shape` allows.
  SymIndex complete(SymIndex s, ArrayRef<int64_t> shape) const;
  LogicalResult demand(Value v, SymIndex s);
  LogicalResult demandOperands(Operation *op, SymIndex s);
  static SymIndex mapped(const SymIndex &s, size_t rank,
                         const std::function<int(size_t)> &dimOf);
  void planStash();
  void planDraws();

  FusionOp fusion_;
  bool allowColumns_;
  FusionPlan plan_;
  std::set<std::pair<void *, std::vector<int>>> seen_;
};

SymIndex Planner::complete(SymIndex s, ArrayRef<int64_t> shape) const {
  bool rowIsFull = plan_.rowLength == 1;
  // Iteration dims of size 1 only ever take index 0.
  if (s.dims)
    for (size_t k = 0; k < s.dims->size(); ++k) {
      int &d = (*s.dims)[k];
      if (shape[k] == 1 || (d >= 0 && plan_.space[d] == 1))
        d = kZero;
    }
  auto along = [&](ArrayRef<int64_t> iterDims) {
    // Per-dim indices when `shape` is S (or S[K]) up to unit dims.
    SmallVector<int> dims;
    size_t next = 0;
    SmallVector<int64_t> live;
    for (int64_t d : iterDims)
      if (plan_.space[d] != 1)
        live.push_back(d);
    for (int64_t size : shape) {
      if (size == 1) {
        dims.push_back(kZero);
        continue;
      }
      if (next == live.size() || plan_.space[live[next]] != size)
        return std::optional<SmallVector<int>>();
      dims.push_back(live[next++]);
    }
    if (next != live.size())
      return std::optional<SmallVector<int>>();
    return std::optional<SmallVector<int>>(dims);
  };
  SmallVector<int64_t> all = llvm::to_vector(
      llvm::seq<int64_t>(0, static_cast<int64_t>(plan_.space.size())));
  if (!s.dims && s.full)
    s.dims = along(all);
  if (!s.dims && s.row)
    s.dims = along(plan_.kept);
  if (s.dims) {
    if (along(all) == s.dims)
      s.full = true;
    if (along(plan_.kept) == s.dims)
      s.row = true;
  }
  if (rowIsFull && (s.full || s.row))
    s.full = s.row = true;
  return s;
}

SymIndex Planner::mapped(const SymIndex &s, size_t rank,
                         const std::function<int(size_t)> &dimOf) {
  SymIndex out;
  SmallVector<int> dims;
  for (size_t k = 0; k < rank; ++k)
    dims.push_back(s.dims ? dimOf(k) : kUnknown);
  out.dims = dims;
  return out;
}

LogicalResult Planner::demand(Value v, SymIndex s) {
  s = complete(s, shapeOf(v));
  if (!seen_.insert({v.getAsOpaquePointer(), s.key()}).second)
    return success();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    unsigned k = arg.getArgNumber();
    if (!s.full)
      plan_.inputOnlyFull[k] = false;
    if (!s.row)
      plan_.inputOnlyRow[k] = false;
    return success();
  }
  return demandOperands(v.getDefiningOp(), s);
}

LogicalResult Planner::demandOperands(Operation *op, SymIndex s) {
  if (isScalarizable(op)) {
    for (Value operand : op->getOperands())
      if (failed(demand(operand, s)))
        return failure();
    return success();
  }
  const SymIndex &in = s;
  auto dimAt = [&](size_t k) { return (*in.dims)[k]; };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp) { return success(); })
      .Case([&](IotaOp) { return success(); })
      .Case([&](RngUniformOp r) {
        // Both results are computed at any index from the two state
        // elements, read at constant indices.
        return demand(r.getState(), SymIndex{});
      })
      .Case([&](ReduceOp) {
        // A reduce result exists only for the current row.
        return success(s.row);
      })
      .Case([&](ReshapeOp r) {
        SymIndex flat;
        flat.full = s.full;
        flat.row = s.row;
        return demand(r.getOperand(), flat);
      })
      .Case([&](BroadcastInDimOp b) {
        ArrayRef<int64_t> dims = b.getBroadcastDimensions();
        return demand(b.getOperand(), mapped(s, dims.size(), [&](size_t k) {
                        return dimAt(dims[k]);
                      }));
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> perm = t.getPermutation();
        return demand(t.getOperand(), mapped(s, perm.size(), [&](size_t k) {
                        for (size_t j = 0; j < perm.size(); ++j)
                          if (perm[j] == static_cast<int64_t>(k))
                            return dimAt(j);
                        return kUnknown;
                      }));
      })
      .Case([&](SliceOp sl) {
        ArrayRef<int64_t> start = sl.getStartIndices(), step = sl.getStrides();
        return demand(sl.getOperand(), mapped(s, start.size(), [&](size_t k) {
                        return start[k] == 0 && step[k] == 1 ? dimAt(k)
                                                             : kUnknown;
                      }));
      })
      .Case([&](PadOp p) {
        ArrayRef<int64_t> low = p.getEdgePaddingLow();
        if (failed(demand(p.getPaddingValue(), SymIndex{})))
          return failure();
        return demand(p.getOperand(), mapped(s, low.size(), [&](size_t k) {
                        return low[k] == 0 ? dimAt(k) : kUnknown;
                      }));
      })
      .Case([&](ConcatenateOp c) {
        int64_t axis = c.getDimension();
        for (auto [n, input] : llvm::enumerate(c.getInputs()))
          if (failed(demand(
                  input, mapped(s, shapeOf(input).size(), [&](size_t k) {
                    return n == 0 || k != size_t(axis) ? dimAt(k) : kUnknown;
                  }))))
            return failure();
        return success();
      })
      .Default([](Operation *) { return failure(); });
}

bool isSupportedInnerOp(Operation &op) {
  if (auto c = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    return dense &&
           (dense.isSplat() || dense.getNumElements() <= kMaxDenseConstant);
  }
  return isScalarizable(&op) ||
         isa<ReshapeOp, BroadcastInDimOp, TransposeOp, SliceOp, PadOp,
             ConcatenateOp, IotaOp, ReduceOp, RngUniformOp>(op);
}

FailureOr<FusionPlan> Planner::run() {
  Block &body = fusion_.getBody().front();
  if (fusion_.getNumResults() == 0)
    return failure();
  // Iteration space: the reduces' common signature, or the results' shape.
  for (Operation &op : body.without_terminator()) {
    if (!isSupportedInnerOp(op))
      return failure();
    if (isa<RngUniformOp>(op))
      plan_.bodyOps += kRngCost;
    else if (!isa<ConstantOp>(op))
      ++plan_.bodyOps;
    auto reduce = dyn_cast<ReduceOp>(op);
    if (!reduce)
      continue;
    SmallVector<int64_t> dims(reduce.getDimensions());
    llvm::sort(dims);
    ArrayRef<int64_t> shape = shapeOf(reduce.getOperand());
    if (plan_.reduces.empty()) {
      plan_.space.assign(shape.begin(), shape.end());
      plan_.reduced = dims;
    } else if (ArrayRef<int64_t>(plan_.space) != shape ||
               plan_.reduced != dims) {
      return failure();
    }
    plan_.reduces.push_back({reduce, 0});
  }
  if (plan_.reduces.empty()) {
    // The largest result's shape (an rng state beside it is a once result).
    Value largest = fusion_.getResult(0);
    for (Value r : fusion_.getResults())
      if (numElementsOf(r) > numElementsOf(largest))
        largest = r;
    ArrayRef<int64_t> shape = shapeOf(largest);
    plan_.space.assign(shape.begin(), shape.end());
  }
  for (int64_t d = 0; d < static_cast<int64_t>(plan_.space.size()); ++d)
    if (!llvm::is_contained(plan_.reduced, d)) {
      plan_.kept.push_back(d);
      plan_.rowCount *= plan_.space[d];
    } else {
      plan_.rowLength *= plan_.space[d];
    }
  // Reduce levels: one more than the deepest reduce the operand reads.
  DenseMap<Value, unsigned> depth;
  for (Operation &op : body.without_terminator()) {
    unsigned d = 0;
    for (Value operand : op.getOperands())
      d = std::max(d, depth.lookup(operand));
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      d += 1;
      for (auto &entry : plan_.reduces)
        if (entry.first == reduce)
          entry.second = d;
      plan_.levels = std::max(plan_.levels, d);
    }
    for (Value r : op.getResults())
      depth[r] = d;
  }
  // Results: one element per row, or one per point of S.
  unsigned numInputs = body.getNumArguments();
  plan_.inputOnlyFull.assign(numInputs, true);
  plan_.inputOnlyRow.assign(numInputs, true);
  int64_t full = computeProduct(plan_.space);
  for (Value v : body.getTerminator()->getOperands()) {
    int64_t n = numElementsOf(v);
    SymIndex s;
    ResultKind kind = ResultKind::once;
    if (n == plan_.rowCount) {
      s.row = true;
      kind = ResultKind::row;
    } else if (n == full) {
      s.full = true;
      kind = ResultKind::full;
    } else if (n > kOnceResultElements) {
      return failure();
    }
    plan_.resultKind.push_back(kind);
    // A once result is read at no index related to the iteration point
    // (so never through a reduce result).
    if (failed(demand(v, s)))
      return failure();
    if (kind == ResultKind::full && depth.lookup(v) > 0)
      plan_.fullReadsReduce = true;
  }
  for (auto &entry : plan_.reduces) {
    SymIndex s;
    s.full = true;
    if (failed(demand(entry.first.getOperand(), s)))
      return failure();
  }
  if (plan_.levels == 1 && allowColumns_)
    plan_.columns = outerReduction(plan_.space, plan_.reduced);
  plan_.readAfterStash.assign(numInputs, true);
  if (!plan_.columns) {
    planStash();
    planDraws();
  }
  return plan_;
}

void Planner::planStash() {
  if (plan_.levels == 0 || plan_.rowLength <= 1)
    return;
  Block &body = fusion_.getBody().front();
  auto yielded = body.getTerminator()->getOperands();
  // The last pass's operand first; then, from the last pass back, an
  // exponential an earlier pass sums and later passes read again
  // (attention's backward: exp(s - max) summed by pass 2, read as
  // P = exp / sum by pass 3's sum of P * dP and by the output pass).
  for (unsigned stashLevel = plan_.levels; stashLevel >= 1; --stashLevel)
    for (auto [reduce, level] : plan_.reduces) {
      Value v = reduce.getOperand();
      Type elem = elementOf(v);
      bool last = stashLevel == plan_.levels;
      if (level != stashLevel || !(elem.isF32() || elem.isF64()) ||
          !v.getDefiningOp() || !isScalarizable(v.getDefiningOp()) ||
          (!last && !isa<ExpOp>(v.getDefiningOp())))
        continue;
      // The stash's place: a full result of v's type for the last pass's
      // operand; none (target -1, a scratch array: FusionPlan::stashResult)
      // for 16-bit results or an earlier pass's, so that no result's
      // buffer changes what it may share (fusionReadsInputInPlace).
      int target = -1;
      for (auto [k, y] : llvm::enumerate(yielded))
        if (last && plan_.resultKind[k] == ResultKind::full &&
            elementOf(y) == elem && (target < 0 || y == v))
          target = k;
      // What the passes from the stash's on and the output pass read: with
      // v (read at the point itself) replaced by the stash. v reached
      // through data movement is read elsewhere: no stash.
      SmallVector<bool> reads(body.getNumArguments(), false);
      std::set<std::pair<void *, bool>> seen;
      bool ok = true, used = false;
      std::function<void(Value, bool)> walk = [&](Value x, bool moved) {
        if (!ok || !seen.insert({x.getAsOpaquePointer(), moved}).second)
          return;
        if (x == v) {
          ok = !moved;
          used = true;
          return;
        }
        if (auto arg = dyn_cast<BlockArgument>(x)) {
          reads[arg.getArgNumber()] = true;
          return;
        }
        Operation *op = x.getDefiningOp();
        if (isa<ReduceOp>(op))
          return; // a row scalar by then
        bool movement = !isScalarizable(op);
        for (Value operand : op->getOperands())
          walk(operand, moved || movement);
      };
      for (auto [k, y] : llvm::enumerate(yielded))
        if (plan_.resultKind[k] == ResultKind::full)
          walk(y, false);
      for (auto [other, otherLevel] : plan_.reduces)
        if (otherLevel > stashLevel)
          walk(other.getOperand(), false);
      bool usedAfterItsPass = used;
      // The stash's own pass's other operands are read after it is
      // written too (cross-entropy's label term beside its sum of
      // exponentials).
      for (auto [other, otherLevel] : plan_.reduces)
        if (otherLevel == stashLevel)
          walk(other.getOperand(), false);
      if (!ok || !usedAfterItsPass)
        continue; // (layer norm's output pass recomputes from x anyway)
      plan_.stashValue = v;
      plan_.stashResult = target;
      plan_.stashLevel = stashLevel;
      plan_.readAfterStash = reads;
      return;
    }
}

/// The flat index of `rng`'s result at point i of S, as coefficients of
/// i's dims, where `draw` (of S's shape) views that result through
/// transposes and reshapes; none when a transpose reads a reshape's
/// result (its index then divides the flat one).
static std::optional<SmallVector<int64_t>>
drawStrides(Value draw, RngUniformOp rng, ArrayRef<int64_t> space) {
  // forms[k][d]: the coefficient of iteration dim d in dim k's index of
  // the value reached so far; flat, once a reshape has been crossed.
  SmallVector<SmallVector<int64_t>> forms;
  for (size_t k = 0; k < space.size(); ++k) {
    forms.emplace_back(space.size(), 0);
    forms.back()[k] = 1;
  }
  auto linear = [&](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> flat(space.size(), 0);
    SmallVector<int64_t> strides = rowMajorStrides(shape);
    for (auto [form, stride] : llvm::zip(forms, strides))
      for (auto [f, c] : llvm::zip(flat, form))
        f += c * stride;
    return flat;
  };
  std::optional<SmallVector<int64_t>> flat;
  Value v = draw;
  for (; v != rng.getResult(); v = v.getDefiningOp()->getOperand(0)) {
    if (auto t = v.getDefiningOp<TransposeOp>()) {
      if (flat)
        return std::nullopt;
      ArrayRef<int64_t> perm = t.getPermutation();
      SmallVector<SmallVector<int64_t>> in(forms.size());
      for (size_t k = 0; k < perm.size(); ++k)
        in[perm[k]] = forms[k];
      forms = std::move(in);
    } else if (!flat) { // a reshape keeps the flat index
      flat = linear(shapeOf(v));
    }
  }
  return flat ? flat : linear(shapeOf(v));
}

void Planner::planDraws() {
  if (plan_.rowLength <= 1)
    return;
  for (Operation &op : fusion_.getBody().front().without_terminator()) {
    auto rng = dyn_cast<RngUniformOp>(op);
    if (!rng)
      continue;
    // The draw as the passes read it: through its views up to S's shape.
    Value v = rng.getResult();
    while (shapeOf(v) != ArrayRef<int64_t>(plan_.space) && v.hasOneUse() &&
           isa<ReshapeOp, TransposeOp>(*v.getUsers().begin()))
      v = v.getUsers().begin()->getResult(0);
    if (shapeOf(v) != ArrayRef<int64_t>(plan_.space) ||
        !(elementOf(v).isF32() || elementOf(v).isF64()))
      continue;
    // Read at the point itself (demand saw it with a full index).
    bool atThePoint = llvm::any_of(seen_, [&](const auto &entry) {
      return entry.first == v.getAsOpaquePointer() && entry.second[0] == 1;
    });
    if (atThePoint)
      plan_.draws.push_back(
          {v, rng,
           drawStrides(v, rng, plan_.space).value_or(SmallVector<int64_t>())});
  }
}

} // namespace

FailureOr<FusionPlan> planFusion(Operation *op, bool allowColumns) {
  auto fusion = dyn_cast<FusionOp>(op);
  // A gemm fusion is a GEMM library call (CpuCompiler's lowerGemmFusion).
  if (!fusion || fusion.getKind() == FusionKind::gemm)
    return failure();
  return Planner(fusion, allowColumns).run();
}

bool splitInnermostRows(FusionPlan &plan, Operation *op) {
  if (!plan.reduces.empty() || plan.columns || plan.space.size() < 2 ||
      plan.space.back() < kMinInnermostRow)
    return false;
  for (ResultKind kind : plan.resultKind)
    if (kind != ResultKind::row)
      return false;
  for (Operation &inner : cast<FusionOp>(op).getBody().front())
    if (isa<RngUniformOp>(inner))
      return false;
  const int64_t innermost = plan.space.back();
  plan.kept.pop_back();
  plan.reduced = {static_cast<int64_t>(plan.space.size()) - 1};
  plan.rowCount /= innermost;
  plan.rowLength = innermost;
  plan.resultKind.assign(plan.resultKind.size(), ResultKind::full);
  // An input read only at a result's own element stays so: the element is
  // now a point of a row.
  plan.inputOnlyFull = plan.inputOnlyRow;
  plan.inputOnlyRow.assign(plan.inputOnlyRow.size(), false);
  return true;
}

bool canEmitFusion(Operation *fusion) { return succeeded(planFusion(fusion)); }

bool fusionReadsInputInPlace(Operation *fusion, unsigned result,
                             unsigned input) {
  FailureOr<FusionPlan> plan = planFusion(fusion);
  if (failed(plan))
    return false;
  switch (plan->resultKind[result]) {
  case ResultKind::row:
    return plan->inputOnlyRow[input];
  case ResultKind::full:
    // The stash target's buffer holds the stash from before the last pass.
    if (static_cast<int>(result) == plan->stashResult &&
        plan->readAfterStash[input])
      return false;
    return plan->inputOnlyFull[input];
  case ResultKind::once:
    return false;
  }
  return false;
}

} // namespace kiln::compiler::cpu::detail
