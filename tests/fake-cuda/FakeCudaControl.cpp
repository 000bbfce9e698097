// The fake CUDA driver's control and introspection API (FakeCuda.h): what
// tests set before kiln loads a program and read after it ran.
#include "tests/fake-cuda/FakeCuda.h"
#include "tests/fake-cuda/FakeCudaState.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

using namespace kiln::fakecuda;

namespace {
[[noreturn]] void badEnvironment(const char *name, const std::string &value) {
  std::fprintf(stderr, "libkiln-fake-cuda: malformed %s='%s'\n", name,
               value.c_str());
  std::abort();
}
} // namespace

State *kiln::fakecuda::createState() {
  State *s = new State();
  if (const char *faults = std::getenv("KILN_FAKE_CUDA_FAULTS")) {
    std::stringstream list(faults);
    std::string entry;
    while (std::getline(list, entry, ',')) {
      std::string name;
      Fault fault;
      int result = 0;
      std::stringstream fields(entry);
      char colon = 0;
      if (!std::getline(fields, name, ':') || name.empty() ||
          !(fields >> fault.skip >> colon >> result) || colon != ':' ||
          fault.skip < 0 || !fields.eof())
        badEnvironment("KILN_FAKE_CUDA_FAULTS", faults);
      fault.result = static_cast<CUresult>(result);
      s->faults[name] = fault;
    }
  }
  if (const char *memory = std::getenv("KILN_FAKE_CUDA_TOTAL_MEMORY")) {
    char *end = nullptr;
    unsigned long long bytes = std::strtoull(memory, &end, 10);
    if (end == memory || *end != '\0')
      badEnvironment("KILN_FAKE_CUDA_TOTAL_MEMORY", memory);
    s->totalMemory = bytes;
  }
  return s;
}

namespace {
template <typename T> T locked(T (*read)(State &)) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  return read(state());
}
const Launch *launchAt(State &s, int i) {
  return i >= 0 && size_t(i) < s.launches.size() ? &s.launches[i] : nullptr;
}
} // namespace

FAKE_EXPORT void fake_cuda_reset(void) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  State &s = state();
  s.deviceCount = 1;
  s.major = 9;
  s.minor = 0;
  s.totalMemory = 80ull << 30;
  s.faults.clear();
  s.calls.clear();
  s.launches.clear();
  s.allocationCount = s.graphsInstantiated = s.graphLaunches =
      s.replayedKernels = 0;
  s.allocatedBytes = s.toDevice = s.toHost = 0;
}

FAKE_EXPORT void fake_cuda_set_device_count(int count) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().deviceCount = count;
}

FAKE_EXPORT void fake_cuda_set_compute_capability(int major, int minor) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().major = major;
  state().minor = minor;
}

FAKE_EXPORT void fake_cuda_set_total_memory(unsigned long long bytes) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().totalMemory = bytes;
}

FAKE_EXPORT void fake_cuda_fail_call(const char *name, int skip, int result) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  state().faults[name] = Fault{skip, static_cast<CUresult>(result)};
}

FAKE_EXPORT void fake_cuda_fail_next(const char *name, int result) {
  fake_cuda_fail_call(name, 0, result);
}

FAKE_EXPORT int fake_cuda_requested_version(const char *name) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  auto it = state().requestedVersions.find(name);
  return it == state().requestedVersions.end() ? -1 : it->second;
}

FAKE_EXPORT int fake_cuda_calls_of(const char *name) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  auto it = state().calls.find(name);
  return it == state().calls.end() ? 0 : it->second;
}

FAKE_EXPORT int fake_cuda_launch_count(void) {
  return locked<int>([](State &s) { return int(s.launches.size()); });
}

FAKE_EXPORT const char *fake_cuda_launch_name(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l ? l->name.c_str() : "";
}

FAKE_EXPORT unsigned fake_cuda_launch_grid_x(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l ? l->gridX : 0;
}

FAKE_EXPORT unsigned fake_cuda_launch_grid_y(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l ? l->gridY : 0;
}

