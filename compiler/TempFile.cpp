// See TempFile.h.
#include "compiler/TempFile.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <sys/statvfs.h>

namespace kiln::compiler {

namespace {

/// The temporary folder and what chose it, for messages: LLVM takes the
/// first of TMPDIR, TMP, TEMP and TEMPDIR that is set, else /tmp.
std::string temporaryFolder() {
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
  for (const char *variable : {"TMPDIR", "TMP", "TEMP", "TEMPDIR"})
    if (std::getenv(variable))
      return absl::StrCat("'", dir.str().str(), "' (", variable, ")");
  return absl::StrCat("'", dir.str().str(),
                      "' (the default; TMPDIR names another)");
}

} // namespace

TempFile::~TempFile() {
  if (!path_.empty())
    llvm::sys::fs::remove(path_);
}

absl::Status TempFile::create(llvm::StringRef prefix, llvm::StringRef suffix) {
  llvm::SmallString<128> path;
  if (std::error_code error =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
    return absl::UnavailableError(
        absl::StrCat("cannot create a temporary file in ", temporaryFolder(),
                     ": ", error.message()));
  path_ = path.str().str();
  return absl::OkStatus();
}

absl::Status TempFile::create(llvm::StringRef prefix, llvm::StringRef suffix,
                              llvm::StringRef bytes) {
  llvm::SmallString<128> path;
  int fd = -1;
  if (std::error_code error =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, fd, path))
    return absl::UnavailableError(
        absl::StrCat("cannot create a temporary file in ", temporaryFolder(),
                     ": ", error.message()));
  path_ = path.str().str();
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << bytes;
  os.close();
  if (!os.has_error())
    return absl::OkStatus();
  std::string reason = os.error().message();
  // Cleared, or the stream's destructor calls report_fatal_error.
  os.clear_error();
  return absl::UnavailableError(
      absl::StrCat("cannot write the temporary file '", path_, "': ", reason,
                   " (TMPDIR chooses its folder)"));
}

absl::Status TempFile::checkRoom(uint64_t bytes) const {
  llvm::SmallString<128> dir(llvm::sys::path::parent_path(path_));
  struct statvfs fs;
  // A folder whose free space cannot be read is let through: the write
  // itself then says what is wrong.
  if (::statvfs(dir.c_str(), &fs) != 0)
    return absl::OkStatus();
  uint64_t free = uint64_t(fs.f_bavail) * fs.f_frsize;
  if (free >= bytes)
    return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "no room to link the kernels in ", temporaryFolder(), ": ", free >> 10,
      " KiB free, about ", (bytes + 1023) >> 10, " KiB needed"));
}

} // namespace kiln::compiler
