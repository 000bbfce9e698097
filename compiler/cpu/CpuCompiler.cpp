// Lowers one kiln function to a CPU executable: (1) every function argument
// gets an input slot and every other value an arena slot, (2) ops become
// thunks in the scheduled order: constants become arena initialisers,
// reshapes and optimization barriers alias their operand's slot (values
// are immutable, so the bytes can be shared), f32 dot_generals GEMMs (with
// a transpose kernel first when no transpose flag can express the operand
// layout), and everything else a kernel; fusions the kernel emitter cannot
// take whole are lowered op by op, and returned values are written where
// they are returned (OutputPlanning.cpp), (3) the memory planner
// (compiler/MemoryPlanner.h) packs the arena slots by lifetime and checks
// the budget, (4) kernels with identical printed IR are emitted once and
// the kernel module is compiled for the target device: one shared object
// for the cpu, PTX/cubin for cuda.
#include "compiler/cpu/CpuCompiler.h"
#include "compiler/KernelAliasing.h"
#include "compiler/MemoryPlanner.h"
#include "compiler/Signature.h"
#include "compiler/cpu/CodeGen.h"
#include "compiler/cpu/ConstantBytes.h"
#include "compiler/cpu/FunctionLowering.h"
#include "compiler/cpu/GemmShape.h"
#include "compiler/cpu/KernelEmitter.h"
#include "compiler/cpu/KernelGroups.h"
#include "compiler/cpu/OpLabels.h"
#include "compiler/cpu/ScalarOps.h"
#include "compiler/cuda/CudaCodeGen.h"

#include "ir/KilnDialect.h"
#include "ir/TensorConversion.h"
#include "passes/FusionUtils.h"
#include "runtime/BufferLiveness.h"
#include "runtime/CpuExecutor.h"
#ifdef KILN_WITH_CUDA_RUNTIME
#include "runtime/cuda/CudaExecutor.h"
#endif

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <string_view>

