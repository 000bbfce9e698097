// Reading and writing kiln modules: MLIR bytecode out, bytecode or text in,
// and a canonical text form (no locations, fixed printer options) for cache
// keys and golden comparisons. Parse and verify errors come back as an
// absl::Status carrying MLIR's diagnostics, so code outside MLIR (tools,
// caches, the runtime's compiler side) never sees a diagnostic engine.
#ifndef KILN_IR_SERIALIZATION_H
#define KILN_IR_SERIALIZATION_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace kiln {

/// Registry ← the dialects a kiln module may hold (kiln, func).
void registerKilnDialects(mlir::DialectRegistry &registry);

/// Context ← the dialects of registerKilnDialects, loaded.
void loadKilnDialects(mlir::MLIRContext &context);

/// Module → MLIR bytecode bytes.
absl::StatusOr<std::string> writeBytecodeToString(mlir::ModuleOp module);

/// Module → MLIR bytecode in the file at `path` (replaced if present).
absl::Status writeBytecodeFile(mlir::ModuleOp module, llvm::StringRef path);

/// Text or bytecode (named `bufferName` in messages) → a verified module.
/// Failure carries the parser's or verifier's diagnostics.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
parseModule(llvm::StringRef contents, mlir::MLIRContext *context,
            llvm::StringRef bufferName = "<string>");

/// The file at `path`, text or bytecode → a verified module.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
parseModuleFile(llvm::StringRef path, mlir::MLIRContext *context);

/// Module → its text with no locations and fixed printer options, the same
/// whatever printer flags a tool's command line set.
std::string canonicalText(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_IR_SERIALIZATION_H
