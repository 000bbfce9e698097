// The persistent compile cache's files: entry encoding and checks, atomic
// writes (temp file, fsync, rename, directory fsync), LRU eviction by mtime
// and the directory walks behind list/verify/prune/clear. Every file system
// race with another process (an entry evicted or replaced under us) is
// treated as the state it leaves: a vanished file is a miss or is skipped.
// Entries are read without blocking and no further than their checks need,
// so a FIFO or a link to a device named like one is a bad entry, not a hang.
#include "runtime/PersistentCache.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace kiln::runtime {

namespace {

constexpr char kEntryMagic[8] = {'K', 'I', 'L', 'N', 'C', 'E', 'N', 'T'};
constexpr uint32_t kEntryFormatVersion = 1;
// magic, entry format, header length, header crc32, payload length.
constexpr size_t kPrefixBytes = 8 + 4 + 4 + 4 + 8;
// The header is a few hundred bytes plus the target's feature list.
constexpr uint64_t kMaxHeaderBytes = 1 << 16;
constexpr std::string_view kSuffix = ".kce";
constexpr std::string_view kTempPrefix = ".tmp-";
// A temp file older than this belongs to a writer that died.
constexpr int64_t kStaleTempSeconds = 600;

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>(v >> (8 * i)));
}
void putU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t getLE(std::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i)
    v |= uint64_t(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return v;
}
uint32_t crcOf(std::string_view bytes) {
  return crc32(crc32(0L, Z_NULL, 0),
               reinterpret_cast<const Bytef *>(bytes.data()),
               static_cast<uInt>(bytes.size()));
}

std::string errnoText() { return std::strerror(errno); }

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

/// What a path that is not a regular file names, for a message.
std::string fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "an unknown kind of file";
}

/// How many bytes of a file starting with `prefix` (its first kPrefixBytes)
/// the checks need: the entry the prefix declares; the prefix alone when
/// that already fails them (not an entry, another format, an oversized
/// header); prefix and header when the declared size overflows.
uint64_t bytesToCheck(std::string_view prefix) {
  if (std::memcmp(prefix.data(), kEntryMagic, sizeof kEntryMagic) != 0 ||
      getLE(prefix, 8, 4) != kEntryFormatVersion)
    return kPrefixBytes;
  uint64_t header = getLE(prefix, 12, 4), payload = getLE(prefix, 20, 8);
  if (header > kMaxHeaderBytes)
    return kPrefixBytes;
  if (payload > UINT64_MAX - kPrefixBytes - header)
    return kPrefixBytes + header;
  return kPrefixBytes + header + payload;
}

/// A file's bytes as read, and its size on disk when it was opened.
struct FileBytes {
  std::string bytes;
  uint64_t sizeOnDisk = 0;
};

