// Element access, index arithmetic and loop helpers for CPU kernels. Indices
// are i64 throughout (no `index` type), so kernels lower without an index
// conversion and the runtime's int64 ranges pass straight through.
#include "compiler/cpu/KernelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln::compiler::cpu {

using namespace mlir;

Type computeType(Type storage) {
  if (storage.isF16() || storage.isBF16())
    return Float32Type::get(storage.getContext());
  return storage;
}

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t k = static_cast<int64_t>(shape.size()) - 2; k >= 0; --k)
    strides[k] = strides[k + 1] * shape[k + 1];
  return strides;
}

/// i1 lives in memory as one byte.
static Type memoryType(Type storage) {
  if (storage.isInteger(1))
    return IntegerType::get(storage.getContext(), 8);
  return storage;
}

KernelBuilder::KernelBuilder(ImplicitLocOpBuilder &b, ModuleOp module,
                             Value args, unsigned numBuffers)
    : b(b), module(module), entry_(b.getInsertionBlock()) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  for (unsigned i = 0; i < numBuffers; ++i) {
    Value slot = LLVM::GEPOp::create(
        b, ptrType, ptrType, args,
        ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(static_cast<int32_t>(i))});
    buffers_.push_back(LLVM::LoadOp::create(b, ptrType, slot));
  }
}

Value KernelBuilder::index(int64_t v) {
  return arith::ConstantIntOp::create(b, b.getI64Type(), v);
}

Value KernelBuilder::constant(Type type, double v) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, b.getFloatAttr(type, v));
  return intConstant(type, static_cast<int64_t>(v));
}

Value KernelBuilder::intConstant(Type type, int64_t v) {
  return arith::ConstantOp::create(b, b.getIntegerAttr(type, v));
}

Value KernelBuilder::address(unsigned buffer, Type storage, Value idx) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::GEPOp::create(b, ptrType, memoryType(storage), buffers_[buffer],
                             ValueRange{idx});
}

Value KernelBuilder::load(unsigned buffer, Type storage, Value idx) {
  Value v = LLVM::LoadOp::create(b, memoryType(storage),
                                 address(buffer, storage, idx));
  if (storage.isInteger(1))
    return arith::TruncIOp::create(b, b.getI1Type(), v);
  if (storage.isF16() || storage.isBF16())
    return arith::ExtFOp::create(b, b.getF32Type(), v);
  return v;
}

void KernelBuilder::store(unsigned buffer, Type storage, Value idx,
                          Value value) {
  if (storage.isInteger(1))
    value = arith::ExtUIOp::create(b, b.getI8Type(), value);
  else if (storage.isF16() || storage.isBF16())
    value = arith::TruncFOp::create(b, storage, value);
  LLVM::StoreOp::create(b, value, address(buffer, storage, idx));
}

Value KernelBuilder::stackArray(Type type, int64_t n) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  OpBuilder::InsertionGuard guard(b);
  // The entry block, so the alloca is static (one stack slot per kernel).
  b.setInsertionPointToStart(entry_);
  Value count = index(n);
  return LLVM::AllocaOp::create(b, ptrType, type, count, /*alignment=*/64);
}

Value KernelBuilder::loadAt(Value array, Type type, Value idx) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value at = LLVM::GEPOp::create(b, ptrType, type, array, ValueRange{idx});
  return LLVM::LoadOp::create(b, type, at);
}

void KernelBuilder::storeAt(Value array, Value idx, Value value) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value at =
      LLVM::GEPOp::create(b, ptrType, value.getType(), array, ValueRange{idx});
  LLVM::StoreOp::create(b, value, at);
}

void KernelBuilder::forChunks(Value begin, Value end, int64_t width,
                              const std::function<void(Value, Value)> &body) {
  Value n = arith::SubIOp::create(b, end, begin);
  Value chunks = arith::DivUIOp::create(
      b, arith::AddIOp::create(b, n, index(width - 1)), index(width));
  forLoop(index(0), chunks, {}, [&](Value k, ValueRange) {
    Value start = arith::AddIOp::create(
        b, begin, arith::MulIOp::create(b, k, index(width)));
    Value count = arith::MinSIOp::create(b, index(width),
                                         arith::SubIOp::create(b, end, start));
    body(start, count);
    return SmallVector<Value>{};
  });
}

