// See AtomicFile.h. POSIX calls only: the runtime, which links no LLVM,
// writes its profile trace through this too.
#include "support/AtomicFile.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {

namespace {

absl::Status systemError(int error) {
  return absl::UnavailableError(std::strerror(error));
}

/// Writes all of `bytes` to `fd`; 0 or the failed write's errno.
int writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return EIO;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

} // namespace

absl::Status writeFileAtomically(std::string path, std::string_view bytes) {
  // A device or FIFO, possibly behind links (/dev/stdout), is written in
  // place; a link to a regular (or not yet existing) file is resolved so
  // the rename replaces the file, not the link.
  struct stat st;
  bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (special && S_ISDIR(st.st_mode))
    return absl::FailedPreconditionError("it is a directory");
  for (int hops = 0;
       !special && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
       ++hops) {
    char target[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    if (n < 0 || hops > 40)
      return absl::FailedPreconditionError("cannot resolve the link");
    std::string next(target, static_cast<size_t>(n));
    size_t slash = path.find_last_of('/');
    path = next[0] == '/' || slash == std::string::npos
               ? next
               : path.substr(0, slash + 1) + next;
  }
  if (special) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return systemError(errno);
    int error = writeAll(fd, bytes);
    if (::close(fd) != 0 && error == 0)
      error = errno;
    return error == 0 ? absl::OkStatus() : systemError(error);
  }
  // mkostemp: a unique name, so that two threads or processes writing the
  // same path never share a temporary file; O_CLOEXEC, so that a program
  // another thread starts meanwhile (ptxas) does not inherit it.
  std::string temp = path + ".tmp-XXXXXX";
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0)
    return systemError(errno);
  int error = writeAll(fd, bytes);
  // mkostemp makes the file 0600; readers expect 0644, as open(0644) under
  // the usual umask and the checkpoints' writer (nn::writeFileAtomically)
  // make it.
  if (error == 0 && ::fchmod(fd, 0644) != 0)
    error = errno;
  // fsync reports the write errors a file system delays (NFS, quotas).
  if (error == 0 && ::fsync(fd) != 0)
    error = errno;
  if (::close(fd) != 0 && error == 0)
    error = errno;
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0)
    error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    return systemError(error);
  }
  return absl::OkStatus();
}

} // namespace kiln
