// Code generation for a kiln.fusion as ONE kernel, in the spirit of XLA's
// elemental IR emitter: every value in the body has a generator "its element
// at index idx", built on demand from its operands' generators, so no inner
// value gets a buffer. WHAT the kernel does (iteration space, reduce levels,
// result kinds, stash) is the FusionPlan that FusionPlanner.cpp decides;
// this file only carries it out (rows in FusionRows.cpp, column reductions
// in FusionColumns.cpp).
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
#include "compiler/cpu/FusionEmitter.h"
#include "compiler/cpu/ScalarOps.h"
#include "passes/FusionUtils.h"

#include "llvm/ADT/TypeSwitch.h"

#include <deque>
#include <functional>
#include <map>
#include <optional>

namespace kiln::compiler::cpu::detail {

using namespace mlir;

Index *FusionEmitter::reshaped(Index *idx, ArrayRef<int64_t> shape) {
  if (ArrayRef<int64_t>(idx->shape) == shape)
    return idx;
  Index *&cached =
      reshapes_[{idx, std::vector<int64_t>(shape.begin(), shape.end())}];
  if (!cached) {
    cached = reshapedUncached(idx, shape);
    // And back: a result reshaped from the point (a [rows, n] view of S)
    // whose body reshapes to S again reaches the point itself, and so
    // every value already generated there.
    reshapes_[{cached, std::vector<int64_t>(idx->shape.begin(),
                                            idx->shape.end())}] = idx;
  }
  return cached;
}

std::optional<SmallVector<ReshapeGroup>> reshapeGroups(ArrayRef<int64_t> from,
                                                       ArrayRef<int64_t> to) {
  SmallVector<ReshapeGroup> groups;
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    size_t i0 = i, j0 = j;
    int64_t a = i < from.size() ? from[i++] : 1;
    int64_t b = j < to.size() ? to[j++] : 1;
    while (a != b) {
      if (a < b && i < from.size())
        a *= from[i++];
      else if (b < a && j < to.size())
        b *= to[j++];
      else
        return std::nullopt;
    }
    while (i < from.size() && from[i] == 1)
      ++i;
    while (j < to.size() && to[j] == 1)
      ++j;
    groups.push_back({i0, i, j0, j});
  }
  return groups;
}

