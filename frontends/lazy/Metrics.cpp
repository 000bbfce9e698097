// The frontend's edges: options (the environment is read here, once, by
// options_from_env(), and nowhere else) and the metrics that step() counts,
// with their readable report.
#include "frontends/lazy/Step.h"

#include <cstdio>
#include <cstdlib>

namespace kiln {

//===--- Options ----------------------------------------------------------===//

static Options &currentOptions() {
  static Options current;
  return current;
}

static Backend parseBackendName(std::string_view name) {
  if (name == "reference")
    return Backend::reference;
  if (name == "cpu")
    return Backend::cpu;
  throw Error("set_backend: unknown backend '" + std::string(name) +
              "'; expected reference or cpu");
}

Options options_from_env() {
  Options result;
  if (const char *backend = std::getenv("KILN_BACKEND"))
    result.backend = parseBackendName(backend);
  if (const char *dump = std::getenv("KILN_DUMP_DIR"))
    result.dumpDir = dump;
  return result;
}

void set_options(const Options &options) { currentOptions() = options; }
const Options &options() { return currentOptions(); }
void set_backend(Backend backend) { currentOptions().backend = backend; }
void set_backend(std::string_view name) { set_backend(parseBackendName(name)); }

//===--- Metrics ----------------------------------------------------------===//

namespace lazy {
metrics::Counters &mutableCounters() {
  static metrics::Counters counters;
  return counters;
}
} // namespace lazy

namespace metrics {

const Counters &counters() { return lazy::mutableCounters(); }

void reset() { lazy::mutableCounters() = Counters(); }

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
  add("  execute:        %.1f ms\n", c.executeMilliseconds);
  add("  forced syncs:   %lld (to_host()/item() before step())\n",
      static_cast<long long>(c.forcedSyncs));
  add("  bytes in/out:   %lld / %lld\n", static_cast<long long>(c.bytesIn),
      static_cast<long long>(c.bytesOut));
  for (size_t i = 0; i < c.compileLog.size(); ++i) {
    const CompileRecord &r = c.compileLog[i];
    add("  compile %zu: graph %016llx, %lld ops, %.1f ms: ", i + 1,
        static_cast<unsigned long long>(r.graphHash),
        static_cast<long long>(r.numOps), r.milliseconds);
    text += r.reason + "\n";
  }
  return text;
}

} // namespace metrics

} // namespace kiln
