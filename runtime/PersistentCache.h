// The persistent compile cache: a directory of executables keyed by a hex
// key (the compiler computes it; see compiler/CacheKey.h). Each entry is one
// file `<key>.kce`: a small checksummed header (magic, entry format, the key
// echoed so a renamed file is detected, the graph id, compiler version and
// target) followed by the serialized executable, which checks itself. Writes
// go to a temp file in the same directory, fsync, rename, fsync of the
// directory, so readers in any process see a whole entry or none. A size cap
// is kept by evicting the least recently used entries (hits touch the
// file's mtime). Every miss is counted and logged with its reason; a
// missing, full, unwritable or read-only directory only ever costs caching:
// a warning, never a failure, and an entry that is not a regular file (a
// FIFO, a link to a device) is a corrupt entry, found without blocking. No
// MLIR or LLVM here.
#ifndef KILN_RUNTIME_PERSISTENTCACHE_H
#define KILN_RUNTIME_PERSISTENTCACHE_H

#include "runtime/Executable.h"

#include "absl/status/status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime {

/// Why a lookup did not return an executable.
enum class CacheMiss : uint8_t {
  noEntry,          // no file for the key (and no near entry either)
  versionMismatch,  // an entry for this graph from another compiler/format
  targetMismatch,   // an entry for this graph built for another CPU
  corruptEntry,     // a file that fails its checks; replaced on next store
  disabled,         // the cache directory cannot be used at all
};
inline constexpr int kNumCacheMissReasons = 5;

/// "no entry", "version mismatch", "target mismatch", "corrupt entry",
/// "cache disabled".
std::string_view cacheMissName(CacheMiss reason);

/// What an entry stands for. The key is the lookup; the rest is recorded in
/// the entry header so a miss can say how a near entry differs.
struct CacheEntryIdentity {
  /// Lowercase hex, used as the file name.
  std::string key;
  /// The graph and options without compiler version and target.
  std::string graphId;
  std::string compilerVersion;
  std::string target;
};

/// One message from the cache to its owner.
struct CacheLogRecord {
  enum class Kind : uint8_t { miss, warning, info };
  Kind kind = Kind::info;
  CacheMiss reason = CacheMiss::noEntry; // Kind::miss only
  std::string key;
  std::string message;
};

struct PersistentCacheOptions {
  std::string directory;
  /// Total bytes of entries kept; older entries are evicted past it.
  uint64_t maxBytes = uint64_t{8} << 30;
  /// Look up only: never write, touch or evict (secondary workers).
  bool readOnly = false;
  /// Receives misses, warnings and notes; unset: all go to stderr.
  std::function<void(const CacheLogRecord &)> log;
};

struct PersistentCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  std::array<int64_t, kNumCacheMissReasons> missesByReason{};
  int64_t stores = 0;
  /// Stores skipped or failed (read-only, full, unwritable, too large).
  int64_t storesSkipped = 0;
  int64_t evictions = 0;
};

/// A lookup's answer: the executable, or why there is none.
struct CacheLookup {
  std::optional<Executable> executable;
  CacheMiss reason = CacheMiss::noEntry;
  std::string detail;
};

/// An entry as listed: its header fields and file facts.
struct CacheEntryInfo {
  std::string key, path, graphId, compilerVersion, target;
  uint64_t bytes = 0;
  int64_t mtimeSeconds = 0;
  /// Last use (nanoseconds since the epoch): the LRU order.
  int64_t mtimeNanos = 0;
  /// Empty when the header reads well; otherwise what is wrong with it.
  std::string headerError;
};

class PersistentCache {
public:
  /// Never fails: a directory that cannot be created or used is reported
  /// as a warning and leaves the cache disabled (lookups miss, stores skip).
  explicit PersistentCache(PersistentCacheOptions options);

  /// identity → its executable (checked: key echo, version, target,
  /// checksum, consistency) or a logged, counted miss. A hit touches the
  /// entry for LRU unless read-only.
  CacheLookup lookup(const CacheEntryIdentity &identity);

  /// Stores executable bytes (as serializeExecutable wrote them) under the
  /// identity's key, atomically, then evicts past the cap. False (after a
  /// warning or a note) when it did not store; callers carry on uncached.
  bool store(const CacheEntryIdentity &identity, std::string_view executable);

  /// The entries (files named `<key>.kce`), headers read, payloads not.
  std::vector<CacheEntryInfo> list() const;

  /// Reads every entry in full. Returns the bad ones with what is wrong;
  /// removes them when `removeBad` (and the cache is writable).
  std::vector<std::pair<CacheEntryInfo, std::string>> verify(bool removeBad);

  /// Evicts least recently used entries until at most `maxBytes` remain and
  /// removes temp files left by killed writers; returns entries removed.
  int64_t prune(uint64_t maxBytes);

  /// Removes every entry and temp file.
  absl::Status clear();

  bool enabled() const { return enabled_; }
  bool writable() const { return enabled_ && !options_.readOnly; }
  const std::string &directory() const { return options_.directory; }
  PersistentCacheStats stats() const;

private:
  std::string entryPath(std::string_view key) const;
  void emit(CacheLogRecord record) const;
  void warnOnce(const std::string &what, std::string message);
  CacheLookup miss(const CacheEntryIdentity &identity, CacheMiss reason,
                   std::string detail);
  /// On a missing file: how an entry of the same graph differs, if any.
  CacheLookup classifyAbsent(const CacheEntryIdentity &identity);

  PersistentCacheOptions options_;
  bool enabled_ = false;
  mutable std::mutex mutex_;
  PersistentCacheStats stats_;
  std::vector<std::string> warned_;
};

/// Entry file bytes → the executable bytes inside, checked against the
/// expected identity (fields left empty are not checked). Exposed for tests
/// and for `kilnc cache verify`.
absl::Status checkCacheEntry(std::string_view file,
                             const CacheEntryIdentity &expected,
                             CacheMiss *reason, std::string_view *payload);

/// identity + executable bytes → entry file bytes.
std::string encodeCacheEntry(const CacheEntryIdentity &identity,
                             std::string_view executable);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_PERSISTENTCACHE_H
