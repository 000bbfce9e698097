// libFuzzer target: bytes → a persistent-cache entry file as kiln reads it
// (runtime/PersistentCache.h: checkCacheEntry, then the executable inside).
// Cache folders are shared between jobs and machines and can hold torn,
// foreign or hostile files: every one must be a miss with a reason, never a
// crash. The first byte picks the form: the bytes as an entry file, the
// bytes as an executable wrapped in a valid entry (so mutations reach the
// executable reader past the entry's own checks), or the bytes as an
// executable's payload with a valid executable header inside a valid entry.
#include "ExecutableBytes.h"
#include "FuzzInput.h"

#include "runtime/Executable.h"
#include "runtime/PersistentCache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace kiln::runtime;
  auto [mode, rest] = kiln::fuzz::splitMode(data, size, 3);
  CacheEntryIdentity identity;
  identity.key = "00";
  std::string file =
      mode == 0   ? std::string(rest)
      : mode == 1 ? encodeCacheEntry(identity, rest)
                  : encodeCacheEntry(identity,
                                     kiln::fuzz::executableWithHeader(rest));
  CacheMiss reason{};
  std::string_view payload;
  if (!checkCacheEntry(file, CacheEntryIdentity{}, &reason, &payload).ok())
    return 0;
  absl::StatusOr<Executable> executable = deserializeExecutable(payload);
  if (executable.ok())
    (void)serializeExecutable(*executable);
  return 0;
}
