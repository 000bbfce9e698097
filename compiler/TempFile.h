// The temporary files of native code generation (the kernels' objects and
// linked library, libgcc's path, ptxas's input, cubin and log), in the
// folder TMPDIR names. A full or missing folder is an error that says
// which folder, where it came from and why, and every file is removed on
// the way out: an unchecked llvm::raw_fd_ostream ended the process with
// "LLVM ERROR: IO failure on output stream" and left them behind.
#ifndef KILN_COMPILER_TEMPFILE_H
#define KILN_COMPILER_TEMPFILE_H

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace kiln::compiler {

/// A temporary file that removes itself.
class TempFile {
public:
  TempFile() = default;
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  ~TempFile();

  /// Creates an empty `<prefix>-XXXXXX.<suffix>` in the temporary folder,
  /// or says why not ("cannot create a temporary file in '/x' (TMPDIR):
  /// No such file or directory").
  absl::Status create(llvm::StringRef prefix, llvm::StringRef suffix);
  /// Creates one holding `bytes`; a failed write (a full disk) names the
  /// file and the reason, and the file is removed.
  absl::Status create(llvm::StringRef prefix, llvm::StringRef suffix,
                      llvm::StringRef bytes);

  /// Whether the file's folder has `bytes` free for it to grow by: for a
  /// file another program writes through a mapping (lld's output), where a
  /// full disk is a SIGBUS rather than an error. Says how much is free.
  absl::Status checkRoom(uint64_t bytes) const;

  /// Empty until created.
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

} // namespace kiln::compiler

#endif // KILN_COMPILER_TEMPFILE_H
