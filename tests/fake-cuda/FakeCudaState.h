// Internal to the fake CUDA driver (FakeCuda.h describes it): the state
// its entry points (FakeCudaDriver.cpp) and its control API
// (FakeCudaControl.cpp) share, and the helpers both use.
#ifndef KILN_TESTS_FAKE_CUDA_FAKECUDASTATE_H
#define KILN_TESTS_FAKE_CUDA_FAKECUDASTATE_H

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace kiln::fakecuda {

/// Work recorded into a captured graph: a kernel (runs nothing) or a
/// copy, memset or library call (runs `run`).
struct Op {
  std::function<void()> run;
  bool isKernel = false;
};
using OpList = std::vector<std::shared_ptr<Op>>;

struct FakeStream {
  bool capturing = false, invalidated = false;
  OpList captured;
};
struct FakeGraph {
  OpList ops;
};
struct FakeGraphExec {
  OpList ops;
};
struct FakeFunction {
  std::string name;
  /// From its `.entry name(.param ..., ...)` declaration; -1 if none.
  int paramCount = -1;
  /// Dynamic shared memory a launch may ask (cuFuncSetAttribute raises it).
  int maxDynamicShared = 48 * 1024;
};
struct FakeModule {
  std::string image;
  std::map<std::string, std::unique_ptr<FakeFunction>> functions;
};
struct FakeContext {
  int references = 0;
};
/// An event: the host time (ms, steady clock) at which the work before it
/// on its stream was done, once recorded and reached.
struct FakeEvent {
  bool timing = true, reached = false;
  double milliseconds = 0;
};

struct Launch {
  std::string name;
  unsigned gridX = 0, gridY = 0, blockX = 0, sharedBytes = 0;
  /// Each parameter's 8 bytes (kiln's kernels take pointers and an int64).
  std::vector<unsigned long long> params;
  bool captured = false;
};

struct Fault {
  int skip = 0;
  CUresult result = CUDA_SUCCESS;
};

constexpr int kMaxDevices = 8;
constexpr int kDriverVersion = 13000;

struct State {
  std::recursive_mutex mutex;
  // Configuration (fake_cuda_reset restores it).
  int deviceCount = 1, major = 9, minor = 0;
  unsigned long long totalMemory = 80ull << 30;
  std::map<std::string, Fault> faults;
  // Counters (cleared by fake_cuda_reset).
  std::map<std::string, int> calls;
  std::vector<Launch> launches;
  int allocationCount = 0, graphsInstantiated = 0, graphLaunches = 0,
      replayedKernels = 0;
  unsigned long long allocatedBytes = 0, toDevice = 0, toHost = 0;
  // Process state (kept across resets).
  bool initialized = false;
  std::map<std::string, int> requestedVersions;
  std::map<uintptr_t, size_t> allocations;
  unsigned long long liveBytes = 0;
  std::set<FakeStream *> streams;
  /// A capture begun by fake_cuda_begin_foreign_capture (in `streams`).
  FakeStream *foreignCapture = nullptr;
  std::set<FakeModule *> modules;
  std::set<FakeGraph *> graphs;
  std::set<FakeGraphExec *> execs;
  std::set<FakeEvent *> events;
  FakeContext contexts[kMaxDevices];
};

/// A new state, configured from the environment as a process that cannot
/// call the control API (a tool run by a lit test) configures it:
/// KILN_FAKE_CUDA_FAULTS="name:skip:result[,...]" arms fake_cuda_fail_call
/// per entry, KILN_FAKE_CUDA_TOTAL_MEMORY=bytes is
/// fake_cuda_set_total_memory. A malformed value aborts with a message: a
/// test that believes it injected a fault must not pass without one.
State *createState();

/// The one state of the library (never destroyed: programs may outlive
/// static destruction order).
/// CUDA_ERROR_X's name and description (FakeCudaErrors.cpp); null for a
/// code the fake does not know.
const char *errorName(CUresult error);
const char *errorText(CUresult error);

inline State &state() {
  static State *s = createState();
  return *s;
}

/// True when [pointer, pointer + bytes) lies inside one live allocation.
inline bool inAllocation(const State &s, CUdeviceptr pointer, size_t bytes) {
  if (bytes == 0)
    return true;
  auto it = s.allocations.upper_bound(static_cast<uintptr_t>(pointer));
  if (it == s.allocations.begin())
    return false;
  --it;
  uintptr_t offset = static_cast<uintptr_t>(pointer) - it->first;
  return offset < it->second && bytes <= it->second - offset;
}

/// The fake behind `stream` (null for the legacy stream); *ok is false for
/// a handle that is not a live stream.
inline FakeStream *knownStream(State &s, CUstream stream, bool *ok) {
  auto *fake = reinterpret_cast<FakeStream *>(stream);
  *ok = stream == nullptr || s.streams.count(fake) != 0;
  return stream == nullptr ? nullptr : fake;
}

/// Runs `op` now, or records it into the stream's capture.
inline CUresult submit(FakeStream *stream, std::shared_ptr<Op> op) {
  if (stream != nullptr && stream->capturing) {
    if (stream->invalidated)
      return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    stream->captured.push_back(std::move(op));
    return CUDA_SUCCESS;
  }
  if (!op->isKernel)
    op->run();
  return CUDA_SUCCESS;
}

inline std::shared_ptr<Op> makeOp(std::function<void()> run) {
  auto op = std::make_shared<Op>();
  op->run = std::move(run);
  return op;
}

} // namespace kiln::fakecuda

#endif // KILN_TESTS_FAKE_CUDA_FAKECUDASTATE_H
