// The persistent cache's robustness: damaged entries (truncated at many
// offsets, flipped bits, renamed files, padding, a FIFO or a link to a
// device) are logged misses that the next store replaces and that never
// come back as executables; writers killed
// with SIGKILL at random moments never leave a partial entry visible;
// eight processes share one directory without errors; a full, unusable or
// read-only directory costs caching only; LRU eviction keeps the cap.
#include "runtime/PersistentCache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kiln::runtime {
namespace {

/// A valid executable whose kernel library is `bytes` of seeded noise: the
/// cache never runs it, so any bytes do, and big ones make slow writes.
Executable makeExecutable(size_t bytes, uint32_t seed) {
  Executable e;
  e.compilerVersion = "test";
  e.plan.arenaBytes = 64;
  e.plan.slots.push_back({BufferSlot::Kind::arena, 0, 0, 16});
  std::mt19937 random(seed);
  e.kernelLibrary.resize(bytes);
  for (char &c : e.kernelLibrary)
    c = static_cast<char>(random());
  return e;
}

CacheEntryIdentity identity(const std::string &name) {
  CacheEntryIdentity id;
  id.key = name;
  id.graphId = "graph-" + name;
  id.compilerVersion = "kiln-test 1";
  id.target = "testcpu +a,+b";
  return id;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

class PersistentCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    char dir[] = "/tmp/kiln-pcache-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    std::system(("chmod -R u+w " + dir_ + " 2>/dev/null; rm -rf " + dir_).c_str());
  }

  /// A cache over dir_ whose log lands in records_.
  PersistentCacheOptions options(uint64_t cap = uint64_t{1} << 30) {
    PersistentCacheOptions o;
    o.directory = dir_ + "/cache";
    o.maxBytes = cap;
    o.log = [this](const CacheLogRecord &r) { records_.push_back(r); };
    return o;
  }
  int count(CacheLogRecord::Kind kind) const {
    int n = 0;
    for (const CacheLogRecord &r : records_)
      n += r.kind == kind;
    return n;
  }

  std::string dir_;
  std::vector<CacheLogRecord> records_;
};

TEST_F(PersistentCacheTest, StoresAnEntryAndHitsIt) {
  PersistentCache cache(options());
  Executable e = makeExecutable(1000, 1);
  EXPECT_EQ(cache.lookup(identity("aa")).reason, CacheMiss::noEntry);
  ASSERT_TRUE(cache.store(identity("aa"), serializeExecutable(e)));
  CacheLookup found = cache.lookup(identity("aa"));
  ASSERT_TRUE(found.executable.has_value()) << found.detail;
  EXPECT_EQ(found.executable->kernelLibrary, e.kernelLibrary);
  EXPECT_EQ(cache.stats().hits, 1);
  EXPECT_EQ(cache.stats().misses, 1);
  EXPECT_EQ(cache.stats().missesByReason[int(CacheMiss::noEntry)], 1);
  ASSERT_EQ(count(CacheLogRecord::Kind::miss), 1);
  EXPECT_NE(records_[0].message.find("no entry"), std::string::npos);
}

TEST_F(PersistentCacheTest, TruncatedEntriesAreLoggedMissesThenReplaced) {
  PersistentCache cache(options());
  std::string exe = serializeExecutable(makeExecutable(3000, 2));
  ASSERT_TRUE(cache.store(identity("bb"), exe));
  std::string path = dir_ + "/cache/bb.kce", whole = readAll(path);
  std::vector<size_t> offsets = {0, 1, 7, 8, 12, 27, 28, 40, 60, 80, 100};
  for (size_t at = 120; at < whole.size(); at += 97)
    offsets.push_back(at);
  offsets.push_back(whole.size() - 1);
  for (size_t at : offsets) {
    writeAll(path, whole.substr(0, at));
    CacheLookup found = cache.lookup(identity("bb"));
    EXPECT_FALSE(found.executable.has_value()) << "truncated at " << at;
    EXPECT_EQ(found.reason, CacheMiss::corruptEntry) << "truncated at " << at;
  }
  EXPECT_EQ(cache.stats().hits, 0);
  EXPECT_EQ(count(CacheLogRecord::Kind::miss), int(offsets.size()));
  ASSERT_TRUE(cache.store(identity("bb"), exe)); // the miss's recompile
  EXPECT_TRUE(cache.lookup(identity("bb")).executable.has_value());
}

