#include "support/CollectiveTimeout.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace kiln {

namespace {

using Clock = std::chrono::steady_clock;

/// What the watchdog watches: the collective in flight, if any. Allocated
/// once and never freed, so that the detached watchdog thread never waits
/// on a destroyed mutex while the process exits.
struct Watch {
  std::mutex mutex;
  std::condition_variable changed;
  CollectiveTimeout timeout;
  bool watchdogRunning = false;
  // The collective in flight (inFlight), described only when it times out.
  bool inFlight = false;
  uint64_t started = 0; // collectives begun in this process
  Clock::time_point deadline;
  const char *kind = "";
  int64_t count = 0;
  DType type = DType::f32;
  int rank = 0, size = 1;
};

Watch &watch() {
  static Watch *state = new Watch;
  return *state;
}

[[noreturn]] void reportAndExit(const Watch &w) {
  std::string what = w.kind;
  if (w.count > 0)
    absl::StrAppend(&what, " of ", w.count, " ", std::string(dtypeName(w.type)),
                    w.count == 1 ? " element" : " elements");
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "kiln: rank %d of %d waited %s for the other processes in a %s (its "
      "collective number %llu) and ends the run: the collective timeout is "
      "%s (%s). A process that stopped or took another path (a data file "
      "that differs between machines, a stopped debugger) leaves the others "
      "waiting; if a process's work between collectives (compiling, "
      "saving, evaluating) can take longer, raise the timeout.\n",
      w.rank, w.size, absl::FormatDuration(w.timeout.limit).c_str(),
      what.c_str(), (unsigned long long)w.started,
      absl::FormatDuration(w.timeout.limit).c_str(), w.timeout.source.c_str());
  std::fflush(stderr);
  // Not exit(): the main thread is inside the collective, and the
  // process's destructors and MPI's atexit finalization would wait on it.
  std::_Exit(1);
}

void runWatchdog() {
  Watch &w = watch();
  std::unique_lock<std::mutex> lock(w.mutex);
  for (;;) {
    if (!w.inFlight) {
      w.changed.wait(lock);
      continue;
    }
    const uint64_t watched = w.started;
    const bool ended = w.changed.wait_until(
        lock, w.deadline, [&] { return !w.inFlight || w.started != watched; });
    if (!ended)
      reportAndExit(w);
  }
}

/// Marks one collective in flight for its lifetime.
class InFlight {
public:
  InFlight(const char *kind, int64_t count, DType type,
           const Communicator &world) {
    Watch &w = watch();
    std::lock_guard<std::mutex> lock(w.mutex);
    ++w.started;
    w.inFlight = true;
    w.deadline = Clock::now() + absl::ToChronoNanoseconds(w.timeout.limit);
    w.kind = kind;
    w.count = count;
    w.type = type;
    w.rank = world.rank();
    w.size = world.size();
    if (!w.watchdogRunning) {
      w.watchdogRunning = true;
      std::thread(runWatchdog).detach();
    }
    w.changed.notify_all();
  }
  ~InFlight() {
    Watch &w = watch();
    std::lock_guard<std::mutex> lock(w.mutex);
    w.inFlight = false;
    w.changed.notify_all();
  }
  InFlight(const InFlight &) = delete;
  InFlight &operator=(const InFlight &) = delete;
};

class TimedCommunicator final : public Communicator {
public:
  explicit TimedCommunicator(Communicator &inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  absl::Status allReduceSum(void *data, int64_t count, DType type) override {
    InFlight watched("sum", count, type, inner_);
    return inner_.allReduceSum(data, count, type);
  }
  absl::Status barrier() override {
    InFlight watched("barrier", 0, DType::f32, inner_);
    return inner_.barrier();
  }
  void abort(int exitCode) override { inner_.abort(exitCode); }

private:
  Communicator &inner_;
};

} // namespace

void setCollectiveTimeout(CollectiveTimeout timeout) {
  Watch &w = watch();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.timeout = std::move(timeout);
}

CollectiveTimeout collectiveTimeout() {
  Watch &w = watch();
  std::lock_guard<std::mutex> lock(w.mutex);
  return w.timeout;
}

absl::StatusOr<absl::Duration> parseTimeoutSeconds(std::string_view text,
                                                   std::string_view name) {
  int64_t seconds = 0;
  // A year bounds it far above any real wait and far below overflow.
  if (!absl::SimpleAtoi(std::string(text), &seconds) || seconds < 1 ||
      seconds > 366 * 24 * 3600)
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(name),
                     " takes the collective timeout in whole seconds "
                     "(1 to 31622400; the Trainer's default is 1800), "
                     "got '",
                     std::string(text), "'"));
  return absl::Seconds(seconds);
}

std::unique_ptr<Communicator> withCollectiveTimeout(Communicator &inner) {
  return std::make_unique<TimedCommunicator>(inner);
}

} // namespace kiln
