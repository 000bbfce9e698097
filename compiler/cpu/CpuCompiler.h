// The native backends' driver: a kiln function → a runtime::Executable
// (buffer plan, thunk list, kernel library) → a loaded runtime program. The
// thunk list, the memory plan and the kernels' MLIR are the same for every
// device; only the last step differs: a host shared object (cpu/CodeGen.h)
// or PTX/cubin for an NVIDIA GPU (cuda/CudaCodeGen.h).
#ifndef KILN_COMPILER_CPU_CPUCOMPILER_H
#define KILN_COMPILER_CPU_CPUCOMPILER_H

#include "compiler/Compiler.h"
#include "compiler/MemoryPlanner.h"
#include "compiler/Pipeline.h"
#include "compiler/Version.h"
#include "runtime/Executable.h"
#include "runtime/Program.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::compiler::cpu {

/// The device kernels are generated for.
struct KernelTarget {
  runtime::Device device = runtime::Device::cpu;
  /// cuda: the architecture (sm_80, sm_90) and TF32 GEMMs (--tf32).
  std::string cudaArch = "sm_90";
  bool tf32 = false;
  /// scatter_add as a copy of the operand and one atomic add per update
  /// (emitAtomicScatterAdd) instead of partitions of the result that each
  /// scan every update: what a GPU needs, where a partition is one thread.
  /// On for cuda (kernelTargetFor, compileExecutable); tests set it for the
  /// cpu to check the kernel there.
  bool atomicScatterAdd = false;
  /// Threads per row of a row-reduction fusion (emitFusionKernel's lanes):
  /// the GPU's warp, 32, so that a row's reads are coalesced and a layer
  /// norm over 8192 rows has 262144 threads rather than 8192. 1 on the cpu;
  /// tests set it for the cpu to check the kernel there, each warp run by
  /// host lanes (runtime/HostLanes.h).
  unsigned rowLanes = 1;
  /// The shortest row given lanes (FusionKernelOptions::minLanedRow); 0:
  /// the emitter's default. Tests lower it to reach the generator's rows.
  int64_t minLanedRow = 0;
  /// A row-reduction fusion's full results stored by its accumulating pass
  /// (FusionKernelOptions::storeWhileReducing). On for cuda; tests set it
  /// for the cpu to check the kernel there.
  bool storeWhileReducing = false;
  /// Consecutive elements an index of a fusion without reduces computes
  /// (FusionKernelOptions::elementsPerIndex): 4 (or 8) for cuda; tests set
  /// it for the cpu to check the kernel there.
  unsigned elementsPerIndex = 1;
  /// Points of a row a one-lane thread reads before storing
  /// (FusionKernelOptions::rowUnroll): 1 for the cpu, gpuRowUnroll() for
  /// cuda; tests set it for the cpu to check the kernel there.
  unsigned rowUnroll = 1;
  /// A laned thread holds its points of a short row for every pass
  /// (FusionKernelOptions::holdRows): on for cuda unless
  /// $KILN_CUDA_HOLD_ROWS=0; tests set it for the cpu (with rowLanes) to
  /// check the kernel there.
  bool holdRows = false;
  /// A fusion without reduces walks rows of its innermost dimension
  /// (FusionKernelOptions::innermostRows): on for the cpu, off for cuda.
  bool innermostRows = true;
  /// Column-blocked fusions in pieces between their pads' and
  /// concatenations' edges (FusionKernelOptions::columnPieces): on for the
  /// cpu (off under $KILN_COLUMN_PIECES=0, kernelTargetFor), off for cuda.
  bool columnPieces = true;
  /// A row's stash without a result to hold it goes to a stack array of at
  /// most this many bytes (FusionKernelOptions::mostScratchStashBytes):
  /// the cpu's 256 KiB (a 50257-wide loss row in f32) is a small part of
  /// the stack of a thread that runs kernels (megabytes: the main thread's
  /// and OpenMP's workers' come from the stack limit, 8 MiB by default);
  /// 0 for cuda.
  int64_t mostScratchStashBytes = 256 * 1024;
  /// A slice only GEMMs read is read by them in place from its source
  /// (runtime::GemmOperandView) instead of copied out by a kernel: on, or
  /// off under $KILN_GEMM_VIEWS=0 (kernelTargetFor) to measure it.
  bool gemmOperandViews = true;
  /// Consecutive independent loop kernels (the optimizer's per-parameter
  /// updates) launched as one group kernel (KernelGroups.h): on for cuda
  /// unless $KILN_KERNEL_GROUPS=0 (compileExecutable), where each launch
  /// costs microseconds; tests set it for the cpu to check the kernel
  /// there (a cpu "launch" is a call, and the A/B measured no gain).
  bool kernelGroups = false;
  /// Stop after the memory plan, before any code is generated: the
  /// executable holds its thunks and plan but no kernels, for asking what a
  /// step would need (the batch advisor) in a fraction of a compile. Never
  /// load such an executable.
  bool planOnly = false;
};

