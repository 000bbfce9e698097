// Kernel module → code for an NVIDIA GPU. The kernels are the same MLIR
// kernels the CPU backend builds (compiler/cpu's emitters: every fusion kind,
// one function per kernel over an index range); this file gives each one a
// GPU entry point, maps libm calls to libdevice, and compiles the module
// with LLVM's NVPTX target to PTX for a named architecture, then (when
// ptxas is found) to a cubin. Needs no GPU: `kilnc` compiles for one on a
// host without it.
#ifndef KILN_COMPILER_CUDA_CUDACODEGEN_H
#define KILN_COMPILER_CUDA_CUDACODEGEN_H

#include "compiler/KernelAliasing.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::compiler::cuda {

/// The architectures kiln compiles for, and the default.
inline constexpr const char *kDefaultCudaArch = "sm_90";
/// "sm_80" / "sm_90" → OK; anything else an InvalidArgument naming them.
absl::Status checkCudaArch(const std::string &arch);

struct CudaKernelImage {
  std::string ptx;
  /// The cubin for `arch`, when ptxas was found (empty otherwise: the
  /// driver then compiles the PTX at load).
  std::string cubin;
  std::string arch, ptxFeatures;
  double lowerSeconds = 0, optimizeSeconds = 0, emitSeconds = 0,
         assembleSeconds = 0;
};

struct CudaCodegenOptions {
  std::string arch = kDefaultCudaArch;
  /// Per kernel symbol, the number of buffers it takes (its thunk's
  /// slots): each becomes a parameter of the GPU entry point.
  llvm::StringMap<unsigned> bufferCounts;
  /// Per kernel symbol whose body is written for several lanes per index
  /// (a warp per row: 32), that count: threads lanes*i ... lanes*i+lanes-1
  /// all run index i, each as its lane (kiln_lane_id). Absent: 1.
  llvm::StringMap<unsigned> lanes;
  /// Kernel symbols every launch of which is a single block (a reduction
  /// to a handful of values, a small parameter's update): they never share
  /// an SM with another block of theirs, so ptxas is told (.minnctapersm
  /// 1) not to trade register spills for an occupancy they cannot have.
  llvm::StringSet<> singleBlock;
  /// Per kernel symbol, per buffer parameter, whether another parameter may
  /// reach its bytes (compiler/KernelAliasing.h): exclusive ones are
  /// declared `noalias` (and `readonly` for operands). Absent: all shared.
  llvm::StringMap<std::vector<BufferAccess>> bufferAccess;
  /// Run ptxas (when found) to make a cubin.
  bool assemble = true;
};

/// kernel module (consumed: lowered in place) → PTX (+ cubin). Every
/// function `kiln_kernel_N(ptr buffers, i64 begin, i64 end)` becomes the
/// GPU kernel `kiln_kernel_N(ptr b0, ..., ptr bN-1, i64 rangeSize)` (N from
/// options.bufferCounts) that runs index `blockIdx.x * blockDim.x +
/// threadIdx.x` of the range (the runtime's launch ABI, runtime/Executable.h).
absl::StatusOr<CudaKernelImage>
compileCudaKernelModule(mlir::ModuleOp module, const CudaCodegenOptions &options);

/// ptxas: $KILN_PTXAS, else /usr/local/cuda/bin/ptxas, else on PATH; empty
/// when there is none.
std::string findPtxas();

/// PTX text → cubin for `arch` with ptxas and `extraFlags` (e.g.
/// "--warn-on-spills", "-Werror"); the error carries ptxas's messages, and
/// `messages`, when given, receives them (warnings) on success too.
absl::StatusOr<std::string>
assemblePtx(const std::string &ptx, const std::string &arch,
            const std::vector<std::string> &extraFlags = {},
            std::string *messages = nullptr);

} // namespace kiln::compiler::cuda

#endif // KILN_COMPILER_CUDA_CUDACODEGEN_H
