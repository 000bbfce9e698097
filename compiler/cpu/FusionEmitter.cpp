// A kiln.fusion as ONE kernel, in the spirit of XLA's elemental IR emitter:
// every value in the body has a generator "its element at index idx", built on
// demand from its operands' generators, so no inner value gets a buffer.
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
// fusion op by op. hasKernel() is exactly planFusion's verdict.
#include "compiler/cpu/KernelEmitter.h"
#include "compiler/cpu/ScalarOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <deque>
#include <map>
#include <optional>
#include <set>

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

/// The non-unit sizes of a shape, in order.
SmallVector<int64_t> nonUnit(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> out;
  for (int64_t s : shape)
    if (s != 1)
      out.push_back(s);
  return out;
}

enum class ResultKind { full, row, once };

/// Results of neither the row nor the full size: computed once per kernel.
constexpr int64_t kMaxOnceElements = 64;
/// Rough cost of one rng_uniform element in body ops (10 Philox rounds).
constexpr int64_t kRngCost = 40;

struct FusionPlan {
  SmallVector<int64_t> space; // S
  SmallVector<int64_t> kept, reduced;
  int64_t rowCount = 1, rowLength = 1;
  /// Reduces in body order with their level (1-based pass number).
  SmallVector<std::pair<ReduceOp, unsigned>> reduces;
  unsigned levels = 0;
  /// Per result: stored once per point of S, once per row, or (a small
  /// result of neither size: an rng state) once per kernel, by the range
  /// that starts at 0.
  SmallVector<ResultKind> resultKind;
  /// Set when the reduced dims are all outer (S viewed as [rows, columns],
  /// summed over rows): the kernel is column-blocked (emitColumns).
  std::optional<ColumnSplit> columns;
  /// Column mode: a full-shaped result reads a reduce result, so full
  /// results are stored in a second pass over the block.
  bool fullReadsReduce = false;
  /// Row mode: a loop before the last reduce pass stores that pass's
  /// operand `stashValue` (f32 or f64, computed) at each point into full
  /// result `stashResult`'s buffer; the last pass and the output pass read
  /// it back instead of recomputing it (softmax's exp). Inputs read after
  /// the stash is written (by the last pass or the output pass) are never
  /// written over by that result (fusionReadsInputInPlace).
  Value stashValue;
  int stashResult = -1;
  SmallVector<bool> readAfterStash;
  /// Per input: read only at `full` / only at `row` indices.
  SmallVector<bool> inputOnlyFull, inputOnlyRow;
  int64_t bodyOps = 0;
};

class Planner {
public:
  explicit Planner(FusionOp fusion) : fusion_(fusion) {}
  FailureOr<FusionPlan> run();

private:
  /// Fills in whichever of full / row / dims `shape` allows.
  SymIndex complete(SymIndex s, ArrayRef<int64_t> shape) const;
  LogicalResult demand(Value v, SymIndex s);
  LogicalResult demandOperands(Operation *op, SymIndex s);
  static SymIndex mapped(const SymIndex &s, size_t rank,
                         const std::function<int(size_t)> &dimOf);
  void planStash();

  FusionOp fusion_;
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
    } else if (n > kMaxOnceElements) {
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
  if (plan_.levels == 1)
    plan_.columns = outerReduction(plan_.space, plan_.reduced);
  plan_.readAfterStash.assign(numInputs, true);
  if (!plan_.columns)
    planStash();
  return plan_;
}

