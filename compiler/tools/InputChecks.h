// Checks that the tools run on an input file before handing it to MLIR's
// parser, which accepts an empty file as an empty module and does not insist
// on UTF-8 inside comments.
#ifndef KILN_COMPILER_TOOLS_INPUTCHECKS_H
#define KILN_COMPILER_TOOLS_INPUTCHECKS_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace kiln::tools {

/// Returns an error message if `contents` (named `fileName` in the message)
/// cannot be a kiln module: empty or blank, a compiled executable or cache
/// entry (kilnc's output), text that is not UTF-8, or text
/// whose brackets nest deeper than MLIR's parser can descend.
/// MLIR bytecode is accepted as it is. An empty string means no problem.
std::string checkModuleInput(llvm::StringRef fileName, llvm::StringRef contents);

} // namespace kiln::tools

#endif // KILN_COMPILER_TOOLS_INPUTCHECKS_H
