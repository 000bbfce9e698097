// The kiln pass pipeline: the passes of passes/ in the order DESIGN.md §4
// lists them, and its options. Reading the environment (KILN_DUMP_DIR) is
// the caller's job: tools and frontends fill PipelineOptions at the edge.
#ifndef KILN_COMPILER_PIPELINE_H
#define KILN_COMPILER_PIPELINE_H

#include "support/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace kiln {

struct PipelineOptions {
  /// When set, the module is written to `<dumpDir>/NN-<pass>.mlir` before
  /// the first pass (00-input) and after every pass.
  std::string dumpDir;
  /// The most inputs one fusion may take (every fusion pass).
  unsigned maxFusionOperands = 16;
  /// Off: simplification only (no fusion and no scheduling).
  bool fuse = true;
  /// With fuse: kiln-fuse-gemm-epilogue (an f32 add into the GEMM that
  /// makes its operand); off only to measure what it buys
  /// (KILN_GEMM_EPILOGUE=0).
  bool gemmEpilogue = true;
  /// With fuse: kiln-fuse-small-products writes a product of at most this
  /// many contracted elements whose result outweighs its operands (LoRA's
  /// rank-8 up-projection) as a loop its readers fuse; 0: off, only to
  /// measure what it buys (KILN_SMALL_PRODUCTS=0).
  int64_t smallProductContraction = 16;
  /// kiln-fuse-small-products' min-result-bytes: smaller products stay
  /// GEMMs (they cost about a launch either way).
  int64_t smallProductMinResultBytes = 1 << 20;
  bool schedule = true;
  /// The most bytes a compiled step may need at its planned peak (arena,
  /// inputs and fresh outputs); 0: unlimited. Checked by the backend's
  /// memory planner after the passes, before code generation.
  uint64_t memoryBudgetBytes = 0;
  /// Under a budget, kiln-rematerialize may also recompute reductions and
  /// GEMMs once nothing cheap lowers the peak (its recompute-costly); off
  /// only to measure what that buys (KILN_RECOMPUTE_COSTLY=0).
  bool recomputeCostly = true;
  /// Run kiln-partition (recompute cheap forward values in the backward
  /// pass rather than keep them); off only to measure what it saves.
  bool partition = true;
  /// kiln-partition's recompute-cost: forward values smaller than this
  /// many bytes are kept for the backward rather than recomputed.
  int64_t recomputeCostBytes = 64 << 10;
  /// The most bytes one chunk of attention scores may take when
  /// kiln-lower-attention writes fused attention out (its max-chunk-bytes).
  int64_t attentionChunkBytes = 64 << 20;
  /// The backend runs whole attention ops in a kernel of its own (cuda's
  /// flash attention): kiln-autocast moves them to the 16-bit product type
  /// and kiln-lower-attention, run after it, writes out only the ones no
  /// kernel runs (f32, or a head dim the kernel does not tile).
  bool attentionKernel = false;
  /// The most bytes one chunk of logits may take when
  /// kiln-lower-cross-entropy writes the fused linear cross-entropy out.
  int64_t lossChunkBytes = 64 << 20;
  /// kiln-lower-cross-entropy's vocab-multiple: the lm_head's vocabulary
  /// padded to a multiple of this (1: not padded).
  int64_t lossVocabMultiple = 1;
  /// Mixed precision (--bf16, --fp16): with bf16 or f16, kiln-autocast runs
  /// every f32 matrix product on inputs of that type with a result of that
  /// type widened back to f32 (PyTorch's autocast), or with an f32 result
  /// when halfF32Results; f32: off.
  DType productType = DType::f32;
  bool halfF32Results = false;
  /// Positive: kiln-split-reductions runs before fusion and splits every
  /// reduction on fewer threads than this (and over more than
  /// splitReductionsMaxSerial elements per thread) into a tree. 0: the
  /// backend chooses (compileExecutable: the GPU's threads, with those its
  /// row kernels give an output, the pass's row-lanes and min-laned-row;
  /// the CPU's outputs, in contiguous parts); negative: off.
  int64_t splitReductionsBelow = 0;
  int64_t splitReductionsMaxSerial = 1024;
  int64_t splitReductionsRowLanes = 1;
  int64_t splitReductionsMinLanedRow = 64;
  /// Split only where each part is a contiguous run (the pass's
  /// contiguous-parts; a CPU's row kernels).
  bool splitReductionsContiguousParts = false;
  /// With split reductions: kiln-join-sums sums the split trees' first
  /// stages at once where a scalar sum adds them (the global norm); off
  /// on the CPU (compileExecutable says why) and to measure what it saves.
  bool joinSums = true;
};

/// Pass manager on builtin.module ← simplify, CSE, attention and
/// cross-entropy lowering, autocast (bf16/f16), the save/recompute partition, the three fusion
/// passes, scheduling and (under a budget) rematerialization, each followed
/// by a dump when options.dumpDir is set.
void buildKilnPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Module → the module after the pipeline, verified after every pass.
mlir::LogicalResult runKilnPipeline(mlir::ModuleOp module,
                                    const PipelineOptions &options);

/// Registers the `kiln-pipeline` pass pipeline for kiln-opt; its options
/// (dump-dir, max-fusion-operands, fuse, schedule, memory-budget,
/// attention-chunk-bytes, loss-chunk-bytes, partition, precision) mirror
/// PipelineOptions.
void registerKilnPipeline();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_H
