// Profiles of program runs: collection, the Chrome trace and the summary;
// see Profile.h. JSON is written by hand (the runtime links no JSON
// library): names are escaped, numbers printed in fixed notation.
#include "runtime/Profile.h"
#include "runtime/Executable.h"
#include "support/AtomicFile.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace kiln::runtime {
namespace {

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        absl::StrAppendFormat(&out, "\\u%04x", c);
      else
        out += c;
    }
  }
  return out + "\"";
}

std::string rate(double amount, double seconds, const char *unit,
                 double limit) {
  if (seconds <= 0 || amount <= 0)
    return "";
  double perSecond = amount / seconds;
  std::string text = absl::StrFormat("%.1f %s", perSecond / 1e9, unit);
  if (limit > 0)
    absl::StrAppendFormat(&text, " (%.0f%% of %.0f)", 100 * perSecond / limit,
                          limit / 1e9);
  return text;
}

/// The least time a thunk moving `bytes` and doing `flops` could take on a
/// device of `limits`: the bytes at full bandwidth or the products at the
/// peak of their type, whichever is longer; 0 where a limit it needs is
/// unknown.
double floorSeconds(double bytes, double flops, bool sixteenBit,
                    const DeviceLimits &limits) {
  double peak =
      sixteenBit ? limits.sixteenBitFlopsPerSecond : limits.flopsPerSecond;
  if (limits.bytesPerSecond <= 0 || (flops > 0 && peak <= 0))
    return 0;
  return std::max(bytes / limits.bytesPerSecond, flops > 0 ? flops / peak : 0);
}

/// The row of `rows` named `name`, appended (the rest default) if absent.
template <class Row>
Row &rowNamed(std::vector<Row> &rows, const std::string &name) {
  for (Row &row : rows)
    if (row.name == name)
      return row;
  rows.push_back({name});
  return rows.back();
}

} // namespace

void Profiler::add(RunProfile run, double wallStartUs) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!epochUs_)
    epochUs_ = wallStartUs;
  run.startUs = wallStartUs - *epochUs_;
  ++runs_;
  auto program = std::find_if(
      programs_.begin(), programs_.end(),
      [&](const ProgramTotals &p) { return p.program == run.program; });
  if (program == programs_.end()) {
    programs_.push_back({run.program, run.device, run.limits});
    program = std::prev(programs_.end());
  }
  if (program->runs++ > 0) {
    program->runsUs += run.durationUs;
    for (const ThunkEvent &e : run.events) {
      auto [row, fresh] =
          program->rowOf.try_emplace(e.name, program->thunks.size());
      if (fresh)
        program->thunks.push_back({e.name, e.category, e.sixteenBit});
      Totals &t = program->thunks[row->second];
      t.us += e.durationUs;
      t.bytes += static_cast<double>(e.bytes);
      t.flops += e.flops;
      ++t.calls;
      program->thunksUs += e.durationUs;
    }
  }
  if (kept_.size() < maxTraceRuns)
    kept_.push_back(std::move(run));
}

size_t Profiler::runs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runs_;
}

absl::Status Profiler::writeChromeTrace(const std::string &path) const {
  // Atomically: a full disk left a truncated trace.json that Perfetto then
  // failed to parse; now a failed write leaves no file (or the old one).
  absl::Status written = writeFileAtomically(path, chromeTrace());
  if (!written.ok())
    return absl::UnavailableError(absl::StrCat("cannot write the trace to '",
                                               path, "': ", written.message()));
  return absl::OkStatus();
}

std::string Profiler::chromeTrace() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  std::map<std::string, int> pids;
  std::map<std::pair<int, int>, bool> tracks;
  bool firstEvent = true;
  auto append = [&](const std::string &event) {
    absl::StrAppend(&out, firstEvent ? "" : ",\n", event);
    firstEvent = false;
  };
  for (const RunProfile &run : kept_) {
    auto [it, fresh] = pids.try_emplace(run.device, pids.size() + 1);
    int pid = it->second;
    if (fresh)
      append(absl::StrFormat("{\"name\": \"process_name\", \"ph\": \"M\", "
                             "\"pid\": %d, \"args\": {\"name\": %s}}",
                             pid, jsonString("kiln " + run.device)));
    if (!tracks[{pid, run.stream}]) {
      tracks[{pid, run.stream}] = true;
      append(absl::StrFormat(
          "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": "
          "%d, \"args\": {\"name\": %s}}",
          pid, run.stream,
          jsonString(absl::StrCat("stream ", run.stream))));
    }
    for (const ThunkEvent &e : run.events)
      append(absl::StrFormat(
          "{\"name\": %s, \"cat\": %s, \"ph\": \"X\", \"pid\": %d, \"tid\": "
          "%d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"thunk\": %u, "
          "\"bytes\": %u, \"flops\": %.0f}}",
          jsonString(e.name), jsonString(e.category), pid, run.stream,
          run.startUs + e.startUs, e.durationUs, e.thunk, e.bytes, e.flops));
  }
  return out + "\n]}\n";
}