void Planner::planStash() {
  if (plan_.levels == 0 || plan_.rowLength <= 1)
    return;
  Block &body = fusion_.getBody().front();
  auto yielded = body.getTerminator()->getOperands();
  for (auto [reduce, level] : plan_.reduces) {
    Value v = reduce.getOperand();
    Type elem = elementOf(v);
    if (level != plan_.levels || !(elem.isF32() || elem.isF64()) ||
        !v.getDefiningOp() || !isScalarizable(v.getDefiningOp()))
      continue;
    int target = -1;
    for (auto [k, y] : llvm::enumerate(yielded))
      if (plan_.resultKind[k] == ResultKind::full && elementOf(y) == elem &&
          (target < 0 || y == v))
        target = k;
    if (target < 0)
      return;
    // What the output pass reads: everything the full results need, with
    // v (read at the point itself) replaced by the stash. v reached through
    // data movement is read elsewhere: no stash.
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
    bool usedByOutputPass = used;
    // The last pass's other operands are read after the stash is written
    // too (cross-entropy's label term beside its sum of exponentials).
    for (auto [other, otherLevel] : plan_.reduces)
      if (otherLevel == plan_.levels)
        walk(other.getOperand(), false);
    used = usedByOutputPass;
    if (!ok || !used)
      continue; // (layer norm's output pass recomputes from x anyway)
    plan_.stashValue = v;
    plan_.stashResult = target;
    plan_.readAfterStash = reads;
    return;
  }
}

FailureOr<FusionPlan> planFusion(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion)
    return failure();
  return Planner(fusion).run();
}

// ---------------------------------------------------------------------------
// Emission: generators over lazily built indices.
// ---------------------------------------------------------------------------

/// An element position in a value of `shape`: its flat index, its
/// per-dimension indices, or both; the missing form is built on first use,
/// so elementwise chains over one shape never split the flat index.
struct Index {
  SmallVector<int64_t> shape;
  Value flat;
  std::optional<SmallVector<Value>> multi;
};

class FusionEmitter {
public:
  FusionEmitter(KernelBuilder &kb, FusionOp fusion, const FusionPlan &plan)
      : kb_(kb), fusion_(fusion), plan_(plan), body_(fusion.getBody().front()),
        numInputs_(body_.getNumArguments()) {}

  /// The whole kernel body over rows (or column blocks) [begin, end).
  void emit(Value begin, Value end);

private:
  void emitRows(Value begin, Value end);
  void emitColumns(Value begin, Value end);
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
  Value concatenateAt(ConcatenateOp c, unsigned from, int64_t start,
                      Index *idx);
  /// The iteration point (kept indices of the row, reduced loop ivs).
  Index *point(ArrayRef<Value> keptIdx, ArrayRef<Value> reducedIvs);

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
};

Index *FusionEmitter::reshaped(Index *idx, ArrayRef<int64_t> shape) {
  if (ArrayRef<int64_t>(idx->shape) == shape)
    return idx;
  Index *&cached =
      reshapes_[{idx, std::vector<int64_t>(shape.begin(), shape.end())}];
  if (!cached)
    cached = reshapedUncached(idx, shape);
  return cached;
}

Index *FusionEmitter::reshapedUncached(Index *idx, ArrayRef<int64_t> shape) {
  if (idx->multi && nonUnit(idx->shape) == nonUnit(shape)) {
    SmallVector<Value> live;
    for (auto [size, i] : llvm::zip(idx->shape, *idx->multi))
      if (size != 1)
        live.push_back(i);
    SmallVector<Value> multi;
    size_t next = 0;
    for (int64_t size : shape)
      multi.push_back(size == 1 ? kb_.index(0) : live[next++]);
    return index(shape, idx->flat, multi);
  }
  return index(shape, flatOf(idx));
}

Value FusionEmitter::generate(Value v, Index *idx) {
  auto key = std::make_pair(v, idx);
  if (Value known = memo_.lookup(key))
    return known;
  Value out;
  if (auto arg = dyn_cast<BlockArgument>(v))
    out = kb_.load(arg.getArgNumber(), elementOf(v), flatOf(idx));
  else if (Value scalar = rowScalars_.lookup(v))
    out = scalar; // planning proved idx is this row
  else if (auto rng = v.getDefiningOp<RngUniformOp>()) {
    auto [key, counter] = rngState_.lookup(rng);
    out = v == rng.getResult()
              ? philoxUniform(kb_, key, counter, flatOf(idx), elementOf(v))
              : rngNewState(kb_, key, counter, flatOf(idx),
                            numElementsOf(rng.getResult()));
  } else
    out = generateOp(v.getDefiningOp(), idx);
  memo_[key] = out;
  return out;
}