Index *FusionEmitter::reshapedUncached(Index *idx, ArrayRef<int64_t> shape) {
  if (!idx->multi || llvm::is_contained(idx->shape, 0))
    return index(shape, flatOf(idx));
  // Group the dims: consecutive source dims and consecutive target dims of
  // equal product (unit dims join the group being built). A target dim
  // that merges source dims is their linearization and source dims split
  // into target dims are the split of one index, so a row of [R, V] viewed
  // as [R, P, L] (a loss row in parts) reaches its column as p·L + l, with
  // no division of the flat index by V at every point. Unit dims take no
  // part (their index is 0): a reshape that only adds or drops them passes
  // the other indices on as they are.
  ArrayRef<int64_t> from = idx->shape;
  ArrayRef<Value> at = *idx->multi;
  std::optional<SmallVector<ReshapeGroup>> groups = reshapeGroups(from, shape);
  if (!groups)
    return index(shape, flatOf(idx)); // not a reshape of these sizes
  SmallVector<Value> multi;
  for (const ReshapeGroup &g : *groups) {
    SmallVector<int64_t> sourceDims, targetDims;
    SmallVector<Value> sourceAt;
    for (size_t k = g.fromBegin; k < g.fromEnd; ++k)
      if (from[k] != 1) {
        sourceDims.push_back(from[k]);
        sourceAt.push_back(at[k]);
      }
    for (size_t k = g.toBegin; k < g.toEnd; ++k)
      if (shape[k] != 1)
        targetDims.push_back(shape[k]);
    SmallVector<Value> split;
    if (!targetDims.empty()) {
      Value linear = sourceAt.size() == 1
                         ? sourceAt[0]
                         : kb_.linearize(sourceAt, rowMajorStrides(sourceDims));
      if (targetDims.size() == 1)
        split.push_back(linear);
      else
        split = kb_.delinearize(linear, targetDims);
    }
    size_t next = 0;
    for (size_t k = g.toBegin; k < g.toEnd; ++k)
      multi.push_back(shape[k] == 1 ? kb_.index(0) : split[next++]);
  }
  return index(shape, idx->flat, multi);
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
    auto inGroup = rowInGroup_.find(flatOf(idx));
    if (v != rng.getResult())
      out = rngNewState(kb_, key, counter, flatOf(idx),
                        numElementsOf(rng.getResult()));
    else if (inGroup != rowInGroup_.end()) { // the group's row k
      int64_t k = inGroup->second;
      out = uniformFromLanes(
          kb_,
          ArrayRef(groupLanes_[rng])
              .slice(k / kPhiloxLanes * kPhiloxLanes, kPhiloxLanes),
          kb_.index(k % kPhiloxLanes), elementOf(v));
    } else
      out = philoxUniform(kb_, key, counter, flatOf(idx), elementOf(v));
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
              return offsetIndex(i, start[k]);
            }));
      })
      .Case([&](IotaOp o) {
        Value i = multiOf(idx)[o.getIotaDimension()];
        return emitConvert(kb_, i, kb_.b.getI64Type(), elementOf(o));
      })
      .Case([&](PadOp p) { return padAt(p, idx); })
      .Case([&](ConcatenateOp c) { return concatenateAt(c, idx); })
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
  auto padding = [&] {
    return generate(p.getPaddingValue(), index({}, kb_.index(0)));
  };
  // Dims the pad does not widen, and dims whose index range (a column
  // piece's) lies inside the operand, need no test; one whose range lies
  // outside makes the point padding.
  ArrayRef<int64_t> out = shapeOf(p);
  SmallVector<size_t> tested;
  for (size_t k = 0; k < in.size(); ++k) {
    auto range = rangeOf(at[k]);
    if (low[k] == 0 && in[k] == out[k])
      continue;
    if (!range)
      tested.push_back(k);
    else if (range->second - low[k] <= 0 || range->first - low[k] >= in[k])
      return padding();
    else if (range->first - low[k] < 0 || range->second - low[k] > in[k])
      tested.push_back(k);
  }
  SmallVector<Value> src;
  for (size_t k = 0; k < in.size(); ++k)
    src.push_back(offsetIndex(at[k], -low[k]));
  if (tested.empty())
    return generate(p.getOperand(), index(in, Value(), src));
  Value inside = arith::ConstantIntOp::create(kb_.b, kb_.b.getI1Type(), 1);
  for (size_t k : tested)
    // Unsigned j < n also rejects negative j.
    inside = arith::AndIOp::create(
        kb_.b, inside,
        arith::CmpIOp::create(kb_.b, arith::CmpIPredicate::ult, src[k],
                              kb_.index(in[k])));
  Type t = computeType(elementOf(p));
  auto ifOp = scf::IfOp::create(kb_.b, TypeRange{t}, inside, true);
  OpBuilder::InsertionGuard guard(kb_.b);
  kb_.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(kb_.b, scoped([&] {
                         return generate(p.getOperand(),
                                         index(in, Value(), src));
                       }));
  kb_.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(kb_.b, scoped(padding));
  return ifOp.getResult(0);
}

Value FusionEmitter::concatenateAt(ConcatenateOp c, Index *idx) {
  int64_t axis = c.getDimension();
  SmallVector<int64_t> starts = concatenationStarts(c);
  // Taken here: a position first made inside a branch would not dominate
  // the other branches' compares.
  Value position = multiOf(idx)[axis];
  auto inputAt = [&](unsigned k) {
    Value input = c.getInputs()[k];
    SmallVector<Value> local(multiOf(idx));
    local[axis] = offsetIndex(local[axis], -starts[k]);
    return generate(input, index(shapeOf(input), Value(), local));
  };
  // A position whose range (a column piece's) lies in one input reads it.
  if (auto range = rangeOf(position))
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t end = k + 1 < starts.size() ? starts[k + 1] : shapeOf(c)[axis];
      if (range->first >= starts[k] && range->second <= end)
        return inputAt(k);
    }
  return kb_.pickRange(
      position, starts, computeType(elementOf(c)),
      [&](unsigned k) { return scoped([&] { return inputAt(k); }); });
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
  if (lanes_ > 1)
    lane_ = kb_.call("kiln_lane_id", {kb_.b.getI64Type()}, {})[0];
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
  if (lanes_ > 1)
    first = arith::AndIOp::create(
        kb_.b, first,
        arith::CmpIOp::create(kb_.b, arith::CmpIPredicate::eq, lane_,
                              kb_.index(0)));
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

void FusionEmitter::storeResults(ResultKind kind, Index *idx) {
  auto yielded = body_.getTerminator()->getOperands();
  SmallVector<std::pair<unsigned, Value>> stores;
  for (auto [k, v] : llvm::enumerate(yielded))
    if (plan_.resultKind[k] == kind)
      stores.push_back({k, generate(v, reshaped(idx, shapeOf(v)))});
  Value flat = flatOf(idx);
  for (auto [k, value] : stores) {
    if (groupStores_)
      groupStores_->push_back({k, flat, value});
    else
      kb_.store(numInputs_ + k, elementOf(yielded[k]), flat, value);
  }
}

