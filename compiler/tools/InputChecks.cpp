// Pre-parse checks on tool inputs; see InputChecks.h.
#include "compiler/tools/InputChecks.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

namespace kiln::tools {

std::string checkModuleInput(llvm::StringRef fileName,
                             llvm::StringRef contents) {
  if (contents.trim().empty())
    return llvm::formatv("{0}: input is empty; expected a kiln module",
                         fileName)
        .str();
  auto buffer = llvm::MemoryBuffer::getMemBuffer(contents, fileName,
                                                 /*RequiresNullTerminator=*/false);
  if (mlir::isBytecode(*buffer))
    return "";
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(contents.begin());
  const llvm::UTF8 *cursor = begin;
  if (!llvm::isLegalUTF8String(
          &cursor, reinterpret_cast<const llvm::UTF8 *>(contents.end())))
    return llvm::formatv("{0}: input is not valid UTF-8 (bad byte at offset "
                         "{1})",
                         fileName, cursor - begin)
        .str();
  return "";
}

} // namespace kiln::tools