std::string Profiler::summary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const ProgramTotals *> order;
  for (const ProgramTotals &p : programs_)
    if (p.runs > 1)
      order.push_back(&p);
  if (order.empty())
    return "kiln profile: no program ran more than once; nothing to "
           "summarise (each program's first run is left out)\n";
  std::sort(order.begin(), order.end(),
            [](const ProgramTotals *a, const ProgramTotals *b) {
              return a->runsUs > b->runsUs;
            });
  constexpr size_t kPrograms = 3, kRows = 25;
  std::string out;
  for (size_t p = 0; p < order.size() && p < kPrograms; ++p) {
    const ProgramTotals &program = *order[p];
    const DeviceLimits &limits = program.limits;
    double runs = static_cast<double>(program.runs - 1);
    absl::StrAppendFormat(
        &out,
        "kiln profile: %s program %d of %d: %.0f runs (its first left out), "
        "%.3f ms a run; its thunks account for %.1f%% of it\n",
        program.device, p + 1, order.size(), runs,
        program.runsUs / runs / 1e3,
        program.runsUs > 0 ? 100 * program.thunksUs / program.runsUs : 0.0);
    std::vector<Totals> rows = program.thunks;
    std::sort(rows.begin(), rows.end(),
              [](const Totals &a, const Totals &b) { return a.us > b.us; });
    out += kindsTable(program, rows);
    absl::StrAppendFormat(&out, "%7s %10s %6s  %-24s %s\n", "share",
                          "ms/run", "calls", "achieved", "thunk");
    double rest = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Totals &t = rows[r];
      if (r >= kRows) {
        rest += t.us;
        continue;
      }
      double seconds = t.us / 1e6;
      std::string achieved =
          t.flops > 0
              ? rate(t.flops, seconds, "GFLOP/s",
                     t.sixteenBit ? limits.sixteenBitFlopsPerSecond
                                  : limits.flopsPerSecond)
              : rate(t.bytes, seconds, "GB/s", limits.bytesPerSecond);
      absl::StrAppendFormat(&out, "%6.1f%% %10.3f %6.0f  %-24s %s\n",
                            100 * t.us / program.runsUs, t.us / runs / 1e3,
                            t.calls / runs, achieved, t.name);
    }
    if (rest > 0)
      absl::StrAppendFormat(&out, "%6.1f%% %10.3f %6s  %-24s (%d more thunks)\n",
                            100 * rest / program.runsUs, rest / runs / 1e3, "",
                            "", rows.size() - kRows);
  }
  return out;
}

std::string Profiler::kindsTable(const ProgramTotals &program,
                                 const std::vector<Totals> &rows) {
  // Per kind (gemm, kernel, attention, copy), in order of time: where the
  // run goes, and how far each kind is from what its bytes and products
  // would take at the device's limits (the step's floor, kind by kind).
  struct Kind {
    std::string name;
    double us = 0, floorSeconds = 0;
    int64_t calls = 0;
  };
  std::vector<Kind> kinds;
  bool floorKnown = program.limits.bytesPerSecond > 0;
  for (const Totals &t : rows) {
    Kind &kind = rowNamed(kinds, t.category);
    kind.us += t.us;
    kind.calls += t.calls;
    kind.floorSeconds +=
        floorSeconds(t.bytes, t.flops, t.sixteenBit, program.limits);
  }
  std::sort(kinds.begin(), kinds.end(),
            [](const Kind &a, const Kind &b) { return a.us > b.us; });
  const double runs = static_cast<double>(program.runs - 1);
  std::string out = absl::StrFormat("%7s %10s %6s  %-24s %s\n", "share",
                                    "ms/run", "calls", "at the limits", "kind");
  for (const Kind &k : kinds)
    absl::StrAppendFormat(
        &out, "%6.1f%% %10.3f %6.0f  %-24s %s\n", 100 * k.us / program.runsUs,
        k.us / runs / 1e3, k.calls / runs,
        floorKnown ? absl::StrFormat("%.3f ms/run", k.floorSeconds * 1e3 / runs)
                   : std::string("-"),
        k.name);
  return out;
}