TEST_F(PersistentCacheTest, FlippedBitsAreMissesNeverExecutables) {
  PersistentCache cache(options());
  std::string exe = serializeExecutable(makeExecutable(2000, 3));
  ASSERT_TRUE(cache.store(identity("cc"), exe));
  std::string path = dir_ + "/cache/cc.kce", whole = readAll(path);
  std::mt19937 random(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = whole;
    // Every byte of the prefix and header first, then random positions.
    size_t at = trial < 150 ? size_t(trial) : random() % whole.size();
    damaged[at] ^= char(1 << (random() % 8));
    writeAll(path, damaged);
    CacheLookup found = cache.lookup(identity("cc"));
    ASSERT_FALSE(found.executable.has_value()) << "bit flipped at " << at;
  }
  writeAll(path, whole);
  EXPECT_TRUE(cache.lookup(identity("cc")).executable.has_value());
}

TEST_F(PersistentCacheTest, ARenamedEntryIsDetectedByItsKeyEcho) {
  PersistentCache cache(options());
  ASSERT_TRUE(cache.store(identity("dd"),
                          serializeExecutable(makeExecutable(100, 4))));
  ASSERT_EQ(::rename((dir_ + "/cache/dd.kce").c_str(),
                     (dir_ + "/cache/ee.kce").c_str()),
            0);
  CacheLookup found = cache.lookup(identity("ee"));
  EXPECT_FALSE(found.executable.has_value());
  EXPECT_EQ(found.reason, CacheMiss::corruptEntry);
  EXPECT_NE(found.detail.find("renamed"), std::string::npos) << found.detail;
}

TEST_F(PersistentCacheTest, NearEntriesExplainVersionAndTargetMisses) {
  PersistentCache cache(options());
  ASSERT_TRUE(cache.store(identity("ff"),
                          serializeExecutable(makeExecutable(100, 5))));
  CacheEntryIdentity newer = identity("ff");
  newer.key = "f1";
  newer.compilerVersion = "kiln-test 2";
  EXPECT_EQ(cache.lookup(newer).reason, CacheMiss::versionMismatch);
  CacheEntryIdentity other = identity("ff");
  other.key = "f2";
  other.target = "othercpu +a";
  EXPECT_EQ(cache.lookup(other).reason, CacheMiss::targetMismatch);
  CacheEntryIdentity unrelated = identity("f3");
  EXPECT_EQ(cache.lookup(unrelated).reason, CacheMiss::noEntry);
}

TEST_F(PersistentCacheTest, EvictsTheLeastRecentlyUsedEntryPastTheCap) {
  std::string exe = serializeExecutable(makeExecutable(10000, 6));
  uint64_t entry = encodeCacheEntry(identity("k1"), exe).size();
  PersistentCache cache(options(entry * 5 / 2));
  ASSERT_TRUE(cache.store(identity("k1"), exe));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cache.store(identity("k2"), exe));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cache.lookup(identity("k1")).executable.has_value()); // touch
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cache.store(identity("k3"), exe));
  EXPECT_TRUE(cache.lookup(identity("k1")).executable.has_value());
  EXPECT_EQ(cache.lookup(identity("k2")).reason, CacheMiss::noEntry);
  EXPECT_TRUE(cache.lookup(identity("k3")).executable.has_value());
  EXPECT_EQ(cache.stats().evictions, 1);
  EXPECT_EQ(cache.list().size(), 2u);
}

TEST_F(PersistentCacheTest, AFullCacheWarnsAndCarriesOnUncached) {
  PersistentCache cache(options(/*cap=*/500));
  std::string exe = serializeExecutable(makeExecutable(10000, 7));
  EXPECT_FALSE(cache.store(identity("big"), exe));
  EXPECT_FALSE(cache.store(identity("big2"), exe));
  EXPECT_EQ(count(CacheLogRecord::Kind::warning), 1); // once, not per store
  EXPECT_EQ(cache.stats().storesSkipped, 2);
  EXPECT_EQ(cache.lookup(identity("big")).reason, CacheMiss::noEntry);
}