namespace kiln::compiler::cpu {

using namespace mlir;

namespace {

/// Splat constants above this size are filled by a kernel, not stored.
constexpr uint64_t kMaxStoredSplatBytes = 4096;
/// A GPU reduction on fewer threads than this is split into a tree
/// (kiln-split-reductions): the threads an H100 keeps resident (132
/// multiprocessors x 2048). A column sum's thread has one load in flight
/// per input: on 24576 threads (this was 32768 outputs) GPT-2's bias
/// gradients ran at 12% of the memory's bandwidth.
constexpr int64_t kGpuReductionThreads = 262144;
/// The most elements a GPU reduction's thread adds up serially before the
/// reduction is split (a column of a grad-norm's transposed 768 x 3072
/// weight was 768, at 4% of the bandwidth).
constexpr int64_t kGpuReductionMaxSerial = 256;
/// A CPU row kernel's outputs are its range, split over the cores: a
/// reduction over innermost dims with fewer outputs than this is split
/// into contiguous parts, enough for a many-core machine to balance. A
/// full sum was one core's loop: the clipping norm's sum over GPT-2's
/// wte gradient (38.6M elements) ran at 8 GB/s, 69 ms; split, 32 ms.
constexpr int64_t kCpuReductionOutputs = 256;
/// The most elements a CPU reduction's output adds up on one core before
/// it is split (256 KB of f32: tens of microseconds, against a few for
/// the second kernel).
constexpr int64_t kCpuReductionMaxSerial = 65536;

/// True when `op`'s kernel may write a result over operand `index`'s
/// bytes (runtime::KernelThunk::inPlaceOperands): every result of that
/// operand's size has its shape and element width, and the kernel reads
/// the operand only at the element it writes, before writing it.
bool mayWriteOverOperand(Operation *op, unsigned index) {
  Value operand = op->getOperand(index);
  bool any = false;
  for (OpResult result : op->getResults()) {
    if (bytesOf(result) != bytesOf(operand))
      continue;
    if (detail::shapeOf(result) != detail::shapeOf(operand) ||
        !mayWriteResultOverOperand(op, result.getResultNumber(), index))
      return false;
    any = true;
  }
  return any;
}

} // namespace

uint32_t FunctionLowering::arenaSlot(uint64_t bytes, Operation *origin) {
  runtime::BufferSlot slot;
  slot.kind = runtime::BufferSlot::Kind::arena;
  slot.bytes = bytes;
  exe_.plan.slots.push_back(slot);
  slotOrigins_.resize(exe_.plan.slots.size());
  slotOrigins_.back() = describeOrigin(origin);
  return exe_.plan.slots.size() - 1;
}

absl::StatusOr<KernelDeduplicator::Emitted>
FunctionLowering::emitKernel(Operation *op) {
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(op->getLoc());
  FailureOr<KernelInfo> info = failure();
  bool atomic = false;
  if (isa<ScatterAddOp>(op) && target_.atomicScatterAdd) {
    info = detail::emitAtomicScatterAdd(op, *scratch, "kiln_kernel");
    atomic = succeeded(info);
  }
  if (!atomic)
    info = isa<FusionOp>(op)
               ? detail::emitFusionKernel(
                     op, *scratch, "kiln_kernel",
                     {.lanes = target_.rowLanes,
                      .minLanedRow = target_.minLanedRow ? target_.minLanedRow
                                                         : detail::kMinLanedRow,
                      .storeWhileReducing = target_.storeWhileReducing,
                      .elementsPerIndex = target_.elementsPerIndex,
                      .rowUnroll = target_.rowUnroll,
                      .holdRows = target_.holdRows,
                      .innermostRows = target_.innermostRows,
                      .mostScratchStashBytes = target_.mostScratchStashBytes,
                      .columnPieces = target_.columnPieces})
               : emitOpKernel(op, *scratch, "kiln_kernel");
  if (failed(info))
    return absl::UnimplementedError(absl::StrCat(
        "cpu backend: no kernel for ", op->getName().getStringRef().str()));
  auto [symbol, inserted] = kernelNames_.intern(*scratch, "kiln_kernel_");
  if (inserted) {
    ++stats_.uniqueKernels;
    auto kernel = scratch->lookupSymbol<func::FuncOp>("kiln_kernel");
    kernel.setSymName(symbol);
    for (Operation &o :
         llvm::make_early_inc_range(scratch->getBody()->getOperations())) {
      auto f = dyn_cast<func::FuncOp>(o);
      if (f && f.isExternal() && kernels_->lookupSymbol(f.getSymName()))
        continue;
      o.moveBefore(kernels_->getBody(), kernels_->getBody()->end());
    }
  }
  return KernelDeduplicator::Emitted{symbol, *info, atomic};
}

absl::Status FunctionLowering::addKernel(Operation *op,
                                         std::vector<uint32_t> slots) {
  // An op of the function like one lowered before (a layer's repeat) has
  // its kernel; ops built only to be emitted (transposes, fills) die after
  // this call and are not remembered.
  bool remembered = function_->isProperAncestor(op);
  const KernelDeduplicator::Emitted *known =
      remembered ? kernelNames_.findSource(op) : nullptr;
  absl::StatusOr<KernelDeduplicator::Emitted> emitted =
      known ? *known : emitKernel(op);
  if (!emitted.ok())
    return emitted.status();
  if (remembered && !known)
    kernelNames_.rememberSource(op, *emitted);
  const std::string &symbol = emitted->symbol;
  const KernelInfo &info = emitted->info;
  bool atomic = emitted->atomic;
  kernelInfo_[symbol] = info;
  if (atomic && slots[0] != slots[3]) { // it adds into a copy of its operand
    runtime::Thunk copy;
    copy.kind = runtime::Thunk::Kind::copy;
    copy.copy.src = slots[0];
    copy.copy.dst = slots[3];
    copy.copy.bytes = bytesOf(op->getResult(0));
    exe_.thunks.push_back(copy);
  }
  runtime::Thunk thunk;
  thunk.kind = runtime::Thunk::Kind::kernel;
  thunk.kernel.symbol = symbol;
  thunk.kernel.label = kernelLabel(op);
  thunk.kernel.slots = std::move(slots);
  thunk.kernel.numResults = op->getNumResults();
  for (unsigned i = 0; i < op->getNumOperands() && !atomic; ++i)
    if (mayWriteOverOperand(op, i))
      thunk.kernel.inPlaceOperands.push_back(i);
  thunk.kernel.rangeSize = info.rangeSize;
  thunk.kernel.splittable = info.splittable;
  thunk.kernel.workPerIndex = info.workPerIndex;
  exe_.thunks.push_back(std::move(thunk));
  ++stats_.opKernels;
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> FunctionLowering::permuted(Value operand,
                                                    ArrayRef<int64_t> perm) {
  if (isIdentityPermutation(perm))
    return slotOf_.lookup(operand);
  // Build the transpose in a detached block: it exists only to be emitted.
  auto block = std::make_unique<Block>();
  Value arg = block->addArgument(operand.getType(), operand.getLoc());
  OpBuilder b(operand.getContext());
  b.setInsertionPointToStart(block.get());
  auto transpose = TransposeOp::create(b, operand.getLoc(), arg, perm);
  uint32_t out = arenaSlot(bytesOf(transpose.getResult()),
                           operand.getDefiningOp()
                               ? operand.getDefiningOp()
                               : function_.getOperation());
  absl::Status s = addKernel(transpose, {slotOf_.lookup(operand), out});
  if (!s.ok())
    return s;
  return out;
}

bool FunctionLowering::onlyGemmsRead(Value v, SliceOp slice) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    auto dot = dyn_cast<DotGeneralOp>(user);
    auto fusion = dyn_cast<FusionOp>(user);
    bool ok = false;
    if (dot && isLibraryGemm(dot))
      ok = readsOperandAsItLies(dot, use.getOperandNumber()) &&
           gemmViewOfSlice(slice, dot.getLhsBatchingDimensions().size());
    // A slice that is one run of its source (a view with no batch stride)
    // is still one run reshaped: a chunk of attention's grouped queries
    // (kiln-fuse-elementwise leaves such a slice and a lone reshape apart
    // by the same rule).
    else if (auto reshape = dyn_cast<ReshapeOp>(user))
      ok = isOneRunOfItsSource(slice) &&
           onlyGemmsRead(reshape.getResult(), slice);
    else if (fusion && (fusion.getKind() == FusionKind::gemm || !hasKernel(fusion)))
      ok = onlyGemmsRead(
          fusion.getBody().getArgument(use.getOperandNumber()), slice);
    if (!ok)
      return false;
  }
  return true;
}

