// Per-thunk profiles of program runs, whatever the backend: each run's
// thunks with their start, duration, bytes and floating-point work, turned
// into a Chrome / Perfetto trace (one track per device stream) and a
// summary (share of the step, achieved GB/s or GFLOP/s per thunk, against
// the device's limits when they are known). A program fills a RunProfile
// when profiling is on (Program::setProfiling); the CPU program times
// thunks with the wall clock, the CUDA program with events on its stream.
#ifndef KILN_RUNTIME_PROFILE_H
#define KILN_RUNTIME_PROFILE_H

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::runtime {

/// One thunk of one run.
struct ThunkEvent {
  /// The thunk's index in its program and a name for people: a kernel's
  /// label, "gemm MxNxK" (with its batch), "copy".
  uint32_t thunk = 0;
  std::string name;
  /// "kernel", "gemm" or "copy".
  std::string category;
  /// Microseconds from the run's start, and the thunk's duration.
  double startUs = 0, durationUs = 0;
  /// Bytes the thunk reads and writes, and its floating-point operations.
  uint64_t bytes = 0;
  double flops = 0;
  /// A GEMM on 16-bit inputs: measured against the tensor cores' peak.
  bool sixteenBit = false;
};

/// What a device can do at best, for the summary's "of limit" column
/// (0: unknown): bandwidth, f32 products, 16-bit products (dense).
struct DeviceLimits {
  double bytesPerSecond = 0;
  double flopsPerSecond = 0;
  double sixteenBitFlopsPerSecond = 0;
};

/// The thunks of one run of one program.
struct RunProfile {
  /// Which program ran (any identity stable for the program's life: the
  /// summary skips each program's first run).
  uint64_t program = 0;
  /// The device ("cpu", "cuda") and the stream the thunks ran on.
  std::string device;
  int stream = 0;
  /// The device's limits, where known (deviceLimits below).
  DeviceLimits limits;
  /// The run's wall-clock start (microseconds since the profiler's epoch,
  /// set by Profiler::add) and its duration from first thunk start to last
  /// thunk end as the device measured it.
  double startUs = 0, durationUs = 0;
  std::vector<ThunkEvent> events;
};

/// Collects runs (thread-safe) and formats them.
class Profiler {
public:
  /// Keeps `run` (at most `maxTraceRuns` of them in the trace; every run
  /// counts in the summary). `wallStartUs`: when the run started, on the
  /// host's steady clock in microseconds.
  void add(RunProfile run, double wallStartUs);

  /// The kept runs as Chrome trace JSON ({"traceEvents": [...]}): one
  /// complete event ("ph": "X") per thunk, a process per device and a
  /// thread (track) per stream, named by metadata events.
  std::string chromeTrace() const;
  /// chromeTrace() written to `path` atomically (a failed write leaves no
  /// partial file: support/AtomicFile.h), or why it could not.
  absl::Status writeChromeTrace(const std::string &path) const;

  /// Per program (the ones that took the most time first) and per thunk
  /// name, over every run but the program's first (which warms caches and
  /// allocates): time per run, its share of the run, calls per run, and
  /// achieved GB/s or GFLOP/s (with the share of the device's limits,
  /// where known); before it, the same per kind of thunk (gemm, kernel,
  /// attention, copy) with the time the kind's bytes and products would
  /// take at the device's limits; and the share of the runs' time the
  /// thunks account for.
  std::string summary() const;

  /// Runs added so far.
  size_t runs() const;

  static constexpr size_t maxTraceRuns = 64;

private:
  mutable std::mutex mutex_;
  std::vector<RunProfile> kept_;
  /// Aggregates for the summary: per program, per thunk name.
  struct Totals {
    std::string name, category;
    bool sixteenBit = false;
    double us = 0, bytes = 0, flops = 0;
    int64_t calls = 0;
  };
  struct ProgramTotals {
    uint64_t program = 0;
    std::string device;
    DeviceLimits limits;
    /// Runs seen (the first is not counted below), counted runs' time.
    size_t runs = 0;
    double runsUs = 0, thunksUs = 0;
    std::vector<Totals> thunks;
    /// Thunk name → its row in `thunks`.
    absl::flat_hash_map<std::string, size_t> rowOf;
  };
  std::vector<ProgramTotals> programs_;
  /// The summary's table of thunk kinds for `program` (`rows`: its
  /// thunks): time, share, calls and the time at the device's limits.
  static std::string kindsTable(const ProgramTotals &program,
                                const std::vector<Totals> &rows);
  size_t runs_ = 0;
  std::optional<double> epochUs_;
};

struct Executable;

/// Every thunk of `executable` as an event without times: its name,
/// category, bytes moved and floating-point work (a program makes these
/// once and copies them into each profiled run).
std::vector<ThunkEvent> describeThunks(const Executable &executable);

/// Per kind of thunk (the most expensive first, then "all"): calls, bytes,
/// floating-point work and the least time they could take at `limits`
/// (each thunk's bytes at full bandwidth or its products at the peak,
/// whichever is longer; no launch costs): a step's floor from its plan
/// alone, before any run (`kilnc compile --print-floor`).
std::string floorTable(const std::vector<ThunkEvent> &events,
                       const DeviceLimits &limits);

/// The best-known limits of a device by name ("H100", ...); zeros when
/// unknown (the CPU: its limits depend on the machine).
DeviceLimits deviceLimits(const std::string &deviceName);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_PROFILE_H
