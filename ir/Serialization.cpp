// Module I/O (see Serialization.h). Parsing goes through one SourceMgr-based
// path for text and bytecode alike: MLIR's parser recognises bytecode by its
// magic number. Diagnostics are rendered into a string while the parser runs
// and become the message of the returned Status.
#include "ir/Serialization.h"

#include "ir/KilnDialect.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

/// The rendered diagnostics, or `fallback` when the parser said nothing.
std::string messageOr(llvm::StringRef diagnostics, llvm::StringRef fallback) {
  llvm::StringRef trimmed = diagnostics.trim();
  return trimmed.empty() ? fallback.str() : trimmed.str();
}

} // namespace

void registerKilnDialects(DialectRegistry &registry) {
  registry.insert<KilnDialect, func::FuncDialect>();
}

void loadKilnDialects(MLIRContext &context) {
  DialectRegistry registry;
  registerKilnDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

absl::StatusOr<std::string> writeBytecodeToString(ModuleOp module) {
  std::string bytes, diagnostics;
  llvm::raw_string_ostream os(bytes), diagOs(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    diagOs << diag.str() << "\n";
    return success();
  });
  BytecodeWriterConfig config("kiln");
  if (failed(writeBytecodeToFile(module, os, config)))
    return absl::InternalError(
        messageOr(diagnostics, "failed to write the module as bytecode"));
  return bytes;
}

absl::Status writeBytecodeFile(ModuleOp module, llvm::StringRef path) {
  absl::StatusOr<std::string> bytes = writeBytecodeToString(module);
  if (!bytes.ok())
    return bytes.status();
  // writeToOutput writes a temporary file and renames it over `path`, so a
  // reader never sees half a module.
  llvm::Error error = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << *bytes;
    return llvm::Error::success();
  });
  if (error)
    return absl::UnavailableError("cannot write " + path.str() + ": " +
                                  llvm::toString(std::move(error)));
  return absl::OkStatus();
}

absl::StatusOr<OwningOpRef<ModuleOp>> parseModule(llvm::StringRef contents,
                                                  MLIRContext *context,
                                                  llvm::StringRef bufferName) {
  // A copy: the bytecode reader wants an aligned buffer it can keep for lazy
  // loading, and the caller's string may not outlive the module.
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(contents, bufferName),
      llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  SourceMgrDiagnosticHandler handler(*sourceMgr, context, os);
  ParserConfig config(context, /*verifyAfterParse=*/true);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return absl::InvalidArgumentError(messageOr(
        diagnostics, (bufferName + ": cannot parse the module").str()));
  return module;
}

absl::StatusOr<OwningOpRef<ModuleOp>> parseModuleFile(llvm::StringRef path,
                                                      MLIRContext *context) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buffer)
    return absl::NotFoundError("cannot read " + path.str() + ": " +
                               buffer.getError().message());
  return parseModule((*buffer)->getBuffer(), context, path);
}

std::string canonicalText(ModuleOp module) {
  // Every option that a command-line flag could change is set explicitly.
  OpPrintingFlags flags;
  flags.enableDebugInfo(false)
      .printGenericOpForm(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .elideLargeResourceString(std::numeric_limits<int64_t>::max())
      .printLargeElementsAttrWithHex(100)
      .skipRegions(false)
      .useLocalScope(false)
      .printValueUsers(false)
      .printUniqueSSAIDs(false)
      .printNameLocAsPrefix(false);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, flags);
  return text;
}

} // namespace kiln
