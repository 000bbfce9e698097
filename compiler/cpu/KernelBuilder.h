// Helpers shared by the CPU kernel emitters: a kernel is a `func.func
// @name(%args: !llvm.ptr, %begin: i64, %end: i64)` whose first argument points
// at an array of buffer pointers (operands, then results) and whose range
// [begin, end) is a slice of the kernel's index space (usually the output's
// flattened elements), so the runtime can split it over threads. The builder
// loads and stores elements by flat index, converting between storage types
// (i1 as a byte, f16/bf16) and the types arithmetic is done in.
#ifndef KILN_COMPILER_CPU_KERNELBUILDER_H
#define KILN_COMPILER_CPU_KERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <functional>

namespace kiln::compiler::cpu {

/// The element type arithmetic runs in: f16 and bf16 compute through f32.
mlir::Type computeType(mlir::Type storage);

/// Row-major strides (in elements) of a static shape.
llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// The discardable attribute parallelLoop puts on its scf.for: the loop's
/// own access group (an LLVM-dialect value, so SCF's lowering carries it to
/// the loop's back-edge).
inline constexpr llvm::StringLiteral kParallelLoopAttr = "kiln.parallel_loop";

class KernelBuilder {
public:
  /// Positions `b` inside `func`'s entry block and loads the buffer pointers.
  KernelBuilder(mlir::ImplicitLocOpBuilder &b, mlir::ModuleOp module,
                mlir::Value args, unsigned numBuffers);

  mlir::ImplicitLocOpBuilder &b;
  /// The module kernels and their library declarations go into (loop
  /// bodies are built before their loop is attached, so it cannot be found
  /// from the insertion point).
  mlir::ModuleOp module;

  /// An i64 constant.
  mlir::Value index(int64_t v);
  /// A constant of `type` (float or integer) holding `v`.
  mlir::Value constant(mlir::Type type, double v);
  mlir::Value intConstant(mlir::Type type, int64_t v);

  /// Buffer `buffer`'s element at flat index `idx`, in its compute type.
  mlir::Value load(unsigned buffer, mlir::Type storage, mlir::Value idx);
  /// Stores a compute-type `value` to buffer `buffer` at `idx`.
  void store(unsigned buffer, mlir::Type storage, mlir::Value idx,
             mlir::Value value);
  /// The address of element `idx` of `buffer`.
  mlir::Value address(unsigned buffer, mlir::Type storage, mlir::Value idx);

  /// A stack array of `n` elements of `type` (a compute type: f32, f64 or
  /// an integer wider than i1), allocated once in the kernel's entry block.
  mlir::Value stackArray(mlir::Type type, int64_t n);
  /// Element `idx` of a stack array (no storage conversion).
  mlir::Value loadAt(mlir::Value array, mlir::Type type, mlir::Value idx);
  void storeAt(mlir::Value array, mlir::Value idx, mlir::Value value);

  /// flat index → one index per dimension of `shape`.
  llvm::SmallVector<mlir::Value> delinearize(mlir::Value flat,
                                             llvm::ArrayRef<int64_t> shape);
  /// sum(idx[k] * strides[k]) (+ base); null idx entries are skipped.
  mlir::Value linearize(llvm::ArrayRef<mlir::Value> idx,
                        llvm::ArrayRef<int64_t> strides, mlir::Value base = {});

  /// scf.for over [lb, ub) in i64, carrying `inits`; returns the results.
  mlir::ValueRange
  forLoop(mlir::Value lb, mlir::Value ub, mlir::ValueRange inits,
          const std::function<llvm::SmallVector<mlir::Value>(
              mlir::Value iv, mlir::ValueRange carried)> &body);

  /// forLoop whose iterations touch no memory another iteration writes,
  /// even where an output is an input updated in place (each reads a point
  /// before it stores there): tagged kParallelLoopAttr, so that
  /// markParallelLoops lets LLVM vectorise it without alias checks.
  mlir::ValueRange
  parallelLoop(mlir::Value lb, mlir::Value ub, mlir::ValueRange inits,
               const std::function<llvm::SmallVector<mlir::Value>(
                   mlir::Value iv, mlir::ValueRange carried)> &body);

  /// scf.for over lb, lb + step, ... < ub.
  mlir::ValueRange
  stridedLoop(mlir::Value lb, mlir::Value ub, mlir::Value step,
              mlir::ValueRange inits,
              const std::function<llvm::SmallVector<mlir::Value>(
                  mlir::Value iv, mlir::ValueRange carried)> &body);

  /// `at(k)` for the range k that holds `position`, where range k is
  /// [starts[k], starts[k + 1]) (`starts` ascending from 0, the last range
  /// open), found by a binary tree of scf.if: a concatenation costs
  /// log2(inputs) compares an element, not one per input before its own
  /// (kiln-join-sums concatenates a hundred). `at` runs inside the branch
  /// that yields its value, of `type`.
  mlir::Value pickRange(mlir::Value position, llvm::ArrayRef<int64_t> starts,
                        mlir::Type type,
                        const std::function<mlir::Value(unsigned k)> &at);

  /// A call of the external function `name` (declared private in the
  /// kernel module on first use), e.g. the GPU's warp primitives.
  mlir::ValueRange call(llvm::StringRef name, mlir::TypeRange results,
                        mlir::ValueRange args);

  /// Splits [begin, end) into consecutive chunks of at most `width`
  /// indices and calls `body(start, count)` for each.
  void forChunks(
      mlir::Value begin, mlir::Value end, int64_t width,
      const std::function<void(mlir::Value start, mlir::Value count)> &body);

  /// Nested loops over `shape`, passing each point's per-dimension indices;
  /// returns the values carried out of the outermost loop.
  llvm::SmallVector<mlir::Value> nestedLoops(
      llvm::ArrayRef<int64_t> shape, mlir::ValueRange inits,
      const std::function<llvm::SmallVector<mlir::Value>(
          llvm::ArrayRef<mlir::Value> ivs, mlir::ValueRange carried)> &body);

private:
  llvm::SmallVector<mlir::Value> buffers_;
  mlir::Block *entry_;
};

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_KERNELBUILDER_H
