// The frontend's side of profiling (Options::profilePath, KILN_PROFILE):
// every program run goes through runCounted, which turns profiling on in
// the program and hands its thunks' times to one process-wide
// runtime::Profiler; at exit the trace is written and the summary printed.
#include "frontends/lazy/Node.h"
#include "frontends/lazy/Step.h"

#include "runtime/Profile.h"

#include <chrono>
#include <cstdio>

namespace kiln {
namespace {

/// The profiler, and what it does at exit when any run was profiled.
struct Session {
  runtime::Profiler profiler;
  bool used = false;
  ~Session() {
    if (!used || options().profilePath.empty())
      return;
    // The summary is printed whether or not the trace can be written: a
    // full disk or a mistyped folder loses the file, not the figures.
    std::fprintf(stderr, "%s", profile::summary().c_str());
    try {
      profile::write();
      std::fprintf(stderr, "wrote the trace to %s\n",
                   options().profilePath.c_str());
    } catch (const Error &e) {
      std::fprintf(stderr, "kiln: warning: KILN_PROFILE: %s\n", e.what());
    }
  }
};

Session &session() {
  static Session s;
  return s;
}

double steadyMicroseconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t.time_since_epoch())
      .count();
}

} // namespace

namespace lazy {

void profileRun(runtime::Program &program,
                std::chrono::steady_clock::time_point start) {
  if (std::optional<runtime::RunProfile> run = program.takeProfile()) {
    session().used = true;
    session().profiler.add(std::move(*run), steadyMicroseconds(start));
  }
}

} // namespace lazy

namespace profile {

std::string trace() { return session().profiler.chromeTrace(); }

std::string summary() {
  return session().profiler.summary();
}

void write() {
  absl::Status written =
      session().profiler.writeChromeTrace(options().profilePath);
  if (!written.ok())
    throw Error(std::string(written.message()));
}

} // namespace profile

} // namespace kiln
