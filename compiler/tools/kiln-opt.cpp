// kiln-opt: mlir-opt over the kiln dialect and the MLIR dialects kiln's
// pipeline uses; the driver of the lit tests. Unlike mlir-opt it refuses an
// empty or non-UTF-8 input with a message and a non-zero exit, and it
// writes -o only when the run succeeds, whole (a failure leaves an existing
// file, even its own input, as it was).
#include "compiler/Pipeline.h"
#include "compiler/Version.h"
#include "compiler/tools/InputChecks.h"
#include "ir/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  kiln::registerKilnPasses();
  kiln::registerKilnPipeline();

  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();

  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &out) {
    out << "kiln-opt: " << kiln::compiler::versionText() << "\n";
  });
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "kiln-opt: the kiln dialect's optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::WithColor::error(llvm::errs(), "kiln-opt") << error << "\n";
    return 1;
  }
  std::string problem =
      kiln::tools::checkModuleInput(inputFile, input->getBuffer());
  if (!problem.empty()) {
    llvm::WithColor::error(llvm::errs(), "kiln-opt") << problem << "\n";
    return 1;
  }

  // The output is held until the run succeeds, then written whole (to a
  // temporary file renamed over the target): a failed run leaves an
  // existing file as it was, even when -o names the input itself.
  std::string result;
  llvm::raw_string_ostream resultStream(result);
  if (mlir::failed(
          mlir::MlirOptMain(resultStream, std::move(input), registry, config)))
    return 1;
  if (llvm::Error written = llvm::writeToOutput(
          outputFile, [&](llvm::raw_ostream &os) -> llvm::Error {
            os << result;
            return llvm::Error::success();
          })) {
    llvm::WithColor::error(llvm::errs(), "kiln-opt")
        << "cannot write " << outputFile << ": "
        << llvm::toString(std::move(written)) << "\n";
    return 1;
  }
  return 0;
}
