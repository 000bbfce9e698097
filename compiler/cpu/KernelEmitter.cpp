// Kernels for elementwise ops and data-movement ops (fusions: FusionEmitter.cpp).
// Every kernel loops over its output's flattened elements in [begin, end);
// an output element's flat index is split into per-dimension indices only
// where the op moves data, and the source offset is rebuilt from them.
// Reductions, contractions, indexing and RNG live in ReductionKernels.cpp.
#include "compiler/cpu/KernelEmitter.h"
#include "compiler/cpu/ScalarOps.h"

#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace kiln::compiler::cpu {

using namespace mlir;

namespace detail {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}
int64_t numElementsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

void buildKernel(ModuleOp module, StringRef name, unsigned numBuffers,
                 const BodyFn &body, bool parallel) {
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(UnknownLoc::get(ctx), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type();
  auto func =
      func::FuncOp::create(b, name, b.getFunctionType({ptrType, i64, i64}, {}));
  if (parallel)
    func->setAttr(kParallelAttr, b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelBuilder kb(b, module, entry->getArgument(0), numBuffers);
  body(kb, entry->getArgument(1), entry->getArgument(2));
  func::ReturnOp::create(b);
}

SmallVector<int64_t> concatenationStarts(Operation *concatenate) {
  auto op = cast<ConcatenateOp>(concatenate);
  SmallVector<int64_t> starts;
  int64_t start = 0;
  for (Value input : op.getInputs()) {
    starts.push_back(start);
    start += shapeOf(input)[op.getDimension()];
  }
  return starts;
}

} // namespace detail

using namespace detail;

namespace {

/// The info of a kernel of this file: one index per output element.
KernelInfo loopKernel(int64_t rangeSize) {
  KernelInfo info{rangeSize, true};
  info.loop = true;
  return info;
}

/// Calls `element(i)` for each output flat index i in [begin, end).
void forEachElement(KernelBuilder &kb, Value begin, Value end,
                    const std::function<void(Value)> &element) {
  kb.forLoop(begin, end, {}, [&](Value i, ValueRange) {
    element(i);
    return SmallVector<Value>{};
  });
}

FailureOr<KernelInfo> emitElementwise(Operation *op, ModuleOp module,
                                      StringRef name) {
  unsigned n = op->getNumOperands();
  Value result = op->getResult(0);
  buildKernel(module, name, n + 1, [&](KernelBuilder &kb, Value b, Value e) {
    forEachElement(kb, b, e, [&](Value i) {
      SmallVector<Value> in;
      for (Value operand : op->getOperands())
        in.push_back(kb.load(in.size(), elementOf(operand), i));
      FailureOr<Value> r = emitScalarOp(kb, op, in);
      assert(succeeded(r) && "emitElementwise on a non-elementwise op");
      kb.store(n, elementOf(result), i, *r);
    });
  });
  return loopKernel(numElementsOf(result));
}

/// A data-movement op: output element i = operand element offset(i).
FailureOr<KernelInfo> emitGatherLike(
    Operation *op, ModuleOp module, StringRef name,
    const std::function<Value(KernelBuilder &, ArrayRef<Value>)> &offset) {
  Value operand = op->getOperand(0), result = op->getResult(0);
  buildKernel(module, name, 2, [&](KernelBuilder &kb, Value b, Value e) {
    forEachElement(kb, b, e, [&](Value i) {
      SmallVector<Value> idx = kb.delinearize(i, shapeOf(result));
      Value v = kb.load(0, elementOf(operand), offset(kb, idx));
      kb.store(1, elementOf(result), i, v);
    });
  });
  return loopKernel(numElementsOf(result));
}

FailureOr<KernelInfo> emitBroadcast(BroadcastInDimOp op, ModuleOp module,
                                    StringRef name) {
  ArrayRef<int64_t> in = shapeOf(op.getOperand());
  SmallVector<int64_t> strides = rowMajorStrides(in);
  ArrayRef<int64_t> dims = op.getBroadcastDimensions();
  return emitGatherLike(op, module, name,
                        [&](KernelBuilder &kb, ArrayRef<Value> idx) {
                          SmallVector<Value> src(in.size());
                          for (size_t k = 0; k < in.size(); ++k)
                            if (in[k] != 1)
                              src[k] = idx[dims[k]];
                          return kb.linearize(src, strides);
                        });
}

FailureOr<KernelInfo> emitTranspose(TransposeOp op, ModuleOp module,
                                    StringRef name) {
  SmallVector<int64_t> strides = rowMajorStrides(shapeOf(op.getOperand()));
  ArrayRef<int64_t> perm = op.getPermutation();
  SmallVector<int64_t> permuted;
  for (int64_t p : perm)
    permuted.push_back(strides[p]);
  return emitGatherLike(op, module, name,
                        [&](KernelBuilder &kb, ArrayRef<Value> idx) {
                          return kb.linearize(idx, permuted);
                        });
}

FailureOr<KernelInfo> emitSlice(SliceOp op, ModuleOp module, StringRef name) {
  SmallVector<int64_t> strides = rowMajorStrides(shapeOf(op.getOperand()));
  SmallVector<int64_t> start(op.getStartIndices()), step(op.getStrides());
  int64_t base = 0;
  SmallVector<int64_t> scaled;
  for (size_t k = 0; k < strides.size(); ++k) {
    base += start[k] * strides[k];
    scaled.push_back(step[k] * strides[k]);
  }
  return emitGatherLike(op, module, name,
                        [&](KernelBuilder &kb, ArrayRef<Value> idx) {
                          return kb.linearize(idx, scaled, kb.index(base));
                        });
}

FailureOr<KernelInfo> emitConcatenate(ConcatenateOp op, ModuleOp module,
                                      StringRef name) {
  Value result = op.getResult();
  int64_t dim = op.getDimension();
  unsigned n = op.getNumOperands();
  Type elem = elementOf(result);
  SmallVector<int64_t> starts = concatenationStarts(op);
  buildKernel(module, name, n + 1, [&](KernelBuilder &kb, Value b, Value e) {
    forEachElement(kb, b, e, [&](Value i) {
      SmallVector<Value> idx = kb.delinearize(i, shapeOf(result));
      Value value =
          kb.pickRange(idx[dim], starts, computeType(elem), [&](unsigned k) {
            SmallVector<Value> local(idx);
            local[dim] =
                arith::SubIOp::create(kb.b, idx[dim], kb.index(starts[k]));
            return kb.load(
                k, elem,
                kb.linearize(local, rowMajorStrides(shapeOf(op.getOperand(k)))));
          });
      kb.store(n, elem, i, value);
    });
  });
  return loopKernel(numElementsOf(result));
}

FailureOr<KernelInfo> emitPad(PadOp op, ModuleOp module, StringRef name) {
  Value result = op.getResult(), operand = op.getOperand();
  ArrayRef<int64_t> in = shapeOf(operand);
  SmallVector<int64_t> low(op.getEdgePaddingLow());
  SmallVector<int64_t> strides = rowMajorStrides(in);
  Type elem = elementOf(result);
  buildKernel(module, name, 3, [&](KernelBuilder &kb, Value b, Value e) {
    forEachElement(kb, b, e, [&](Value i) {
      SmallVector<Value> idx = kb.delinearize(i, shapeOf(result));
      Value inside = arith::ConstantIntOp::create(kb.b, kb.b.getI1Type(), 1);
      SmallVector<Value> src;
      for (size_t k = 0; k < in.size(); ++k) {
        Value j = arith::SubIOp::create(kb.b, idx[k], kb.index(low[k]));
        // Unsigned j < n also rejects negative j.
        Value ok = arith::CmpIOp::create(kb.b, arith::CmpIPredicate::ult, j,
                                         kb.index(in[k]));
        inside = arith::AndIOp::create(kb.b, inside, ok);
        src.push_back(j);
      }
      auto ifOp =
          scf::IfOp::create(kb.b, TypeRange{computeType(elem)}, inside, true);
      {
        OpBuilder::InsertionGuard guard(kb.b);
        kb.b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(kb.b,
                             kb.load(0, elem, kb.linearize(src, strides)));
        kb.b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(kb.b, kb.load(1, elem, kb.index(0)));
      }
      kb.store(2, elem, i, ifOp.getResult(0));
    });
  });
  return loopKernel(numElementsOf(result));
}

FailureOr<KernelInfo> emitIota(IotaOp op, ModuleOp module, StringRef name) {
  Value result = op.getResult();
  Type elem = elementOf(result);
  int64_t dim = op.getIotaDimension();
  buildKernel(module, name, 1, [&](KernelBuilder &kb, Value b, Value e) {
    forEachElement(kb, b, e, [&](Value i) {
      SmallVector<Value> idx = kb.delinearize(i, shapeOf(result));
      Value v = emitConvert(kb, idx[dim], kb.b.getI64Type(), elem);
      kb.store(0, elem, i, v);
    });
  });
  return loopKernel(numElementsOf(result));
}

} // namespace

bool hasKernel(Operation *op) {
  if (isa<FusionOp>(op))
    return canEmitFusion(op);
  return isScalarizable(op) ||
         isa<BroadcastInDimOp, TransposeOp, SliceOp, ConcatenateOp, PadOp,
             IotaOp, ReduceOp, DotGeneralOp, GatherOp, ScatterAddOp,
             RngUniformOp>(op);
}

bool mayWriteResultOverOperand(Operation *op, unsigned result,
                               unsigned operand) {
  if (isScalarizable(op))
    return true;
  return isa<FusionOp>(op) && canEmitFusion(op) &&
         fusionReadsInputInPlace(op, result, operand);
}

FailureOr<KernelInfo> emitOpKernel(Operation *op, ModuleOp module,
                                   StringRef name) {
  if (isScalarizable(op))
    return emitElementwise(op, module, name);
  return llvm::TypeSwitch<Operation *, FailureOr<KernelInfo>>(op)
      .Case([&](FusionOp) { return emitFusionKernel(op, module, name); })
      .Case([&](BroadcastInDimOp o) { return emitBroadcast(o, module, name); })
      .Case([&](TransposeOp o) { return emitTranspose(o, module, name); })
      .Case([&](SliceOp o) { return emitSlice(o, module, name); })
      .Case([&](ConcatenateOp o) { return emitConcatenate(o, module, name); })
      .Case([&](PadOp o) { return emitPad(o, module, name); })
      .Case([&](IotaOp o) { return emitIota(o, module, name); })
      .Case([&](ReduceOp) { return emitReduce(op, module, name); })
      .Case([&](DotGeneralOp) { return emitDotGeneral(op, module, name); })
      .Case([&](GatherOp) { return emitGather(op, module, name); })
      .Case([&](ScatterAddOp) { return emitScatterAdd(op, module, name); })
      .Case([&](RngUniformOp) { return emitRngUniform(op, module, name); })
      .Default([](Operation *) { return failure(); });
}

} // namespace kiln::compiler::cpu
