// The CUDA code path, in order: (1) the CPU backend's lowering of the kernel
// module to the LLVM dialect (shared: polynomial f32 transcendentals, bf16
// as integer ops), (2) translation to LLVM IR, (3) a GPU entry point per
// kernel that maps its thread to one index of the kernel's range (the
// kernel function itself is inlined into it), (4) libm calls (f64
// transcendentals, pow) renamed to libdevice's `__nv_*` and libdevice
// linked in, (5) -O3 for the NVPTX target (NVVMReflect included, with
// denormals kept: the reference evaluator keeps them), (6) PTX emission,
// (7) ptxas, out of process, for a cubin.
#include "compiler/cuda/CudaCodeGen.h"

#include "compiler/TempFile.h"
#include "compiler/cpu/CodeGen.h"
#include "runtime/Executable.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>

// Only the NVPTX target is initialised (not every target LLVM was built
// with), so a static link pulls in just this one.
extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace kiln::compiler::cuda {

namespace {

/// The PTX ISA both supported architectures are compiled with: 8.0 runs on
/// sm_80 and sm_90 and on every CUDA 12+ driver.
constexpr const char *kPtxFeatures = "+ptx80";

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>>
nvptxMachine(const std::string &arch) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return absl::InternalError(absl::StrCat("cuda codegen: ", error));
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, arch, kPtxFeatures, llvm::TargetOptions(), std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return absl::InternalError(
        absl::StrCat("cuda codegen: no NVPTX target machine for ", arch));
  return machine;
}

/// Replaces every kernel function `kiln_kernel_N(ptr buffers, i64 begin,
/// i64 end)` by a `ptx_kernel` of the same name taking each of its buffers
/// as a parameter, then the range size: (ptr b0, ..., ptr bN-1, i64
/// rangeSize). It runs [i, i + 1) for its global thread index i <
/// rangeSize; the original becomes an internal, always-inlined body that
/// reads the parameters from a private table. Buffers as parameters (not a
/// table in device memory) let NVPTX treat them as global memory: after
/// inlining and SROA every access is an `ld.global`/`st.global`, and a CUDA
/// graph captures the pointers with the launch.
void addEntryPoints(llvm::Module &module, const CudaCodegenOptions &options) {
  const llvm::StringMap<unsigned> &bufferCounts = options.bufferCounts;
  const llvm::StringMap<unsigned> &lanesPerIndex = options.lanes;
  llvm::LLVMContext &ctx = module.getContext();
  std::vector<llvm::Function *> bodies;
  for (llvm::Function &f : module) {
    if (f.isDeclaration() || !f.getName().starts_with("kiln_kernel"))
      continue;
    if (bufferCounts.contains(f.getName())) {
      bodies.push_back(&f);
    } else {
      // Launched only inside a group kernel (compiler/cpu/KernelGroups.h),
      // which inlines it: no entry point of its own.
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
      f.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  for (llvm::Function *body : bodies) {
    std::string name = body->getName().str();
    unsigned numBuffers = bufferCounts.lookup(name);
    body->setName(name + ".body");
    body->setLinkage(llvm::GlobalValue::InternalLinkage);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    std::vector<llvm::Type *> params(numBuffers, ptr);
    params.push_back(i64);
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params,
                                         /*isVarArg=*/false);
    llvm::Function *entry = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage, name, module);
    entry->setCallingConv(llvm::CallingConv::PTX_Kernel);
    // The launch never uses more threads per block than this; ptxas may
    // then spend registers accordingly.
    entry->addFnAttr("nvvm.maxntid", std::to_string(runtime::kCudaBlockSize));
    if (options.singleBlock.contains(name))
      entry->addFnAttr("nvvm.minctasm", "1");
    // Every buffer starts on a slot boundary (runtime::kSlotAlignment, which
    // the loader checks; device allocations are 256-byte aligned): LLVM may
    // then merge a thread's neighbouring f32 accesses into one 16-byte one.
    static_assert(runtime::kSlotAlignment % 16 == 0);
    for (unsigned i = 0; i < numBuffers; ++i)
      entry->addParamAttr(
          i, llvm::Attribute::getWithAlignment(ctx, llvm::Align(16)));
    // Exclusive buffers as C's restrict (the body, inlined here, reads the
    // parameters themselves once SROA removes the table): LLVM and ptxas
    // may then move loads ahead of stores, and NVPTX reads a `const
    // restrict` one through the read-only cache (NVPTXTagInvariantLoads).
    auto access = options.bufferAccess.find(name);
    for (unsigned i = 0;
         access != options.bufferAccess.end() &&
         i < std::min<size_t>(numBuffers, access->second.size());
         ++i) {
      BufferAccess a = access->second[i];
      if (a == BufferAccess::shared)
        continue;
      entry->addParamAttr(i, llvm::Attribute::NoAlias);
      if (a == BufferAccess::exclusiveRead)
        entry->addParamAttr(i, llvm::Attribute::ReadOnly);
    }
    llvm::Value *rangeSize = entry->getArg(numBuffers);
    auto *start = llvm::BasicBlock::Create(ctx, "entry", entry);
    auto *run = llvm::BasicBlock::Create(ctx, "run", entry);
    auto *done = llvm::BasicBlock::Create(ctx, "done", entry);
    llvm::IRBuilder<> b(start);
    llvm::Value *table =
        b.CreateAlloca(ptr, b.getInt32(std::max(1u, numBuffers)));
    for (unsigned i = 0; i < numBuffers; ++i)
      b.CreateStore(entry->getArg(i), b.CreateConstGEP1_64(ptr, table, i));
    auto sreg = [&](llvm::Intrinsic::ID id) {
      return b.CreateZExt(b.CreateIntrinsic(id, llvm::ArrayRef<llvm::Type *>{},
                                            llvm::ArrayRef<llvm::Value *>{}),
                          i64);
    };
    llvm::Value *index = b.CreateAdd(
        b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                    sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
        sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    b.CreateCondBr(b.CreateICmpULT(index, rangeSize), run, done);
    b.SetInsertPoint(run);
    // A kernel with several lanes per index: consecutive threads share it
    // (the range counts threads, a whole number of warps).
    if (unsigned lanes = lanesPerIndex.lookup(name); lanes > 1)
      index = b.CreateUDiv(index, b.getInt64(lanes));
    b.CreateCall(body, {table, index, b.CreateAdd(index, b.getInt64(1))});
    b.CreateBr(done);
    b.SetInsertPoint(done);
    b.CreateRetVoid();
  }
}

/// The warp primitives a body written for lanes calls (FusionEmitter.cpp):
/// `kiln_lane_id() -> i64` (the thread's lane in its warp; blocks are whole
/// warps), `kiln_shfl_xor_f32(f32, i32)` / `kiln_shfl_xor_f64(f64, i32)`
/// (the value of the lane whose id differs in the given bits: a butterfly
/// step, every lane of the warp taking part) and `kiln_syncwarp()`. Each
/// declaration the module uses gets an internal, always-inlined body.
void defineWarpPrimitives(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  auto define = [&](llvm::StringRef name,
                    const std::function<llvm::Value *(llvm::IRBuilder<> &,
                                                      llvm::Function *)> &fn) {
    llvm::Function *f = module.getFunction(name);
    if (!f || !f->isDeclaration())
      return;
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    llvm::Value *out = fn(b, f);
    out ? b.CreateRet(out) : b.CreateRetVoid();
  };
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx),
             *i64 = llvm::Type::getInt64Ty(ctx);
  auto shuffle = [](llvm::IRBuilder<> &b, llvm::Intrinsic::ID id,
                    llvm::Value *v, llvm::Value *mask) {
    // All 32 lanes, the butterfly partner, clamp 31 (the whole warp).
    return b.CreateIntrinsic(
        id, llvm::ArrayRef<llvm::Type *>{},
        llvm::ArrayRef<llvm::Value *>{b.getInt32(-1), v, mask, b.getInt32(31)});
  };
  define("kiln_lane_id", [&](llvm::IRBuilder<> &b, llvm::Function *) {
    llvm::Value *lane = b.CreateIntrinsic(
        llvm::Intrinsic::nvvm_read_ptx_sreg_laneid,
        llvm::ArrayRef<llvm::Type *>{}, llvm::ArrayRef<llvm::Value *>{});
    return b.CreateZExt(lane, i64);
  });
  define("kiln_shfl_xor_f32", [&](llvm::IRBuilder<> &b, llvm::Function *f) {
    return shuffle(b, llvm::Intrinsic::nvvm_shfl_sync_bfly_f32, f->getArg(0),
                   f->getArg(1));
  });
  define("kiln_shfl_xor_f64", [&](llvm::IRBuilder<> &b, llvm::Function *f) {
    llvm::Value *bits = b.CreateBitCast(f->getArg(0), i64);
    llvm::Value *low = b.CreateTrunc(bits, i32);
    llvm::Value *high = b.CreateTrunc(b.CreateLShr(bits, 32), i32);
    low =
        shuffle(b, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, low, f->getArg(1));
    high = shuffle(b, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, high,
                   f->getArg(1));
    llvm::Value *joined = b.CreateOr(b.CreateZExt(low, i64),
                                     b.CreateShl(b.CreateZExt(high, i64), 32));
    return b.CreateBitCast(joined, b.getDoubleTy());
  });
  define("kiln_syncwarp", [&](llvm::IRBuilder<> &b, llvm::Function *) {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync,
                      llvm::ArrayRef<llvm::Type *>{},
                      llvm::ArrayRef<llvm::Value *>{b.getInt32(-1)});
    return nullptr;
  });
}

