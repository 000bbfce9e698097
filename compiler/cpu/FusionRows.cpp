// Row reductions of a fusion kernel (the row mode of FusionEmitter.cpp): a
// thread, or a warp of lanes, takes a row and walks it once per reduce
// level, then once to store the full results; the stash (FusionPlan::stash*)
// keeps a value the passes would otherwise recompute. Column reductions are
// in FusionColumns.cpp.
#include "compiler/cpu/FusionEmitter.h"

namespace kiln::compiler::cpu::detail {

using namespace mlir;

SmallVector<Value> FusionEmitter::overRow(
    ArrayRef<int64_t> reducedShape, ValueRange inits,
    const std::function<SmallVector<Value>(ArrayRef<Value>, ValueRange)>
        &body) {
  int64_t length = 1;
  for (int64_t size : reducedShape)
    length *= size;
  if (lanes_ == 1) {
    int64_t unroll = rowUnroll_;
    while (unroll > 1 && length % unroll != 0)
      unroll /= 2;
    // Inside a group of rows the stores are already deferred.
    if (unroll < 2 || groupStores_)
      return kb_.nestedLoops(reducedShape, inits, body);
    return overRowUnrolled(reducedShape, length, unroll, inits, body);
  }
  if (int64_t step = lanePointsPerStep(reducedShape); step > 1) {
    // Each lane takes `step` neighbouring points (step lane, step lane + 1,
    // ..., then step lanes further): a row's draws of one Philox block then
    // have one counter block, whose index LLVM proves equal for each four
    // (the points' flat indices differ only in their two low bits, which
    // the block index drops) and computes once, and the loads of an input
    // are neighbours.
    Value first = arith::MulIOp::create(kb_.b, lane_, kb_.index(step));
    ValueRange out = kb_.stridedLoop(
        first, kb_.index(length), kb_.index(step * lanes_), inits,
        [&](Value j0, ValueRange carried) {
          SmallVector<Value> acc(carried.begin(), carried.end());
          for (int64_t i = 0; i < step; ++i) {
            Value j =
                i == 0 ? j0 : arith::AddIOp::create(kb_.b, j0, kb_.index(i));
            acc = body(keptIndices(j, reducedShape), acc);
          }
          return acc;
        });
    return SmallVector<Value>(out.begin(), out.end());
  }
  auto pointAt = [&](Value j, ValueRange carried) {
    SmallVector<Value> ivs = nonUnit(reducedShape).size() <= 1
                                 ? keptIndices(j, reducedShape)
                                 : kb_.delinearize(j, reducedShape);
    return body(ivs, carried);
  };
  // A long row a lane walks one point at a time (a reduction tree's last
  // stage: one warp, hundreds of points a lane) would have one load in
  // flight: with rowUnroll, whole groups of `unroll` of the lane's points
  // an iteration (every lane has all of them), the rest after; the lane
  // still adds its points in the same order.
  Value rest = lane_;
  SmallVector<Value> acc(inits.begin(), inits.end());
  if (int64_t groups = length / (rowUnroll_ * lanes_);
      rowUnroll_ > 1 && groups > 0 && !groupStores_) {
    int64_t span = rowUnroll_ * lanes_;
    ValueRange grouped = kb_.stridedLoop(
        kb_.index(0), kb_.index(groups * span), kb_.index(span), acc,
        [&](Value base, ValueRange carried) {
          SmallVector<Value> sums(carried.begin(), carried.end());
          Value first = arith::AddIOp::create(kb_.b, base, lane_);
          for (int64_t i = 0; i < rowUnroll_; ++i)
            sums = pointAt(i == 0 ? first
                                  : arith::AddIOp::create(
                                        kb_.b, first, kb_.index(i * lanes_)),
                           sums);
          return sums;
        });
    acc.assign(grouped.begin(), grouped.end());
    rest = arith::AddIOp::create(kb_.b, lane_, kb_.index(groups * span));
  }
  ValueRange out =
      kb_.stridedLoop(rest, kb_.index(length), kb_.index(lanes_), acc, pointAt);
  return SmallVector<Value>(out.begin(), out.end());
}

SmallVector<Value> FusionEmitter::overRowUnrolled(
    ArrayRef<int64_t> reducedShape, int64_t length, int64_t unroll,
    ValueRange inits,
    const std::function<SmallVector<Value>(ArrayRef<Value>, ValueRange)>
        &body) {
  // Points j0 .. j0 + unroll - 1 in row-major order, as the nest visits
  // them; every load of the group is made before its first store.
  ValueRange out = kb_.stridedLoop(
      kb_.index(0), kb_.index(length), kb_.index(unroll), inits,
      [&](Value j0, ValueRange carried) {
        SmallVector<Value> acc(carried.begin(), carried.end());
        groupStores_.emplace();
        for (int64_t i = 0; i < unroll; ++i) {
          Value j =
              i == 0 ? j0 : arith::AddIOp::create(kb_.b, j0, kb_.index(i));
          acc = body(keptIndices(j, reducedShape), acc);
        }
        storeGroup();
        return acc;
      });
  return SmallVector<Value>(out.begin(), out.end());
}

Value FusionEmitter::acrossLanes(ReduceKind kind, Value acc) {
  Type type = acc.getType();
  StringRef shuffle = type.isF64() ? "kiln_shfl_xor_f64" : "kiln_shfl_xor_f32";
  for (unsigned offset = lanes_ / 2; offset >= 1; offset /= 2) {
    Value other = kb_.call(
        shuffle, {type}, {acc, kb_.intConstant(kb_.b.getI32Type(), offset)})[0];
    acc = accumulate(kb_, kind, acc, other);
  }
  return acc;
}

void FusionEmitter::inFirstLane(const std::function<void()> &fn) {
  if (lanes_ == 1)
    return fn();
  Value first = arith::CmpIOp::create(kb_.b, arith::CmpIPredicate::eq, lane_,
                                      kb_.index(0));
  auto ifOp = scf::IfOp::create(kb_.b, TypeRange{}, first, false);
  OpBuilder::InsertionGuard guard(kb_.b);
  kb_.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scoped([&] {
    fn();
    return 0;
  });
}

void FusionEmitter::emitRows(Value begin, Value end) {
  if (rowsPerIndex_ == 1) {
    kb_.forLoop(begin, end, {}, [&](Value r, ValueRange) {
      emitRow(r);
      return SmallVector<Value>{};
    });
    return;
  }
  // Index g computes rows n g .. n g + n - 1 (n = rowsPerIndex_, 4 or 8),
  // straight-line: their Philox blocks are n g / 4 onwards, and LLVM
  // merges their neighbouring accesses.
  int64_t blocks = rowsPerIndex_ / kPhiloxLanes;
  kb_.forLoop(begin, end, {}, [&](Value g, ValueRange) {
    Value first = arith::MulIOp::create(kb_.b, g, kb_.index(rowsPerIndex_));
    Value firstBlock = arith::MulIOp::create(kb_.b, g, kb_.index(blocks));
    for (auto [rng, state] : rngState_) {
      SmallVector<Value> &lanes = groupLanes_[rng];
      for (int64_t j = 0; j < blocks; ++j) {
        Value block =
            j == 0 ? firstBlock
                   : arith::AddIOp::create(kb_.b, firstBlock, kb_.index(j));
        llvm::append_range(lanes,
                           philoxGroup(kb_, state.first, state.second, block));
      }
    }
    // When the innermost dim holds whole groups, the group's rows share
    // the first's outer indices: one division for the group, not one per
    // row, and LLVM sees that a broadcast operand's reads (a bias) are
    // neighbours too.
    SmallVector<int64_t> rowShape = sizesOf(plan_.kept);
    SmallVector<Value> firstKept;
    if (nonUnit(rowShape).size() > 1 && rowShape.back() % rowsPerIndex_ == 0)
      firstKept = keptIndices(first, rowShape);
    groupStores_.emplace();
    for (int64_t k = 0; k < rowsPerIndex_; ++k) {
      Value r =
          k == 0 ? first : arith::AddIOp::create(kb_.b, first, kb_.index(k));
      rowInGroup_[r] = k;
      SmallVector<Value> kept = firstKept;
      if (!kept.empty() && k > 0)
        kept.back() = arith::AddIOp::create(kb_.b, kept.back(), kb_.index(k));
      emitRow(r, kept);
    }
    // Every row's values are generated before any store, so an output may
    // overwrite an input read here (each row reads it at its own index).
    storeGroup();
    rowInGroup_.clear();
    groupLanes_.clear();
    return SmallVector<Value>{};
  });
}

int64_t FusionEmitter::lanePointsPerStep(ArrayRef<int64_t> reducedShape) const {
  int64_t length = 1;
  for (int64_t size : reducedShape)
    length *= size;
  if (lanes_ == 1 || nonUnit(reducedShape).size() > 1)
    return 1;
  // 8 only where every lane gets whole steps: a row of 128 at 8 a step
  // would leave half the warp idle.
  int64_t step = wholeBlocksDividing(length / lanes_, elementsPerIndex_);
  if (step == 2 * kPhiloxLanes && length % (step * lanes_) == 0)
    return step;
  return wholeBlocksDividing(length, std::min(elementsPerIndex_, 4u));
}

std::optional<SmallVector<SmallVector<Index *>>>
FusionEmitter::heldPoints(ArrayRef<Value> keptIdx) {
  SmallVector<int64_t> reducedShape = sizesOf(plan_.reduced);
  int64_t length = plan_.rowLength;
  bool oneDim = nonUnit(reducedShape).size() <= 1;
  // The points in overRow's order, so that sums add in the same order.
  int64_t step = lanePointsPerStep(reducedShape);
  if (!holdRows_ || lanes_ == 1 || length % (lanes_ * step) != 0 ||
      length / lanes_ > kMostHeldPoints)
    return std::nullopt;
  Value first = arith::MulIOp::create(kb_.b, lane_, kb_.index(step));
  SmallVector<SmallVector<Index *>> groups;
  for (int64_t base = 0; base < length; base += lanes_ * step) {
    groups.emplace_back();
    for (int64_t i = 0; i < step; ++i) {
      Value j = base + i == 0
                    ? first
                    : arith::AddIOp::create(kb_.b, first, kb_.index(base + i));
      groups.back().push_back(
          point(keptIdx, oneDim ? keptIndices(j, reducedShape)
                                : kb_.delinearize(j, reducedShape)));
    }
  }
  return groups;
}

void FusionEmitter::fillDraws(const FusionPlan::Draw &draw, Value row,
                              ArrayRef<Value> keptIdx) {
  SmallVector<int64_t> reducedShape = sizesOf(plan_.reduced);
  // Whole Philox blocks in a row: the row's reduced points take
  // consecutive draws (their strides are the row's own, row-major) from a
  // block boundary (every kept stride a multiple of 4). Then each block is
  // computed once for its four draws, where generating them point by point
  // would compute it four times (LLVM cannot tell that their blocks are
  // equal through the index arithmetic).
  bool blocks = !draw.strides.empty() && plan_.rowLength % kPhiloxLanes == 0;
  SmallVector<int64_t> rowStrides = rowMajorStrides(reducedShape);
  for (auto [k, d] : llvm::enumerate(plan_.reduced))
    blocks = blocks && draw.strides[d] == rowStrides[k];
  for (int64_t d : plan_.kept)
    blocks = blocks && draw.strides[d] % kPhiloxLanes == 0;
  Type type = elementOf(draw.value);
  if (blocks) {
    // The row's first block: its first draw's flat index over 4.
    Value base = kb_.index(0);
    for (auto [k, d] : llvm::enumerate(plan_.kept))
      if (draw.strides[d] != 0)
        base = arith::AddIOp::create(
            kb_.b, base,
            arith::MulIOp::create(kb_.b, keptIdx[k],
                                  kb_.index(draw.strides[d] / kPhiloxLanes)));
    auto [key, counter] = rngState_.lookup(draw.rng);
    kb_.forLoop(kb_.index(0), kb_.index(plan_.rowLength / kPhiloxLanes), {},
                [&](Value q, ValueRange) {
                  SmallVector<Value> lanes = philoxGroup(
                      kb_, key, counter, arith::AddIOp::create(kb_.b, base, q));
                  Value first =
                      arith::MulIOp::create(kb_.b, q, kb_.index(kPhiloxLanes));
                  for (int64_t k = 0; k < kPhiloxLanes; ++k)
                    kb_.storeAt(
                        row, arith::AddIOp::create(kb_.b, first, kb_.index(k)),
                        uniformFromLanes(kb_, lanes, kb_.index(k), type));
                  return SmallVector<Value>{};
                });
    return;
  }
  kb_.forLoop(kb_.index(0), kb_.index(plan_.rowLength), {},
              [&](Value j, ValueRange) {
                return scoped([&] {
                  Index *x = point(keptIdx, keptIndices(j, reducedShape));
                  kb_.storeAt(row, j, generate(draw.value, x));
                  return SmallVector<Value>{};
                });
              });
}

void FusionEmitter::emitRow(Value r, ArrayRef<Value> givenKept) {
  SmallVector<int64_t> rowShape = sizesOf(plan_.kept),
                       reducedShape = sizesOf(plan_.reduced);
  bool anyFull = llvm::is_contained(plan_.resultKind, ResultKind::full);
  scoped([&] {
    rowScalars_.clear();
    // The row's kept indices, split from r only if a loop nest needs them
    // (at the row's scope, so every loop nest may use them).
    SmallVector<Value> keptIdx(givenKept);
    if (keptIdx.empty() && (plan_.levels > 0 || anyFull))
      keptIdx = keptIndices(r, rowShape);
    auto kept = [&]() -> ArrayRef<Value> { return keptIdx; };
    Index *rowIdx =
        keptIdx.empty() ? index(rowShape, r) : index(rowShape, r, keptIdx);
    // A lane's share of a short row, held: every pass reads the values the
    // first generated (at the row's scope), so the inputs are loaded and
    // the body computed once, and the full results are stored after the
    // last pass, a group of points at a time.
    std::optional<SmallVector<SmallVector<Index *>>> held;
    if (plan_.levels > 0)
      held = heldPoints(keptIdx);
    // One pass that reads the inputs, accumulates and stores the full
    // results (which then need no stash: each is stored where computed).
    bool fullWhileReducing = !held && storeWhileReducing_ && anyFull &&
                             plan_.levels == 1 && !plan_.fullReadsReduce;
    Value stash = fullWhileReducing || held ? Value() : plan_.stashValue;
    unsigned stashBuffer = numInputs_ + std::max(plan_.stashResult, 0);
    // Scratch rows: stack arrays a row long, for one row at a time (one
    // lane, rows one after another), within mostScratchStashBytes_ in all;
    // none (a null value) once that is spent.
    int64_t scratchLeft =
        lanes_ == 1 && rowsPerIndex_ == 1 ? mostScratchStashBytes_ : 0;
    auto scratchRow = [&](Type type) -> Value {
      int64_t bytes = plan_.rowLength * type.getIntOrFloatBitWidth() / 8;
      if (bytes > scratchLeft)
        return Value();
      scratchLeft -= bytes;
      return kb_.stackArray(type, plan_.rowLength);
    };
    // Without a result to hold it, the stash takes a scratch row, or waits
    // to be recomputed.
    Value scratch;
    if (stash && plan_.stashResult < 0) {
      scratch = scratchRow(elementOf(stash));
      if (!scratch)
        stash = Value();
    }
    // Point x (at ivs of the row) of the stash: its place in the stash
    // result's buffer, or in the scratch array.
    auto rowOffset = [&](ArrayRef<Value> ivs) {
      return kb_.linearize(ivs, rowMajorStrides(reducedShape));
    };
    auto storeStash = [&](Index *x, ArrayRef<Value> ivs) {
      Value value = generate(stash, x);
      if (scratch)
        kb_.storeAt(scratch, rowOffset(ivs), value);
      else
        kb_.store(stashBuffer, elementOf(stash), flatOf(x), value);
    };
    auto loadStash = [&](Index *x, ArrayRef<Value> ivs) {
      memo_[{stash, x}] =
          scratch ? kb_.loadAt(scratch, elementOf(stash), rowOffset(ivs))
                  : kb_.load(stashBuffer, elementOf(stash), flatOf(x));
    };
    // The row's draws (FusionPlan::draws), generated once into scratch
    // rows before the first pass; every pass then reads them there.
    SmallVector<std::pair<const FusionPlan::Draw *, Value>> drawRows;
    for (const FusionPlan::Draw &draw : plan_.draws) {
      Value row = scratchRow(elementOf(draw.value));
      if (!row)
        break;
      drawRows.push_back({&draw, row});
    }
    for (auto [draw, row] : drawRows)
      fillDraws(*draw, row, keptIdx);
    auto loadDraws = [&](Index *x, ArrayRef<Value> ivs) {
      for (auto [draw, row] : drawRows)
        memo_[{draw->value, x}] =
            kb_.loadAt(row, elementOf(draw->value), rowOffset(ivs));
    };
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
      bool stashHere = stash && level == plan_.stashLevel;
      if (stashHere)
        overRow(reducedShape, {}, [&](ArrayRef<Value> ivs, ValueRange) {
          return scoped([&] {
            // After every read of the point
            // (FusionPlan::stash*).
            Index *x = point(kept(), ivs);
            loadDraws(x, ivs);
            storeStash(x, ivs);
            return SmallVector<Value>{};
          });
        });
      SmallVector<Value> totals = inits;
      if (held)
        for (ArrayRef<Index *> points : *held)
          for (Index *x : points)
            for (auto [reduce, acc] : llvm::zip(group, totals))
              acc = accumulate(kb_, reduce.getKind(), acc,
                               generate(reduce.getOperand(), x));
      else
        totals = overRow(
            reducedShape, inits, [&](ArrayRef<Value> ivs, ValueRange carried) {
              return scoped([&] {
                Index *x = point(kept(), ivs);
                loadDraws(x, ivs);
                if (stash && level >= plan_.stashLevel)
                  loadStash(x, ivs);
                SmallVector<Value> operands;
                for (ReduceOp reduce : group)
                  operands.push_back(generate(reduce.getOperand(), x));
                if (fullWhileReducing)
                  storeResults(ResultKind::full, x);
                SmallVector<Value> next;
                for (auto [reduce, acc, operand] :
                     llvm::zip(group, carried, operands))
                  next.push_back(
                      accumulate(kb_, reduce.getKind(), acc, operand));
                return next;
              });
            });
      for (auto [reduce, total] : llvm::zip(group, totals))
        rowScalars_[reduce.getResult()] = finishReduction(
            kb_, lanes_ > 1 ? acrossLanes(reduce.getKind(), total) : total,
            elementOf(reduce.getOperand()));
    }
    // 2. Results shaped like S; every value of the point is generated
    // before any store, so an output may overwrite an input read here.
    if (anyFull && held) {
      // A group's stores after its values (one 16-byte store a result),
      // before the next group's: every group's results at once would keep
      // them all live.
      for (ArrayRef<Index *> points : *held) {
        groupStores_.emplace();
        for (Index *x : points)
          storeResults(ResultKind::full, x);
        storeGroup();
      }
    } else if (anyFull && !fullWhileReducing)
      overRow(reducedShape, {}, [&](ArrayRef<Value> ivs, ValueRange) {
        return scoped([&] {
          Index *x = point(kept(), ivs);
          loadDraws(x, ivs);
          if (stash)
            loadStash(x, ivs);
          storeResults(ResultKind::full, x);
          return SmallVector<Value>{};
        });
      });
    // 3. Results shaped like a row, after every read of the row: by lane
    // 0 once every lane is past its reads (one may overwrite an input).
    if (lanes_ > 1)
      kb_.call("kiln_syncwarp", {}, {});
    inFirstLane([&] { storeResults(ResultKind::row, rowIdx); });
    return 0;
  });
}

} // namespace kiln::compiler::cpu::detail
