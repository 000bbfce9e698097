// kiln op → CPU kernel. Each kernel is a func.func in the kernel module with
// the ABI of KernelBuilder.h: buffers (the op's operands, then its results)
// through a pointer array, and a [begin, end) slice of its index space.
#ifndef KILN_COMPILER_CPU_KERNELEMITTER_H
#define KILN_COMPILER_CPU_KERNELEMITTER_H

#include "compiler/cpu/KernelBuilder.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <string>

namespace kiln::compiler::cpu {

/// What the runtime needs to launch a kernel.
struct KernelInfo {
  /// The size of the index space the runtime splits into [begin, end) ranges.
  int64_t rangeSize = 0;
  /// False when the kernel must see its whole range in one call.
  bool splittable = true;
  /// Rough work per index (e.g. a reduction's length), so the runtime splits
  /// only ranges whose work repays the hand-off to another thread.
  int64_t workPerIndex = 1;
};

/// True when emitOpKernel handles `op` (every kiln op but constant, reshape
/// and non-elementwise fusions, which the compiler handles itself).
bool hasKernel(mlir::Operation *op);

/// op → a kernel func.func named `name` appended to `module`.
mlir::FailureOr<KernelInfo>
emitOpKernel(mlir::Operation *op, mlir::ModuleOp module, llvm::StringRef name);

namespace detail {
using BodyFn =
    std::function<void(KernelBuilder &kb, mlir::Value begin, mlir::Value end)>;
/// Creates `func.func @name(!llvm.ptr, i64, i64)` in `module` and fills it.
/// `parallel` (kParallelAttr) declares that no iteration of the kernel's
/// loops touches memory another iteration writes, even when an output is
/// an input updated in place; codegen then vectorises without alias checks.
void buildKernel(mlir::ModuleOp module, llvm::StringRef name,
                 unsigned numBuffers, const BodyFn &body, bool parallel = true);
inline constexpr llvm::StringLiteral kParallelAttr = "kiln.parallel";
/// The static shape and element type of a tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
mlir::Type elementOf(mlir::Value v);
int64_t numElementsOf(mlir::Value v);

// ReductionKernels.cpp
mlir::FailureOr<KernelInfo>
emitReduce(mlir::Operation *op, mlir::ModuleOp module, llvm::StringRef name);
mlir::FailureOr<KernelInfo> emitDotGeneral(mlir::Operation *op,
                                           mlir::ModuleOp module,
                                           llvm::StringRef name);
mlir::FailureOr<KernelInfo>
emitGather(mlir::Operation *op, mlir::ModuleOp module, llvm::StringRef name);
mlir::FailureOr<KernelInfo> emitScatterAdd(mlir::Operation *op,
                                           mlir::ModuleOp module,
                                           llvm::StringRef name);
mlir::FailureOr<KernelInfo> emitRngUniform(mlir::Operation *op,
                                           mlir::ModuleOp module,
                                           llvm::StringRef name);
} // namespace detail

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_KERNELEMITTER_H