std::string libdevicePath() {
  if (const char *env = std::getenv("KILN_LIBDEVICE"); env && *env)
    return env;
  return "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
}

/// C library calls (the double-precision transcendentals and pow the
/// scalar emitter uses) → libdevice's `__nv_` functions, linked in; any
/// other external call is an error that names it.
absl::Status linkLibdevice(llvm::Module &module) {
  std::vector<llvm::Function *> calls;
  for (llvm::Function &f : module)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty())
      calls.push_back(&f);
  if (calls.empty())
    return absl::OkStatus();
  std::string path = libdevicePath();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return absl::FailedPreconditionError(absl::StrCat(
        "cuda codegen: kernels call ", calls.front()->getName().str(),
        ", which needs libdevice, not found at ", path,
        " (set KILN_LIBDEVICE to libdevice.10.bc)"));
  llvm::Expected<std::unique_ptr<llvm::Module>> libdevice =
      llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), module.getContext());
  if (!libdevice)
    return absl::DataLossError(
        absl::StrCat("cuda codegen: cannot read ", path, ": ",
                     llvm::toString(libdevice.takeError())));
  for (llvm::Function *f : calls) {
    std::string device = absl::StrCat("__nv_", f->getName().str());
    if (!(*libdevice)->getFunction(device))
      return absl::UnimplementedError(
          absl::StrCat("cuda codegen: no device implementation of ",
                       f->getName().str(), " (libdevice has no ", device, ")"));
    f->setName(device);
  }
  (*libdevice)->setTargetTriple(module.getTargetTriple());
  (*libdevice)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*libdevice),
                                llvm::Linker::Flags::LinkOnlyNeeded))
    return absl::InternalError("cuda codegen: linking libdevice failed");
  return absl::OkStatus();
}

