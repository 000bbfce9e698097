// kiln-run: compiles one function of a kiln module (text or bytecode) for a
// backend (the reference evaluator by default), runs it and prints its
// results. Inputs are either seeded deterministic random values or an
// inputs file holding one MLIR dense attribute per argument per line;
// results print as `%resultN = dense<...> : tensor<...>` lines with every
// float bit-exact, so a run's output can be fed back as another run's
// inputs. `--runs N --print_results=false` under KILN_PROFILE times the
// function's thunks alone (bench/kernels/). Every user mistake (a bad file,
// flag, seed, type or size) ends in a message and a non-zero exit, never an
// abort.
#include "compiler/Compiler.h"
#include "compiler/Signature.h"
#include "compiler/Version.h"
#include "compiler/tools/InputChecks.h"
#include "ir/KilnDialect.h"
#include "ir/Serialization.h"
#include "ir/TensorConversion.h"
#include "runtime/Profile.h"
#include "support/HostTensor.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace mlir;

namespace {

/// What the command line asked for.
struct RunOptions {
  std::string inputFile;
  std::string function;
  std::string inputs;
  uint64_t seed = 0;
  std::string backend;
  std::string cudaArch;
  /// Runs of the compiled function on the same inputs: more than one lets
  /// KILN_PROFILE (which leaves the first run out) or a GPU profiler time
  /// one kernel alone.
  unsigned runs = 1;
  bool printResults = true;
};

/// The signature of the function being run, checked once up front.
struct ArgumentType {
  kiln::DType dtype;
  std::vector<int64_t> shape;
  RankedTensorType type;
};

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kiln-run") << message << "\n";
  return 1;
}

int fail(const absl::Status &status) {
  return fail(std::string(status.message()));
}

std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// Every argument must be a static kiln tensor small enough to allocate:
/// checked before any input exists, so a 2^62-element argument is a message,
/// not a failed allocation.
absl::StatusOr<std::vector<ArgumentType>>
checkSignature(func::FuncOp function) {
  std::vector<ArgumentType> arguments;
  uint64_t totalBytes = 0;
  for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
    std::string where = llvm::formatv("argument #{0} of @{1}", index,
                                      function.getName())
                            .str();
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return absl::InvalidArgumentError(where + " has type " + typeText(type) +
                                        "; kiln-run needs ranked tensors");
    std::string problem = kiln::checkTensorSize(tensor);
    if (!problem.empty())
      return absl::InvalidArgumentError(where + ": " + problem);
    auto described = kiln::describeTensorType(tensor);
    if (!described.ok())
      return absl::InvalidArgumentError(where + ": " +
                                        std::string(described.status().message()));
    totalBytes += tensor.getNumElements() * kiln::byteWidth(described->first);
    arguments.push_back({described->first, described->second, tensor});
  }
  // Asking for more than the machine has would end in the OOM killer.
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  uint64_t memoryBytes =
      pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
  if (memoryBytes > 0 && totalBytes > memoryBytes)
    return absl::ResourceExhaustedError(
        llvm::formatv("the inputs of @{0} need {1} bytes, more than this "
                      "machine's {2} bytes of memory",
                      function.getName(), totalBytes, memoryBytes)
            .str());
  return arguments;
}

/// Seeded values, argument by argument in row-major order from one stream:
/// floats uniform in [-1, 1) on a grid the dtype holds exactly, integers in
/// [0, 8), i1 either. The bits come straight from mt19937_64, whose output
/// the C++ standard fixes, so every platform gets the same inputs.
absl::StatusOr<std::vector<kiln::HostTensor>>
randomInputs(llvm::ArrayRef<ArgumentType> arguments, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<kiln::HostTensor> inputs;
  for (const ArgumentType &argument : arguments) {
    auto tensor = kiln::HostTensor::create(argument.dtype, argument.shape);
    if (!tensor.ok())
      return tensor.status();
    int mantissaBits = argument.dtype == kiln::DType::f16    ? 11
                       : argument.dtype == kiln::DType::bf16 ? 8
                                                             : 24;
    for (int64_t i = 0; i < tensor->numElements(); ++i) {
      uint64_t bits = rng();
      if (kiln::isFloat(argument.dtype))
        tensor->setDouble(i, std::ldexp(double(bits >> (64 - mantissaBits)),
                                        1 - mantissaBits) -
                                 1.0);
      else if (argument.dtype == kiln::DType::i1)
        tensor->setInt(i, int64_t(bits >> 63));
      else
        tensor->setInt(i, int64_t(bits >> 61));
    }
    inputs.push_back(std::move(*tensor));
  }
  return inputs;
}

