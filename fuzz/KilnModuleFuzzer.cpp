// libFuzzer target: bytes → kiln-opt's path into the compiler: the input
// checks every tool runs (compiler/tools/InputChecks.h), then MLIR's parser
// with the kiln and func dialects, whose ops' custom parsers, type inference
// and verifiers (ir/KilnOps.cpp) must refuse malformed IR with a diagnostic,
// never crash. What parses is printed and parsed again: the printer must
// write what the parser reads.
#include "FuzzInput.h"

#include "compiler/tools/InputChecks.h"
#include "ir/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace {

mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    // Diagnostics are expected on most inputs: swallow them.
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  return *ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer reads one byte past the end: it relies on the NUL that
  // every buffer kiln-opt reads (llvm::MemoryBuffer) ends with.
  std::string text(kiln::fuzz::asText(data, size));
  llvm::StringRef contents(text.data(), text.size());
  if (!kiln::tools::checkModuleInput("fuzz.mlir", contents).empty())
    return 0;
  mlir::ParserConfig config(&context());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(contents, config);
  if (!module)
    return 0;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  mlir::OwningOpRef<mlir::ModuleOp> again =
      mlir::parseSourceString<mlir::ModuleOp>(printed, config);
  if (!again)
    std::abort(); // the printer wrote what the parser refuses
  return 0;
}
