// The native code path, in order: (1) expand f32 transcendentals into
// polynomials and bf16 conversions into integer ops, (2) convert every dialect
// to LLVM, (3) translate to LLVM IR, (4) give the module the host's triple,
// data layout, CPU and features (without them -O3 vectorises nothing) and
// prefer 512-bit vectors, (5) run the -O3 pipeline, (6) emit an object
// (steps 4-6 run on one thread per core for large modules, each thread with
// a share of the kernels), (7) link the objects into one shared object with
// lld, in process.
#include "compiler/cpu/CodeGen.h"
#include "compiler/TempFile.h"
#include "compiler/cpu/KernelBuilder.h"
#include "runtime/HostLanes.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lld/Common/Driver.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <chrono>
#include <mutex>
#include <thread>

LLD_HAS_DRIVER(elf)

namespace kiln::compiler::cpu {

using namespace mlir;

void loadKernelDialects(MLIRContext &context) {
  context.loadDialect<arith::ArithDialect, cf::ControlFlowDialect,
                      func::FuncDialect, LLVM::LLVMDialect, math::MathDialect,
                      scf::SCFDialect>();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  context.appendDialectRegistry(registry);
}

namespace {

/// Collects the diagnostics MLIR emits while `this` lives.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx)
      : os_(text_), handler_(ctx, [this](Diagnostic &d) {
          os_ << d << "\n";
          return success();
        }) {}
  std::string text() { return os_.str(); }

private:
  std::string text_;
  llvm::raw_string_ostream os_;
  ScopedDiagnosticHandler handler_;
};

/// Adds `group` to the access groups of `op` when it is a load or a store.
void addAccessGroup(Operation *op, LLVM::AccessGroupAttr group) {
  auto with = [&](ArrayAttr groups) {
    SmallVector<Attribute> all;
    if (groups)
      all.assign(groups.begin(), groups.end());
    all.push_back(group);
    return ArrayAttr::get(op->getContext(), all);
  };
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    load.setAccessGroupsAttr(with(load.getAccessGroupsAttr()));
  else if (auto store = dyn_cast<LLVM::StoreOp>(op))
    store.setAccessGroupsAttr(with(store.getAccessGroupsAttr()));
}

/// A back-edge's annotation: the accesses of `groups` carry no dependence
/// from one iteration of its loop to another.
LLVM::LoopAnnotationAttr
parallelAccesses(ArrayRef<LLVM::AccessGroupAttr> groups) {
  return LLVM::LoopAnnotationAttr::get(groups.front().getContext(), {}, {}, {},
                                       {}, {}, {}, {}, {}, {}, {}, {}, {}, {},
                                       {}, groups);
}

/// Whether memory op `op` reads or writes a stack array of the kernel (an
/// alloca, or an element of one).
bool accessesTheStack(Operation *op) {
  Value address;
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    address = load.getAddr();
  else if (auto store = dyn_cast<LLVM::StoreOp>(op))
    address = store.getAddr();
  while (auto gep = address ? address.getDefiningOp<LLVM::GEPOp>() : nullptr)
    address = gep.getBase();
  return address && address.getDefiningOp<LLVM::AllocaOp>();
}

/// Marks the memory accesses of kernels built with kParallelAttr as one
/// access group that carries no loop dependence, on every loop back-edge:
/// without it, an output updated in place (a donated input) fails LLVM's
/// runtime alias check and only the scalar loop runs.
///
/// Stack arrays (a row's scratch: a stash, dropout draws) get a group of
/// their own, claimed by the loops inside another loop only: the outermost
/// loop, over rows, writes the same scratch again for each row, while a
/// loop inside a row reaches each point's element from its own iteration.
/// Left out of every claim, the scratch's accesses kept the row's loops
/// from being parallel, and an output written over its input then took the
/// scalar loop.
void markParallelLoops(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  module.walk([&](LLVM::LLVMFuncOp func) {
    if (!func->hasAttr("kiln.parallel"))
      return;
    auto group = LLVM::AccessGroupAttr::get(ctx);
    auto stackGroup = LLVM::AccessGroupAttr::get(ctx);
    func.walk([&](Operation *op) {
      addAccessGroup(op, accessesTheStack(op) ? stackGroup : group);
    });
    // Blocks are in program order after scf → cf, so a branch to an
    // earlier block is a loop's back-edge, and the loop spans the blocks
    // from its target to the branch.
    llvm::DenseMap<Block *, unsigned> order;
    for (Block &block : func.getBody())
      order[&block] = order.size();
    SmallVector<std::pair<LLVM::BrOp, std::pair<unsigned, unsigned>>> loops;
    func.walk([&](LLVM::BrOp br) {
      unsigned first = order.lookup(br.getDest()),
               last = order.lookup(br->getBlock());
      if (first <= last)
        loops.push_back({br, {first, last}});
    });
    for (auto [br, span] : loops) {
      bool inner = llvm::any_of(loops, [&](const auto &other) {
        auto [first, last] = other.second;
        return other.first != br && first <= span.first && span.second <= last;
      });
      SmallVector<LLVM::AccessGroupAttr> groups = {group};
      if (inner)
        groups.push_back(stackGroup);
      br.setLoopAnnotationAttr(parallelAccesses(groups));
    }
  });
}

/// The loops KernelBuilder::parallelLoop made: SCF's lowering carries each
/// one's kParallelLoopAttr, the loop's own access group, to its back-edge.
/// The group goes on the loads and stores of the loop's blocks, from its
/// header to its back-edge in program order (nested loops included), and
/// the back-edge says it carries no dependence in this loop. An enclosing
/// loop, which may carry one (a column block's accumulators across rows),
/// claims nothing.
void markTaggedParallelLoops(ModuleOp module) {
  module.walk([&](LLVM::LLVMFuncOp func) {
    SmallVector<Block *> blocks;
    llvm::DenseMap<Block *, unsigned> order;
    for (Block &block : func.getBody()) {
      order[&block] = blocks.size();
      blocks.push_back(&block);
    }
    func.walk([&](LLVM::BrOp br) {
      auto group = br->getAttrOfType<LLVM::AccessGroupAttr>(kParallelLoopAttr);
      if (!group)
        return;
      br->removeAttr(kParallelLoopAttr);
      unsigned first = order.lookup(br.getDest()),
               last = order.lookup(br->getBlock());
      if (first > last)
        return; // not a back-edge after all: claim nothing
      for (unsigned i = first; i <= last; ++i)
        for (Operation &op : *blocks[i])
          addAccessGroup(&op, group);
      br.setLoopAnnotationAttr(parallelAccesses({group}));
    });
  });
}

} // namespace