/// Everything but the kernels becomes internal, so -O3 inlines and drops
/// the bodies and the unused parts of libdevice.
void internalize(llvm::Module &module) {
  for (llvm::Function &f : module)
    if (!f.isDeclaration() &&
        f.getCallingConv() != llvm::CallingConv::PTX_Kernel)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : module.globals())
    if (!g.isDeclaration())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

/// The module as PTX text.
absl::StatusOr<std::string> emitPtx(llvm::Module &module,
                                    llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::AssemblyFile))
    return absl::InternalError("cuda codegen: NVPTX cannot emit PTX");
  codegen.run(module);
  return std::string(ptx.begin(), ptx.end());
}

/// The kernels ptxas's log (with --warn-on-spills) says spill registers.
llvm::StringSet<> spillingKernels(llvm::StringRef log) {
  llvm::StringSet<> names;
  constexpr llvm::StringLiteral kSpill =
      "Registers are spilled to local memory in function '";
  for (size_t at = log.find(kSpill); at != llvm::StringRef::npos;
       at = log.find(kSpill, at + 1)) {
    llvm::StringRef rest = log.drop_front(at + kSpill.size());
    names.insert(rest.take_until([](char c) { return c == '\''; }));
  }
  return names;
}

/// Removes what addEntryPoints declared of exclusive buffers (noalias,
/// readonly) from the named kernels; true when any had some.
bool dropExclusiveBuffers(llvm::Module &module,
                          const llvm::StringSet<> &kernels) {
  bool dropped = false;
  for (const auto &name : kernels) {
    llvm::Function *entry = module.getFunction(name.getKey());
    if (!entry)
      continue;
    for (llvm::Argument &arg : entry->args()) {
      if (!arg.hasNoAliasAttr())
        continue;
      arg.removeAttr(llvm::Attribute::NoAlias);
      arg.removeAttr(llvm::Attribute::ReadOnly);
      dropped = true;
    }
  }
  return dropped;
}

} // namespace

absl::Status checkCudaArch(const std::string &arch) {
  if (arch == "sm_80" || arch == "sm_90")
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown CUDA architecture '", arch, "'; expected sm_80 or sm_90"));
}

std::string findPtxas() {
  if (const char *env = std::getenv("KILN_PTXAS"); env && *env)
    return llvm::sys::fs::can_execute(env) ? env : "";
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas");
  return found ? *found : "";
}

