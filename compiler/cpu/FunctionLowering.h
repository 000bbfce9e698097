// The lowering of one kiln function to a CPU (or CUDA) executable, shared by
// the files that implement it: CpuCompiler.cpp (slots, thunks, kernels,
// code generation) and OutputPlanning.cpp (which buffers the returned
// values are written to: output slots and donated inputs updated in
// place). Internal to compiler/cpu.
#ifndef KILN_COMPILER_CPU_FUNCTIONLOWERING_H
#define KILN_COMPILER_CPU_FUNCTIONLOWERING_H

#include "compiler/cpu/CpuCompiler.h"
#include "compiler/cpu/KernelDeduplicator.h"
#include "compiler/cpu/KernelEmitter.h"

#include "ir/KilnDialect.h"
#include "runtime/Executable.h"

#include "absl/status/statusor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::compiler::cpu {

/// One function's lowering: run() gives the executable.
class FunctionLowering {
public:
  FunctionLowering(mlir::func::FuncOp function, CpuCompileStats &stats,
                   uint64_t memoryBudgetBytes, const KernelTarget &target)
      : function_(function), stats_(stats),
        memoryBudgetBytes_(memoryBudgetBytes), target_(target),
        kernels_(mlir::ModuleOp::create(function.getLoc())) {}

  absl::StatusOr<runtime::Executable> run();

private:
  /// A new arena slot for a value `origin` (an op) makes.
  uint32_t arenaSlot(uint64_t bytes, mlir::Operation *origin);
  absl::Status lowerBlock(mlir::Block &block);
  /// Makes each returned value computed by a thunk write straight into its
  /// output buffer, and picks a donated input to update in place where safe.
  void planOutputs(mlir::func::ReturnOp ret);
  /// A donated input that `def` alone reads, elementwise, with `v`'s type:
  /// the one that `kiln.output_alias` ties to output `output` if it
  /// qualifies, else one tied to no other output.
  int32_t findDonor(mlir::Operation *def, mlir::Value v, unsigned output,
                    const std::set<int32_t> &used);
  /// A donated input nothing reads (a buffer handed back for reuse), or,
  /// for a sum over the processes `def` (which copies its operand into its
  /// result, then sums there), one only earlier thunks read: a ZeRO
  /// parameter's broadcast value lands where the parameter was. Tied to
  /// `output` or to no other.
  int32_t findOverwritableDonor(mlir::Operation *def, mlir::Value v,
                                unsigned output, const std::set<int32_t> &used);
  /// The output argument `arg` is tied to by kiln.output_alias, or -1.
  int64_t aliasedOutput(unsigned arg);
  /// Whether argument `arg` may donate its bytes to output `output`: tied
  /// to it (`tiedOnly`), or tied to it or to no output.
  bool tieAllows(unsigned arg, unsigned output, bool tiedOnly);
  absl::Status lowerOp(mlir::Operation *op);
  /// Emits the fill kernels of deferred splat constants `op` reads.
  absl::Status materializeFills(mlir::Operation *op);
  /// A GEMM thunk for `op`; with an accumulator, C may be viewed as blocks
  /// of the rows of a larger sum of `cBytes` (GemmEpilogue).
  absl::Status lowerDot(DotGeneralOp op,
                        uint32_t accumulator = runtime::kNoSlot,
                        runtime::GemmOperandView cView = {},
                        uint64_t cBytes = 0);
  /// Whether every reader of `v` (a slice's result) is a GEMM that can read
  /// it in place (gemmViewOfSlice), directly or in a fusion lowered op by op.
  bool onlyGemmsRead(mlir::Value v, SliceOp slice);
  /// A fusion's block argument takes its input's buffer (and view).
  void bindArgument(mlir::BlockArgument arg, mlir::Value input);
  absl::Status lowerGemmFusion(FusionOp fusion);
  /// A whole kiln.fused_attention(_grad) kept for the device's attention
  /// kernel (PipelineOptions::attentionKernel) → an attention thunk.
  absl::Status lowerAttention(mlir::Operation *op);
  /// Emits `op`'s kernel into the kernel module, or names the same kernel
  /// emitted before.
  absl::StatusOr<KernelDeduplicator::Emitted> emitKernel(mlir::Operation *op);
  /// Emits (or reuses) `op`'s kernel and appends a thunk over `slots`.
  absl::Status addKernel(mlir::Operation *op, std::vector<uint32_t> slots);
  /// A slot holding `operand` permuted by `perm` (the slot itself if `perm`
  /// is the identity).
  absl::StatusOr<uint32_t> permuted(mlir::Value operand,
                                    mlir::ArrayRef<int64_t> perm);
  /// The kernel module → the executable's kernel library for the target.
  absl::Status generateCode();

  mlir::func::FuncOp function_;
  CpuCompileStats &stats_;
  uint64_t memoryBudgetBytes_;
  KernelTarget target_;
  /// Per slot: the op that made it, for memory reports.
  std::vector<std::string> slotOrigins_;
  mlir::OwningOpRef<mlir::ModuleOp> kernels_;
  runtime::Executable exe_;
  llvm::DenseMap<mlir::Value, uint32_t> slotOf_;
  /// Slices GEMMs read in place (their slot is the source's): value → slice.
  llvm::DenseMap<mlir::Value, SliceOp> gemmViews_;
  KernelDeduplicator kernelNames_;
  /// Each kernel's lanes per row and whether it is a loop (KernelInfo).
  std::map<std::string, KernelInfo> kernelInfo_;
  std::set<uint32_t> constantSlots_;
  /// Large splat constants not yet filled: slot → the constant.
  llvm::DenseMap<uint32_t, ConstantOp> pendingFills_;
  /// Slots materializeFills has filled (a buffer of the splat's own).
  llvm::DenseSet<uint32_t> filledSplats_;
};

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_FUNCTIONLOWERING_H