Value FusionEmitter::generateOp(Operation *op, Index *idx) {
  if (isScalarizable(op)) {
    SmallVector<Value> in;
    for (Value operand : op->getOperands())
      in.push_back(generate(operand, idx));
    return *emitScalarOp(kb_, op, in);
  }
  auto multiIn = [&](Value operand, const std::function<Value(size_t)> &at) {
    SmallVector<Value> multi;
    for (size_t k = 0; k < shapeOf(operand).size(); ++k)
      multi.push_back(at(k));
    return index(shapeOf(operand), Value(), multi);
  };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](ConstantOp c) { return constantAt(c, idx); })
      .Case([&](ReshapeOp r) {
        return generate(r.getOperand(), reshaped(idx, shapeOf(r.getOperand())));
      })
      .Case([&](BroadcastInDimOp b) {
        ArrayRef<Value> at = multiOf(idx);
        ArrayRef<int64_t> in = shapeOf(b.getOperand());
        ArrayRef<int64_t> dims = b.getBroadcastDimensions();
        return generate(b.getOperand(), multiIn(b.getOperand(), [&](size_t k) {
                          return in[k] == 1 ? kb_.index(0) : at[dims[k]];
                        }));
      })
      .Case([&](TransposeOp t) {
        ArrayRef<Value> at = multiOf(idx);
        ArrayRef<int64_t> perm = t.getPermutation();
        SmallVector<Value> multi(perm.size());
        for (size_t k = 0; k < perm.size(); ++k)
          multi[perm[k]] = at[k];
        return generate(t.getOperand(),
                        index(shapeOf(t.getOperand()), Value(), multi));
      })
      .Case([&](SliceOp s) {
        ArrayRef<Value> at = multiOf(idx);
        ArrayRef<int64_t> start = s.getStartIndices(), step = s.getStrides();
        return generate(
            s.getOperand(), multiIn(s.getOperand(), [&](size_t k) {
              Value i = at[k];
              if (step[k] != 1)
                i = arith::MulIOp::create(kb_.b, i, kb_.index(step[k]));
              if (start[k] != 0)
                i = arith::AddIOp::create(kb_.b, i, kb_.index(start[k]));
              return i;
            }));
      })
      .Case([&](IotaOp o) {
        Value i = multiOf(idx)[o.getIotaDimension()];
        return emitConvert(kb_, i, kb_.b.getI64Type(), elementOf(o));
      })
      .Case([&](PadOp p) { return padAt(p, idx); })
      .Case([&](ConcatenateOp c) { return concatenateAt(c, 0, 0, idx); })
      .Default([](Operation *) -> Value {
        llvm_unreachable("planFusion admitted an op the emitter lacks");
      });
}

Value FusionEmitter::constantAt(ConstantOp c, Index *idx) {
  auto attr = cast<DenseElementsAttr>(c.getValue());
  Type elem = attr.getElementType();
  Type t = computeType(elem);
  auto scalar = [&](int64_t k) {
    if (isa<FloatType>(elem))
      return kb_.constant(t, attr.getValues<APFloat>()[k].convertToDouble());
    return kb_.intConstant(t, attr.getValues<APInt>()[k].getSExtValue());
  };
  if (attr.isSplat())
    return scalar(0);
  // A small table: a select chain on the flat index.
  Value flat = flatOf(idx);
  Value out = scalar(0);
  for (int64_t k = 1; k < attr.getNumElements(); ++k) {
    Value is = arith::CmpIOp::create(kb_.b, arith::CmpIPredicate::eq, flat,
                                     kb_.index(k));
    out = arith::SelectOp::create(kb_.b, is, scalar(k), out);
  }
  return out;
}