absl::Status lowerKernelsToLLVMDialect(ModuleOp module) {
  DiagnosticCollector diagnostics(module.getContext());
  RewritePatternSet patterns(module.getContext());
  populateMathPolynomialApproximationPatterns(patterns);
  arith::populateExpandBFloat16Patterns(patterns);
  if (failed(applyPatternsGreedily(module, std::move(patterns))))
    return absl::InternalError(absl::StrCat(
        "codegen: math/bf16 expansion did not converge\n", diagnostics.text()));
  PassManager pm(module.getContext());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(module)))
    return absl::InternalError(absl::StrCat(
        "codegen: lowering to the LLVM dialect failed\n", diagnostics.text()));
  markParallelLoops(module);
  markTaggedParallelLoops(module);
  return absl::OkStatus();
}

namespace {

struct HostTarget {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::string cpu, features;
};

/// LLVM's loop vectorizer sizes its vectors by a loop's widest type unless
/// told to maximize bandwidth: a kernel computing in f32 while summing in
/// f64 (every row and column reduction: the accumulators are f64) got 8
/// lanes of f32, half a zmm register. At the narrowest type it takes 16,
/// and its cost model still picks each loop's width: GELU's backward with
/// its bias gradient ran 5.0-6.6 -> 3.3 ms alone, the loss chunk's
/// log-sum-exp-and-gradient kernel 1.6-2.3x faster in GPT-2's step, the
/// losses bit for bit the same (docs/PERFORMANCE.md). The switch is a
/// process-wide LLVM option (XLA's CPU compiler sets LLVM options too);
/// the cuda backend's PTX for GPT-2's step is byte-identical with it set.
///
/// The option's default becomes true, not only its value: lld, run
/// in-process, resets every LLVM option to its default at each link, and
/// another thread's compile may be vectorizing meanwhile. Set as a value
/// and set again after each link, it flipped under that compile, whose
/// vectorizer then read register usage it had not computed and crashed
/// (two random-graph checks compiling at once). A default survives the
/// reset. A command line that names the option keeps its choice.
void vectorizeAtTheNarrowestType() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("vectorizer-maximize-bandwidth");
  if (it == options.end() || it->second->getNumOccurrences() > 0)
    return;
  // LoopVectorize declares it `static cl::opt<bool>`.
  static_cast<llvm::cl::opt<bool> *>(it->second)->setInitialValue(true);
}