SmallVector<Value> KernelBuilder::delinearize(Value flat,
                                              ArrayRef<int64_t> shape) {
  SmallVector<Value> idx(shape.size());
  for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k >= 0; --k) {
    if (k == 0) {
      idx[k] = flat;
      break;
    }
    Value size = index(shape[k]);
    idx[k] = arith::RemUIOp::create(b, flat, size);
    flat = arith::DivUIOp::create(b, flat, size);
  }
  return idx;
}

Value KernelBuilder::linearize(ArrayRef<Value> idx, ArrayRef<int64_t> strides,
                               Value base) {
  Value sum = base ? base : index(0);
  for (size_t k = 0; k < idx.size(); ++k) {
    if (!idx[k])
      continue;
    Value term =
        strides[k] == 1
            ? idx[k]
            : arith::MulIOp::create(b, idx[k], index(strides[k])).getResult();
    sum = arith::AddIOp::create(b, sum, term);
  }
  return sum;
}

ValueRange KernelBuilder::forLoop(
    Value lb, Value ub, ValueRange inits,
    const std::function<SmallVector<Value>(Value, ValueRange)> &body) {
  return stridedLoop(lb, ub, index(1), inits, body);
}

Value KernelBuilder::pickRange(Value position, ArrayRef<int64_t> starts,
                               Type type,
                               const std::function<Value(unsigned)> &at) {
  std::function<Value(unsigned, unsigned)> pick = [&](unsigned lo,
                                                      unsigned hi) {
    if (hi - lo == 1)
      return at(lo);
    unsigned mid = lo + (hi - lo) / 2;
    Value below = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, position,
                                        index(starts[mid]));
    auto ifOp = scf::IfOp::create(b, TypeRange{type}, below, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, pick(lo, mid));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, pick(mid, hi));
    return ifOp.getResult(0);
  };
  return pick(0, starts.size());
}

ValueRange KernelBuilder::call(StringRef name, TypeRange results,
                               ValueRange args) {
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    callee = func::FuncOp::create(
        b, name, b.getFunctionType(TypeRange(args), results));
    callee.setPrivate();
  }
  return func::CallOp::create(b, callee, args).getResults();
}

ValueRange KernelBuilder::parallelLoop(
    Value lb, Value ub, ValueRange inits,
    const std::function<SmallVector<Value>(Value, ValueRange)> &body) {
  ValueRange results = stridedLoop(lb, ub, index(1), inits, body);
  // The loop just made is the op before the insertion point.
  auto loop = cast<scf::ForOp>(*std::prev(b.getInsertionPoint()));
  loop->setAttr(kParallelLoopAttr, LLVM::AccessGroupAttr::get(b.getContext()));
  return results;
}

ValueRange KernelBuilder::stridedLoop(
    Value lb, Value ub, Value step, ValueRange inits,
    const std::function<SmallVector<Value>(Value, ValueRange)> &body) {
  auto loop = scf::ForOp::create(
      b, lb, ub, step, inits,
      [&](OpBuilder &nested, Location loc, Value iv, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        SmallVector<Value> yielded = body(iv, carried);
        scf::YieldOp::create(b, yielded);
      });
  return loop.getResults();
}

SmallVector<Value> KernelBuilder::nestedLoops(
    ArrayRef<int64_t> shape, ValueRange inits,
    const std::function<SmallVector<Value>(ArrayRef<Value>, ValueRange)>
        &body) {
  SmallVector<Value> ivs;
  std::function<SmallVector<Value>(size_t, ValueRange)> level =
      [&](size_t depth, ValueRange carried) -> SmallVector<Value> {
    if (depth == shape.size())
      return body(ivs, carried);
    ValueRange results = forLoop(index(0), index(shape[depth]), carried,
                                 [&](Value iv, ValueRange inner) {
                                   ivs.push_back(iv);
                                   SmallVector<Value> out =
                                       level(depth + 1, inner);
                                   ivs.pop_back();
                                   return out;
                                 });
    return SmallVector<Value>(results.begin(), results.end());
  };
  return level(0, inits);
}

} // namespace kiln::compiler::cpu