absl::StatusOr<std::string>
assemblePtx(const std::string &ptx, const std::string &arch,
            const std::vector<std::string> &extraFlags, std::string *messages) {
  std::string ptxas = findPtxas();
  if (ptxas.empty())
    return absl::FailedPreconditionError(
        "ptxas not found (set KILN_PTXAS or install the CUDA toolkit)");
  // Every file is removed on the way out, a failed write's too.
  TempFile input, output, log;
  absl::Status created = input.create("kiln-kernels", "ptx", ptx);
  if (created.ok())
    created = output.create("kiln-kernels", "cubin");
  if (created.ok())
    created = log.create("kiln-ptxas", "log");
  if (!created.ok())
    return absl::Status(created.code(),
                        absl::StrCat("cuda codegen: ", created.message()));
  std::string archFlag = absl::StrCat("-arch=", arch);
  llvm::SmallVector<llvm::StringRef> args = {
      ptxas, archFlag, "-O3", input.path(), "-o", output.path()};
  for (const std::string &flag : extraFlags)
    args.push_back(flag);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path(),
                                                log.path()};
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                /*SecondsToWait=*/0, /*MemoryLimit=*/0, &error);
  auto logged = llvm::MemoryBuffer::getFile(log.path());
  std::string text = logged ? (*logged)->getBuffer().str() : "";
  if (messages)
    *messages = text;
  if (rc != 0) {
    std::string command;
    for (llvm::StringRef arg : args)
      absl::StrAppend(&command, command.empty() ? "" : " ", arg.str());
    return absl::InternalError(
        absl::StrCat(command, " failed (", rc, ") ", error, "\n", text));
  }
  auto cubin = llvm::MemoryBuffer::getFile(output.path());
  if (!cubin)
    return absl::InternalError("cuda codegen: ptxas wrote no cubin");
  return (*cubin)->getBuffer().str();
}

absl::StatusOr<CudaKernelImage>
compileCudaKernelModule(mlir::ModuleOp module,
                        const CudaCodegenOptions &options) {
  if (absl::Status s = checkCudaArch(options.arch); !s.ok())
    return s;
  CudaKernelImage image;
  image.arch = options.arch;
  image.ptxFeatures = kPtxFeatures;
  auto start = Clock::now();
  if (absl::Status s = cpu::lowerKernelsToLLVMDialect(module); !s.ok())
    return s;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "kiln-cuda");
  if (!llvmModule)
    return absl::InternalError("cuda codegen: translation to LLVM IR failed");
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> machine =
      nvptxMachine(options.arch);
  if (!machine.ok())
    return machine.status();
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvmModule->setDataLayout((*machine)->createDataLayout());
  // libdevice asks NVVMReflect whether to flush denormals: no, as the
  // reference evaluator and the CPU kernels keep them.
  llvmModule->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz",
                            uint32_t{0});
  for (llvm::Function &f : *llvmModule)
    f.addFnAttr(llvm::Attribute::NoUnwind);
  addEntryPoints(*llvmModule, options);
  defineWarpPrimitives(*llvmModule);
  if (absl::Status s = linkLibdevice(*llvmModule); !s.ok())
    return s;
  internalize(*llvmModule);
  std::string verifyErrors;
  llvm::raw_string_ostream verifyStream(verifyErrors);
  if (llvm::verifyModule(*llvmModule, &verifyStream))
    return absl::InternalError(
        absl::StrCat("cuda codegen: invalid LLVM IR\n", verifyErrors));
  image.lowerSeconds = since(start);
  // Kept for a second emission should ptxas spill in a kernel with
  // exclusive buffers (below).
  std::unique_ptr<llvm::Module> unoptimized =
      options.bufferAccess.empty() ? nullptr : llvm::CloneModule(*llvmModule);
  start = Clock::now();
  optimize(*llvmModule, **machine);
  image.optimizeSeconds = since(start);
  start = Clock::now();
  absl::StatusOr<std::string> ptx = emitPtx(*llvmModule, **machine);
  if (!ptx.ok())
    return ptx.status();
  image.ptx = std::move(*ptx);
  image.emitSeconds = since(start);
  if (!options.assemble || findPtxas().empty())
    return image;
  start = Clock::now();
  std::string log;
  absl::StatusOr<std::string> cubin =
      assemblePtx(image.ptx, options.arch, {"--warn-on-spills"}, &log);
  // Loads that may run ahead of stores can raise a kernel's registers past
  // what ptxas keeps for occupancy, and it spills: such kernels are
  // emitted again with plain pointers, as before they had exclusive
  // buffers, so no kernel spills for them.
  if (cubin.ok() && unoptimized &&
      dropExclusiveBuffers(*unoptimized, spillingKernels(log))) {
    optimize(*unoptimized, **machine);
    ptx = emitPtx(*unoptimized, **machine);
    if (!ptx.ok())
      return ptx.status();
    image.ptx = std::move(*ptx);
    cubin = assemblePtx(image.ptx, options.arch);
  }
  if (!cubin.ok())
    return cubin.status();
  image.cubin = std::move(*cubin);
  image.assembleSeconds = since(start);
  return image;
}

} // namespace kiln::compiler::cuda