Value FusionEmitter::padAt(PadOp p, Index *idx) {
  ArrayRef<Value> at = multiOf(idx);
  ArrayRef<int64_t> in = shapeOf(p.getOperand());
  ArrayRef<int64_t> low = p.getEdgePaddingLow();
  Value inside = arith::ConstantIntOp::create(kb_.b, kb_.b.getI1Type(), 1);
  SmallVector<Value> src;
  for (size_t k = 0; k < in.size(); ++k) {
    Value j = arith::SubIOp::create(kb_.b, at[k], kb_.index(low[k]));
    // Unsigned j < n also rejects negative j.
    inside = arith::AndIOp::create(
        kb_.b, inside,
        arith::CmpIOp::create(kb_.b, arith::CmpIPredicate::ult, j,
                              kb_.index(in[k])));
    src.push_back(j);
  }
  Type t = computeType(elementOf(p));
  auto ifOp = scf::IfOp::create(kb_.b, TypeRange{t}, inside, true);
  OpBuilder::InsertionGuard guard(kb_.b);
  kb_.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(kb_.b, scoped([&] {
                         return generate(p.getOperand(),
                                         index(in, Value(), src));
                       }));
  kb_.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(kb_.b, scoped([&] {
                         return generate(p.getPaddingValue(),
                                         index({}, kb_.index(0)));
                       }));
  return ifOp.getResult(0);
}

Value FusionEmitter::concatenateAt(ConcatenateOp c, unsigned from,
                                   int64_t start, Index *idx) {
  // An if-chain over the inputs: input k owns [start_k, start_k + size_k).
  int64_t axis = c.getDimension();
  Value input = c.getInputs()[from];
  auto here = [&] {
    SmallVector<Value> local(multiOf(idx));
    local[axis] = arith::SubIOp::create(kb_.b, local[axis], kb_.index(start));
    return generate(input, index(shapeOf(input), Value(), local));
  };
  if (from + 1 == c.getInputs().size())
    return here();
  int64_t end = start + shapeOf(input)[axis];
  Value inside = arith::CmpIOp::create(kb_.b, arith::CmpIPredicate::slt,
                                       multiOf(idx)[axis], kb_.index(end));
  Type t = computeType(elementOf(c));
  auto ifOp = scf::IfOp::create(kb_.b, TypeRange{t}, inside, true);
  OpBuilder::InsertionGuard guard(kb_.b);
  kb_.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(kb_.b, scoped(here));
  kb_.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(
      kb_.b, scoped([&] { return concatenateAt(c, from + 1, end, idx); }));
  return ifOp.getResult(0);
}

Index *FusionEmitter::point(ArrayRef<Value> keptIdx,
                            ArrayRef<Value> reducedIvs) {
  SmallVector<Value> multi(plan_.space.size());
  for (auto [d, i] : llvm::zip(plan_.kept, keptIdx))
    multi[d] = i;
  for (auto [d, i] : llvm::zip(plan_.reduced, reducedIvs))
    multi[d] = i;
  return index(plan_.space, Value(), multi);
}

void FusionEmitter::prepareRng() {
  // In body order, so a state computed from an earlier draw's new state
  // finds that draw prepared. Planning proved states read no reduce result.
  for (Operation &op : body_.without_terminator())
    if (auto rng = dyn_cast<RngUniformOp>(op)) {
      Value state = rng.getState();
      Value key = generate(state, index(shapeOf(state), kb_.index(0)));
      Value counter = generate(state, index(shapeOf(state), kb_.index(1)));
      rngState_[rng] = {key, counter};
    }
}

void FusionEmitter::emit(Value begin, Value end) {
  prepareRng();
  if (plan_.columns)
    emitColumns(begin, end);
  else
    emitRows(begin, end);
  emitOnceResults(begin);
}

void FusionEmitter::emitOnceResults(Value begin) {
  auto yielded = body_.getTerminator()->getOperands();
  if (!llvm::is_contained(plan_.resultKind, ResultKind::once))
    return;
  Value first = arith::CmpIOp::create(kb_.b, arith::CmpIPredicate::eq, begin,
                                      kb_.index(0));
  auto ifOp = scf::IfOp::create(kb_.b, TypeRange{}, first, false);
  OpBuilder::InsertionGuard guard(kb_.b);
  kb_.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scoped([&] {
    for (auto [k, v] : llvm::enumerate(yielded)) {
      if (plan_.resultKind[k] != ResultKind::once)
        continue;
      kb_.forLoop(kb_.index(0), kb_.index(numElementsOf(v)), {},
                  [&](Value i, ValueRange) {
                    return scoped([&] {
                      Value value = generate(v, index(shapeOf(v), i));
                      kb_.store(numInputs_ + k, elementOf(v), i, value);
                      return SmallVector<Value>{};
                    });
                  });
    }
    return 0;
  });
}

