// What kilnc's subcommands share: a small flag parser (subcommands take
// different flags, which llvm::cl's global registry handles poorly), byte
// sizes with suffixes, messages, and opening the cache a command names.
#ifndef KILN_COMPILER_TOOLS_KILNCCOMMON_H
#define KILN_COMPILER_TOOLS_KILNCCOMMON_H

#include "compiler/CacheKey.h"
#include "runtime/PersistentCache.h"
#include "support/ByteSize.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::kilnc {

/// Exit codes: 1 a failure, 2 a usage error, 3 compiled but not cached.
inline constexpr int kExitFailure = 1, kExitUsage = 2, kExitNotCached = 3;

/// A subcommand's command line: positionals and `--flag value` / `--flag`.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::set<std::string> switches;

  bool has(const std::string &flag) const {
    return values.count(flag) || switches.count(flag);
  }
  std::string get(const std::string &flag, std::string fallback = "") const {
    auto it = values.find(flag);
    return it == values.end() ? fallback : it->second;
  }
};

/// argv[first..] → Args; flags not in `valued` or `boolean` and missing
/// values are errors (message printed, nullopt returned).
std::optional<Args> parseArgs(int argc, char **argv, int first,
                              const std::set<std::string> &valued,
                              const std::set<std::string> &boolean);

/// "--help" or "-h".
inline bool isHelpFlag(const std::string &arg) {
  return arg == "--help" || arg == "-h";
}

/// Prints kilnc's usage (to stdout for code 0, else stderr); returns `code`.
int usage(int code);

/// --memory_budget / --memory-budget (the first given) → bytes; 0 when
/// absent; nullopt (after a usage message) when not a positive byte count.
std::optional<uint64_t> memoryBudgetFlag(const Args &args);
/// Prints "kilnc: error: <message>" and returns kExitFailure.
int fail(const std::string &message, int code = kExitFailure);

/// The cache directory a command names: --cache, else $KILN_CACHE_DIR, else
/// "" (none).
std::string cacheDirectory(const Args &args);

/// The cache cacheDirectory() names, with cap --max-size; misses and
/// warnings go to stderr unless `quiet`. nullopt when there is no
/// directory, or (with a message printed) a bad --max-size.
std::optional<runtime::PersistentCacheOptions>
cacheOptions(const Args &args, bool readOnly, bool quiet);

/// The flags that choose what code is generated for, shared by compile
/// and precompile (which passes them on to its workers).
inline const std::set<std::string> kTargetFlags = {"--backend", "--cuda_arch",
                                                   "--cuda-arch"};
inline const std::set<std::string> kTargetSwitches = {"--tf32", "--bf16",
                                                      "--fp16"};

/// --backend cpu|cuda, --cuda_arch sm_80|sm_90 (or --cuda-arch), --tf32,
/// --bf16 or --fp16 →
/// `options`; a bad value prints a message and returns false.
bool parseTargetFlags(const Args &args, compiler::KeyOptions &options);

/// The target flags given in `args`, as command-line words to pass on.
std::vector<std::string> targetFlagWords(const Args &args);

int runCompile(int argc, char **argv);
int runPrecompile(int argc, char **argv);
int runCache(int argc, char **argv);
int runPlan(int argc, char **argv);

} // namespace kiln::kilnc

#endif // KILN_COMPILER_TOOLS_KILNCCOMMON_H