/// Reads at most `limit` bytes of the regular file at `path`. Anything
/// else named like an entry is refused without blocking (docs/CACHE.md: a
/// cache problem costs caching, never the run): a FIFO would block the
/// open and the read forever, a device behind a symlink (/dev/zero) never
/// ends. The read stops at the size the file had when opened and, for an
/// entry, at what its checks need (bytesToCheck), so a huge or growing file
/// costs no more memory than a valid entry would. NotFound when the path is
/// gone (a concurrent eviction), FailedPrecondition when it is not a
/// regular file, Unavailable when it cannot be read.
absl::StatusOr<FileBytes> readRegularFile(const std::string &path,
                                          size_t limit = SIZE_MAX) {
  // O_NONBLOCK: opening a FIFO without a writer returns at once.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    std::string text = absl::StrCat("cannot read ", path, ": ", errnoText());
    return errno == ENOENT ? absl::NotFoundError(text)
                           : absl::UnavailableError(text);
  }
  auto fail = [&](absl::Status status) {
    ::close(fd);
    return status;
  };
  // fstat of the open file, not stat of the path: the path may be
  // replaced in between.
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(absl::UnavailableError(
        absl::StrCat("cannot stat ", path, ": ", errnoText())));
  if (!S_ISREG(st.st_mode))
    return fail(absl::FailedPreconditionError(
        absl::StrCat("not a regular file: ", fileKind(st.st_mode))));
  FileBytes file;
  file.sizeOnDisk = static_cast<uint64_t>(st.st_size);
  // Reads on until `end` bytes are in or the file ends (it shrank since the
  // fstat: the checks then say truncated); 0, or the read's errno.
  auto readUpTo = [&](size_t end) -> int {
    size_t done = file.bytes.size();
    file.bytes.resize(std::max(done, end));
    int error = 0;
    while (done < end) {
      ssize_t n = ::read(fd, file.bytes.data() + done, end - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        error = errno;
      if (n <= 0)
        break;
      done += static_cast<size_t>(n);
    }
    file.bytes.resize(done);
    return error;
  };
  size_t want = static_cast<size_t>(
      std::min<uint64_t>(limit, static_cast<uint64_t>(st.st_size)));
  // The prefix first, then no more than the entry it declares: the size
  // checks need no more bytes than that.
  int error = readUpTo(std::min(want, kPrefixBytes));
  if (error == 0 && file.bytes.size() == kPrefixBytes)
    error = readUpTo(static_cast<size_t>(
        std::min<uint64_t>(want, bytesToCheck(file.bytes))));
  if (error != 0)
    return fail(absl::UnavailableError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(error))));
  ::close(fd);
  return file;
}

bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

/// The header lines: key, graph id, compiler version, target.
struct HeaderFields {
  std::string key, graphId, compilerVersion, target;
};

std::string encodeHeader(const CacheEntryIdentity &id) {
  return absl::StrCat(id.key, "\n", id.graphId, "\n", id.compilerVersion,
                      "\n", id.target, "\n");
}

/// Parses the prefix and header of an entry file (possibly only its first
/// bytes). Returns an error text, empty when fine.
std::string parseHeader(std::string_view file, HeaderFields &fields,
                        uint64_t &payloadBytes, CacheMiss &reason) {
  reason = CacheMiss::corruptEntry;
  if (file.size() < kPrefixBytes)
    return absl::StrCat("truncated entry (", file.size(), " bytes)");
  if (std::memcmp(file.data(), kEntryMagic, sizeof kEntryMagic) != 0)
    return "bad magic: not a kiln cache entry";
  uint32_t format = getLE(file, 8, 4);
  if (format != kEntryFormatVersion) {
    reason = CacheMiss::versionMismatch;
    return absl::StrCat("entry format ", format, ", this runtime reads ",
                        kEntryFormatVersion);
  }
  uint64_t headerBytes = getLE(file, 12, 4);
  uint32_t headerCrc = getLE(file, 16, 4);
  payloadBytes = getLE(file, 20, 8);
  if (headerBytes > kMaxHeaderBytes || file.size() < kPrefixBytes + headerBytes)
    return "truncated or damaged entry header";
  std::string_view header = file.substr(kPrefixBytes, headerBytes);
  if (crcOf(header) != headerCrc)
    return "entry header checksum mismatch";
  std::string *out[] = {&fields.key, &fields.graphId, &fields.compilerVersion,
                        &fields.target};
  for (std::string *field : out) {
    size_t newline = header.find('\n');
    if (newline == std::string_view::npos)
      return "malformed entry header";
    *field = std::string(header.substr(0, newline));
    header.remove_prefix(newline + 1);
  }
  return "";
}

int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// A directory's file names (empty when it cannot be read).
/// Whether `name` is a temporary file a store writes (kTempPrefix, the
/// key's first 16 hex digits, '-', ...): never a user's ".tmp-notes".
bool isTempFileName(const std::string &name) {
  if (name.rfind(kTempPrefix, 0) != 0 || name.size() < kTempPrefix.size() + 17)
    return false;
  for (size_t i = kTempPrefix.size(); i < kTempPrefix.size() + 16; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i])))
      return false;
  return name[kTempPrefix.size() + 16] == '-';
}

