// kiln-opt: mlir-opt over the kiln dialect and the MLIR dialects kiln's
// pipeline uses; the driver of the lit tests. Unlike mlir-opt it refuses an
// empty or non-UTF-8 input with a message and a non-zero exit.
#include "compiler/Pipeline.h"
#include "compiler/tools/InputChecks.h"
#include "ir/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  kiln::registerKilnPasses();
  kiln::registerKilnPipeline();

  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();

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

  // The output file is kept only when the run succeeds: a failed run leaves
  // nothing behind.
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "kiln-opt") << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                                     config)))
    return 1;
  output->keep();
  return 0;
}
