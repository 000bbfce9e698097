// Pre-parse checks on tool inputs; see InputChecks.h.
#include "compiler/tools/InputChecks.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

namespace kiln::tools {
namespace {

/// MLIR's parser descends once per nested bracket and has no depth limit:
/// ~20,000 nested parentheses overflow its stack. kiln modules nest a
/// dozen levels at most.
constexpr int kMaxNesting = 256;

/// The first position where brackets ( [ { < nest deeper than kMaxNesting,
/// outside comments and string literals; npos when none does.
size_t tooDeep(llvm::StringRef text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        i += text[i] == '\\';
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxNesting)
        return i;
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-'))) {
      depth = std::max(0, depth - 1);
    }
  }
  return llvm::StringRef::npos;
}

} // namespace

std::string checkModuleInput(llvm::StringRef fileName,
                             llvm::StringRef contents) {
  if (contents.trim().empty())
    return llvm::formatv("{0}: input is empty; expected a kiln module",
                         fileName)
        .str();
  // kilnc's output fed back to a tool: its bytes are not UTF-8, which is
  // all a check of the text would say.
  if (contents.starts_with(llvm::StringRef("KILNEXE\0", 8)) ||
      contents.starts_with("KILNCENT"))
    return llvm::formatv("{0} is a compiled kiln executable or cache entry, "
                         "not a module",
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
  if (size_t at = tooDeep(contents); at != llvm::StringRef::npos)
    return llvm::formatv("{0}:{1}: brackets nest more than {2} levels deep; "
                         "no kiln module does",
                         fileName, contents.take_front(at).count('\n') + 1,
                         kMaxNesting)
        .str();
  return "";
}

} // namespace kiln::tools