/// One input line: an optional `%name =` (as kiln-run prints its results),
/// then a dense attribute whose type must be the argument's.
absl::StatusOr<kiln::HostTensor> parseInputLine(llvm::StringRef line,
                                                const ArgumentType &argument,
                                                size_t index,
                                                llvm::StringRef function,
                                                MLIRContext *context) {
  if (line.starts_with("%")) {
    size_t equals = line.find('=');
    if (equals == llvm::StringRef::npos)
      return absl::InvalidArgumentError("expected '=' after " +
                                        line.split(' ').first.str());
    line = line.drop_front(equals + 1).trim();
  }
  std::string diagnostics;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    diagnostics += diag.str();
    return success();
  });
  size_t numRead = 0;
  Attribute attr = parseAttribute(line, context, Type(), &numRead);
  if (!attr)
    return absl::InvalidArgumentError(diagnostics.empty()
                                          ? "cannot parse the attribute"
                                          : diagnostics);
  if (!line.drop_front(numRead).trim().empty())
    return absl::InvalidArgumentError("unexpected text after the attribute: '" +
                                      line.drop_front(numRead).trim().str() +
                                      "'");
  auto elements = dyn_cast<ElementsAttr>(attr);
  if (!elements)
    return absl::InvalidArgumentError("expected a dense tensor attribute such "
                                      "as dense<[1.0, 2.0]> : tensor<2xf32>");
  if (elements.getType() != argument.type)
    return absl::InvalidArgumentError(
        llvm::formatv("argument #{0} of @{1} has type {2}, but the input has "
                      "type {3}",
                      index, function, typeText(argument.type),
                      typeText(elements.getType()))
            .str());
  return kiln::toHostTensor(elements);
}

/// An inputs file: one line per argument, in order; blank lines and lines
/// starting with `//` are skipped.
absl::StatusOr<std::vector<kiln::HostTensor>>
readInputsFile(llvm::StringRef path, llvm::ArrayRef<ArgumentType> arguments,
               llvm::StringRef function, MLIRContext *context) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return absl::NotFoundError("cannot read inputs file " + path.str() + ": " +
                               buffer.getError().message());
  llvm::StringRef contents = (*buffer)->getBuffer();
  std::vector<kiln::HostTensor> inputs;
  SmallVector<llvm::StringRef> lines;
  contents.split(lines, '\n');
  for (auto [lineIndex, rawLine] : llvm::enumerate(lines)) {
    llvm::StringRef line = rawLine.trim();
    if (line.empty() || line.starts_with("//"))
      continue;
    std::string where = llvm::formatv("{0}:{1}: ", path, lineIndex + 1).str();
    if (inputs.size() == arguments.size())
      return absl::InvalidArgumentError(
          llvm::formatv("{0}more inputs than the {1} arguments of @{2}", where,
                        arguments.size(), function)
              .str());
    auto tensor = parseInputLine(line, arguments[inputs.size()], inputs.size(),
                                 function, context);
    if (!tensor.ok())
      return absl::InvalidArgumentError(where +
                                        std::string(tensor.status().message()));
    inputs.push_back(std::move(*tensor));
  }
  if (inputs.size() != arguments.size())
    return absl::InvalidArgumentError(
        llvm::formatv("{0}: {1} inputs for the {2} arguments of @{3}; "
                      "expected one line per argument",
                      path, inputs.size(), arguments.size(), function)
            .str());
  return inputs;
}

/// Results as `%resultN = dense<...> : tensor<...>`, every element in decimal
/// (MLIR prints the shortest text that reads back to the same bits, and hex
/// for NaN and infinities), never elided.
void printResults(llvm::ArrayRef<kiln::HostTensor> results,
                  MLIRContext *context) {
  OpPrintingFlags flags;
  flags.printLargeElementsAttrWithHex(-1).elideLargeElementsAttrs(
      std::numeric_limits<int64_t>::max());
  AsmState state(context, flags);
  for (auto [index, result] : llvm::enumerate(results)) {
    llvm::outs() << "%result" << index << " = ";
    kiln::toElementsAttr(result, context).print(llvm::outs(), state);
    llvm::outs() << "\n";
  }
}