SmallVector<Value> FusionEmitter::keptIndices(Value r,
                                              ArrayRef<int64_t> rowShape) {
  if (nonUnit(rowShape).size() <= 1) {
    // One live dim: its index is r itself (no division).
    SmallVector<Value> idx;
    for (int64_t size : rowShape)
      idx.push_back(size == 1 ? kb_.index(0) : r);
    return idx;
  }
  return kb_.delinearize(r, rowShape);
}

void FusionEmitter::emitRows(Value begin, Value end) {
  SmallVector<int64_t> rowShape, reducedShape;
  for (int64_t d : plan_.kept)
    rowShape.push_back(plan_.space[d]);
  for (int64_t d : plan_.reduced)
    reducedShape.push_back(plan_.space[d]);
  auto yielded = body_.getTerminator()->getOperands();
  Value stash = plan_.stashValue;
  unsigned stashBuffer = numInputs_ + std::max(plan_.stashResult, 0);
  kb_.forLoop(begin, end, {}, [&](Value r, ValueRange) {
    return scoped([&] {
      rowScalars_.clear();
      // The row's kept indices, split from r only if a loop nest needs them
      // (at the row's scope, so every loop nest may use them).
      bool anyFull = llvm::is_contained(plan_.resultKind, ResultKind::full);
      SmallVector<Value> keptIdx;
      if (plan_.levels > 0 || anyFull)
        keptIdx = keptIndices(r, rowShape);
      auto kept = [&]() -> ArrayRef<Value> { return keptIdx; };
      Index *rowIdx =
          keptIdx.empty() ? index(rowShape, r) : index(rowShape, r, keptIdx);
      // 1. One pass over the row per reduce level.
      for (unsigned level = 1; level <= plan_.levels; ++level) {
        SmallVector<ReduceOp> group;
        SmallVector<Value> inits;
        for (auto [reduce, l] : plan_.reduces)
          if (l == level) {
            group.push_back(reduce);
            Type acc = accumulatorType(kb_.b, reduce.getKind(),
                                       elementOf(reduce.getOperand()));
            inits.push_back(reductionInit(kb_, reduce.getKind(), acc));
          }
        // The stash gets its own loop first: without the f64 accumulator
        // in it, LLVM vectorises it at the f32 width (16 lanes, not 8),
        // and the accumulating loop reads it back from L1.
        bool stashHere = stash && level == plan_.levels;
        if (stashHere)
          kb_.nestedLoops(reducedShape, {},
                          [&](ArrayRef<Value> ivs, ValueRange) {
                            return scoped([&] {
                              Index *x = point(kept(), ivs);
                              // After every read of the point
                              // (FusionPlan::stash*).
                              kb_.store(stashBuffer, elementOf(stash),
                                        flatOf(x), generate(stash, x));
                              return SmallVector<Value>{};
                            });
                          });
        SmallVector<Value> totals = kb_.nestedLoops(
            reducedShape, inits, [&](ArrayRef<Value> ivs, ValueRange carried) {
              return scoped([&] {
                Index *x = point(kept(), ivs);
                if (stashHere)
                  memo_[{stash, x}] =
                      kb_.load(stashBuffer, elementOf(stash), flatOf(x));
                SmallVector<Value> operands;
                for (ReduceOp reduce : group)
                  operands.push_back(generate(reduce.getOperand(), x));
                SmallVector<Value> next;
                for (auto [reduce, acc, operand] :
                     llvm::zip(group, carried, operands))
                  next.push_back(
                      accumulate(kb_, reduce.getKind(), acc, operand));
                return next;
              });
            });
        for (auto [reduce, total] : llvm::zip(group, totals))
          rowScalars_[reduce.getResult()] =
              finishReduction(kb_, total, elementOf(reduce.getOperand()));
      }
      // 2. Results shaped like S; every value of the point is generated
      // before any store, so an output may overwrite an input read here.
      if (anyFull)
        kb_.nestedLoops(reducedShape, {}, [&](ArrayRef<Value> ivs, ValueRange) {
          return scoped([&] {
            Index *x = point(kept(), ivs);
            if (stash)
              memo_[{stash, x}] =
                  kb_.load(stashBuffer, elementOf(stash), flatOf(x));
            SmallVector<std::pair<unsigned, Value>> stores;
            for (auto [k, v] : llvm::enumerate(yielded))
              if (plan_.resultKind[k] == ResultKind::full)
                stores.push_back({k, generate(v, reshaped(x, shapeOf(v)))});
            Value flat = flatOf(x);
            for (auto [k, value] : stores)
              kb_.store(numInputs_ + k, elementOf(yielded[k]), flat, value);
            return SmallVector<Value>{};
          });
        });
      // 3. Results shaped like a row, after every read of the row.
      SmallVector<std::pair<unsigned, Value>> stores;
      for (auto [k, v] : llvm::enumerate(yielded))
        if (plan_.resultKind[k] == ResultKind::row)
          stores.push_back({k, generate(v, reshaped(rowIdx, shapeOf(v)))});
      for (auto [k, value] : stores)
        kb_.store(numInputs_ + k, elementOf(yielded[k]), r, value);
      return SmallVector<Value>{};
    });
  });
}