void FunctionLowering::bindArgument(BlockArgument arg, Value input) {
  slotOf_[arg] = slotOf_.lookup(input);
  // Copied out first: inserting may grow the map and move its entries.
  if (auto view = gemmViews_.find(input); view != gemmViews_.end()) {
    SliceOp slice = view->second;
    gemmViews_[arg] = slice;
  }
}

absl::Status FunctionLowering::lowerDot(DotGeneralOp op, uint32_t accumulator,
                                        runtime::GemmOperandView cView,
                                        uint64_t cBytes) {
  GemmShape shape = gemmShapeOf(op);
  runtime::GemmThunk g;
  g.batch = shape.batch, g.m = shape.m, g.n = shape.n, g.k = shape.k;
  g.input = shape.input, g.output = shape.output;
  g.transA = shape.transA, g.transB = shape.transB;
  // Operands read in place from a slice's source (onlyGemmsRead held).
  int64_t batchDims = op.getLhsBatchingDimensions().size();
  if (auto lhs = gemmViews_.find(op.getLhs()); lhs != gemmViews_.end())
    g.aView = *gemmViewOfSlice(lhs->second, batchDims);
  if (auto rhs = gemmViews_.find(op.getRhs()); rhs != gemmViews_.end())
    g.bView = *gemmViewOfSlice(rhs->second, batchDims);
  absl::StatusOr<uint32_t> a =
      g.transA ? absl::StatusOr<uint32_t>(slotOf_.lookup(op.getLhs()))
               : permuted(op.getLhs(), shape.aPerm);
  absl::StatusOr<uint32_t> b =
      g.transB ? absl::StatusOr<uint32_t>(slotOf_.lookup(op.getRhs()))
               : permuted(op.getRhs(), shape.bPerm);
  if (!a.ok() || !b.ok())
    return !a.ok() ? a.status() : b.status();
  g.a = *a;
  g.b = *b;
  g.c = slotOf_[op.getResult()] =
      arenaSlot(cView.packed() ? bytesOf(op.getResult()) : cBytes, op);
  g.accumulator = accumulator;
  g.cView = cView;
  runtime::Thunk thunk;
  thunk.kind = runtime::Thunk::Kind::gemm;
  thunk.gemm = g;
  exe_.thunks.push_back(thunk);
  ++stats_.gemms;
  return absl::OkStatus();
}