int run(const RunOptions &options) {
  auto backend = kiln::compiler::parseBackend(options.backend);
  if (!backend.ok())
    return fail(backend.status());

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(
      options.inputFile, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read " + options.inputFile + ": " +
                buffer.getError().message());
  std::string problem = kiln::tools::checkModuleInput(
      options.inputFile, (*buffer)->getBuffer());
  if (!problem.empty())
    return fail(problem);

  MLIRContext context;
  kiln::loadKilnDialects(context);
  // parseModule also verifies.
  auto module =
      kiln::parseModule((*buffer)->getBuffer(), &context, options.inputFile);
  if (!module.ok()) {
    // The parser's diagnostics already read `file:line:col: error: ...`.
    llvm::errs() << std::string(module.status().message()) << "\n";
    return 1;
  }

  auto function =
      kiln::compiler::findEntryFunction(**module, options.function);
  if (!function.ok())
    return fail(options.inputFile + ": " +
                std::string(function.status().message()));
  auto arguments = checkSignature(*function);
  if (!arguments.ok())
    return fail(arguments.status());

  auto inputs = options.inputs == "random"
                    ? randomInputs(*arguments, options.seed)
                    : readInputsFile(options.inputs, *arguments,
                                     function->getName(), &context);
  if (!inputs.ok())
    return fail(inputs.status());

  kiln::compiler::CompileOptions compileOptions;
  compileOptions.backend = *backend;
  compileOptions.cudaArch = options.cudaArch;
  compileOptions.function = function->getName().str();
  auto program = kiln::compiler::compile(**module, compileOptions);
  if (!program.ok())
    return fail("compiling @" + function->getName() + " for the " +
                options.backend + " backend: " +
                std::string(program.status().message()));
  // KILN_PROFILE=trace.json, as in kiln-train and kiln-bench: each run's
  // thunks timed (CUDA events on a GPU), the summary on stderr.
  const char *profilePath = std::getenv("KILN_PROFILE");
  bool profiling = profilePath && *profilePath;
  kiln::runtime::Profiler profiler;
  if (profiling)
    (*program)->setProfiling(true);
  absl::StatusOr<std::vector<kiln::HostTensor>> results;
  for (unsigned r = 0; r < options.runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    results = (*program)->run(kiln::runtime::borrowAll(*inputs));
    if (!results.ok())
      return fail("running @" + function->getName() + ": " +
                  std::string(results.status().message()));
    if (std::optional<kiln::runtime::RunProfile> run =
            (*program)->takeProfile())
      profiler.add(std::move(*run),
                   std::chrono::duration<double, std::micro>(
                       start.time_since_epoch())
                       .count());
  }
  if (options.printResults)
    printResults(*results, &context);
  if (profiling) {
    if (absl::Status written = profiler.writeChromeTrace(profilePath);
        !written.ok())
      return fail(written);
    llvm::errs() << profiler.summary() << "wrote the trace to " << profilePath
                 << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Local rather than file-scope options: they live only while main parses.
  llvm::cl::OptionCategory category("kiln-run options");
  llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                       llvm::cl::desc("<module.mlir>"),
                                       llvm::cl::Required,
                                       llvm::cl::cat(category));
  llvm::cl::opt<std::string> function(
      "function", llvm::cl::desc("function to run (default: @main, else the "
                                 "only public function)"),
      llvm::cl::value_desc("name"), llvm::cl::cat(category));
  llvm::cl::opt<std::string> inputs(
      "inputs",
      llvm::cl::desc("'random', or a file with one dense attribute per "
                     "argument per line"),
      llvm::cl::value_desc("random|file"), llvm::cl::init("random"),
      llvm::cl::cat(category));
  llvm::cl::opt<uint64_t> seed("seed",
                               llvm::cl::desc("seed of --inputs random"),
                               llvm::cl::init(0), llvm::cl::cat(category));
  llvm::cl::opt<std::string> backend(
      "backend",
      llvm::cl::desc("where to run: reference, cpu or cuda (default: "
                     "reference)"),
      llvm::cl::init("reference"), llvm::cl::cat(category));
  llvm::cl::opt<std::string> cudaArch(
      "cuda_arch", llvm::cl::desc("GPU architecture for --backend cuda"),
      llvm::cl::value_desc("sm_80|sm_90"), llvm::cl::init("sm_90"),
      llvm::cl::cat(category));
  llvm::cl::opt<unsigned> runs(
      "runs",
      llvm::cl::desc("runs on the same inputs (default 1); the results "
                     "printed are the last run's"),
      llvm::cl::init(1), llvm::cl::cat(category));
  llvm::cl::opt<bool> printResults(
      "print_results",
      llvm::cl::desc(
          "print the results (default true; false to run "
          "without printing them, e.g. under KILN_PROFILE=trace.json, "
          "which times each run's thunks)"),
      llvm::cl::init(true), llvm::cl::cat(category));
  llvm::cl::HideUnrelatedOptions(category);
  // Bad flags and bad values (a non-numeric --seed) exit(1) with a message
  // from here.
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &out) {
    out << "kiln-run: " << kiln::compiler::versionText() << "\n";
  });
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "kiln-run: compile and run a kiln function\n");

  if (runs < 1) {
    llvm::WithColor::error(llvm::errs(), "kiln-run")
        << "--runs must be at least 1\n";
    return 1;
  }
  // As kilnc and kiln-train: a GPU's setting on another backend is a
  // mistake, not a choice to ignore.
  if (cudaArch.getNumOccurrences() > 0 && backend != "cuda") {
    llvm::WithColor::error(llvm::errs(), "kiln-run")
        << "--cuda_arch needs --backend cuda (the backend is " << backend
        << ")\n";
    return 1;
  }
  RunOptions options{inputFile, function, inputs,  seed,
                     backend,   cudaArch, runs,    printResults};
  return run(options);
}
