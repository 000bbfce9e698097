// kilnc: kiln's offline compiler. `kilnc compile FILE.mlir` turns a kiln
// module into a serialized CPU executable (and/or a persistent cache entry,
// under the same key a training run computes); `kilnc precompile DUMP_DIR`
// fills a cache from the graphs a trial run dumped, in parallel worker
// processes; `kilnc cache ls|verify|prune|clear` looks after a cache;
// `kilnc plan --max_batch` is the batch advisor (KilncPlan.cpp). Every
// bad input or flag ends in a message and a non-zero exit, never a signal,
// and an output file is written to a temp name and renamed, never partly.
#include "compiler/CachedCompiler.h"
#include "compiler/MemoryPlanner.h"
#include "compiler/Version.h"
#include "compiler/cpu/CpuCompiler.h"
#include "compiler/cuda/CudaCodeGen.h"
#include "compiler/tools/InputChecks.h"
#include "compiler/tools/KilncCommon.h"
#include "ir/Serialization.h"
#include "runtime/Executable.h"
#include "runtime/Profile.h"
#include "support/AtomicFile.h"

#include "absl/strings/str_cat.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <sys/stat.h>
#include <utility>

namespace kiln::kilnc {

std::optional<Args> parseArgs(int argc, char **argv, int first,
                              const std::set<std::string> &valued,
                              const std::set<std::string> &boolean) {
  Args args;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    // `kilnc compile --help` asks for usage, whatever else it says.
    if (isHelpFlag(arg)) {
      args.switches.insert("--help");
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      args.positional.push_back(arg);
      continue;
    }
    std::string flag = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    if (boolean.count(flag) && !inlineValue) {
      args.switches.insert(flag);
    } else if (valued.count(flag)) {
      if (!inlineValue) {
        if (i + 1 >= argc) {
          fail("flag " + flag + " needs a value", kExitUsage);
          return std::nullopt;
        }
        value = argv[++i];
      }
      args.values[flag] = value;
    } else {
      fail("unknown flag '" + arg + "' (see kilnc --help)", kExitUsage);
      return std::nullopt;
    }
  }
  return args;
}

std::optional<uint64_t> memoryBudgetFlag(const Args &args) {
  std::string flag = args.has("--memory_budget") ? "--memory_budget"
                                                 : "--memory-budget";
  if (!args.has(flag))
    return uint64_t(0);
  std::optional<uint64_t> budget = parseByteSize(args.get(flag));
  if (!budget || *budget == 0) {
    fail(flag + ": expected a byte count such as 2GiB, got '" +
             args.get(flag) + "'",
         kExitUsage);
    return std::nullopt;
  }
  return budget;
}

bool parseTargetFlags(const Args &args, compiler::KeyOptions &options) {
  absl::StatusOr<compiler::Backend> backend =
      compiler::parseBackend(args.get("--backend", "cpu"));
  if (!backend.ok() || *backend == compiler::Backend::reference) {
    fail("--backend: expected cpu or cuda, got '" + args.get("--backend") + "'",
         kExitUsage);
    return false;
  }
  options.backend = *backend;
  options.cudaArch = args.get("--cuda_arch", args.get("--cuda-arch", "sm_90"));
  options.tf32 = args.has("--tf32");
  if (args.has("--bf16") && args.has("--fp16")) {
    fail("--bf16 and --fp16 ask for two mixed precisions; give one",
         kExitUsage);
    return false;
  }
  options.productType = args.has("--bf16")   ? DType::bf16
                        : args.has("--fp16") ? DType::f16
                                             : DType::f32;
  bool cudaFlags = args.has("--cuda_arch") || args.has("--cuda-arch") ||
                   options.tf32;
  if (cudaFlags && options.backend != compiler::Backend::cuda) {
    fail("--cuda_arch and --tf32 need --backend cuda", kExitUsage);
    return false;
  }
  if (absl::Status s = compiler::cuda::checkCudaArch(options.cudaArch);
      !s.ok()) {
    fail("--cuda_arch: " + std::string(s.message()), kExitUsage);
    return false;
  }
  return true;
}

std::vector<std::string> targetFlagWords(const Args &args) {
  std::vector<std::string> words;
  for (const std::string &flag : kTargetFlags)
    if (args.has(flag)) {
      words.push_back(flag);
      words.push_back(args.get(flag));
    }
  for (const std::string &flag : kTargetSwitches)
    if (args.has(flag))
      words.push_back(flag);
  return words;
}

int fail(const std::string &message, int code) {
  std::fprintf(stderr, "kilnc: error: %s\n", message.c_str());
  return code;
}