absl::Status FunctionLowering::lowerGemmFusion(FusionOp fusion) {
  // kiln-fuse-gemm-epilogue's form: one GEMM thunk that adds the
  // accumulator as it stores (docs/IR.md §4).
  std::optional<GemmEpilogue> e = gemmEpilogueOf(fusion);
  if (!e)
    return absl::InvalidArgumentError(
        "a kiln.fusion gemm must yield kiln.add(dot_general (its rows perhaps "
        "padded), accumulator) in f32, of f32, bf16 or f16 operands");
  Block &body = fusion.getBody().front();
  for (auto [arg, input] : llvm::zip(body.getArguments(), fusion.getInputs()))
    bindArgument(arg, input);
  // The pad and its zero are the GEMM's view of C, not kernels.
  Operation *zero = e->pad ? e->pad.getPaddingValue().getDefiningOp() : nullptr;
  const Operation *gemm[] = {e->add, e->dot, e->pad, zero};
  for (Operation &inner : body.without_terminator())
    if (!llvm::is_contained(gemm, &inner))
      if (absl::Status s = lowerOp(&inner); !s.ok())
        return s;
  if (absl::Status s = materializeFills(e->add); !s.ok())
    return s;
  if (absl::Status s = lowerDot(e->dot, slotOf_.lookup(e->add.getRhs()),
                                e->cView, bytesOf(e->add.getResult()));
      !s.ok())
    return s;
  slotOf_[fusion.getResult(0)] = slotOf_[e->add.getResult()] =
      slotOf_.lookup(e->dot.getResult());
  return absl::OkStatus();
}