TEST_F(PersistentCacheTest, AnUnusableDirectoryWarnsAndCarriesOn) {
  // Tests run as root, where chmod does not stop writes: a path under a
  // regular file cannot be a directory for anyone.
  writeAll(dir_ + "/file", "x");
  PersistentCacheOptions o = options();
  o.directory = dir_ + "/file/cache";
  PersistentCache cache(o);
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(count(CacheLogRecord::Kind::warning), 1);
  EXPECT_EQ(cache.lookup(identity("aa")).reason, CacheMiss::disabled);
  EXPECT_FALSE(
      cache.store(identity("aa"), serializeExecutable(makeExecutable(10, 8))));
  EXPECT_TRUE(cache.list().empty());
}

TEST_F(PersistentCacheTest, ReadOnlyModeReadsButNeverWrites) {
  std::string exe = serializeExecutable(makeExecutable(100, 9));
  {
    PersistentCache writer(options());
    ASSERT_TRUE(writer.store(identity("ro"), exe));
  }
  PersistentCacheOptions o = options(/*cap=*/1);
  o.readOnly = true;
  PersistentCache reader(o);
  struct stat before, after;
  ASSERT_EQ(::stat((dir_ + "/cache/ro.kce").c_str(), &before), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(reader.lookup(identity("ro")).executable.has_value());
  EXPECT_FALSE(reader.store(identity("new"), exe));
  EXPECT_EQ(reader.prune(0), 0);
  ASSERT_EQ(::stat((dir_ + "/cache/ro.kce").c_str(), &after), 0);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec); // not touched
  EXPECT_EQ(reader.list().size(), 1u);
  EXPECT_EQ(count(CacheLogRecord::Kind::warning), 1);
}

TEST_F(PersistentCacheTest, KilledWritersNeverLeaveAPartialEntry) {
  PersistentCacheOptions o = options();
  o.log = [](const CacheLogRecord &) {}; // children: no interleaved output
  std::mt19937 random(11);
  int hits = 0;
  for (int iteration = 0; iteration < 50; ++iteration) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      PersistentCache cache(o);
      for (uint32_t n = 0;; ++n) {
        std::string name = "w" + std::to_string(n % 3);
        cache.store(identity(name),
                    serializeExecutable(makeExecutable(1 << 20, n % 3)));
      }
    }
    // The last ten children are killed only once an entry is complete (then
    // mid-way through a later write), so that the check below does not
    // depend on the machine's speed: on a loaded machine no child had
    // finished a 1 MiB entry in its 30 ms.
    if (iteration >= 40) {
      PersistentCache watcher(o);
      auto stored = [&] {
        for (int k = 0; k < 3; ++k)
          if (watcher.lookup(identity("w" + std::to_string(k))).executable)
            return true;
        return false;
      };
      for (int waited = 0; !stored() && waited < 60000; waited += 5)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 30000));
    ::kill(child, SIGKILL);
    int status;
    ::waitpid(child, &status, 0);
    PersistentCache reader(options());
    for (int k = 0; k < 3; ++k) {
      CacheLookup found = reader.lookup(identity("w" + std::to_string(k)));
      ASSERT_NE(found.reason, CacheMiss::corruptEntry) << found.detail;
      if (found.executable) {
        ++hits;
        EXPECT_EQ(found.executable->kernelLibrary,
                  makeExecutable(1 << 20, k).kernelLibrary);
      }
    }
  }
  EXPECT_GT(hits, 0);
  PersistentCache cache(options());
  EXPECT_TRUE(cache.store(identity("after"),
                          serializeExecutable(makeExecutable(100, 12))));
  EXPECT_TRUE(cache.lookup(identity("after")).executable.has_value());
  // Temp files of killed writers are not entries.
  for (const CacheEntryInfo &info : cache.list())
    EXPECT_TRUE(info.headerError.empty()) << info.path;
}