FAKE_EXPORT unsigned fake_cuda_launch_shared_bytes(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l ? l->sharedBytes : 0;
}

FAKE_EXPORT unsigned fake_cuda_launch_block_x(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l ? l->blockX : 0;
}

FAKE_EXPORT int fake_cuda_launch_param_count(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l ? static_cast<int>(l->params.size()) : -1;
}

FAKE_EXPORT unsigned long long fake_cuda_launch_param(int i, int param) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l && param >= 0 && size_t(param) < l->params.size() ? l->params[param]
                                                             : 0;
}

FAKE_EXPORT long long fake_cuda_launch_range(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l && !l->params.empty() ? static_cast<long long>(l->params.back())
                                 : -1;
}

FAKE_EXPORT int fake_cuda_launch_captured(int i) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  const Launch *l = launchAt(state(), i);
  return l && l->captured ? 1 : 0;
}

FAKE_EXPORT int fake_cuda_graphs_instantiated(void) {
  return locked<int>([](State &s) { return s.graphsInstantiated; });
}

FAKE_EXPORT void fake_cuda_begin_foreign_capture(void) {
  locked<int>([](State &s) {
    if (!s.foreignCapture) {
      s.foreignCapture = new FakeStream();
      s.streams.insert(s.foreignCapture);
    }
    s.foreignCapture->capturing = true;
    s.foreignCapture->invalidated = false;
    return 0;
  });
}

FAKE_EXPORT int fake_cuda_end_foreign_capture(void) {
  return locked<int>([](State &s) {
    FakeStream *stream = s.foreignCapture;
    if (!stream)
      return -1;
    int invalidated = stream->invalidated ? 1 : 0;
    s.streams.erase(stream);
    delete stream;
    s.foreignCapture = nullptr;
    return invalidated;
  });
}

FAKE_EXPORT int fake_cuda_graph_launches(void) {
  return locked<int>([](State &s) { return s.graphLaunches; });
}

FAKE_EXPORT int fake_cuda_replayed_kernels(void) {
  return locked<int>([](State &s) { return s.replayedKernels; });
}

FAKE_EXPORT int fake_cuda_allocations(void) {
  return locked<int>([](State &s) { return s.allocationCount; });
}

FAKE_EXPORT unsigned long long fake_cuda_allocated_bytes(void) {
  return locked<unsigned long long>([](State &s) { return s.allocatedBytes; });
}

FAKE_EXPORT int fake_cuda_live_allocations(void) {
  return locked<int>([](State &s) { return int(s.allocations.size()); });
}

FAKE_EXPORT unsigned long long fake_cuda_live_bytes(void) {
  return locked<unsigned long long>([](State &s) { return s.liveBytes; });
}

FAKE_EXPORT unsigned long long fake_cuda_bytes_to_device(void) {
  return locked<unsigned long long>([](State &s) { return s.toDevice; });
}

FAKE_EXPORT unsigned long long fake_cuda_bytes_to_host(void) {
  return locked<unsigned long long>([](State &s) { return s.toHost; });
}

FAKE_EXPORT int fake_cuda_live_objects(void) {
  return locked<int>([](State &s) {
    int references = 0;
    for (const FakeContext &c : s.contexts)
      references += c.references;
    return int(s.streams.size() + s.modules.size() + s.graphs.size() +
               s.execs.size() + s.events.size()) +
           references;
  });
}

FAKE_EXPORT int fake_cuda_stream_enqueue(void *stream, void (*run)(void *),
                                         void *arg, void (*release)(void *)) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  bool ok;
  FakeStream *fake = knownStream(state(), static_cast<CUstream>(stream), &ok);
  if (!ok) {
    release(arg);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  // The argument lives as long as the op (a graph may replay it).
  std::shared_ptr<void> owned(arg, release);
  return submit(fake, makeOp([run, owned] { run(owned.get()); }));
}

FAKE_EXPORT int fake_cuda_check_device_range(unsigned long long pointer,
                                             unsigned long long bytes) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  return inAllocation(state(), pointer, bytes) ? 1 : 0;
}