/// Whether `path` is a regular file (not a link, directory or device).
bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> fileNames(const std::string &directory) {
  std::vector<std::string> names;
  DIR *dir = ::opendir(directory.c_str());
  if (!dir)
    return names;
  while (dirent *entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

/// mkdir -p; false with errno when a component cannot be made a directory.
bool makeDirectories(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return true;
    errno = ENOTDIR;
    return false;
  }
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 &&
      !makeDirectories(path.substr(0, slash)))
    return false;
  return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

} // namespace

std::string_view cacheMissName(CacheMiss reason) {
  switch (reason) {
  case CacheMiss::noEntry: return "no entry";
  case CacheMiss::versionMismatch: return "version mismatch";
  case CacheMiss::targetMismatch: return "target mismatch";
  case CacheMiss::corruptEntry: return "corrupt entry";
  case CacheMiss::disabled: return "cache disabled";
  }
  return "?";
}

std::string encodeCacheEntry(const CacheEntryIdentity &identity,
                             std::string_view executable) {
  std::string header = encodeHeader(identity);
  std::string out(kEntryMagic, sizeof kEntryMagic);
  putU32(out, kEntryFormatVersion);
  putU32(out, static_cast<uint32_t>(header.size()));
  putU32(out, crcOf(header));
  putU64(out, executable.size());
  out += header;
  out.append(executable.data(), executable.size());
  return out;
}

namespace {

/// checkCacheEntry for the first bytes of a file of `sizeOnDisk` bytes
/// (readRegularFile reads no further than the entry's declared size).
absl::Status checkEntry(std::string_view file, uint64_t sizeOnDisk,
                        const CacheEntryIdentity &expected, CacheMiss *reason,
                        std::string_view *payload) {
  HeaderFields fields;
  uint64_t payloadBytes = 0;
  CacheMiss why;
  auto fail = [&](CacheMiss r, std::string text) {
    if (reason)
      *reason = r;
    return absl::DataLossError(text);
  };
  if (std::string error = parseHeader(file, fields, payloadBytes, why);
      !error.empty())
    return fail(why, error);
  if (!expected.key.empty() && fields.key != expected.key)
    return fail(CacheMiss::corruptEntry,
                absl::StrCat("entry holds key ", fields.key,
                             " (a renamed or misplaced file)"));
  if (!expected.compilerVersion.empty() &&
      fields.compilerVersion != expected.compilerVersion)
    return fail(CacheMiss::versionMismatch,
                absl::StrCat("entry from compiler '", fields.compilerVersion,
                             "', this is '", expected.compilerVersion, "'"));
  if (!expected.target.empty() && fields.target != expected.target)
    return fail(CacheMiss::targetMismatch,
                absl::StrCat("entry built for target '", fields.target, "'"));
  size_t start = kPrefixBytes + getLE(file, 12, 4);
  // Both: the file may have shrunk after its size was taken.
  uint64_t onDisk = sizeOnDisk - start, read = file.size() - start;
  if (onDisk != payloadBytes || read != payloadBytes)
    return fail(CacheMiss::corruptEntry,
                absl::StrCat("payload is ",
                             onDisk != payloadBytes ? onDisk : read,
                             " bytes, header says ", payloadBytes,
                             " (truncated or padded)"));
  std::string_view body = file.substr(start);
  // The executable's own header: magic (8 bytes), then its format version.
  if (body.size() >= 12 && getLE(body, 8, 4) != kExecutableFormatVersion)
    return fail(CacheMiss::versionMismatch,
                absl::StrCat("executable format ", getLE(body, 8, 4),
                             ", this runtime reads ",
                             kExecutableFormatVersion));
  if (payload)
    *payload = body;
  return absl::OkStatus();
}

} // namespace

