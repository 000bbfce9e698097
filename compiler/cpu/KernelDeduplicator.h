// One symbol per distinct kernel: a step's layers repeat the same fusions,
// and each is emitted into a scratch module of its own before the lowering
// knows whether an earlier op made the same kernel. Internal to
// compiler/cpu.
#ifndef KILN_COMPILER_CPU_KERNELDEDUPLICATOR_H
#define KILN_COMPILER_CPU_KERNELDEDUPLICATOR_H

#include "compiler/cpu/KernelEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <utility>
#include <vector>

namespace kiln::compiler::cpu {

/// Names kernel modules by structure: two modules holding the same ops in
/// the same order, with the same attributes, types and uses of values,
/// get one symbol, whatever their locations. (The lowering once printed
/// each module and compared the text; in a large step that printing, and
/// the verification the printer runs first, were a third of the compile.)
class KernelDeduplicator {
public:
  /// The symbol for the kernel `scratch` holds ("<prefix><n>", n counting
  /// distinct kernels from 0) and whether it is the first of its kind; a
  /// first one is remembered as a copy, so the caller may then move its
  /// ops elsewhere.
  std::pair<std::string, bool> intern(mlir::ModuleOp scratch,
                                      llvm::StringRef prefix);

  size_t size() const { return kernels_.size(); }

  /// A kernel emitted for an op: its symbol, what the emitter said of it,
  /// and whether it is an atomic scatter_add.
  struct Emitted {
    std::string symbol;
    KernelInfo info;
    bool atomic = false;
  };
  /// What was remembered for an op like `op` (the same ops, attributes and
  /// types, inside and out, whatever values it reads), if anything:
  /// emitting the same op gives the same kernel, so a layer's repeats are
  /// not emitted again. A remembered op must outlive the deduplicator.
  const Emitted *findSource(mlir::Operation *op);
  void rememberSource(mlir::Operation *op, Emitted emitted);

private:
  struct Kernel {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    std::string symbol;
  };
  std::vector<Kernel> kernels_;
  /// Structural hash → indices into kernels_.
  llvm::DenseMap<unsigned, llvm::SmallVector<unsigned, 1>> byHash_;
  /// Structural hash → the ops remembered with it and their kernels.
  llvm::DenseMap<unsigned,
                 llvm::SmallVector<std::pair<mlir::Operation *, Emitted>, 1>>
      sources_;
};

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_KERNELDEDUPLICATOR_H