/// Threads per row the cuda target gives row-reduction fusions: a warp
/// (32), or $KILN_CUDA_ROW_LANES=1 for one thread per row, to measure the
/// difference (read once; any other value is refused with a warning and
/// 32 kept). Part of the cache key when not 32.
unsigned gpuRowLanes();
/// Elements a thread computes in a cuda fusion without reduces
/// (FusionKernelOptions::elementsPerIndex): 4, or
/// $KILN_CUDA_ELEMENTS_PER_THREAD=1 or 8 to measure the difference (read
/// once; any other value is refused with a warning). Part of the cache key
/// when not 4.
unsigned gpuElementsPerIndex();
/// Points of a row a cuda thread without lanes reads before it stores
/// (FusionKernelOptions::rowUnroll): 8 loads in flight, or
/// $KILN_CUDA_ROW_UNROLL=1 to time one point's against them (read once;
/// any other value is refused with a warning). Part of the cache key when
/// not 8.
unsigned gpuRowUnroll();
/// Whether a cuda row kernel's lanes hold their points of a short row for
/// every pass (FusionKernelOptions::holdRows): on, or $KILN_CUDA_HOLD_ROWS=0
/// for a pass that loads and computes them again, to measure the difference
/// (read once). Part of the cache key when off.
bool gpuHoldRows();
/// Whether cuda kernels declare the buffers no other parameter reaches
/// `noalias` (`readonly` too for operands; compiler/KernelAliasing.h): on,
/// or $KILN_CUDA_NOALIAS=0 for plain pointers, to measure the difference
/// (read once). Part of the cache key when off.
bool gpuExclusiveBuffers();

/// Layout defaults the GPU machine measures against their alternatives
/// (gpu-check's ab-* parts), read once from the environment; 0 where unset;
/// a malformed value is refused with a warning; part of the cache key when
/// set:
/// - $KILN_ATTENTION_CHUNK_MB and $KILN_LOSS_CHUNK_MB (1 to 65536): the most
///   MiB one chunk of attention scores / of lm_head logits may take
///   (kiln-lower-attention, kiln-lower-cross-entropy) over the default
///   64 MiB: what larger chunks buy (fewer, larger kernels and GEMMs) and
///   cost (memory);
/// - $KILN_VOCAB_MULTIPLE (1 to 4096): the lm_head's vocabulary padded to a
///   multiple of it (kiln-lower-cross-entropy's vocab-multiple; default 1,
///   no padding): whole GEMM tiles against the padding's masking.
struct LayoutOverrides {
  int64_t attentionMiB = 0, lossMiB = 0, vocabMultiple = 0;
  /// KILN_RECOMPUTE_COSTLY=0: a budget recomputes only cheap values.
  bool noCostlyRecompute = false;
  /// KILN_CUDA_ATTENTION=flash (or cudnn): cuda runs 16-bit attention
  /// whole as attention thunks (kiln's flash attention kernels,
  /// runtime/kernels/FlashAttention.h, or cuDNN's, chosen at load) instead
  /// of writing it out in chunks; opt-in until the GPU machine has measured
  /// them against the chunks.
  bool flashAttention = false;
  /// KILN_GEMM_EPILOGUE=0: no add is fused into its GEMM
  /// (kiln-fuse-gemm-epilogue off), to measure what the fusion buys.
  bool noGemmEpilogue = false;
  /// KILN_SMALL_PRODUCTS=0: products over a few contracted elements stay
  /// GEMMs (kiln-fuse-small-products off), to measure what it buys.
  bool noSmallProducts = false;
  /// KILN_GEMM_VIEWS=0: slices GEMMs read are copied out by kernels
  /// (KernelTarget::gemmOperandViews off), to measure what reading them in
  /// place buys.
  bool noGemmViews = false;
  /// KILN_COLUMN_PIECES=0: column-blocked fusions in one piece
  /// (KernelTarget::columnPieces off), to measure what the pieces buy.
  bool noColumnPieces = false;
  /// KILN_KERNEL_GROUPS=0: every cuda kernel a launch of its own
  /// (KernelTarget::kernelGroups off), to measure what the groups buy.
  bool noKernelGroups = false;
};
const LayoutOverrides &layoutOverrides();