absl::StatusOr<HostTarget> hostTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    vectorizeAtTheNarrowestType();
  });
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return absl::InternalError(absl::StrCat("cpu codegen: ", error));
  HostTarget host;
  host.cpu = llvm::sys::getHostCPUName().str();
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.getKey(), feature.getValue());
  host.features = features.getString();
  host.machine.reset(target->createTargetMachine(
      triple, host.cpu, host.features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!host.machine)
    return absl::InternalError("cpu codegen: no target machine for the host");
  return host;
}

void optimize(llvm::Module &module, HostTarget &host) {
  module.setTargetTriple(host.machine->getTargetTriple());
  module.setDataLayout(host.machine->createDataLayout());
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", host.cpu);
    f.addFnAttr("target-features", host.features);
    f.addFnAttr("prefer-vector-width", "512");
    f.addFnAttr(llvm::Attribute::NoUnwind);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(host.machine.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

/// A temporary file's error as the cpu code generator reports it.
absl::Status codegenError(const absl::Status &status) {
  return absl::Status(status.code(),
                      absl::StrCat("cpu codegen: ", status.message()));
}

struct LinkerSetup {
  std::string libgcc;
};

/// libgcc's archive, found once per process.
absl::StatusOr<LinkerSetup> linkerSetup() {
  static absl::StatusOr<LinkerSetup> setup =
      []() -> absl::StatusOr<LinkerSetup> {
    llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
    if (!cc)
      return absl::FailedPreconditionError(
          "cpu codegen: kernels need libgcc, found through `cc`; install gcc");
    TempFile out;
    if (absl::Status s = out.create("kiln-libgcc", "txt"); !s.ok())
      return codegenError(s);
    llvm::SmallVector<llvm::StringRef> args = {*cc, "-print-libgcc-file-name"};
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, out.path(),
                                                  std::nullopt};
    if (llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, redirects) != 0)
      return absl::InternalError(
          "cpu codegen: `cc -print-libgcc-file-name` failed");
    auto text = llvm::MemoryBuffer::getFile(out.path());
    if (!text)
      return absl::InternalError("cpu codegen: cannot read libgcc's path");
    return LinkerSetup{(*text)->getBuffer().trim().str()};
  }();
  return setup;
}