std::string cacheDirectory(const Args &args) {
  const char *env = std::getenv("KILN_CACHE_DIR");
  return args.get("--cache", env ? env : "");
}

std::optional<runtime::PersistentCacheOptions>
cacheOptions(const Args &args, bool readOnly, bool quiet) {
  runtime::PersistentCacheOptions options;
  options.directory = cacheDirectory(args);
  if (options.directory.empty())
    return std::nullopt;
  if (args.has("--max-size")) {
    std::optional<uint64_t> cap = parseByteSize(args.get("--max-size"));
    if (!cap) {
      fail("--max-size: expected a byte count such as 2GiB, got '" +
               args.get("--max-size") + "'",
           kExitUsage);
      return std::nullopt;
    }
    options.maxBytes = *cap;
  }
  options.readOnly = readOnly;
  options.log = [quiet](const runtime::CacheLogRecord &record) {
    if (record.kind == runtime::CacheLogRecord::Kind::warning)
      std::fprintf(stderr, "kilnc: warning: %s\n", record.message.c_str());
    else if (!quiet)
      std::fprintf(stderr, "kilnc: %s\n", record.message.c_str());
  };
  return options;
}

namespace {

/// bytes → `path` atomically (support/AtomicFile.h: no failed run leaves a
/// partial file; `-o /dev/null` or `/dev/stdout` is written in place).
absl::Status writeOutput(const std::string &path, const std::string &bytes) {
  absl::Status written = writeFileAtomically(path, bytes);
  if (written.ok())
    return written;
  return absl::Status(written.code(), absl::StrCat("cannot write ", path, ": ",
                                                   written.message()));
}

std::string planText(const runtime::Executable &exe) {
  int inputs = 0, kernels = 0, gemms = 0, copies = 0, attention = 0,
      allReduces = 0;
  for (const runtime::BufferSlot &slot : exe.plan.slots)
    inputs += slot.kind == runtime::BufferSlot::Kind::input;
  for (const runtime::Thunk &thunk : exe.thunks) {
    kernels += thunk.kind == runtime::Thunk::Kind::kernel;
    gemms += thunk.kind == runtime::Thunk::Kind::gemm;
    copies += thunk.kind == runtime::Thunk::Kind::copy;
    attention += thunk.kind == runtime::Thunk::Kind::attention;
    allReduces += thunk.kind == runtime::Thunk::Kind::allReduce;
  }
  char text[512];
  std::snprintf(
      text, sizeof text,
      "buffer plan:\n  arena bytes: %llu\n  slots: %zu (%d inputs, %zu arena)"
      "\n  constants: %zu\n  outputs: %zu\n  thunks: %zu (%d kernels, %d "
      "gemms, %d copies, %d attention%s)\n  kernel library bytes: %zu\n",
      static_cast<unsigned long long>(exe.plan.arenaBytes),
      exe.plan.slots.size(), inputs, exe.plan.slots.size() - inputs,
      exe.plan.constants.size(), exe.plan.outputSlots.size(), exe.thunks.size(),
      kernels, gemms, copies, attention,
      allReduces ? absl::StrCat(", ", allReduces, " all_reduce").c_str() : "",
      exe.kernelLibrary.size());
  return text + compiler::formatMemoryPlan(compiler::describeMemoryPlan(exe));
}

/// One line per thunk, in run order: what a GPU launch or CPU split gets
/// (range size, work per index) and the bytes it touches; for finding the
/// kernels whose work is spread over too few indices. A kernel's line ends
/// with its symbol, the name `--emit-ptx` and the library give it.
std::string thunksText(const runtime::Executable &exe) {
  std::string text = "thunks (index kind range work/index bytes what):\n";
  for (size_t i = 0; i < exe.thunks.size(); ++i) {
    const runtime::Thunk &thunk = exe.thunks[i];
    char line[160];
    switch (thunk.kind) {
    case runtime::Thunk::Kind::kernel: {
      const runtime::KernelThunk &k = thunk.kernel;
      uint64_t bytes = 0;
      for (uint32_t slot : k.slots)
        bytes += exe.plan.slots[slot].bytes;
      std::snprintf(line, sizeof line, "  %4zu kernel %10lld %8lld %12llu%s ",
                    i, static_cast<long long>(k.rangeSize),
                    static_cast<long long>(k.workPerIndex),
                    static_cast<unsigned long long>(bytes),
                    k.splittable ? "" : " (not splittable)");
      text += line + (k.label.empty() ? "" : k.label + " ") + "[" + k.symbol +
              "]\n";
      break;
    }
    case runtime::Thunk::Kind::gemm: {
      const runtime::GemmThunk &g = thunk.gemm;
      std::snprintf(line, sizeof line,
                    "  %4zu gemm   batch %lld m %lld n %lld k %lld%s%s %s->%s%s",
                    i, static_cast<long long>(g.batch),
                    static_cast<long long>(g.m), static_cast<long long>(g.n),
                    static_cast<long long>(g.k), g.transA ? " transA" : "",
                    g.transB ? " transB" : "",
                    std::string(runtime::gemmTypeName(g.input)).c_str(),
                    std::string(runtime::gemmTypeName(g.output)).c_str(),
                    g.accumulates() ? " +=" : "");
      text += line;
      // An operand read in place from a larger buffer (a slice), or a
      // product added into blocks of a larger sum's rows.
      const std::pair<const char *, runtime::GemmOperandView> views[] = {
          {"A", g.aView}, {"B", g.bView}, {"C", g.cView}};
      for (const auto &[name, view] : views)
        if (!view.packed())
          absl::StrAppend(&text, " ", name, "@", view.offset, "/",
                          view.batchStride);
      // An accumulator the plan did not give C's bytes is copied first.
      if (g.accumulates() && !g.cView.packed() &&
          !runtime::sameBuffer(exe.plan, g.accumulator, g.c))
        text += " (accumulator copied)";
      text += "\n";
      break;
    }
    case runtime::Thunk::Kind::copy:
      std::snprintf(line, sizeof line, "  %4zu copy   %llu bytes\n", i,
                    static_cast<unsigned long long>(thunk.copy.bytes));
      text += line;
      break;
    case runtime::Thunk::Kind::attention:
      std::snprintf(line, sizeof line, "  %4zu ", i);
      text += line + thunk.attention.label() + "\n";
      break;
    case runtime::Thunk::Kind::allReduce:
      std::snprintf(line, sizeof line, "  %4zu all_reduce %lld %s\n", i,
                    static_cast<long long>(thunk.allReduce.count),
                    std::string(dtypeName(thunk.allReduce.element)).c_str());
      text += line;
      break;
    }
  }
  return text;
}

std::string defaultOutput(const std::string &input) {
  std::string base = input.substr(input.find_last_of('/') + 1);
  if (base.size() > 5 && base.substr(base.size() - 5) == ".mlir")
    base.resize(base.size() - 5);
  return base + ".kexe";
}

/// The file's contents, or why it cannot be a module.
absl::StatusOr<std::string> readInput(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(path + " is a directory");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return absl::NotFoundError("cannot read " + path + ": " +
                               buffer.getError().message());
  std::string contents = (*buffer)->getBuffer().str();
  std::string problem = tools::checkModuleInput(path, contents);
  if (!problem.empty())
    return absl::InvalidArgumentError(problem);
  return contents;
}

/// <key>.mlir (the canonical input, as the cache keys it) and
/// <key>.plan.txt; `key` and `input` are taken before compiling, which
/// rewrites the module.
int writeDumps(const std::string &dir, const compiler::CacheKey &key,
               const std::string &input, const runtime::Executable &exe) {
  ::mkdir(dir.c_str(), 0755);
  std::string base = dir + "/" + key.hex;
  absl::Status s = writeOutput(base + ".mlir", input);
  if (s.ok())
    s = writeOutput(base + ".plan.txt", planText(exe));
  return s.ok() ? 0 : fail(std::string(s.message()));
}

} // namespace

