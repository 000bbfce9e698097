// The kiln pass pipeline, read top to bottom: simplify, CSE, fused
// attention and the fused linear cross-entropy written out in chunks (for
// backends without their own kernels), the save/recompute partition of a
// training step, (for the GPU) reductions split into trees, elementwise fusion, reduction fusion, sibling fusion,
// scheduling and, with a memory
// budget, rematerialization (recompute cheap values after the peak rather
// than keep them live across it). Memory planning itself runs later, in the
// backend, on the thunk list (compiler/MemoryPlanner). With a dump directory
// every pass is followed by a small module pass that writes the whole module
// to a numbered file (XLA's --xla_dump_to).
#include "compiler/Pipeline.h"

#include "passes/Passes.h"
#include "support/AtomicFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>

using namespace mlir;

namespace kiln {
namespace {

/// Writes the module to `<dir>/<NN>-<name>.mlir`, atomically (a failed
/// write leaves no truncated dump). A dump that cannot be written (a full
/// disk) is one warning on stderr and the pipeline runs on without the
/// rest: MLIR drops a pass's warnings when the compile succeeds, and an
/// unchecked raw_fd_ostream ended the process on a full disk. Locations
/// are printed when some op has one (the frontend's KILN_CHECK_NUMERICS
/// gives each op its call site), so a dump of a module without any stays
/// as it was.
struct DumpModulePass
    : public PassWrapper<DumpModulePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DumpModulePass)

  /// `failed` is shared by the pipeline's dump passes.
  DumpModulePass(std::string dir, unsigned index, std::string name,
                 std::shared_ptr<std::atomic<bool>> failed)
      : dir(std::move(dir)), index(index), name(std::move(name)),
        failed(std::move(failed)) {}

  StringRef getArgument() const override { return "kiln-dump-module"; }

  void runOnOperation() override {
    markAllAnalysesPreserved();
    if (failed->load())
      return;
    SmallString<256> path(dir);
    llvm::sys::path::append(
        path, llvm::formatv("{0:D2}-{1}.mlir", index, name).str());
    OpPrintingFlags flags;
    bool located = getOperation()
                       ->walk([](Operation *op) {
                         return isa<UnknownLoc>(op->getLoc())
                                    ? WalkResult::advance()
                                    : WalkResult::interrupt();
                       })
                       .wasInterrupted();
    if (located)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    std::string text;
    llvm::raw_string_ostream os(text);
    getOperation()->print(os, flags);
    absl::Status written = writeFileAtomically(path.str().str(), text);
    if (!written.ok() && !failed->exchange(true))
      llvm::errs() << "kiln: warning: cannot write the pass dump '" << path
                   << "': " << std::string(written.message())
                   << "; compiling without the rest\n";
  }

  std::string dir;
  unsigned index;
  std::string name;
  std::shared_ptr<std::atomic<bool>> failed;
};

/// Whether the pass dumps can go to `dir` (made if missing). A folder that
/// cannot be made (the path names a file, no permission) is one warning on
/// stderr, and the compile goes on without dumps: the dump passes' own
/// warnings would come once per pass, and a compile that succeeds prints
/// no MLIR warnings.
bool canDumpTo(const std::string &dir) {
  if (dir.empty())
    return false;
  std::error_code error = llvm::sys::fs::create_directories(dir);
  // create_directories takes a file already there for the folder.
  if (!error && !llvm::sys::fs::is_directory(dir))
    error = std::make_error_code(std::errc::not_a_directory);
  if (error) {
    llvm::errs() << "kiln: warning: cannot write the pass dumps to '" << dir
                 << "': " << error.message() << "; compiling without them\n";
    return false;
  }
  return true;
}

} // namespace