absl::StatusOr<std::string> link(llvm::ArrayRef<llvm::StringRef> objects) {
  // Every file is removed on the way out, a failed write's too.
  std::vector<std::unique_ptr<TempFile>> objectFiles;
  TempFile libraryFile;
  if (absl::Status s = libraryFile.create("kiln-kernels", "so"); !s.ok())
    return codegenError(s);
  uint64_t objectBytes = 0;
  for (llvm::StringRef object : objects) {
    objectFiles.push_back(std::make_unique<TempFile>());
    if (absl::Status s =
            objectFiles.back()->create("kiln-kernels", "o", object);
        !s.ok())
      return codegenError(s);
    objectBytes += object.size();
  }
  // lld writes the library through a mapping of a sparse file, and in a
  // folder without room for it the process died of SIGBUS (LLVM 22's lld
  // maps it even with --no-mmap-output-file). A library is smaller than
  // its objects: ask for their size and a margin first.
  if (absl::Status s = libraryFile.checkRoom(objectBytes + objectBytes / 4 +
                                             (uint64_t{64} << 10));
      !s.ok())
    return codegenError(s);
  absl::StatusOr<LinkerSetup> linker = linkerSetup();
  if (!linker.ok())
    return linker.status();
  // lld in-process (~1 ms) instead of spawning `ld` (~15 ms on a loaded
  // machine). lld keeps global state per invocation: one link at a time.
  // libgcc provides the f64 → f16 conversion LLVM calls; libm's symbols
  // resolve when the runtime loads the library.
  std::vector<const char *> args = {
      "ld.lld",      "-shared", "--hash-style=gnu",
      "--threads=1", "-o",      libraryFile.path().c_str()};
  for (auto &object : objectFiles)
    args.push_back(object->path().c_str());
  args.push_back(linker->libgcc.c_str());
  std::string log;
  llvm::raw_string_ostream logStream(log);
  static std::mutex lldMutex;
  lld::Result result;
  {
    std::lock_guard<std::mutex> lock(lldMutex);
    // lld resets every LLVM option to its default before parsing its own
    // -mllvm ones: vectorizeAtTheNarrowestType sets a default for that.
    result =
        lld::lldMain(args, logStream, logStream, {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0 || !result.canRunAgain)
    return absl::InternalError(absl::StrCat(
        "cpu codegen: linking kernels failed (", result.retCode, ")\n", log));
  auto library = llvm::MemoryBuffer::getFile(libraryFile.path());
  if (!library)
    return absl::InternalError(
        absl::StrCat("cpu codegen: cannot read the linked library ",
                     libraryFile.path(), ": ", library.getError().message()));
  return (*library)->getBuffer().str();
}

/// One share of the kernels, optimised and emitted on its own thread with
/// its own LLVM context and target machine.
struct Part {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  llvm::SmallVector<char, 0> object;
  absl::Status status;
  std::string cpu, features;
  double optimize = 0, emit = 0;
};

/// LLVM turns an f32 → bf16 rounding it cannot emit as an instruction (a
/// CPU without AVX512-BF16) into a call of __truncsfbf2, which libgcc has
/// only since GCC 13: some fused kernels (Llama's attention backward under
/// --bf16) then failed to load on a host with an older libgcc. Every
/// kernel object carries its own weak, hidden definition, added after the
/// IR optimizer (which could fold its integer rounding back into the very
/// truncation it implements): round to nearest even, a NaN kept quiet.
void defineBFloat16Truncation(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *f32 = llvm::Type::getFloatTy(ctx),
             *i32 = llvm::Type::getInt32Ty(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getBFloatTy(ctx), {f32},
                                       /*isVarArg=*/false);
  auto *f = llvm::dyn_cast<llvm::Function>(
      module.getOrInsertFunction("__truncsfbf2", type).getCallee());
  if (!f || !f->isDeclaration())
    return; // another signature under the name, or already defined
  f->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
  f->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Value *x = f->getArg(0);
  llvm::Value *bits = b.CreateBitCast(x, i32);
  llvm::Value *high = b.CreateLShr(bits, 16);
  llvm::Value *bias = b.CreateAdd(b.CreateAnd(high, 1), b.getInt32(0x7FFF));
  llvm::Value *rounded = b.CreateLShr(b.CreateAdd(bits, bias), 16);
  llvm::Value *quietNaN = b.CreateOr(high, b.getInt32(0x40));
  llvm::Value *result =
      b.CreateSelect(b.CreateFCmpUNO(x, x), quietNaN, rounded);
  b.CreateRet(b.CreateBitCast(b.CreateTrunc(result, b.getInt16Ty()),
                              llvm::Type::getBFloatTy(ctx)));
}

/// Host lanes (runtime/HostLanes.h): the warp primitives a laned body
/// calls, and each laned kernel's entry, become calls through the table
/// `kiln_host_lanes` the library exports and the cpu executor fills. The
/// table is weak, so each part's copy is one symbol in the linked library.
void addHostLanes(llvm::Module &module,
                  const llvm::StringMap<unsigned> &lanes) {
  static constexpr const char *kPrimitives[] = {
      "kiln_lane_id", "kiln_shfl_xor_f32", "kiln_shfl_xor_f64",
      "kiln_syncwarp"}; // the table's order (HostLaneHooks)
  constexpr unsigned kRunLanes = 4;
  SmallVector<llvm::Function *> laned;
  for (llvm::Function &f : module)
    if (!f.isDeclaration() && lanes.lookup(f.getName()) > 1)
      laned.push_back(&f);
  bool usesPrimitive = llvm::any_of(kPrimitives, [&](const char *name) {
    llvm::Function *f = module.getFunction(name);
    return f && f->isDeclaration();
  });
  if (laned.empty() && !usesPrimitive)
    return;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  auto *tableType = llvm::ArrayType::get(ptr, kRunLanes + 1);
  llvm::GlobalVariable *table =
      module.getGlobalVariable(runtime::kHostLaneHooksSymbol);
  if (!table)
    table =
        new llvm::GlobalVariable(module, tableType, /*isConstant=*/false,
                                 llvm::GlobalValue::WeakAnyLinkage,
                                 llvm::ConstantAggregateZero::get(tableType),
                                 runtime::kHostLaneHooksSymbol);
  auto hook = [&](llvm::IRBuilder<> &b, unsigned k) {
    return b.CreateLoad(ptr,
                        b.CreateConstInBoundsGEP2_32(tableType, table, 0, k));
  };
  for (auto [k, name] : llvm::enumerate(kPrimitives)) {
    llvm::Function *f = module.getFunction(name);
    if (!f || !f->isDeclaration())
      continue;
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    SmallVector<llvm::Value *> args;
    for (llvm::Argument &a : f->args())
      args.push_back(&a);
    llvm::Value *out = b.CreateCall(f->getFunctionType(), hook(b, k), args);
    f->getReturnType()->isVoidTy() ? b.CreateRetVoid() : b.CreateRet(out);
  }
  for (llvm::Function *body : laned) {
    // The entry keeps the kernel's name and ABI; the body runs each lane.
    std::string name = body->getName().str();
    unsigned n = lanes.lookup(name);
    body->setName(name + ".lanes");
    body->setLinkage(llvm::GlobalValue::InternalLinkage);
    auto *entry = llvm::Function::Create(body->getFunctionType(),
                                         llvm::GlobalValue::ExternalLinkage,
                                         name, module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    llvm::Type *i64 = b.getInt64Ty();
    auto *runLanesType = llvm::FunctionType::get(
        b.getVoidTy(), {ptr, ptr, i64, i64, i64}, /*isVarArg=*/false);
    b.CreateCall(runLanesType, hook(b, kRunLanes),
                 {body, entry->getArg(0), entry->getArg(1), entry->getArg(2),
                  b.getInt64(n)});
    b.CreateRetVoid();
  }
}

void optimizeAndEmit(Part &part) {
  using Clock = std::chrono::steady_clock;
  absl::StatusOr<HostTarget> host = hostTarget();
  if (!host.ok()) {
    part.status = host.status();
    return;
  }
  part.cpu = host->cpu;
  part.features = host->features;
  auto start = Clock::now();
  optimize(*part.module, *host);
  defineBFloat16Truncation(*part.module);
  auto mid = Clock::now();
  llvm::raw_svector_ostream os(part.object);
  llvm::legacy::PassManager codegen;
  if (host->machine->addPassesToEmitFile(codegen, os, nullptr,
                                         llvm::CodeGenFileType::ObjectFile)) {
    part.status =
        absl::InternalError("cpu codegen: the target cannot emit objects");
    return;
  }
  codegen.run(*part.module);
  part.optimize = std::chrono::duration<double>(mid - start).count();
  part.emit = std::chrono::duration<double>(Clock::now() - mid).count();
}

/// The lowered module's kernels dealt round-robin into one module per
/// thread (each with every declaration), so codegen of large graphs uses
/// both cores; small modules stay whole.
SmallVector<OwningOpRef<ModuleOp>> splitModule(ModuleOp module) {
  constexpr unsigned kMinKernelsPerPart = 8;
  SmallVector<LLVM::LLVMFuncOp> definitions;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal())
      definitions.push_back(func);
  unsigned n =
      std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                      definitions.size() / kMinKernelsPerPart));
  SmallVector<OwningOpRef<ModuleOp>> parts;
  for (unsigned i = 0; i < n; ++i) {
    parts.push_back(ModuleOp::create(module.getLoc()));
    OpBuilder b = OpBuilder::atBlockEnd(parts.back()->getBody());
    for (Operation &op : module.getBody()->getOperations())
      if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op); func && func.isExternal())
        b.clone(op);
  }
  for (auto [i, func] : llvm::enumerate(definitions))
    func->moveBefore(parts[i % n]->getBody(), parts[i % n]->getBody()->end());
  // A group kernel calls its members' kernels (KernelGroups.h), which may
  // have gone to another part: declare them there; the link resolves them.
  llvm::StringMap<LLVM::LLVMFunctionType> typeOf;
  for (LLVM::LLVMFuncOp func : definitions)
    typeOf[func.getName()] = func.getFunctionType();
  for (OwningOpRef<ModuleOp> &part : parts) {
    llvm::SetVector<StringRef> missing;
    part->walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (callee && !part->lookupSymbol(*callee) && typeOf.count(*callee))
        missing.insert(*callee);
    });
    OpBuilder b = OpBuilder::atBlockBegin(part->getBody());
    for (StringRef name : missing)
      LLVM::LLVMFuncOp::create(b, part->getLoc(), name, typeOf[name]);
  }
  return parts;
}

} // namespace

