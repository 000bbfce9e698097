// The frontend's edges: options (the environment is read here, once, by
// options_from_env(), and nowhere else) and the metrics that step() counts,
// with their readable report.
#include "frontends/lazy/Eager.h"
#include "frontends/lazy/Step.h"
#include "runtime/CpuExecutor.h"
#include "runtime/DeviceMemoryMeter.h"
#include "support/EnvironmentSwitch.h"

#include <cstdio>
#include <cstdlib>

namespace kiln {
namespace {
/// Idle output buffers of each size eager mode's shared pool keeps.
/// GPT-2 124M at batch 1, 3 eager steps on an AMD EPYC (2 cores): 1 idle
/// buffer 29.1 s and 4.72 GB of RSS, 2: 23.4 s and 4.76 GB, 4: 23.0 s and
/// 5.01 GB; a pool per program (one idle buffer per output) 25.6 s and
/// 5.95 GB; none 34.7 s and 4.68 GB.
constexpr int64_t kEagerIdleBuffersPerSize = 2;
} // namespace

//===--- Options ----------------------------------------------------------===//

static Options &currentOptions() {
  static Options current;
  return current;
}

static Backend parseBackendName(std::string_view name) {
  absl::StatusOr<compiler::Backend> parsed = compiler::parseBackend(name);
  if (!parsed.ok())
    throw Error("set_backend: " + std::string(parsed.status().message()));
  switch (*parsed) {
  case compiler::Backend::cpu: return Backend::cpu;
  case compiler::Backend::cuda: return Backend::cuda;
  case compiler::Backend::reference: break;
  }
  return Backend::reference;
}

std::string_view backendName(Backend backend) {
  switch (backend) {
  case Backend::reference: return "reference";
  case Backend::cpu: return "cpu";
  case Backend::cuda: return "cuda";
  }
  return "?";
}

/// A KILN_* switch: 1/0, true/false, yes/no, on/off (any case); unset or
/// empty → `unset`. Anything else is an error: KILN_BF16=true quietly
/// training in f32 would cost a run.
static bool environmentSwitch(const char *name, bool unset) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return unset;
  if (std::optional<bool> on = switchValue(env))
    return *on;
  throw Error(std::string(name) + " must be " + kSwitchValues + ", not '" +
              env + "'");
}

Options options_from_env() {
  Options result;
  if (const char *backend = std::getenv("KILN_BACKEND"))
    result.backend = parseBackendName(backend);
  if (const char *arch = std::getenv("KILN_CUDA_ARCH"))
    result.cudaArch = arch;
  result.tf32 = environmentSwitch("KILN_TF32", result.tf32);
  bool bf16 = environmentSwitch("KILN_BF16", false);
  bool fp16 = environmentSwitch("KILN_FP16", false);
  if (bf16 && fp16)
    throw Error("KILN_BF16=1 and KILN_FP16=1 ask for two mixed precisions; "
                "set one");
  result.productType = bf16 ? DType::bf16 : fp16 ? DType::f16 : DType::f32;
  if (const char *dump = std::getenv("KILN_DUMP_DIR"))
    result.passDumpDir = dump;
  if (const char *dump = std::getenv("KILN_DUMP_GRAPHS"))
    result.dumpDir = dump;
  if (const char *cache = std::getenv("KILN_CACHE_DIR"))
    result.cacheDir = cache;
  result.cacheReadOnly =
      environmentSwitch("KILN_CACHE_READONLY", result.cacheReadOnly);
  if (const char *mode = std::getenv("KILN_MODE"))
    result.mode = lazy::eager::parseMode(mode);
  result.poisonDeadBuffers =
      environmentSwitch("KILN_POISON_DEAD_BUFFERS", result.poisonDeadBuffers);
  result.partition = environmentSwitch("KILN_PARTITION", result.partition);
  if (const char *profile = std::getenv("KILN_PROFILE"))
    result.profilePath = profile;
  result.checkNumerics =
      environmentSwitch("KILN_CHECK_NUMERICS", result.checkNumerics);
  return result;
}

void set_options(const Options &options) {
  if (options.mode != currentOptions().mode)
    step(); // in the old mode: nothing pending crosses over
  bool reload = options.poisonDeadBuffers != currentOptions().poisonDeadBuffers;
  currentOptions() = options;
  // The CPU runtime's options apply when a program loads: programs loaded
  // with the old ones are dropped so the next step reloads them.
  runtime::CpuRuntimeOptions runtimeOptions =
      runtime::defaultCpuRuntimeOptions();
  runtimeOptions.poisonDeadBuffers = options.poisonDeadBuffers;
  // Eager mode loads a program per op signature (hundreds): they share one
  // pool of output storage, two idle buffers of each size at most.
  static const std::shared_ptr<BufferPool> eagerOutputs = [] {
    std::shared_ptr<BufferPool> pool = BufferPool::create();
    pool->setIdleLimitPerCapacity(kEagerIdleBuffersPerSize);
    return pool;
  }();
  runtimeOptions.outputPool =
      options.mode == Mode::eager ? eagerOutputs : nullptr;
  runtime::setDefaultCpuRuntimeOptions(runtimeOptions);
  if (reload)
    clear_graph_cache();
}
const Options &options() { return currentOptions(); }
void set_backend(Backend backend) { currentOptions().backend = backend; }