absl::Status checkCacheEntry(std::string_view file,
                             const CacheEntryIdentity &expected,
                             CacheMiss *reason, std::string_view *payload) {
  return checkEntry(file, file.size(), expected, reason, payload);
}

//===--- PersistentCache --------------------------------------------------===//

PersistentCache::PersistentCache(PersistentCacheOptions options)
    : options_(std::move(options)) {
  while (options_.directory.size() > 1 && options_.directory.back() == '/')
    options_.directory.pop_back();
  if (options_.directory.empty()) {
    warnOnce("dir", "kiln cache: no directory given; caching is off");
    return;
  }
  struct stat st;
  if (options_.readOnly) {
    enabled_ = ::stat(options_.directory.c_str(), &st) == 0 &&
               S_ISDIR(st.st_mode);
    if (!enabled_)
      warnOnce("dir", absl::StrCat("kiln cache: read-only cache directory ",
                                   options_.directory,
                                   " does not exist; caching is off"));
    return;
  }
  enabled_ = makeDirectories(options_.directory);
  if (!enabled_)
    warnOnce("dir", absl::StrCat("kiln cache: cannot use ", options_.directory,
                                 " (", errnoText(),
                                 "); continuing without the persistent cache"));
}

std::string PersistentCache::entryPath(std::string_view key) const {
  return absl::StrCat(options_.directory, "/", std::string(key), std::string(kSuffix));
}

void PersistentCache::emit(CacheLogRecord record) const {
  if (options_.log) {
    options_.log(record);
    return;
  }
  const char *kind = record.kind == CacheLogRecord::Kind::miss ? "miss: "
                     : record.kind == CacheLogRecord::Kind::warning
                         ? "warning: "
                         : "";
  std::fprintf(stderr, "%s%s\n", kind, record.message.c_str());
}

void PersistentCache::warnOnce(const std::string &what, std::string message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::find(warned_.begin(), warned_.end(), what) != warned_.end())
      return;
    warned_.push_back(what);
  }
  emit({CacheLogRecord::Kind::warning, CacheMiss::noEntry, "",
        std::move(message)});
}

PersistentCacheStats PersistentCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

CacheLookup PersistentCache::miss(const CacheEntryIdentity &identity,
                                  CacheMiss reason, std::string detail) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.misses;
    ++stats_.missesByReason[static_cast<int>(reason)];
  }
  std::string message = absl::StrCat("kiln cache miss ", identity.key, ": ",
                                     std::string(cacheMissName(reason)));
  if (!detail.empty())
    absl::StrAppend(&message, " (", detail, ")");
  emit({CacheLogRecord::Kind::miss, reason, identity.key, message});
  CacheLookup result;
  result.reason = reason;
  result.detail = std::move(detail);
  return result;
}

CacheLookup PersistentCache::classifyAbsent(const CacheEntryIdentity &id) {
  // A miss costs a compile (seconds); reading a few small headers to say
  // why is cheap next to it.
  if (!id.graphId.empty())
    for (const CacheEntryInfo &entry : list()) {
      if (entry.graphId != id.graphId || !entry.headerError.empty())
        continue;
      if (entry.compilerVersion != id.compilerVersion)
        return miss(id, CacheMiss::versionMismatch,
                    absl::StrCat("entry ", entry.key, " holds this graph for "
                                 "compiler '", entry.compilerVersion, "'"));
      if (entry.target != id.target)
        return miss(id, CacheMiss::targetMismatch,
                    absl::StrCat("entry ", entry.key,
                                 " holds this graph for target '",
                                 entry.target.substr(0, 40), "...'"));
    }
  return miss(id, CacheMiss::noEntry, "");
}

