// Lowering a lazy graph to a kiln-dialect module and compiling it. The only
// part of the frontend that touches MLIR: Lower.cpp is compiled without RTTI,
// like MLIR, and reports failures as absl::Status (no exceptions cross it).
#ifndef KILN_FRONTENDS_LAZY_LOWER_H
#define KILN_FRONTENDS_LAZY_LOWER_H

#include "compiler/Compiler.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace kiln::lazy {

struct Graph;

/// graph → `func.func @main(inputs...) -> outputs...` in one process-wide
/// MLIRContext (kiln + func loaded), donated inputs marked `kiln.donate` →
/// compiler::compile for `backend`. When `dumpPath` is not empty the module
/// is also written there as text.
absl::StatusOr<std::unique_ptr<runtime::Program>>
compileGraph(const Graph &graph, compiler::Backend backend,
             const std::string &dumpPath);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_LOWER_H