/// `--emit-ptx FILE`: compiles for cuda without a cache and writes the
/// PTX the kernels were built from (lit tests FileCheck it).
int emitPtx(mlir::ModuleOp module, const compiler::KeyOptions &keyOptions,
            const std::string &input, const std::string &path) {
  if (keyOptions.backend != compiler::Backend::cuda)
    return fail("--emit-ptx needs --backend cuda", kExitUsage);
  compiler::CompileOptions request = compiler::compileOptionsFor(keyOptions);
  compiler::cpu::CpuCompileStats stats;
  absl::StatusOr<runtime::Executable> exe = compiler::cpu::compileExecutable(
      module, keyOptions.function, &stats,
      compiler::cpu::pipelineOptionsFor(request),
      compiler::cpu::kernelTargetFor(request));
  if (!exe.ok())
    return fail(input + ": " + std::string(exe.status().message()));
  if (absl::Status s = writeOutput(path, stats.ptx); !s.ok())
    return fail(std::string(s.message()));
  return 0;
}

int runCompile(int argc, char **argv) {
  std::set<std::string> valued = {"-o",         "--memory-budget", "--dump-dir",
                                  "--cache",    "--max-size",      "--function",
                                  "--emit-ptx", "--print-floor"};
  valued.insert(kTargetFlags.begin(), kTargetFlags.end());
  std::set<std::string> switches = {"--print-plan", "--print-thunks",
                                    "--cache-read-only", "--quiet"};
  switches.insert(kTargetSwitches.begin(), kTargetSwitches.end());
  std::optional<Args> args = parseArgs(argc, argv, 2, valued, switches);
  if (!args)
    return kExitUsage;
  if (args->has("--help"))
    return usage(0);
  if (args->positional.size() != 1)
    return fail("compile: expected one input FILE.mlir", kExitUsage);
  compiler::KeyOptions keyOptions;
  if (!parseTargetFlags(*args, keyOptions))
    return kExitUsage;
  keyOptions.function = args->get("--function");
  runtime::DeviceLimits floorLimits;
  if (args->has("--print-floor")) {
    floorLimits = runtime::deviceLimits(args->get("--print-floor"));
    if (floorLimits.bytesPerSecond <= 0)
      return fail("--print-floor: no limits known for '" +
                      args->get("--print-floor") +
                      "' (known: H100, H200, A100)",
                  kExitUsage);
    // A GPU's floor of the cpu backend's kernels would be a number about
    // no program that GPU runs.
    if (keyOptions.backend != compiler::Backend::cuda)
      return fail("--print-floor needs --backend cuda (the floor of the "
                  "kernels the GPU runs)",
                  kExitUsage);
  }
  std::optional<uint64_t> budget = memoryBudgetFlag(*args);
  if (!budget)
    return kExitUsage;
  keyOptions.memoryBudget = *budget;
  bool quiet = args->has("--quiet");
  const std::string &input = args->positional[0];
  for (const char *flag : {"-o", "--emit-ptx", "--dump-dir"})
    if (args->has(flag) && args->get(flag).empty())
      return fail(std::string(flag) + " needs a path; got an empty one",
                  kExitUsage);
  // The dumps' folder before any compiling: one that cannot be made would
  // fail the run at its end.
  if (args->has("--dump-dir")) {
    std::error_code ec;
    std::filesystem::create_directories(args->get("--dump-dir"), ec);
    if (ec || !std::filesystem::is_directory(args->get("--dump-dir")))
      return fail("--dump-dir " + args->get("--dump-dir") +
                      ": cannot make a folder there" +
                      (ec ? ": " + ec.message() : std::string()),
                  kExitUsage);
  }
  // gcc's "input file is the same as output file": the module would be
  // written over with the executable (or the PTX).
  for (const char *flag : {"-o", "--emit-ptx"}) {
    std::error_code ec;
    if (args->has(flag) &&
        std::filesystem::equivalent(input, args->get(flag), ec))
      return fail(std::string(flag) + " " + args->get(flag) +
                      " is the input file; it would be written over",
                  kExitUsage);
  }
  std::optional<runtime::PersistentCache> cache;
  if (!cacheDirectory(*args).empty()) {
    auto options = cacheOptions(*args, args->has("--cache-read-only"), quiet);
    if (!options)
      return kExitUsage;
    cache.emplace(std::move(*options));
  } else {
    for (const char *flag : {"--cache-read-only", "--max-size"})
      if (args->has(flag))
        return fail(std::string(flag) + " needs --cache DIR (or "
                                        "KILN_CACHE_DIR)",
                    kExitUsage);
  }
  absl::StatusOr<std::string> contents = readInput(input);
  if (!contents.ok())
    return fail(std::string(contents.status().message()));

  mlir::MLIRContext context;
  loadKilnDialects(context);
  auto module = parseModule(*contents, &context, input);
  if (!module.ok())
    return fail(std::string(module.status().message()));
  if (args->has("--emit-ptx"))
    return emitPtx(**module, keyOptions, input, args->get("--emit-ptx"));
  // The dumps' key and input, before compiling changes the module.
  std::optional<std::pair<compiler::CacheKey, std::string>> dumped;
  if (args->has("--dump-dir"))
    dumped.emplace(compiler::computeCacheKey(**module, keyOptions),
                   canonicalText(**module));
  compiler::CacheOutcome outcome;
  absl::StatusOr<runtime::Executable> exe = compiler::compileExecutableCached(
      **module, keyOptions, cache ? &*cache : nullptr, &outcome,
      args->get("--dump-dir"));
  if (!exe.ok())
    return fail(input + ": " + std::string(exe.status().message()));
  if (args->has("--print-plan"))
    std::printf("%s", planText(*exe).c_str());
  if (args->has("--print-thunks"))
    std::printf("%s", thunksText(*exe).c_str());
  if (args->has("--print-floor"))
    std::printf("floor on %s:\n%s", args->get("--print-floor").c_str(),
                runtime::floorTable(runtime::describeThunks(*exe), floorLimits)
                    .c_str());
  if (dumped)
    if (int rc = writeDumps(args->get("--dump-dir"), dumped->first,
                            dumped->second, *exe))
      return rc;
  // A cache named on the command line is the output; one the environment
  // names is used beside the default output file.
  std::string output =
      args->get("-o", args->has("--cache") ? "" : defaultOutput(input));
  if (!output.empty())
    if (absl::Status s =
            writeOutput(output, runtime::serializeExecutable(*exe));
        !s.ok())
      return fail(std::string(s.message()));
  if (cache) {
    const char *what = outcome.hit ? "hit" : outcome.stored ? "stored" : "not stored";
    std::fprintf(stderr, "kilnc: %s: key %s: %s", input.c_str(),
                 outcome.key.c_str(), what);
    if (!outcome.hit)
      std::fprintf(stderr, " (compiled in %.2f s)", outcome.compileSeconds);
    std::fprintf(stderr, "\n");
    // Read-only lookups never store; only a failed store is worth a code.
    if (!outcome.hit && !outcome.stored && !args->has("--cache-read-only"))
      return kExitNotCached;
  }
  return 0;
}

