// Column reductions of a fusion kernel (FusionPlan::columns): the reduced
// dims are the outer ones, so a thread takes a block of columns and walks
// the rows, its columns' accumulators on the stack (see FusionEmitter.cpp).
#include "compiler/cpu/FusionEmitter.h"

namespace kiln::compiler::cpu::detail {

using namespace mlir;

void FusionEmitter::emitColumns(Value begin, Value end) {
  // S viewed as [rows, columns] (reduced dims outer): the range is columns.
  // Per block of at most kColumnChunk columns (fewer with several
  // reduces): (1) reduced rows outer, the block's columns inner,
  // accumulating into stack arrays (contiguous, vectorised reads), full
  // results stored there too unless they read a reduce result; (2) if
  // they do, a second pass storing them; (3) the row-shaped (here:
  // column) results. Each column adds its rows in row-major order, as the
  // reference.
  SmallVector<ReduceOp> reduces;
  SmallVector<Type> accTypes;
  SmallVector<Value> accs;
  for (auto [reduce, level] : plan_.reduces) {
    reduces.push_back(reduce);
    accTypes.push_back(accumulatorType(kb_.b, reduce.getKind(),
                                       elementOf(reduce.getOperand())));
  }
  int64_t chunk = kColumnChunk;
  while (chunk > 256 &&
         chunk * static_cast<int64_t>(reduces.size()) > kColumnChunk)
    chunk /= 2;
  for (Type type : accTypes)
    accs.push_back(kb_.stackArray(type, chunk));
  // Each piece's blocks (FusionPieces.cpp) over the part of [begin, end)
  // in it: its columns carry the piece as their range.
  SmallVector<int64_t> pieces = columnPieces();
  for (size_t p = 0; p + 1 < pieces.size(); ++p) {
    Value lo = begin, hi = end;
    if (pieces.size() > 2) {
      piece_ = {pieces[p], pieces[p + 1]};
      lo = arith::MaxSIOp::create(kb_.b, begin, kb_.index(pieces[p]));
      hi = arith::MaxSIOp::create(
          kb_.b, lo,
          arith::MinSIOp::create(kb_.b, end, kb_.index(pieces[p + 1])));
    }
    emitColumnBlocks(lo, hi, chunk, accs, accTypes, reduces);
  }
  piece_.reset();
}

void FusionEmitter::emitColumnBlocks(Value begin, Value end, int64_t chunk,
                                     ArrayRef<Value> accs,
                                     ArrayRef<Type> accTypes,
                                     ArrayRef<ReduceOp> reduceOps) {
  // Op handles are used by value (their accessors are not const).
  SmallVector<ReduceOp> reduces(reduceOps);
  SmallVector<int64_t> rowShape = sizesOf(plan_.kept),
                       reducedShape = sizesOf(plan_.reduced);
  SmallVector<int64_t> reducedStrides = rowMajorStrides(reducedShape);
  int64_t columns = plan_.columns->columns;
  bool anyFull = llvm::is_contained(plan_.resultKind, ResultKind::full);
  bool fullInFirstPass = anyFull && !plan_.fullReadsReduce;
  kb_.forChunks(begin, end, chunk, [&](Value c0, Value w) {
    scoped([&] {
      Value zero = kb_.index(0);
      // The block's columns are independent: each has its own accumulator
      // and points (a full result may be an input updated in place, each
      // point read before it is stored).
      auto overBlock = [&](const std::function<void(Value j)> &fn) {
        kb_.parallelLoop(zero, w, {}, [&](Value j, ValueRange) {
          return scoped([&] {
            fn(j);
            return SmallVector<Value>{};
          });
        });
      };
      // The point (ivs, column c0 + j), with both index forms.
      auto columnPoint = [&](ArrayRef<Value> ivs, Value rowBase, Value j) {
        Value c = arith::AddIOp::create(kb_.b, c0, j);
        if (piece_)
          ranges_[c] = *piece_;
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
          storeResults(ResultKind::full, x);
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
          storeResults(ResultKind::full, x);
          rowScalars_.clear();
        });
      // 3. Column results.
      overBlock([&](Value j) {
        setColumnScalars(j);
        Value c = arith::AddIOp::create(kb_.b, c0, j);
        storeResults(ResultKind::row,
                     index(rowShape, c, keptIndices(c, rowShape)));
        rowScalars_.clear();
      });
      return 0;
    });
  });
}

} // namespace kiln::compiler::cpu::detail