absl::StatusOr<NativeLibrary>
compileKernelModule(ModuleOp module, const llvm::StringMap<unsigned> &lanes) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  NativeLibrary result;
  auto start = Clock::now();
  if (absl::Status s = lowerKernelsToLLVMDialect(module); !s.ok())
    return s;
  // Translation shares the MLIR context, so it stays on this thread.
  std::vector<std::unique_ptr<Part>> parts;
  for (OwningOpRef<ModuleOp> &piece : splitModule(module)) {
    auto part = std::make_unique<Part>();
    part->module = translateModuleToLLVMIR(*piece, part->context, "kiln");
    if (!part->module)
      return absl::InternalError("cpu codegen: translation to LLVM IR failed");
    addHostLanes(*part->module, lanes);
    parts.push_back(std::move(part));
  }
  result.lowerSeconds = since(start);
  start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t i = 1; i < parts.size(); ++i)
    threads.emplace_back([&part = *parts[i]] { optimizeAndEmit(part); });
  optimizeAndEmit(*parts[0]);
  for (std::thread &t : threads)
    t.join();
  std::vector<llvm::StringRef> objects;
  for (const auto &part : parts) {
    if (!part->status.ok())
      return part->status;
    result.optimizeSeconds = std::max(result.optimizeSeconds, part->optimize);
    result.emitSeconds = std::max(result.emitSeconds, part->emit);
    objects.push_back(
        llvm::StringRef(part->object.data(), part->object.size()));
  }
  start = Clock::now();
  absl::StatusOr<std::string> library = link(objects);
  if (!library.ok())
    return library.status();
  result.linkSeconds = since(start);
  result.sharedObject = std::move(*library);
  result.cpu = parts[0]->cpu;
  result.features = parts[0]->features;
  return result;
}

} // namespace kiln::compiler::cpu
