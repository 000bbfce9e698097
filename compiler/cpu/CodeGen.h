// Kernel module → native shared object: MLIR (func/scf/arith/math/llvm) is
// lowered to the LLVM dialect, translated to LLVM IR for the host CPU,
// optimised at -O3, emitted as an object file and linked in process by lld
// (`-shared`, plus libgcc's archive for its f16 helpers).
#ifndef KILN_COMPILER_CPU_CODEGEN_H
#define KILN_COMPILER_CPU_CODEGEN_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir {
class ModuleOp;
class MLIRContext;
} // namespace mlir

namespace kiln::compiler::cpu {

struct NativeLibrary {
  /// The bytes of the linked shared object.
  std::string sharedObject;
  /// The host CPU and its "+feature,..." string the code was built for.
  std::string cpu;
  std::string features;
  /// Seconds spent in each stage.
  double lowerSeconds = 0, optimizeSeconds = 0, emitSeconds = 0,
         linkSeconds = 0;
};

/// Loads the dialects kernels are built from into `context`.
void loadKernelDialects(mlir::MLIRContext &context);

/// Expands f32 transcendentals into polynomials and bf16 into integer ops,
/// then lowers every kernel dialect to the LLVM dialect, in place. The
/// first half of every backend's code path (the CUDA backend shares it).
absl::Status lowerKernelsToLLVMDialect(mlir::ModuleOp module);

/// kernel module (consumed: it is lowered in place) → shared object bytes.
/// `lanes`: kernels written for several threads per row (a GPU's warp,
/// FusionKernelOptions::lanes) by name, with their lanes: each runs by host
/// lanes (runtime/HostLanes.h), its range counting threads as on the GPU.
absl::StatusOr<NativeLibrary>
compileKernelModule(mlir::ModuleOp module,
                    const llvm::StringMap<unsigned> &lanes = {});

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_CODEGEN_H
