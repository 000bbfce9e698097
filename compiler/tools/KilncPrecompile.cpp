// kilnc precompile and kilnc cache. Precompile runs one `kilnc compile
// GRAPH --cache DIR` worker process per dumped graph, at most --jobs at a
// time, each under an address-space cap (setrlimit RLIMIT_AS) so a graph
// that crashes or runs out of memory costs only itself; a failing graph
// leaves a reproducer (its module and the worker's output) in
// DUMP_DIR/failures/. The workers compute the same key the training run
// does, so coverage here is coverage there.
#include "compiler/Compiler.h"
#include "compiler/tools/KilncCommon.h"
#include "support/HostTensor.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln::kilnc {

namespace {

struct Job {
  std::string graph;   // file name inside the dump directory
  std::string logPath; // the worker's stdout and stderr
  uint64_t memoryCap = 0; // the worker's address space (RLIMIT_AS), bytes
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

struct Tally {
  int hits = 0, compiled = 0, notStored = 0, failed = 0;
  size_t total = 0; // graphs in the dump
  int done() const { return hits + compiled + notStored + failed; }
};

std::vector<std::string> dumpedGraphs(const std::string &dir) {
  std::vector<std::string> graphs;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *entry = ::readdir(d)) {
      std::string name = entry->d_name;
      if (name.size() > 5 && name.substr(name.size() - 5) == ".mlir" &&
          name[0] != '.')
        graphs.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(graphs.begin(), graphs.end());
  return graphs;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Starts `kilnc compile` on one graph; returns the child's pid or -1.
pid_t startWorker(const std::string &dumpDir, const Job &job,
                  const Args &args, uint64_t memoryCap) {
  std::string graphPath = dumpDir + "/" + job.graph;
  std::vector<std::string> argvText = {
      "kilnc",  "compile", graphPath, "--cache", cacheDirectory(args),
      "--quiet"};
  if (args.has("--max-size")) {
    argvText.push_back("--max-size");
    argvText.push_back(args.get("--max-size"));
  }
  for (std::string &word : targetFlagWords(args))
    argvText.push_back(std::move(word));
  pid_t pid = ::fork();
  if (pid != 0)
    return pid;
  // The child: output to the log, then the memory cap, then exec.
  int log = ::open(job.logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (log >= 0) {
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::close(log);
  }
  // AddressSanitizer reserves terabytes of shadow address space up front, so
  // an address-space cap would stop every worker of a sanitizer build.
#ifndef __SANITIZE_ADDRESS__
  if (memoryCap) {
    struct rlimit limit = {memoryCap, memoryCap};
    ::setrlimit(RLIMIT_AS, &limit);
  }
#endif
  std::vector<char *> argv;
  for (std::string &arg : argvText)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "kilnc: cannot start a worker: %s\n",
               std::strerror(errno));
  ::_exit(kExitFailure);
}

/// Records a failed graph: its module, what the worker said, and the
/// command that compiles it for the same target (a cuda-only failure does
/// not reproduce on the default cpu backend).
void writeReproducer(const std::string &dumpDir, const Job &job,
                     const Args &args, const std::string &status,
                     const std::string &log) {
  std::string failures = dumpDir + "/failures";
  ::mkdir(failures.c_str(), 0755);
  std::string base = failures + "/" + job.graph;
  {
    std::ofstream copy(base, std::ios::binary);
    copy << slurp(dumpDir + "/" + job.graph);
  }
  std::string command = "kilnc compile " + base;
  for (const std::string &word : targetFlagWords(args))
    command += " " + word;
  std::ofstream error(base.substr(0, base.size() - 5) + ".error");
  error << "graph: " << job.graph << "\nworker: " << status << "\n"
        << "reproduce: "
        << (job.memoryCap
                ? "(ulimit -v " + std::to_string(job.memoryCap / 1024) + "; " +
                      command + ")"
                : command)
        << "\n\n"
        << log;
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

std::string firstErrorLine(const std::string &log) {
  size_t at = log.find("error:");
  size_t start = at == std::string::npos ? 0 : at;
  size_t end = log.find('\n', start);
  std::string line = log.substr(start, end - start);
  return line.empty() ? "(no output)" : line;
}

/// Counts a finished worker and prints its line, prefixed with the
/// progress over the dump ("[3/12]") and what the graph took.
void finishJob(const std::string &dumpDir, const Job &job, const Args &args,
               int status, Tally &tally) {
  std::string log = slurp(job.logPath);
  ::unlink(job.logPath.c_str());
  bool exited = WIFEXITED(status);
  int code = exited ? WEXITSTATUS(status) : -1;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - job.start)
                       .count();
  auto progress = [&] {
    char text[64];
    std::snprintf(text, sizeof text, "[%d/%zu, %.1f s]", tally.done(),
                  tally.total, seconds);
    return std::string(text);
  };
  if (exited && code == 0) {
    bool hit = log.find(": hit") != std::string::npos;
    ++(hit ? tally.hits : tally.compiled);
    std::printf("kilnc: %s: %s %s\n", job.graph.c_str(),
                hit ? "already cached" : "compiled and cached",
                progress().c_str());
    std::fflush(stdout);
    return;
  }
  if (exited && code == kExitNotCached) {
    ++tally.notStored;
    std::printf("kilnc: %s: compiled but not cached (see warnings) %s\n%s",
                job.graph.c_str(), progress().c_str(), log.c_str());
    std::fflush(stdout);
    return;
  }
  ++tally.failed;
  std::string what = describeStatus(status);
  // Under a cap, a worker that dies by a signal (or cannot even load) has
  // most likely run out of the address space it was given.
  if (job.memoryCap > 0 && (!exited || code == 127))
    what += "; the worker may have run out of its " +
            formatByteSize(job.memoryCap) +
            " of address space: raise --worker-memory";
  writeReproducer(dumpDir, job, args, what, log);
  std::printf("kilnc: %s: FAILED (%s): %s; reproducer in failures/ %s\n",
              job.graph.c_str(), what.c_str(), firstErrorLine(log).c_str(),
              progress().c_str());
  std::fflush(stdout);
}

uint64_t defaultWorkerMemory(int jobs) {
  uint64_t physical = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                      static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  // Address space, not resident memory: LLVM reserves far more than it
  // touches, so leave generous room above an even share.
  return std::max<uint64_t>(uint64_t{4} << 30, physical / jobs * 2);
}

/// --jobs and --worker-memory → their values; a usage exit code on a bad
/// value, 0 when fine.
int parseWorkerFlags(const Args &args, int &jobs, uint64_t &memoryCap) {
  if (args.has("--jobs")) {
    std::string text = args.get("--jobs");
    std::optional<uint64_t> n = parseByteSize(text);
    if (!n || *n < 1 || *n > 256 ||
        text.find_first_not_of("0123456789") != std::string::npos)
      return fail("--jobs: expected a number from 1 to 256, got '" + text +
                      "'",
                  kExitUsage);
    jobs = static_cast<int>(*n);
  }
  memoryCap = defaultWorkerMemory(jobs);
  if (args.has("--worker-memory")) {
    std::optional<uint64_t> cap = parseByteSize(args.get("--worker-memory"));
    if (!cap)
      return fail("--worker-memory: expected a byte count, got '" +
                      args.get("--worker-memory") + "'",
                  kExitUsage);
    memoryCap = *cap;
  }
  return 0;
}

/// A target as the flags that ask for it: "--backend cuda --cuda_arch
/// sm_90 --bf16".
std::string targetText(const std::string &backend, const std::string &precision,
                       const std::string &cudaArch, bool tf32) {
  std::string text = "--backend " + backend;
  if (backend == "cuda")
    text += " --cuda_arch " + cudaArch + (tf32 ? " --tf32" : "");
  if (precision == "bf16")
    text += " --bf16";
  else if (precision == "f16")
    text += " --fp16";
  return text;
}

/// The targets the run that dumped these graphs compiled them for
/// (manifest.jsonl; older dumps name no precision and are left out), and
/// how many graphs each, when any is not `target`: a run finds
/// precompiled entries only under its own target, so "N of N graphs
/// cached" would otherwise promise hits the run never gets.
void noteOtherTargets(const std::string &dumpDir,
                      const compiler::KeyOptions &target) {
  std::ifstream manifest(dumpDir + "/manifest.jsonl");
  const std::string mine = targetText(
      std::string(compiler::backendName(target.backend)),
      std::string(dtypeName(target.productType)), target.cudaArch, target.tf32);
  std::map<std::string, int> others;
  std::string line;
  while (std::getline(manifest, line)) {
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(line);
    if (!value) {
      llvm::consumeError(value.takeError());
      continue;
    }
    const llvm::json::Object *entry = value->getAsObject();
    if (!entry || !entry->getString("precision"))
      continue;
    auto text = [&](llvm::StringRef key) {
      return entry->getString(key).value_or("").str();
    };
    std::string theirs =
        targetText(text("backend"), text("precision"), text("cuda_arch"),
                   entry->getBoolean("tf32").value_or(false));
    if (theirs != mine)
      ++others[theirs];
  }
  for (const auto &[theirs, count] : others)
    std::printf("kilnc: note: precompile: the run that dumped %d of these "
                "graphs compiled them for %s, and this precompile compiles "
                "for %s: a run finds these entries only with this "
                "precompile's target (give precompile the run's flags to "
                "warm that run)\n",
                count, theirs.c_str(), mine.c_str());
  std::fflush(stdout);
}

} // namespace

int runPrecompile(int argc, char **argv) {
  std::set<std::string> valued = {"--cache", "--jobs", "--worker-memory",
                                  "--max-size"};
  valued.insert(kTargetFlags.begin(), kTargetFlags.end());
  std::optional<Args> args =
      parseArgs(argc, argv, 2, valued, kTargetSwitches);
  if (!args)
    return kExitUsage;
  if (args->has("--help"))
    return usage(0);
  compiler::KeyOptions target;
  if (!parseTargetFlags(*args, target))
    return kExitUsage;
  if (args->positional.size() != 1)
    return fail("precompile: expected one DUMP_DIR", kExitUsage);
  if (cacheDirectory(*args).empty())
    return fail("precompile: --cache DIR (or KILN_CACHE_DIR) is required",
                kExitUsage);
  int jobs = 2;
  uint64_t memoryCap = 0;
  if (int rc = parseWorkerFlags(*args, jobs, memoryCap))
    return rc;
  const std::string dumpDir = args->positional[0];
  struct stat st;
  if (::stat(dumpDir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fail("precompile: " + dumpDir + " is not a directory");
  std::vector<std::string> graphs = dumpedGraphs(dumpDir);
  if (graphs.empty())
    return fail("precompile: no .mlir graphs in " + dumpDir);
  auto options = cacheOptions(*args, /*readOnly=*/false, /*quiet=*/false);
  if (!options)
    return kExitUsage;
  runtime::PersistentCache cache(*options);
  if (!cache.writable())
    return fail("precompile: cannot write the cache " + options->directory);

  noteOtherTargets(dumpDir, target);
  auto start = std::chrono::steady_clock::now();
  Tally tally;
  tally.total = graphs.size();
  std::map<pid_t, Job> running;
  char logDir[] = "/tmp/kilnc-logs-XXXXXX";
  if (!::mkdtemp(logDir))
    return fail("precompile: cannot create a temporary directory");
  size_t next = 0;
  while (next < graphs.size() || !running.empty()) {
    while (next < graphs.size() && running.size() < size_t(jobs)) {
      Job job{graphs[next], std::string(logDir) + "/" + std::to_string(next),
              memoryCap};
      ++next;
      pid_t pid = startWorker(dumpDir, job, *args, memoryCap);
      if (pid < 0) {
        finishJob(dumpDir, job, *args, 1 << 8, tally);
        continue;
      }
      running[pid] = job;
    }
    int status = 0;
    pid_t done = ::waitpid(-1, &status, 0);
    if (done < 0)
      break;
    auto it = running.find(done);
    if (it == running.end())
      continue;
    finishJob(dumpDir, it->second, *args, status, tally);
    running.erase(it);
  }
  ::rmdir(logDir);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  int cached = tally.hits + tally.compiled;
  std::printf("kilnc: precompile: %d of %zu graphs cached (%d already, %d "
              "compiled, %d not stored, %d failed) in %.1f s with %d jobs\n",
              cached, graphs.size(), tally.hits, tally.compiled,
              tally.notStored, tally.failed, seconds, jobs);
  return cached == int(graphs.size()) ? 0 : kExitFailure;
}

int runCache(int argc, char **argv) {
  if (argc < 3)
    return fail("cache: expected ls, verify, prune or clear (see kilnc "
                "--help)",
                kExitUsage);
  std::string action = argv[2];
  if (isHelpFlag(action) || action == "help")
    return usage(0);
  std::optional<Args> args =
      parseArgs(argc, argv, 3, {"--cache", "--max-size"}, {});
  if (!args)
    return kExitUsage;
  if (args->has("--help"))
    return usage(0);
  if (!args->positional.empty())
    return fail("cache: unexpected argument '" + args->positional[0] + "'",
                kExitUsage);
  if (action != "ls" && action != "verify" && action != "prune" &&
      action != "clear")
    return fail("cache: unknown action '" + action +
                    "'; expected ls, verify, prune or clear",
                kExitUsage);
  bool readOnly = action == "ls";
  const std::string directory = cacheDirectory(*args);
  if (directory.empty())
    return fail("cache: --cache DIR (or KILN_CACHE_DIR) is required",
                kExitUsage);
  // A cache command reads a cache that exists: a mistyped path is not made
  // (and "0 entries checked" would hide the typo).
  struct stat st;
  if (::stat(directory.c_str(), &st) != 0)
    return fail("cache: no such cache directory " + directory + ": " +
                std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return fail("cache: " + directory + " is not a directory");
  auto options = cacheOptions(*args, readOnly, /*quiet=*/false);
  if (!options)
    return kExitUsage; // a bad --max-size, said
  runtime::PersistentCache cache(*options);
  if (!cache.enabled())
    return fail("cache: cannot use " + options->directory);
  if (action == "ls") {
    uint64_t total = 0;
    std::vector<runtime::CacheEntryInfo> entries = cache.list();
    for (const runtime::CacheEntryInfo &e : entries) {
      total += e.bytes;
      std::printf("%s  %10llu  %s  %s\n", e.key.c_str(),
                  static_cast<unsigned long long>(e.bytes),
                  e.headerError.empty() ? e.compilerVersion.c_str()
                                        : ("BAD: " + e.headerError).c_str(),
                  e.target.substr(0, e.target.find(' ')).c_str());
    }
    std::printf("%zu entries, %llu bytes\n", entries.size(),
                static_cast<unsigned long long>(total));
    return 0;
  }
  if (action == "verify") {
    size_t count = cache.list().size();
    auto bad = cache.verify(/*removeBad=*/true);
    for (const auto &[info, why] : bad)
      std::printf("kilnc: removed bad entry %s: %s\n", info.path.c_str(),
                  why.c_str());
    std::printf("%zu entries checked, %zu bad\n", count, bad.size());
    return bad.empty() ? 0 : kExitFailure;
  }
  if (action == "prune") {
    int64_t removed = cache.prune(options->maxBytes);
    std::printf("kilnc: pruned %lld files; the cache is under %llu bytes\n",
                static_cast<long long>(removed),
                static_cast<unsigned long long>(options->maxBytes));
    return 0;
  }
  absl::Status cleared = cache.clear(); // the one action left
  return cleared.ok() ? 0 : fail(std::string(cleared.message()));
}

} // namespace kiln::kilnc