void FusionEmitter::storeGroup() {
  // Result by result, so that each result's stores are neighbours.
  auto yielded = body_.getTerminator()->getOperands();
  llvm::stable_sort(*groupStores_, [](const Store &a, const Store &b) {
    return a.result < b.result;
  });
  for (const Store &st : *groupStores_)
    kb_.store(numInputs_ + st.result, elementOf(yielded[st.result]), st.flat,
              st.value);
  groupStores_.reset();
}

namespace {

bool canUseLanes(const FusionPlan &plan, int64_t minLanedRow) {
  if (plan.columns || plan.levels == 0 || plan.rowLength < minLanedRow)
    return false;
  // Lanes over a strided row would each read their own cache line; one
  // thread per row reads neighbouring elements across the warp instead,
  // unless the rows are too few to keep the GPU busy that way.
  if (!reducesInnermost(plan.space, plan.reduced) &&
      plan.rowCount > kMostStridedLanedRows)
    return false;
  // The shuffles move f32 and f64 accumulators (sums of floats are f64,
  // max/min of f32 are f32); integer reductions keep a thread per row.
  for (auto [reduce, level] : plan.reduces) {
    OpBuilder b(reduce);
    Type acc = accumulatorType(b, reduce.getKind(),
                               elementOf(reduce.getOperand()));
    if (!acc.isF32() && !acc.isF64())
      return false;
  }
  return true;
}

} // namespace

FailureOr<KernelInfo> emitFusionKernel(Operation *op, ModuleOp module,
                                       StringRef name,
                                       FusionKernelOptions options) {
  FailureOr<FusionPlan> plan = planFusion(op);
  if (failed(plan))
    return failure();
  // Few columns summed over outer dims (a split sum's last stage): a warp
  // a column rather than a thread (kMostStridedLanedRows). Only without
  // full-shaped results, whose in-place reads the column plan decided
  // (fusionReadsInputInPlace).
  if (options.lanes > 1 && plan->columns &&
      !llvm::is_contained(plan->resultKind, ResultKind::full))
    if (FailureOr<FusionPlan> rows = planFusion(op, /*allowColumns=*/false);
        succeeded(rows) && rows->rowCount <= kMostStridedLanedRows &&
        canUseLanes(*rows, options.minLanedRow))
      plan = std::move(rows);
  if (options.lanes > 1 && !canUseLanes(*plan, options.minLanedRow))
    options.lanes = 1;
  if (options.innermostRows && options.lanes == 1 &&
      options.elementsPerIndex == 1)
    splitInnermostRows(*plan, op);
  unsigned lanes = options.lanes;
  // Several elements per index: whole Philox blocks (4 or 8 elements); as
  // rows, in a fusion without reduces whose row count they divide; as
  // points of a row, for the lanes of a warp (FusionEmitter::overRow);
  // else none.
  if (options.elementsPerIndex != 4 && options.elementsPerIndex != 8)
    options.elementsPerIndex = 1;
  int64_t perIndex =
      plan->levels == 0 && !plan->columns
          ? wholeBlocksDividing(plan->rowCount, options.elementsPerIndex)
          : 1;
  if (perIndex == 1 && lanes == 1)
    options.elementsPerIndex = 1;
  auto fusion = cast<FusionOp>(op);
  unsigned numBuffers = fusion.getNumOperands() + fusion.getNumResults();
  // Column mode keeps partial sums in memory across the row loop, so its
  // loops are not annotated parallel (the row loop carries them).
  buildKernel(
      module, name, numBuffers,
      [&](KernelBuilder &kb, Value b, Value e) {
        FusionEmitter(kb, fusion, *plan, options, perIndex).emit(b, e);
      },
      /*parallel=*/!plan->columns);
  // Work per row: every pass reads the row once and each op runs per point.
  int64_t passes =
      plan->columns ? 1 + int64_t(plan->fullReadsReduce) : plan->levels + 1;
  int64_t work = std::max<int64_t>(1, plan->rowLength) *
                 std::max<int64_t>(1, plan->bodyOps) * passes;
  KernelInfo info{plan->rowCount / perIndex * lanes, true,
                  work * perIndex / lanes};
  info.lanes = lanes;
  info.loop = plan->reduces.empty() && !plan->columns;
  return info;
}

} // namespace kiln::compiler::cpu::detail