void check_backend_available(Backend backend) {
  absl::Status s = compiler::backendAvailable(lazy::compilerBackend(backend));
  if (!s.ok())
    throw Error(std::string(s.message()));
}
void set_backend(std::string_view name) { set_backend(parseBackendName(name)); }

//===--- Metrics ----------------------------------------------------------===//

namespace lazy {
metrics::Counters &mutableCounters() {
  // Never destroyed: buffers released during exit still update liveBytes.
  static auto *counters = new metrics::Counters;
  return *counters;
}
} // namespace lazy

namespace metrics {

const Counters &counters() {
  Counters &c = lazy::mutableCounters();
  runtime::DeviceMemoryMeter::Stats device =
      runtime::DeviceMemoryMeter::process().stats();
  c.deviceBytes = static_cast<int64_t>(device.inUseBytes);
  c.peakDeviceBytes = static_cast<int64_t>(device.peakBytes);
  c.deviceLimitBytes = static_cast<int64_t>(device.limitBytes);
  return c;
}

void reset() {
  int64_t live = lazy::mutableCounters().liveBytes; // buffers still held
  lazy::mutableCounters() = Counters();
  lazy::mutableCounters().liveBytes = lazy::mutableCounters().peakLiveBytes =
      live;
  runtime::DeviceMemoryMeter::process().resetPeak();
}

std::string report() {
  const Counters &c = counters();
  char line[512];
  std::string text = "kiln metrics\n";
  auto add = [&](const char *format, auto... args) {
    std::snprintf(line, sizeof line, format, args...);
    text += line;
  };
  add("  graphs traced:  %lld\n", static_cast<long long>(c.graphsTraced));
  add("  compiles:       %lld (%.1f ms)\n", static_cast<long long>(c.compiles),
      c.compileMilliseconds);
  add("  cache hits:     %lld\n", static_cast<long long>(c.cacheHits));
  if (c.persistentHits || c.persistentMisses) {
    add("  persistent cache: %lld hits (%.1f ms to load), %lld misses",
        static_cast<long long>(c.persistentHits), c.persistentLoadMilliseconds,
        static_cast<long long>(c.persistentMisses));
    for (const auto &[reason, count] : c.persistentMissReasons)
      add("%s%s: %lld", reason == c.persistentMissReasons.begin()->first
                             ? " (" : ", ",
          reason.c_str(), static_cast<long long>(count));
    text += c.persistentMissReasons.empty() ? "\n" : ")\n";
  }
  add("  graph building: %.1f ms (the graphs, their keys, the lookups)\n",
      c.graphMilliseconds);
  add("  execute:        %.1f ms\n", c.executeMilliseconds);
  add("  forced syncs:   %lld (to_host()/item() before step())\n",
      static_cast<long long>(c.forcedSyncs));
  add("  bytes in/out:   %lld / %lld\n", static_cast<long long>(c.bytesIn),
      static_cast<long long>(c.bytesOut));
  add("  runtime allocations: %lld (%lld bytes)\n",
      static_cast<long long>(c.runtimeAllocations),
      static_cast<long long>(c.runtimeAllocatedBytes));
  if (c.eagerKernelsCompiled || c.eagerExecutions)
    add("  eager kernels:  %lld compiled, %lld cache hits, %lld run "
        "(%lld recomputed)\n",
        static_cast<long long>(c.eagerKernelsCompiled),
        static_cast<long long>(c.eagerCacheHits),
        static_cast<long long>(c.eagerExecutions),
        static_cast<long long>(c.eagerRecomputes));
  add("  live bytes:     %lld (peak %lld)\n", static_cast<long long>(c.liveBytes),
      static_cast<long long>(c.peakLiveBytes));
  if (c.plannedPeakBytes)
    add("  planned peak:   %lld bytes (largest compiled graph)\n",
        static_cast<long long>(c.plannedPeakBytes));
  if (c.peakDeviceBytes || c.deviceLimitBytes)
    add("  device memory:  %lld bytes allocated (peak %lld, limit %s)\n",
        static_cast<long long>(c.deviceBytes),
        static_cast<long long>(c.peakDeviceBytes),
        c.deviceLimitBytes ? std::to_string(c.deviceLimitBytes).c_str()
                           : "none");
  for (size_t i = 0; i < c.compileLog.size(); ++i) {
    const CompileRecord &r = c.compileLog[i];
    add("  compile %zu: graph %016llx, %lld ops, %.1f ms: ", i + 1,
        static_cast<unsigned long long>(r.graphHash),
        static_cast<long long>(r.numOps), r.milliseconds);
    if (r.thunks)
      add("%lld thunks, planned peak %lld bytes; ",
          static_cast<long long>(r.thunks),
          static_cast<long long>(r.plannedPeakBytes));
    text += r.reason + "\n";
  }
  return text;
}

} // namespace metrics

} // namespace kiln