const char *const kUsage =
    "usage: kilnc compile FILE.mlir [-o FILE] [--function NAME]\n"
    "                    [--memory-budget BYTES] [--print-plan] "
    "[--print-thunks]\n"
    "                    [--print-floor H100|H200|A100] [--dump-dir D]\n"
    "                    [--cache DIR [--cache-read-only] [--max-size BYTES]]\n"
    "                    [TARGET] [--emit-ptx FILE]\n"
    "       kilnc precompile DUMP_DIR --cache DIR [--jobs N]\n"
    "                    [--worker-memory BYTES] [--max-size BYTES] [TARGET]\n"
    "       kilnc cache ls|verify|prune|clear --cache DIR [--max-size BYTES]\n"
    "       kilnc plan --config DIR|config.json (--max_batch --memory_budget "
    "BYTES\n"
    "                    [--batch_limit N] | --batch N) [--block_size N]\n"
    "                    [--use_lora [--lora_r R] [--lora_alpha A]\n"
    "                    [--lora_dropout P] [--lora_target_modules "
    "a,b|all-linear]\n"
    "                    [--lora_modules_to_save a,b]\n"
    "                    [--torch_dtype bfloat16|float16]] [TARGET]\n"
    "                    the largest batch whose training step (AdamW, "
    "clipping)\n"
    "                    plans within the budget, from the plan alone\n"
    "                    ($KILN_DUMP_GRAPHS=DIR writes the planned graph)\n"
    "TARGET: --backend cpu|cuda (default cpu); with cuda, --cuda_arch "
    "sm_80|sm_90\n"
    "        (default sm_90) and --tf32 (f32 GEMMs in TF32). A GPU is not "
    "needed.\n"
    "        --bf16 / --fp16: mixed precision (matrix products in bf16 / "
    "f16 with\n"
    "        f32 sums).\n"
    "BYTES take K/M/G (or KiB/MiB/GiB) suffixes. --cache defaults to "
    "$KILN_CACHE_DIR\n"
    "(compile then still writes FILE.kexe unless -o names another file).\n";

int usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr, "%s", kUsage);
  return code;
}

} // namespace kiln::kilnc

int main(int argc, char **argv) {
  using namespace kiln::kilnc;
  if (argc < 2)
    return usage(kExitUsage);
  std::string command = argv[1];
  if (isHelpFlag(command) || command == "help")
    return usage(0);
  if (command == "--version") {
    std::printf("kilnc: %s\n", kiln::compiler::versionText().c_str());
    return 0;
  }
  // Shapes or files this host cannot hold are an error that says so, not
  // an abort.
  try {
    if (command == "compile")
      return runCompile(argc, argv);
    if (command == "precompile")
      return runPrecompile(argc, argv);
    if (command == "cache")
      return runCache(argc, argv);
    if (command == "plan")
      return runPlan(argc, argv);
  } catch (const std::bad_alloc &) {
    return fail("out of host memory while running '" + command + "'");
  }
  std::fprintf(stderr, "kilnc: error: unknown command '%s'\n",
               command.c_str());
  return usage(kExitUsage);
}