absl::Status FunctionLowering::lowerAttention(Operation *op) {
  // cuda runs the thunk with the flash attention kernels, the cpu with
  // their host run (tests only: tools keep attention whole for cuda).
  runtime::AttentionThunk a;
  auto fwd = dyn_cast<FusedAttentionOp>(op);
  auto grad = dyn_cast<FusedAttentionGradOp>(op);
  a.gradient = static_cast<bool>(grad);
  a.query = slotOf_.lookup(op->getOperand(0));
  a.key = slotOf_.lookup(op->getOperand(1));
  a.value = slotOf_.lookup(op->getOperand(2));
  Value rng = fwd ? fwd.getRngState() : grad.getRngState();
  if (rng)
    a.rngState = slotOf_.lookup(rng);
  if (grad) {
    a.result = slotOf_.lookup(grad.getResult());
    a.rowStats = slotOf_.lookup(grad.getRowStats());
    a.resultGrad = slotOf_.lookup(grad.getResultGrad());
  }
  ArrayRef<int64_t> q = detail::shapeOf(op->getOperand(0));
  ArrayRef<int64_t> k = detail::shapeOf(op->getOperand(1));
  a.batch = q[0], a.heads = q[1], a.queries = q[2], a.headDim = q[3];
  a.kvHeads = k[1], a.keys = k[2];
  a.element = detail::elementOf(op->getOperand(0)).isBF16()
                  ? runtime::GemmType::bf16
                  : runtime::GemmType::f16;
  a.scale = fwd ? fwd.getScale().convertToDouble()
                : grad.getScale().convertToDouble();
  a.dropout = fwd ? fwd.getDropout().convertToDouble()
                  : grad.getDropout().convertToDouble();
  a.causal = fwd ? fwd.getCausal() : grad.getCausal();
  a.window = fwd ? fwd.getWindow() : grad.getWindow();
  std::vector<uint32_t> results;
  for (Value v : op->getResults())
    results.push_back(slotOf_[v] = arenaSlot(bytesOf(v), op));
  if (grad) {
    a.queryGrad = results[0], a.keyGrad = results[1], a.valueGrad = results[2];
  } else {
    a.result = results[0], a.rowStats = results[1];
  }
  runtime::Thunk thunk;
  thunk.kind = runtime::Thunk::Kind::attention;
  thunk.attention = a;
  exe_.thunks.push_back(std::move(thunk));
  return absl::OkStatus();
}