CacheLookup PersistentCache::lookup(const CacheEntryIdentity &identity) {
  if (!enabled_)
    return miss(identity, CacheMiss::disabled, "");
  std::string path = entryPath(identity.key);
  absl::StatusOr<FileBytes> file = readRegularFile(path);
  if (!file.ok()) {
    if (absl::IsNotFound(file.status()))
      return classifyAbsent(identity);
    return miss(identity, CacheMiss::corruptEntry,
                std::string(file.status().message()));
  }
  CacheMiss reason = CacheMiss::corruptEntry;
  std::string_view payload;
  if (absl::Status s = checkEntry(file->bytes, file->sizeOnDisk, identity,
                                  &reason, &payload);
      !s.ok())
    return miss(identity, reason, std::string(s.message()));
  absl::StatusOr<Executable> executable = deserializeExecutable(payload);
  if (!executable.ok())
    return miss(identity, CacheMiss::corruptEntry,
                std::string(executable.status().message()));
  if (!options_.readOnly)
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // LRU: now
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.hits;
  }
  CacheLookup result;
  result.executable = std::move(*executable);
  return result;
}

bool PersistentCache::store(const CacheEntryIdentity &identity,
                            std::string_view executable) {
  auto skip = [&](const std::string &what, std::string message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.storesSkipped;
    }
    warnOnce(what, std::move(message));
    return false;
  };
  if (!enabled_)
    return skip("dir", "kiln cache: caching is off");
  if (options_.readOnly)
    return skip("ro", absl::StrCat("kiln cache: ", options_.directory,
                                   " is read-only here; new entries are not "
                                   "stored"));
  std::string entry = encodeCacheEntry(identity, executable);
  if (options_.maxBytes && entry.size() > options_.maxBytes)
    return skip("cap", absl::StrCat("kiln cache: an entry of ", entry.size(),
                                    " bytes exceeds the cache cap of ",
                                    options_.maxBytes,
                                    " bytes; continuing uncached"));
  static std::atomic<uint64_t> counter{0};
  std::string temp = absl::StrCat(options_.directory, "/", std::string(kTempPrefix),
                                  identity.key.substr(0, 16), "-", ::getpid(),
                                  "-", counter++, "-", std::random_device()());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return skip("write", absl::StrCat("kiln cache: cannot write in ",
                                      options_.directory, " (", errnoText(),
                                      "); continuing uncached"));
  bool ok = writeAll(fd, entry) && ::fsync(fd) == 0;
  std::string error = ok ? "" : errnoText();
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temp.c_str(), entryPath(identity.key).c_str()) != 0) {
    ok = false;
    error = errnoText();
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return skip("write", absl::StrCat("kiln cache: storing an entry in ",
                                      options_.directory, " failed (", error,
                                      "); continuing uncached"));
  }
  // The rename is durable only once the directory itself is synced.
  int dirFd = ::open(options_.directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.stores;
  }
  if (options_.maxBytes)
    prune(options_.maxBytes);
  return true;
}