/// The target a compile request implies.
KernelTarget kernelTargetFor(const CompileOptions &options);

/// Statistics of one compilation, for tools and benchmarks.
struct CpuCompileStats {
  int opKernels = 0;     // kernels emitted (a group's members each count)
  int kernelGroups = 0;  // group kernels made of them (KernelGroups.h)
  int uniqueKernels = 0; // after deduplication
  int gemms = 0;
  double codegenSeconds = 0; // lowering, -O3, object emission and linking
  /// The parts of codegenSeconds: MLIR lowering + translation, LLVM -O3,
  /// object emission, linking.
  double lowerSeconds = 0, optimizeSeconds = 0, emitSeconds = 0,
         linkSeconds = 0;
  /// cuda: ptxas's time, and the PTX (kept for tools: kilnc --emit-ptx).
  double assembleSeconds = 0;
  std::string ptx;
  /// The memory plan: arena, planned peak and what is live at the peak.
  MemoryPlanReport memory;
};

/// module + function name (empty: main or the only one) → executable.
/// Runs the kiln pass pipeline (fusion, scheduling) over the module in place
/// first, plans memory (failing with ResourceExhausted, before any code is
/// generated, when the planned peak exceeds pipeline.memoryBudgetBytes), then loads the kernel dialects into the module's context and builds
/// kernels there: do not run it while another thread uses that context.
absl::StatusOr<runtime::Executable>
compileExecutable(mlir::ModuleOp module, const std::string &function,
                  CpuCompileStats *stats = nullptr,
                  const PipelineOptions &pipeline = PipelineOptions(),
                  const KernelTarget &target = KernelTarget());

/// The pipeline options a compile request implies (budget, pass dumps,
/// layoutOverrides()).
PipelineOptions pipelineOptionsFor(const CompileOptions &options);

/// module + function name → a loaded CPU program (oneDNN GEMMs, 2 threads).
absl::StatusOr<std::unique_ptr<runtime::Program>>
createCpuProgram(mlir::ModuleOp module, const std::string &function,
                 const PipelineOptions &pipeline = PipelineOptions());

/// module + function name → a program loaded on `target`'s device.
absl::StatusOr<std::unique_ptr<runtime::Program>>
createProgram(mlir::ModuleOp module, const std::string &function,
              const PipelineOptions &pipeline, const KernelTarget &target);

/// An executable → a program on its device (runtime/CpuExecutor or the
/// CUDA runtime when this build has it).
absl::StatusOr<std::unique_ptr<runtime::Program>>
loadProgram(runtime::Executable executable);

} // namespace kiln::compiler::cpu

#endif // KILN_COMPILER_CPU_CPUCOMPILER_H