void buildKilnPipeline(OpPassManager &pm, const PipelineOptions &options) {
  unsigned index = 0;
  bool dump = canDumpTo(options.dumpDir);
  auto failed = std::make_shared<std::atomic<bool>>(false);
  auto add = [&](std::unique_ptr<Pass> pass) {
    std::string name = pass->getArgument().str();
    pm.addNestedPass<func::FuncOp>(std::move(pass));
    if (dump)
      pm.addPass(std::make_unique<DumpModulePass>(options.dumpDir, ++index,
                                                  name, failed));
  };
  if (dump)
    pm.addPass(
        std::make_unique<DumpModulePass>(options.dumpDir, 0, "input", failed));

  add(createSimplifyPass());
  add(createCSEPass());
  // After CSE: the gradient's recomputed probabilities must not be merged
  // with the forward's (that would keep them alive in between).
  if (!options.attentionKernel)
    add(createLowerAttentionPass({options.attentionChunkBytes}));
  add(createLowerCrossEntropyPass(
      {options.lossChunkBytes, options.lossVocabMultiple}));
  // After the lowerings, so their products (attention scores, lm_head
  // chunks) are moved too; before the partitioner, which then weighs the
  // rounded copies at their 2 bytes an element.
  // A product summed in f32 keeps an f32 result only where
  // kiln-fuse-gemm-epilogue will fold the sum into its GEMM.
  if (options.productType != DType::f32)
    add(createAutocastPass({std::string(dtypeName(options.productType)),
                            options.halfF32Results,
                            options.fuse && options.gemmEpilogue,
                            options.attentionKernel}));
  // With an attention kernel, after kiln-autocast has moved the attention
  // ops the kernel runs to 16 bits: the others are written out.
  if (options.attentionKernel)
    add(createLowerAttentionPass(
        {options.attentionChunkBytes, /*keepKernelAttention=*/true}));
  // Before fusion, so recomputed elementwise work fuses into its backward
  // consumer and is never stored.
  if (options.partition)
    add(createPartitionPass({options.recomputeCostBytes}));
  if (options.splitReductionsBelow > 0) {
    SplitReductionsPassOptions split;
    split.parallelism = options.splitReductionsBelow;
    split.maxSerial = options.splitReductionsMaxSerial;
    split.rowLanes = options.splitReductionsRowLanes;
    split.minLanedRow = options.splitReductionsMinLanedRow;
    split.contiguousParts = options.splitReductionsContiguousParts;
    add(createSplitReductionsPass(split));
    // The split trees' first stages summed at once (the global norm), and
    // that joined sum split in turn.
    if (options.joinSums) {
      add(createJoinSumsPass());
      add(createSplitReductionsPass(split));
    }
  }
  // Ties (barrier operands only waited for) move off values kiln-autocast
  // widened, so the widening fuses into its readers instead of being
  // stored for the tie; after fusion, off results only ties read.
  add(createMoveTiesPass());
  if (options.fuse) {
    // Before the GEMM epilogues and the loops: a product written as a loop
    // is no GEMM, and its readers take it in.
    if (options.smallProductContraction > 0)
      add(createFuseSmallProductsPass({options.smallProductContraction,
                                       options.smallProductMinResultBytes}));
    // First, so the add is not fused into a loop of its own.
    if (options.gemmEpilogue)
      add(createFuseGemmEpiloguePass());
    add(createFuseElementwisePass({options.maxFusionOperands}));
    // A backend whose row kernels give a row a warp (the GPU's) gets lone
    // reduces of rows as fusions too: the second stage of a split global
    // norm (3072 partial sums) was one thread's loop, 67 us a call.
    add(createFuseReductionsPass(
        {options.maxFusionOperands, /*emitRemarks=*/false,
         options.splitReductionsRowLanes > 1
             ? options.splitReductionsMinLanedRow
             : 0}));
    add(createFuseSiblingsPass({/*minBytes=*/256, options.maxFusionOperands}));
    add(createMoveTiesPass());
  }
  if (options.schedule)
    add(createSchedulePass());
  if (options.memoryBudgetBytes != 0) {
    RematerializePassOptions remat;
    remat.memoryBudget = static_cast<int64_t>(std::min<uint64_t>(
        options.memoryBudgetBytes, std::numeric_limits<int64_t>::max()));
    remat.recomputeCostly = options.recomputeCostly;
    add(createRematerializePass(remat));
  }
}

LogicalResult runKilnPipeline(ModuleOp module, const PipelineOptions &options) {
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  buildKilnPipeline(pm, options);
  return pm.run(module);
}