namespace {

ThunkEvent describeThunk(const Executable &executable, size_t index) {
  const Thunk &t = executable.thunks[index];
  const auto &slots = executable.plan.slots;
  ThunkEvent e;
  e.thunk = static_cast<uint32_t>(index);
  switch (t.kind) {
  case Thunk::Kind::kernel:
    e.category = "kernel";
    e.name = t.kernel.label.empty() ? t.kernel.symbol : t.kernel.label;
    for (uint32_t slot : t.kernel.slots)
      e.bytes += slots[slot].bytes;
    break;
  case Thunk::Kind::gemm: {
    const GemmThunk &g = t.gemm;
    e.category = "gemm";
    e.name = absl::StrCat("gemm ", g.m, "x", g.n, "x", g.k,
                          g.batch > 1 ? absl::StrCat(" (batch ", g.batch, ")")
                                      : std::string(),
                          g.input == GemmType::f32
                              ? std::string()
                              : absl::StrCat(" ", std::string(gemmTypeName(g.input)),
                                             "→", std::string(gemmTypeName(g.output))),
                          g.accumulates() ? " +=" : "");
    // What the product reads and writes, not its slots' size: a viewed
    // operand's slot holds more than the GEMM reads.
    uint64_t in = gemmTypeBytes(g.input), products = g.batch * g.m * g.n;
    e.bytes = in * g.batch * g.k * (g.m + g.n) +
              products * gemmTypeBytes(g.output) +
              (g.accumulates() ? products * 4 : 0);
    // A viewed C's accumulator in a slot of its own is copied first.
    if (!g.cView.packed() &&
        !sameBuffer(executable.plan, g.accumulator, g.c))
      e.bytes += 2 * uint64_t(g.cElements()) * 4;
    e.flops = 2.0 * g.batch * g.m * g.n * g.k;
    e.sixteenBit = g.input != GemmType::f32;
    break;
  }
  case Thunk::Kind::copy:
    e.category = "copy";
    e.name = "copy";
    e.bytes = 2 * t.copy.bytes;
    break;
  case Thunk::Kind::attention:
    e.category = "attention";
    e.name = t.attention.label();
    for (uint32_t slot : t.attention.readSlots())
      e.bytes += slots[slot].bytes;
    for (uint32_t slot : t.attention.writtenSlots())
      e.bytes += slots[slot].bytes;
    e.flops = t.attention.flops();
    e.sixteenBit = true;
    break;
  case Thunk::Kind::allReduce:
    e.category = "all_reduce";
    e.name = absl::StrCat("all_reduce ", t.allReduce.count, " ",
                          std::string(dtypeName(t.allReduce.element)));
    e.bytes = 2 * t.allReduce.bytes();
    break;
  }
  return e;
}

} // namespace

std::vector<ThunkEvent> describeThunks(const Executable &executable) {
  std::vector<ThunkEvent> events;
  events.reserve(executable.thunks.size());
  for (size_t i = 0; i < executable.thunks.size(); ++i)
    events.push_back(describeThunk(executable, i));
  return events;
}

std::string floorTable(const std::vector<ThunkEvent> &events,
                       const DeviceLimits &limits) {
  struct Kind {
    std::string name;
    int64_t calls = 0;
    double bytes = 0, flops = 0, seconds = 0;
  };
  std::vector<Kind> kinds;
  Kind all{"all"};
  for (const ThunkEvent &e : events) {
    double seconds = floorSeconds(static_cast<double>(e.bytes), e.flops,
                                  e.sixteenBit, limits);
    for (Kind *k : {&rowNamed(kinds, e.category), &all}) {
      ++k->calls;
      k->bytes += static_cast<double>(e.bytes);
      k->flops += e.flops;
      k->seconds += seconds;
    }
  }
  std::sort(kinds.begin(), kinds.end(),
            [](const Kind &a, const Kind &b) { return a.seconds > b.seconds; });
  kinds.push_back(all);
  std::string out = absl::StrFormat("%-10s %6s %12s %12s %12s\n", "kind",
                                    "calls", "GB", "TFLOP", "floor (ms)");
  for (const Kind &k : kinds)
    absl::StrAppendFormat(&out, "%-10s %6d %12.3f %12.3f %12.3f\n", k.name,
                          k.calls, k.bytes / 1e9, k.flops / 1e12,
                          k.seconds * 1e3);
  return out;
}

DeviceLimits deviceLimits(const std::string &deviceName) {
  // Dense peaks from NVIDIA's data sheets (SXM parts): HBM bandwidth, f32
  // on CUDA cores, bf16/f16 on tensor cores (without sparsity).
  if (deviceName.find("H100") != std::string::npos)
    return {3.35e12, 67e12, 989e12};
  if (deviceName.find("H200") != std::string::npos)
    return {4.8e12, 67e12, 989e12};
  if (deviceName.find("A100") != std::string::npos)
    return {2.0e12, 19.5e12, 312e12};
  return {};
}

} // namespace kiln::runtime