absl::Status FunctionLowering::materializeFills(Operation *op) {
  for (Value operand : op->getOperands()) {
    auto pending = pendingFills_.find(slotOf_.lookup(operand));
    if (pending == pendingFills_.end())
      continue;
    ConstantOp constant = pending->second;
    uint32_t slot = pending->first;
    pendingFills_.erase(pending);
    filledSplats_.insert(slot);
    // A fusion with no inputs whose body is the splat: the elemental
    // emitter makes it a fill kernel. It exists only to be emitted.
    auto block = std::make_unique<Block>();
    OpBuilder b(constant.getContext());
    b.setInsertionPointToStart(block.get());
    auto fusion = FusionOp::create(b, constant.getLoc(),
                                   TypeRange{constant.getType()},
                                   FusionKind::loop, ValueRange{});
    b.createBlock(&fusion.getBody());
    Operation *value = b.clone(*constant);
    YieldOp::create(b, constant.getLoc(), value->getResults());
    if (absl::Status s = addKernel(fusion, {slot}); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

absl::Status FunctionLowering::lowerOp(Operation *op) {
  if (auto c = dyn_cast<ConstantOp>(op)) {
    // A large splat (the zero accumulator of an embedding gradient is
    // 154 MB in GPT-2) is filled right before its first reader rather than
    // stored in the executable and kept in the arena for the whole run.
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (dense && dense.isSplat() && bytesOf(c.getResult()) > kMaxStoredSplatBytes) {
      uint32_t slot = slotOf_[c.getResult()] = arenaSlot(bytesOf(c.getResult()), op);
      pendingFills_[slot] = c;
      return absl::OkStatus();
    }
    absl::StatusOr<std::string> bytes = constantBytes(c);
    if (!bytes.ok())
      return bytes.status();
    uint32_t slot = slotOf_[c.getResult()] = arenaSlot(bytes->size(), op);
    constantSlots_.insert(slot);
    exe_.plan.constants.push_back({slot, std::move(*bytes)});
    return absl::OkStatus();
  }
  if (absl::Status s = materializeFills(op); !s.ok())
    return s;
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    slotOf_[r.getResult()] = slotOf_.lookup(r.getOperand());
    if (auto view = gemmViews_.find(r.getOperand()); view != gemmViews_.end()) {
      SliceOp slice = view->second; // before the insertion moves entries
      gemmViews_[r.getResult()] = slice;
    }
    return absl::OkStatus();
  }
  // A slice only GEMMs read is no copy: they read its source in place.
  if (auto slice = dyn_cast<SliceOp>(op);
      slice && target_.gemmOperandViews && onlyGemmsRead(slice, slice)) {
    slotOf_[slice.getResult()] = slotOf_.lookup(slice.getOperand());
    gemmViews_[slice.getResult()] = slice;
    return absl::OkStatus();
  }
  // A barrier only orders the IR: each result is its operand's buffer.
  if (auto barrier = dyn_cast<OptimizationBarrierOp>(op)) {
    for (auto [result, operand] :
         llvm::zip(barrier.getResults(), barrier.getOperands()))
      slotOf_[result] = slotOf_.lookup(operand);
    return absl::OkStatus();
  }
  // Products the GEMM library runs; others (f64, integers) get a
  // generated kernel.
  if (auto dot = dyn_cast<DotGeneralOp>(op); dot && isLibraryGemm(dot))
    return lowerDot(dot);
  if (isa<FusedAttentionOp, FusedAttentionGradOp>(op))
    return lowerAttention(op);
  // A sum over the processes is the runtime's exchange, not a kernel.
  if (auto reduce = dyn_cast<AllReduceOp>(op)) {
    runtime::Thunk thunk;
    thunk.kind = runtime::Thunk::Kind::allReduce;
    auto type = cast<RankedTensorType>(reduce.getType());
    thunk.allReduce = {slotOf_.lookup(reduce.getOperand()),
                       slotOf_[reduce.getResult()] =
                           arenaSlot(bytesOf(reduce.getResult()), op),
                       *dtypeOf(type.getElementType()), type.getNumElements()};
    exe_.thunks.push_back(std::move(thunk));
    return absl::OkStatus();
  }
  if (auto fusion = dyn_cast<FusionOp>(op);
      fusion && fusion.getKind() == FusionKind::gemm)
    return lowerGemmFusion(fusion);
  if (auto fusion = dyn_cast<FusionOp>(op); fusion && !hasKernel(op)) {
    Block &body = fusion.getBody().front();
    for (auto [arg, input] : llvm::zip(body.getArguments(), fusion.getInputs()))
      bindArgument(arg, input);
    for (Operation &inner : body.without_terminator())
      if (absl::Status s = lowerOp(&inner); !s.ok())
        return s;
    for (auto [res, yielded] :
         llvm::zip(fusion.getResults(), body.getTerminator()->getOperands()))
      slotOf_[res] = slotOf_.lookup(yielded);
    return absl::OkStatus();
  }
  if (!hasKernel(op))
    return absl::UnimplementedError(absl::StrCat(
        "cpu backend: unsupported op ", op->getName().getStringRef().str()));
  std::vector<uint32_t> slots;
  for (Value v : op->getOperands())
    slots.push_back(slotOf_.lookup(v));
  // A scatter_add into a large splat filled for it alone (an embedding's
  // zero gradient) adds where the fill wrote: no second buffer of the
  // table's size. Both kernels allow it: the atomic one adds in place, and
  // each range of the other copies its own part of the operand onto
  // itself before adding to it.
  auto scatter = dyn_cast<ScatterAddOp>(op);
  auto splat = scatter ? scatter.getOperand().getDefiningOp<ConstantOp>()
                       : ConstantOp();
  if (splat && splat->hasOneUse() && filledSplats_.contains(slots[0])) {
    slots.push_back(slotOf_[scatter.getResult()] = slots[0]);
    return addKernel(op, std::move(slots));
  }
  for (Value v : op->getResults())
    slots.push_back(slotOf_[v] = arenaSlot(bytesOf(v), op));
  return addKernel(op, std::move(slots));
}

absl::Status FunctionLowering::lowerBlock(Block &block) {
  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (absl::Status s = materializeFills(ret); !s.ok())
        return s;
      planOutputs(ret);
      continue;
    }
    if (absl::Status s = lowerOp(&op); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

absl::Status FunctionLowering::generateCode() {
  exe_.device = target_.device;
  exe_.allowTf32 = target_.device == runtime::Device::cuda && target_.tf32;
  if (target_.device == runtime::Device::cuda) {
    exe_.targetCpu = target_.cudaArch;
    if (absl::Status s = cuda::checkCudaArch(target_.cudaArch); !s.ok())
      return s;
  }
  if (kernels_->getBody()->empty())
    return absl::OkStatus();
  auto start = std::chrono::steady_clock::now();
  // Kernels written for several lanes a row: a warp on cuda, host lanes
  // on the cpu (a test form: runtime/HostLanes.h).
  llvm::StringMap<unsigned> lanes;
  for (const auto &[symbol, info] : kernelInfo_)
    if (info.lanes > 1)
      lanes[symbol] = info.lanes;
  if (target_.device == runtime::Device::cuda) {
    cuda::CudaCodegenOptions options;
    options.arch = target_.cudaArch;
    llvm::StringMap<int64_t> largestRange;
    for (const runtime::Thunk &thunk : exe_.thunks)
      if (thunk.kind == runtime::Thunk::Kind::kernel) {
        const runtime::KernelThunk &k = thunk.kernel;
        options.bufferCounts[k.symbol] = k.slots.size();
        int64_t &range = largestRange[k.symbol];
        range = std::max(range, k.rangeSize);
      }
    for (const auto &entry : largestRange)
      if (entry.second <= runtime::kCudaBlockSize)
        options.singleBlock.insert(entry.first());
    options.lanes = lanes;
    if (gpuExclusiveBuffers())
      for (auto &[symbol, access] : kernelBufferAccess(exe_))
        options.bufferAccess[symbol] = std::move(access);
    absl::StatusOr<cuda::CudaKernelImage> image =
        cuda::compileCudaKernelModule(*kernels_, options);
    if (!image.ok())
      return image.status();
    stats_.lowerSeconds = image->lowerSeconds;
    stats_.optimizeSeconds = image->optimizeSeconds;
    stats_.emitSeconds = image->emitSeconds;
    stats_.assembleSeconds = image->assembleSeconds;
    exe_.targetFeatures = image->ptxFeatures;
    exe_.kernelLibrary = image->cubin.empty() ? image->ptx : image->cubin;
    stats_.ptx = std::move(image->ptx);
  } else {
    absl::StatusOr<NativeLibrary> library =
        compileKernelModule(*kernels_, lanes);
    if (!library.ok())
      return library.status();
    stats_.lowerSeconds = library->lowerSeconds;
    stats_.optimizeSeconds = library->optimizeSeconds;
    stats_.emitSeconds = library->emitSeconds;
    stats_.linkSeconds = library->linkSeconds;
    exe_.kernelLibrary = std::move(library->sharedObject);
    exe_.targetCpu = library->cpu;
    exe_.targetFeatures = library->features;
  }
  stats_.codegenSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return absl::OkStatus();
}

absl::StatusOr<runtime::Executable> FunctionLowering::run() {
  absl::StatusOr<runtime::ProgramSignature> signature = signatureOf(function_);
  if (!signature.ok())
    return signature.status();
  exe_.signature = std::move(*signature);
  exe_.compilerVersion = kKilnVersion;
  for (auto [i, arg] : llvm::enumerate(function_.getArguments())) {
    runtime::BufferSlot slot;
    slot.kind = runtime::BufferSlot::Kind::input;
    slot.input = i;
    slot.bytes = bytesOf(arg);
    exe_.plan.slots.push_back(slot);
    slotOf_[arg] = exe_.plan.slots.size() - 1;
  }
  if (absl::Status s = lowerBlock(function_.getBody().front()); !s.ok())
    return s;
  if (target_.kernelGroups)
    stats_.kernelGroups = groupIndependentKernels(
        exe_, *kernels_, kernelInfo_, kernelGroupOptionsFor(target_.device));
  // Plan before codegen, so a step over budget fails in milliseconds.
  stats_.memory = planMemory(exe_, slotOrigins_);
  if (absl::Status s = runtime::checkArenaOverlaps(exe_); !s.ok())
    return s;
  if (absl::Status s = checkMemoryBudget(stats_.memory, memoryBudgetBytes_);
      !s.ok())
    return s;
  if (target_.planOnly)
    return std::move(exe_);
  if (absl::Status s = generateCode(); !s.ok())
    return s;
  return std::move(exe_);
}

absl::StatusOr<runtime::Executable>
compileExecutable(ModuleOp module, const std::string &function,
                  CpuCompileStats *stats, const PipelineOptions &pipeline,
                  const KernelTarget &target) {
  PipelineOptions passes = pipeline;
  // Kernels map a reduction's outputs to threads (GPU) or to the range the
  // cores share (CPU): one with few outputs must become a tree to use the
  // device. The GPU splits reductions of any layout, the CPU those whose
  // parts are contiguous runs.
  KernelTarget kernels = target;
  if (target.device == runtime::Device::cuda) {
    kernels.atomicScatterAdd = true;
    kernels.rowLanes = gpuRowLanes();
    kernels.storeWhileReducing = true;
    kernels.elementsPerIndex = gpuElementsPerIndex();
    kernels.rowUnroll = gpuRowUnroll();
    kernels.holdRows = gpuHoldRows();
    kernels.innermostRows = false;
    kernels.mostScratchStashBytes = 0;
    kernels.columnPieces = false;
    kernels.kernelGroups = !layoutOverrides().noKernelGroups;
    if (passes.splitReductionsBelow == 0) {
      passes.splitReductionsBelow = kGpuReductionThreads;
      passes.splitReductionsMaxSerial = kGpuReductionMaxSerial;
      passes.splitReductionsRowLanes = kernels.rowLanes;
      passes.splitReductionsMinLanedRow = detail::kMinLanedRow;
    }
  } else if (passes.splitReductionsBelow == 0) {
    passes.splitReductionsBelow = kCpuReductionOutputs;
    passes.splitReductionsMaxSerial = kCpuReductionMaxSerial;
    passes.splitReductionsContiguousParts = true;
    // Each parameter's squared norm stays its own sum, added in parameter
    // order: ZeRO stage 2 adds the owners' norms in that order after its
    // all-reduce, and matches plain data parallelism bit for bit only so.
    // Joined, the norm saved a few microseconds' launches of ~100 kernels.
    passes.joinSums = false;
  }
  if (failed(runKilnPipeline(module, passes)))
    return absl::InternalError("the kiln pass pipeline failed on the module");
  absl::StatusOr<func::FuncOp> entry = findEntryFunction(module, function);
  if (!entry.ok())
    return entry.status();
  loadKernelDialects(*module.getContext());
  CpuCompileStats local;
  FunctionLowering lowering(*entry, stats ? *stats : local,
                            passes.memoryBudgetBytes, kernels);
  return lowering.run();
}

absl::StatusOr<std::unique_ptr<runtime::Program>>
loadProgram(runtime::Executable executable) {
  if (executable.device == runtime::Device::cpu)
    return runtime::loadCpuProgram(std::move(executable));
#ifdef KILN_WITH_CUDA_RUNTIME
  return runtime::loadCudaProgram(std::move(executable));
#else
  return absl::UnimplementedError(
      "this build of kiln has no CUDA runtime (the CUDA toolkit's headers "
      "were missing when it was built)");
#endif
}

absl::StatusOr<std::unique_ptr<runtime::Program>>
createProgram(ModuleOp module, const std::string &function,
              const PipelineOptions &pipeline, const KernelTarget &target) {
  absl::StatusOr<runtime::Executable> executable =
      compileExecutable(module, function, nullptr, pipeline, target);
  if (!executable.ok())
    return executable.status();
  return loadProgram(std::move(*executable));
}

absl::StatusOr<std::unique_ptr<runtime::Program>>
createCpuProgram(ModuleOp module, const std::string &function,
                 const PipelineOptions &pipeline) {
  return createProgram(module, function, pipeline, KernelTarget());
}

} // namespace kiln::compiler::cpu