namespace {

/// kiln-opt's spelling of PipelineOptions: --kiln-pipeline="dump-dir=..."
/// (each default is PipelineOptions', so the two cannot drift apart)
struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> dumpDir{*this, "dump-dir",
                              llvm::cl::desc("write the module after every "
                                             "pass into this directory")};
  Option<unsigned> maxFusionOperands{
      *this, "max-fusion-operands",
      llvm::cl::desc("the most inputs one fusion may take"),
      llvm::cl::init(PipelineOptions().maxFusionOperands)};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("run the fusion passes"),
                    llvm::cl::init(true)};
  Option<bool> gemmEpilogue{
      *this, "gemm-epilogue",
      llvm::cl::desc("fuse an f32 add into the GEMM that makes its operand "
                     "(kiln-fuse-gemm-epilogue)"),
      llvm::cl::init(true)};
  Option<int64_t> smallProductContraction{
      *this, "small-product-contraction",
      llvm::cl::desc("write products of at most this many contracted "
                     "elements as loops (kiln-fuse-small-products; 0: off)"),
      llvm::cl::init(PipelineOptions().smallProductContraction)};
  Option<int64_t> smallProductMinResultBytes{
      *this, "small-product-min-result-bytes",
      llvm::cl::desc("kiln-fuse-small-products' min-result-bytes"),
      llvm::cl::init(PipelineOptions().smallProductMinResultBytes)};
  Option<bool> schedule{*this, "schedule", llvm::cl::desc("run the scheduler"),
                        llvm::cl::init(true)};
  Option<uint64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("bytes the step may hold at its peak; nonzero runs "
                     "kiln-rematerialize after the scheduler"),
      llvm::cl::init(0)};
  Option<bool> recomputeCostly{
      *this, "recompute-costly",
      llvm::cl::desc("under a memory budget, recompute reductions and GEMMs "
                     "when nothing cheap lowers the peak"),
      llvm::cl::init(true)};
  Option<bool> partition{
      *this, "partition",
      llvm::cl::desc("recompute cheap forward values in the backward pass "
                     "(kiln-partition)"),
      llvm::cl::init(true)};
  Option<int64_t> attentionChunkBytes{
      *this, "attention-chunk-bytes",
      llvm::cl::desc("the most bytes one chunk of attention scores may take"),
      llvm::cl::init(PipelineOptions().attentionChunkBytes)};
  Option<bool> attentionKernel{
      *this, "attention-kernel",
      llvm::cl::desc("keep whole the attention ops an attention kernel runs "
                     "(moved to the 16-bit product type)"),
      llvm::cl::init(false)};
  Option<int64_t> splitReductionsBelow{
      *this, "split-reductions-below",
      llvm::cl::desc("nonzero: split reductions with fewer outputs than "
                     "this into a tree (kiln-split-reductions)"),
      llvm::cl::init(PipelineOptions().splitReductionsBelow)};
  Option<int64_t> splitReductionsMaxSerial{
      *this, "split-reductions-max-serial",
      llvm::cl::desc("with split reductions: the most elements one thread "
                     "reduces in a tree's first stage"),
      llvm::cl::init(PipelineOptions().splitReductionsMaxSerial)};
  Option<int64_t> splitReductionsRowLanes{
      *this, "split-reductions-row-lanes",
      llvm::cl::desc("with split reductions: threads a contiguous row takes "
                     "(a GPU's warp: 32)"),
      llvm::cl::init(PipelineOptions().splitReductionsRowLanes)};
  Option<int64_t> splitReductionsMinLanedRow{
      *this, "split-reductions-min-laned-row",
      llvm::cl::desc("with split reductions: the shortest row that takes "
                     "split-reductions-row-lanes threads"),
      llvm::cl::init(PipelineOptions().splitReductionsMinLanedRow)};
  Option<bool> splitReductionsContiguousParts{
      *this, "split-reductions-contiguous-parts",
      llvm::cl::desc("with split reductions: split only reductions over "
                     "innermost dims, each part a run of memory (the "
                     "cpu's form)"),
      llvm::cl::init(PipelineOptions().splitReductionsContiguousParts)};
  Option<bool> joinSums{
      *this, "join-sums",
      llvm::cl::desc("with split reductions: sum the split trees' first "
                     "stages at once (kiln-join-sums)"),
      llvm::cl::init(true)};
  Option<int64_t> lossChunkBytes{
      *this, "loss-chunk-bytes",
      llvm::cl::desc("the most bytes one chunk of lm_head logits may take"),
      llvm::cl::init(PipelineOptions().lossChunkBytes)};
  Option<int64_t> lossVocabMultiple{
      *this, "loss-vocab-multiple",
      llvm::cl::desc("pad the lm_head's vocabulary to a multiple of this"),
      llvm::cl::init(PipelineOptions().lossVocabMultiple)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("f32, or bf16 / f16: matrix products in that type "
                     "(kiln-autocast)"),
      llvm::cl::init("f32")};
  Option<bool> halfF32Results{
      *this, "half-f32-results",
      llvm::cl::desc("with bf16 / f16: keep the products' results in f32"),
      llvm::cl::init(false)};
};

} // namespace

