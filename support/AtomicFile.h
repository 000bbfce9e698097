// Writing a whole file so that no reader, and no failed or killed writer,
// ever leaves a partial one at its path: the bytes go to a temporary file
// beside it, which is synced and renamed over the path. Shared by the
// outputs that must never be left truncated (kilnc's, the KILN_PROFILE
// trace, the graph and pass dumps) in layers that may not use LLVM.
#ifndef KILN_SUPPORT_ATOMICFILE_H
#define KILN_SUPPORT_ATOMICFILE_H

#include "absl/status/status.h"

#include <string>
#include <string_view>

namespace kiln {

/// `bytes` → the file at `path`, atomically: a temporary file
/// `<path>.tmp-XXXXXX` in the same folder is written, fsynced and renamed
/// over `path`, and removed on any failure (a full disk, a folder that is
/// missing or not writable). A link to a regular file is followed, so the
/// file it names is replaced rather than the link; a device or FIFO
/// (`/dev/null`, `/dev/stdout`) is written in place, since a rename would
/// replace the device itself. On failure the status's message is the
/// system's reason only ("No space left on device", "it is a directory"):
/// callers name the file as their messages do.
absl::Status writeFileAtomically(std::string path, std::string_view bytes);

} // namespace kiln

#endif // KILN_SUPPORT_ATOMICFILE_H