TEST_F(PersistentCacheTest, EightProcessesShareOneDirectory) {
  PersistentCacheOptions o = options();
  o.log = [](const CacheLogRecord &) {};
  std::vector<pid_t> children;
  for (int p = 0; p < 8; ++p) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      PersistentCache cache(o);
      int errors = 0;
      for (int round = 0; round < 10; ++round)
        for (std::string name :
             {std::string("shared0"), std::string("shared1"),
              "own" + std::to_string(p)}) {
          uint32_t seed = std::hash<std::string>()(name) % 1000;
          CacheLookup found = cache.lookup(identity(name));
          if (!found.executable) {
            errors += found.reason != CacheMiss::noEntry;
            errors += !cache.store(
                identity(name),
                serializeExecutable(makeExecutable(200000, seed)));
            found = cache.lookup(identity(name));
          }
          errors += !found.executable ||
                    found.executable->kernelLibrary !=
                        makeExecutable(200000, seed).kernelLibrary;
        }
      ::_exit(errors == 0 ? 0 : 1);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  PersistentCache cache(options());
  EXPECT_EQ(cache.list().size(), 10u);
  EXPECT_TRUE(cache.verify(/*removeBad=*/false).empty());
}

// A FIFO named like an entry blocked the lookup's open forever (kiln-train
// hung before its first step, `kilnc cache ls` and `verify` too), and a
// link to /dev/zero was read until std::bad_alloc ended the run. Both are
// bad entries now, found at once. The lookups run in a child that an
// alarm ends, so that a regression fails here instead of hanging.
TEST_F(PersistentCacheTest, EntriesThatAreNotRegularFilesAreMissesAtOnce) {
  std::string exe = serializeExecutable(makeExecutable(100, 13));
  {
    PersistentCache cache(options());
    ASSERT_TRUE(cache.store(identity("good"), exe));
  }
  std::string fifo = dir_ + "/cache/fifo.kce", zero = dir_ + "/cache/zero.kce";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(::symlink("/dev/zero", zero.c_str()), 0);
  auto start = std::chrono::steady_clock::now();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(20);
    PersistentCacheOptions o = options();
    o.log = [](const CacheLogRecord &) {};
    PersistentCache cache(o);
    int errors = 0;
    for (const char *name : {"fifo", "zero"})
      errors += cache.lookup(identity(name)).reason != CacheMiss::corruptEntry;
    errors += cache.list().size() != 3;
    errors += cache.verify(/*removeBad=*/false).size() != 2;
    ::_exit(errors);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status))
      << "the child hung (ended by signal " << WTERMSIG(status) << ")";
  ASSERT_EQ(WEXITSTATUS(status), 0) << "checks failed in the child";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));

  // Safe to repeat here: what each bad entry says, and verify removes them
  // (the names only: /dev/zero stays) and keeps the good one.
  PersistentCache cache(options());
  CacheLookup found = cache.lookup(identity("fifo"));
  EXPECT_FALSE(found.executable.has_value());
  EXPECT_EQ(found.detail, "not a regular file: a FIFO");
  found = cache.lookup(identity("zero"));
  EXPECT_EQ(found.reason, CacheMiss::corruptEntry);
  EXPECT_EQ(found.detail, "not a regular file: a character device");
  for (const CacheEntryInfo &info : cache.list())
    EXPECT_EQ(info.headerError.empty(), info.key == "good") << info.key;
  EXPECT_EQ(cache.verify(/*removeBad=*/true).size(), 2u);
  struct stat st;
  EXPECT_NE(::lstat(fifo.c_str(), &st), 0);
  EXPECT_NE(::lstat(zero.c_str(), &st), 0);
  EXPECT_TRUE(cache.lookup(identity("good")).executable.has_value());
}

// An entry padded far past what its header declares (a sparse GiB) is read
// no further than the declared size, and its miss says how long it is.
TEST_F(PersistentCacheTest, APaddedEntryIsReadOnlyAsFarAsItsHeaderSays) {
  PersistentCache cache(options());
  std::string exe = serializeExecutable(makeExecutable(100, 14));
  ASSERT_TRUE(cache.store(identity("pad"), exe));
  std::string path = dir_ + "/cache/pad.kce";
  uint64_t size = readAll(path).size(), padded = size + (uint64_t{1} << 30);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(padded)), 0);
  CacheLookup found = cache.lookup(identity("pad"));
  EXPECT_EQ(found.reason, CacheMiss::corruptEntry);
  uint64_t payload = exe.size() + (uint64_t{1} << 30);
  EXPECT_NE(found.detail.find("payload is " + std::to_string(payload) +
                              " bytes, header says " +
                              std::to_string(exe.size())),
            std::string::npos)
      << found.detail;
}

} // namespace
} // namespace kiln::runtime