/// The first of `cl`'s sizes and counts that is negative, as "name=value"
/// (none: empty). Each is a size, a count or a bound, where a negative
/// value has no meaning (0 turns the optional ones off).
std::string negativeOption(const PipelineCLOptions &cl) {
  for (auto [name, value] :
       {std::pair{"small-product-contraction",
                  cl.smallProductContraction.getValue()},
        std::pair{"small-product-min-result-bytes",
                  cl.smallProductMinResultBytes.getValue()},
        std::pair{"attention-chunk-bytes", cl.attentionChunkBytes.getValue()},
        std::pair{"split-reductions-below", cl.splitReductionsBelow.getValue()},
        std::pair{"split-reductions-max-serial",
                  cl.splitReductionsMaxSerial.getValue()},
        std::pair{"split-reductions-row-lanes",
                  cl.splitReductionsRowLanes.getValue()},
        std::pair{"split-reductions-min-laned-row",
                  cl.splitReductionsMinLanedRow.getValue()},
        std::pair{"loss-chunk-bytes", cl.lossChunkBytes.getValue()},
        std::pair{"loss-vocab-multiple", cl.lossVocabMultiple.getValue()}})
    if (value < 0)
      return std::string(name) + "=" + std::to_string(value);
  return "";
}

void registerKilnPipeline() {
  // PassPipelineRegistration's builder cannot refuse its options; the
  // registry's own form can, through the handler that reports them.
  registerPassPipeline(
      "kiln-pipeline", "kiln's pass pipeline (compiler/Pipeline.cpp)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        PipelineCLOptions cl;
        if (failed(cl.parseFromString(text)))
          return failure();
        if (std::string bad = negativeOption(cl); !bad.empty())
          return errorHandler("kiln-pipeline: " + bad +
                              ": the option must not be negative");
        PipelineOptions options;
        options.dumpDir = cl.dumpDir;
        options.maxFusionOperands = cl.maxFusionOperands;
        options.fuse = cl.fuse;
        options.gemmEpilogue = cl.gemmEpilogue;
        options.smallProductContraction = cl.smallProductContraction;
        options.smallProductMinResultBytes = cl.smallProductMinResultBytes;
        options.schedule = cl.schedule;
        options.memoryBudgetBytes = cl.memoryBudget;
        options.recomputeCostly = cl.recomputeCostly;
        options.attentionChunkBytes = cl.attentionChunkBytes;
        options.attentionKernel = cl.attentionKernel;
        options.lossChunkBytes = cl.lossChunkBytes;
        options.splitReductionsBelow = cl.splitReductionsBelow;
        options.splitReductionsMaxSerial = cl.splitReductionsMaxSerial;
        options.splitReductionsRowLanes = cl.splitReductionsRowLanes;
        options.splitReductionsMinLanedRow = cl.splitReductionsMinLanedRow;
        options.splitReductionsContiguousParts =
            cl.splitReductionsContiguousParts;
        options.joinSums = cl.joinSums;
        options.partition = cl.partition;
        absl::StatusOr<DType> product = parseDType(cl.precision);
        if (!product.ok() || (*product != DType::f32 &&
                              *product != DType::bf16 &&
                              *product != DType::f16)) {
          // kiln-autocast names the unknown type when the pipeline runs,
          // and nothing else runs (its own test's message).
          pm.addNestedPass<func::FuncOp>(
              createAutocastPass({cl.precision.getValue(), false}));
          return success();
        }
        options.productType = *product;
        options.halfF32Results = cl.halfF32Results;
        options.lossVocabMultiple = cl.lossVocabMultiple;
        buildKilnPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(PipelineCLOptions());
      });
}

} // namespace kiln