void FusionEmitter::emitColumns(Value begin, Value end) {
  // S viewed as [rows, columns] (reduced dims outer): the range is columns.
  // Per block of at most kColumnChunk columns (fewer with several
  // reduces): (1) reduced rows outer, the block's columns inner,
  // accumulating into stack arrays (contiguous, vectorised reads), full
  // results stored there too unless they read a reduce result; (2) if
  // they do, a second pass storing them; (3) the row-shaped (here:
  // column) results. Each column adds its rows in row-major order, as the
  // reference.
  SmallVector<int64_t> rowShape, reducedShape;
  for (int64_t d : plan_.kept)
    rowShape.push_back(plan_.space[d]);
  for (int64_t d : plan_.reduced)
    reducedShape.push_back(plan_.space[d]);
  SmallVector<int64_t> reducedStrides = rowMajorStrides(reducedShape);
  int64_t columns = plan_.columns->columns;
  auto yielded = body_.getTerminator()->getOperands();
  SmallVector<ReduceOp> reduces;
  SmallVector<Type> accTypes;
  SmallVector<Value> accs;
  for (auto [reduce, level] : plan_.reduces) {
    reduces.push_back(reduce);
    accTypes.push_back(accumulatorType(kb_.b, reduce.getKind(),
                                       elementOf(reduce.getOperand())));
  }
  bool anyFull = llvm::is_contained(plan_.resultKind, ResultKind::full);
  bool fullInFirstPass = anyFull && !plan_.fullReadsReduce;
  int64_t chunk = kColumnChunk;
  while (chunk > 256 &&
         chunk * static_cast<int64_t>(reduces.size()) > kColumnChunk)
    chunk /= 2;
  for (Type type : accTypes)
    accs.push_back(kb_.stackArray(type, chunk));
  kb_.forChunks(begin, end, chunk, [&](Value c0, Value w) {
    scoped([&] {
      Value zero = kb_.index(0);
      auto overBlock = [&](const std::function<void(Value j)> &fn) {
        kb_.forLoop(zero, w, {}, [&](Value j, ValueRange) {
          return scoped([&] {
            fn(j);
            return SmallVector<Value>{};
          });
        });
      };
      // The point (ivs, column c0 + j), with both index forms.
      auto columnPoint = [&](ArrayRef<Value> ivs, Value rowBase, Value j) {
        Value c = arith::AddIOp::create(kb_.b, c0, j);
        Index *x = point(keptIndices(c, rowShape), ivs);
        x->flat = arith::AddIOp::create(kb_.b, rowBase, c);
        return x;
      };
      auto overPoints = [&](const std::function<void(Index * x, Value j)> &fn) {
        kb_.nestedLoops(reducedShape, {}, [&](ArrayRef<Value> ivs, ValueRange) {
          return scoped([&] {
            Value rowBase = arith::MulIOp::create(
                kb_.b, kb_.linearize(ivs, reducedStrides), kb_.index(columns));
            overBlock([&](Value j) { fn(columnPoint(ivs, rowBase, j), j); });
            return SmallVector<Value>{};
          });
        });
      };
      auto setColumnScalars = [&](Value j) {
        rowScalars_.clear();
        for (auto [reduce, acc, type] : llvm::zip(reduces, accs, accTypes))
          rowScalars_[reduce.getResult()] = finishReduction(
              kb_, kb_.loadAt(acc, type, j), elementOf(reduce.getOperand()));
      };
      auto storeFull = [&](Index *x) {
        SmallVector<std::pair<unsigned, Value>> stores;
        for (auto [k, v] : llvm::enumerate(yielded))
          if (plan_.resultKind[k] == ResultKind::full)
            stores.push_back({k, generate(v, reshaped(x, shapeOf(v)))});
        Value flat = flatOf(x);
        for (auto [k, value] : stores)
          kb_.store(numInputs_ + k, elementOf(yielded[k]), flat, value);
      };
      overBlock([&](Value j) {
        for (auto [reduce, acc, type] : llvm::zip(reduces, accs, accTypes))
          kb_.storeAt(acc, j, reductionInit(kb_, reduce.getKind(), type));
      });
      // 1. Accumulate (and store full results that read no reduce).
      overPoints([&](Index *x, Value j) {
        SmallVector<Value> operands;
        for (ReduceOp reduce : reduces)
          operands.push_back(generate(reduce.getOperand(), x));
        // Full results are stored after every read of the point.
        if (fullInFirstPass)
          storeFull(x);
        for (auto [reduce, acc, type, operand] :
             llvm::zip(reduces, accs, accTypes, operands))
          kb_.storeAt(acc, j,
                      accumulate(kb_, reduce.getKind(),
                                 kb_.loadAt(acc, type, j), operand));
      });
      // 2. Full results that read a reduce result.
      if (anyFull && !fullInFirstPass)
        overPoints([&](Index *x, Value j) {
          setColumnScalars(j);
          storeFull(x);
          rowScalars_.clear();
        });
      // 3. Column results.
      overBlock([&](Value j) {
        setColumnScalars(j);
        Value c = arith::AddIOp::create(kb_.b, c0, j);
        Index *colIdx = index(rowShape, c, keptIndices(c, rowShape));
        SmallVector<std::pair<unsigned, Value>> stores;
        for (auto [k, v] : llvm::enumerate(yielded))
          if (plan_.resultKind[k] == ResultKind::row)
            stores.push_back({k, generate(v, reshaped(colIdx, shapeOf(v)))});
        for (auto [k, value] : stores)
          kb_.store(numInputs_ + k, elementOf(yielded[k]), c, value);
        rowScalars_.clear();
      });
      return 0;
    });
  });
}

} // namespace

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

FailureOr<KernelInfo> emitFusionKernel(Operation *op, ModuleOp module,
                                       StringRef name) {
  FailureOr<FusionPlan> plan = planFusion(op);
  if (failed(plan))
    return failure();
  auto fusion = cast<FusionOp>(op);
  unsigned numBuffers = fusion.getNumOperands() + fusion.getNumResults();
  // Column mode keeps partial sums in memory across the row loop, so its
  // loops are not annotated parallel (the row loop carries them).
  buildKernel(
      module, name, numBuffers,
      [&](KernelBuilder &kb, Value b, Value e) {
        FusionEmitter(kb, fusion, *plan).emit(b, e);
      },
      /*parallel=*/!plan->columns);
  // Work per row: every pass reads the row once and each op runs per point.
  int64_t passes =
      plan->columns ? 1 + int64_t(plan->fullReadsReduce) : plan->levels + 1;
  int64_t work = std::max<int64_t>(1, plan->rowLength) *
                 std::max<int64_t>(1, plan->bodyOps) * passes;
  return KernelInfo{plan->rowCount, true, work};
}

} // namespace kiln::compiler::cpu::detail