namespace {
/// The entries of `directory` with their paths, sizes and times (from stat
/// alone, which never blocks, even on a FIFO); an entry another process
/// evicts meanwhile is skipped.
std::vector<CacheEntryInfo> statEntries(const std::string &directory) {
  std::vector<CacheEntryInfo> entries;
  for (const std::string &name : fileNames(directory)) {
    if (!endsWith(name, kSuffix) || name[0] == '.')
      continue;
    CacheEntryInfo info;
    info.path = absl::StrCat(directory, "/", name);
    struct stat st;
    // A folder named like an entry is the user's (clear keeps it too); any
    // other file that is not a regular one is listed, and reads as bad.
    if (::stat(info.path.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
      continue;
    info.bytes = static_cast<uint64_t>(st.st_size);
    info.mtimeSeconds = st.st_mtim.tv_sec;
    info.mtimeNanos =
        st.st_mtim.tv_sec * int64_t{1000000000} + st.st_mtim.tv_nsec;
    entries.push_back(std::move(info));
  }
  return entries;
}
} // namespace

std::vector<CacheEntryInfo> PersistentCache::list() const {
  std::vector<CacheEntryInfo> entries;
  if (!enabled_)
    return entries;
  for (CacheEntryInfo &info : statEntries(options_.directory)) {
    std::string name = info.path.substr(options_.directory.size() + 1);
    // The header is a few hundred bytes plus the feature list.
    absl::StatusOr<FileBytes> head = readRegularFile(info.path, 16 << 10);
    if (absl::IsNotFound(head.status()))
      continue; // evicted meanwhile
    HeaderFields fields;
    uint64_t payloadBytes;
    CacheMiss why;
    // An entry that cannot be read (a FIFO, a link to a device) is listed
    // as bad, so `kilnc cache verify` reports and removes it.
    info.headerError = head.ok()
                           ? parseHeader(head->bytes, fields, payloadBytes, why)
                           : std::string(head.status().message());
    info.key = fields.key.empty() ? name.substr(0, name.size() - kSuffix.size())
                                  : fields.key;
    info.graphId = fields.graphId;
    info.compilerVersion = fields.compilerVersion;
    info.target = fields.target;
    entries.push_back(std::move(info));
  }
  return entries;
}

std::vector<std::pair<CacheEntryInfo, std::string>>
PersistentCache::verify(bool removeBad) {
  std::vector<std::pair<CacheEntryInfo, std::string>> bad;
  for (const CacheEntryInfo &info : list()) {
    absl::StatusOr<FileBytes> file = readRegularFile(info.path);
    if (absl::IsNotFound(file.status()))
      continue; // evicted meanwhile
    CacheEntryIdentity expected;
    expected.key = info.path.substr(options_.directory.size() + 1);
    expected.key.resize(expected.key.size() - kSuffix.size());
    std::string_view payload;
    absl::Status status = file.ok() ? checkEntry(file->bytes, file->sizeOnDisk,
                                                 expected, nullptr, &payload)
                                    : file.status();
    if (status.ok())
      status = deserializeExecutable(payload).status();
    if (status.ok())
      continue;
    bad.emplace_back(info, std::string(status.message()));
    if (removeBad && writable())
      ::unlink(info.path.c_str());
  }
  return bad;
}

int64_t PersistentCache::prune(uint64_t maxBytes) {
  if (!writable())
    return 0;
  int64_t removed = 0;
  int64_t now = nowSeconds();
  for (const std::string &name : fileNames(options_.directory)) {
    if (!isTempFileName(name))
      continue;
    std::string path = absl::StrCat(options_.directory, "/", name);
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 &&
        now - st.st_mtim.tv_sec > kStaleTempSeconds &&
        ::unlink(path.c_str()) == 0)
      ++removed;
  }
  // Only sizes and mtimes matter here: stat, without reading headers.
  std::vector<CacheEntryInfo> entries = statEntries(options_.directory);
  uint64_t total = 0;
  for (const CacheEntryInfo &e : entries)
    total += e.bytes;
  std::sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) {
    return a.mtimeNanos != b.mtimeNanos ? a.mtimeNanos < b.mtimeNanos
                                        : a.path < b.path;
  });
  for (const CacheEntryInfo &e : entries) {
    if (total <= maxBytes)
      break;
    // Another process may have evicted it first: the bytes are gone
    // either way.
    if (::unlink(e.path.c_str()) == 0 || errno == ENOENT) {
      total -= e.bytes;
      ++removed;
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.evictions;
    }
  }
  return removed;
}

absl::Status PersistentCache::clear() {
  if (!writable())
    return absl::FailedPreconditionError(
        absl::StrCat("cache ", options_.directory, " is not writable"));
  // Only kiln's files: a user's ".tmp-notes" or a folder named "x.kce"
  // stays (the folder stopped the clear half-way, an error).
  for (const std::string &name : fileNames(options_.directory)) {
    if (!endsWith(name, kSuffix) && !isTempFileName(name))
      continue;
    std::string path = absl::StrCat(options_.directory, "/", name);
    if (!isRegularFile(path))
      continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return absl::InternalError(
          absl::StrCat("cannot remove ", path, ": ", errnoText()));
  }
  return absl::OkStatus();
}

} // namespace kiln::runtime
