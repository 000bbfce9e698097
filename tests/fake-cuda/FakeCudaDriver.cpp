// libkiln-fake-cuda.so: a fake CUDA driver for the CUDA runtime's tests on
// machines without a GPU. It exports only cuGetProcAddress_v2 (as the real
// driver is used: everything else through it) plus the control API in
// FakeCuda.h; the model it implements is described there. The fakes check
// what the real driver would refuse (no cuInit, no current context, unknown
// handles, pointers outside any allocation, zero-sized launches, capture
// misuse) so that kiln's mistakes fail here rather than on the GPU.
#include "tests/fake-cuda/FakeCuda.h"
#include "tests/fake-cuda/FakeCudaState.h"

#include "runtime/kernels/FlashAttention.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

using namespace kiln::fakecuda;

thread_local FakeContext *current = nullptr;

enum class Needs { nothing, init, context };

/// Counts the call, applies a pending fault, then the preconditions every
/// real entry point has. The caller holds the state's lock.
CUresult enter(const char *name, Needs needs) {
  State &s = state();
  ++s.calls[name];
  auto fault = s.faults.find(name);
  if (fault != s.faults.end() && fault->second.skip-- == 0) {
    CUresult result = fault->second.result;
    s.faults.erase(fault);
    return result;
  }
  if (needs != Needs::nothing && !s.initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (needs == Needs::context &&
      (current == nullptr || current->references == 0))
    return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

#define FAKE_ENTER(name, needs)                                                \
  std::lock_guard<std::recursive_mutex> lock(state().mutex);                   \
  [[maybe_unused]] State &s = state();                                         \
  if (CUresult entered = enter(name, needs); entered != CUDA_SUCCESS)          \
    return entered;

bool validDevice(const State &s, CUdevice device) {
  return device >= 0 && device < s.deviceCount && device < kMaxDevices;
}

FakeContext *knownContext(State &s, CUcontext context) {
  for (FakeContext &c : s.contexts)
    if (reinterpret_cast<CUcontext>(&c) == context)
      return &c;
  return nullptr;
}

//===--- Initialisation, devices, contexts --------------------------------===//

CUresult fakeInit(unsigned int flags) {
  FAKE_ENTER("cuInit", Needs::nothing);
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Like the real driver, a process that initialised once stays so.
  if (!s.initialized && s.deviceCount == 0)
    return CUDA_ERROR_NO_DEVICE;
  s.initialized = true;
  return CUDA_SUCCESS;
}

CUresult fakeDriverGetVersion(int *version) {
  FAKE_ENTER("cuDriverGetVersion", Needs::nothing);
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = kDriverVersion;
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGetCount(int *count) {
  FAKE_ENTER("cuDeviceGetCount", Needs::init);
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = s.deviceCount;
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGet(CUdevice *device, int ordinal) {
  FAKE_ENTER("cuDeviceGet", Needs::init);
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(s, ordinal))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGetName(char *name, int length, CUdevice device) {
  FAKE_ENTER("cuDeviceGetName", Needs::init);
  if (!validDevice(s, device))
    return CUDA_ERROR_INVALID_DEVICE;
  if (!name || length <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(length), "Fake CUDA Device");
  return CUDA_SUCCESS;
}

/// What a block may opt in to: 227 KiB on 9.x (the H100), 163 KiB on 8.0,
/// 99 KiB on other 8.x, 48 KiB before.
int optInSharedBytes(const State &s) {
  if (s.major >= 9)
    return 232448;
  if (s.major == 8)
    return s.minor == 0 ? 166912 : 101376;
  return 49152;
}

CUresult fakeDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                CUdevice device) {
  FAKE_ENTER("cuDeviceGetAttribute", Needs::init);
  if (!validDevice(s, device))
    return CUDA_ERROR_INVALID_DEVICE;
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = s.major;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = s.minor;
  else if (attribute == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    *value = optInSharedBytes(s);
  else
    return CUDA_ERROR_INVALID_VALUE; // the fake knows no other attribute
  return CUDA_SUCCESS;
}

CUresult fakeDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  FAKE_ENTER("cuDevicePrimaryCtxRetain", Needs::init);
  if (!context)
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(s, device))
    return CUDA_ERROR_INVALID_DEVICE;
  ++s.contexts[device].references;
  *context = reinterpret_cast<CUcontext>(&s.contexts[device]);
  return CUDA_SUCCESS;
}

CUresult fakeDevicePrimaryCtxRelease(CUdevice device) {
  FAKE_ENTER("cuDevicePrimaryCtxRelease", Needs::init);
  if (device < 0 || device >= kMaxDevices)
    return CUDA_ERROR_INVALID_DEVICE;
  if (s.contexts[device].references == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  --s.contexts[device].references;
  return CUDA_SUCCESS;
}

CUresult fakeCtxSetCurrent(CUcontext context) {
  FAKE_ENTER("cuCtxSetCurrent", Needs::init);
  if (context == nullptr) {
    current = nullptr;
    return CUDA_SUCCESS;
  }
  FakeContext *fake = knownContext(s, context);
  if (!fake)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (fake->references == 0)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  current = fake;
  return CUDA_SUCCESS;
}

/// A context-wide synchronize while any stream captures (on any thread)
/// is refused and loses those captures, as on the real driver (which also
/// crashed on it, docs/GPU.md run 4).
CUresult refuseDuringCapture(State &s) {
  CUresult result = CUDA_SUCCESS;
  for (FakeStream *stream : s.streams)
    if (stream->capturing) {
      stream->invalidated = true;
      result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
  return result;
}

/// The CUDA 2.0 ABI: synchronises the current context.
CUresult fakeCtxSynchronizeV2000() {
  FAKE_ENTER("cuCtxSynchronize", Needs::context);
  return refuseDuringCapture(s); // else all work has run already
}

/// The CUDA 13 ABI takes the context; called through the old signature it
/// sees garbage and fails as the real one does (GPU.md's trap).
CUresult fakeCtxSynchronizeV13000(CUcontext context) {
  FAKE_ENTER("cuCtxSynchronize", Needs::context);
  if (context != nullptr && knownContext(s, context) == nullptr)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  return refuseDuringCapture(s);
}

//===--- Memory -----------------------------------------------------------===//

CUresult fakeMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  FAKE_ENTER("cuMemAlloc", Needs::context);
  if (!pointer || bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (bytes > s.totalMemory - std::min(s.liveBytes, s.totalMemory))
    return CUDA_ERROR_OUT_OF_MEMORY;
  size_t rounded = (bytes + 255) / 256 * 256;
  void *memory = std::aligned_alloc(256, rounded);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(memory, 0xCD, rounded); // device memory is not zeroed
  s.allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  s.liveBytes += bytes;
  ++s.allocationCount;
  s.allocatedBytes += bytes;
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  return CUDA_SUCCESS;
}

CUresult fakeMemFree(CUdeviceptr pointer) {
  FAKE_ENTER("cuMemFree", Needs::context);
  auto it = s.allocations.find(static_cast<uintptr_t>(pointer));
  if (it == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  s.liveBytes -= it->second;
  std::free(reinterpret_cast<void *>(it->first));
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult fakeMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  FAKE_ENTER("cuMemGetInfo", Needs::context);
  if (!freeBytes || !totalBytes)
    return CUDA_ERROR_INVALID_VALUE;
  *totalBytes = s.totalMemory;
  *freeBytes = s.totalMemory - std::min(s.liveBytes, s.totalMemory);
  return CUDA_SUCCESS;
}

CUresult fakeMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes,
                             CUstream stream) {
  FAKE_ENTER("cuMemcpyHtoDAsync", Needs::context);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (bytes > 0 && (!src || !inAllocation(s, dst, bytes)))
    return CUDA_ERROR_INVALID_VALUE;
  s.toDevice += bytes;
  return submit(fake, makeOp([=] {
                  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
                }));
}

CUresult fakeMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                             CUstream stream) {
  FAKE_ENTER("cuMemcpyDtoHAsync", Needs::context);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (bytes > 0 && (!dst || !inAllocation(s, src, bytes)))
    return CUDA_ERROR_INVALID_VALUE;
  s.toHost += bytes;
  return submit(fake, makeOp([=] {
                  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
                }));
}

CUresult fakeMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                             CUstream stream) {
  FAKE_ENTER("cuMemcpyDtoDAsync", Needs::context);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!inAllocation(s, dst, bytes) || !inAllocation(s, src, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  if (bytes > 0 && dst < src + bytes && src < dst + bytes)
    return CUDA_ERROR_INVALID_VALUE; // overlapping copies are undefined
  return submit(fake, makeOp([=] {
                  std::memcpy(reinterpret_cast<void *>(dst),
                              reinterpret_cast<const void *>(src), bytes);
                }));
}

CUresult fakeMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes,
                           CUstream stream) {
  FAKE_ENTER("cuMemsetD8Async", Needs::context);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!inAllocation(s, dst, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  return submit(fake, makeOp([=] {
                  std::memset(reinterpret_cast<void *>(dst), value, bytes);
                }));
}

//===--- Streams and graphs -----------------------------------------------===//

CUresult fakeStreamCreate(CUstream *stream, unsigned int flags) {
  FAKE_ENTER("cuStreamCreate", Needs::context);
  if (!stream || flags > CU_STREAM_NON_BLOCKING)
    return CUDA_ERROR_INVALID_VALUE;
  auto *fake = new FakeStream();
  s.streams.insert(fake);
  *stream = reinterpret_cast<CUstream>(fake);
  return CUDA_SUCCESS;
}

CUresult fakeStreamDestroy(CUstream stream) {
  FAKE_ENTER("cuStreamDestroy", Needs::context);
  auto *fake = reinterpret_cast<FakeStream *>(stream);
  if (!stream || !s.streams.count(fake))
    return CUDA_ERROR_INVALID_HANDLE;
  if (fake->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  s.streams.erase(fake);
  delete fake;
  return CUDA_SUCCESS;
}

CUresult fakeStreamSynchronize(CUstream stream) {
  FAKE_ENTER("cuStreamSynchronize", Needs::context);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (fake && fake->capturing) {
    fake->invalidated = true; // as the real driver: the capture is lost
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return CUDA_SUCCESS;
}

CUresult fakeStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode) {
  FAKE_ENTER("cuStreamBeginCapture", Needs::context);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!fake)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // the legacy stream
  if (fake->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
      mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  fake->capturing = true;
  fake->invalidated = false;
  fake->captured.clear();
  return CUDA_SUCCESS;
}

CUresult fakeStreamEndCapture(CUstream stream, CUgraph *graph) {
  FAKE_ENTER("cuStreamEndCapture", Needs::context);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!ok || !fake)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!graph)
    return CUDA_ERROR_INVALID_VALUE;
  if (!fake->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  fake->capturing = false;
  OpList ops = std::move(fake->captured);
  fake->captured.clear();
  if (fake->invalidated) {
    *graph = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  auto *made = new FakeGraph{std::move(ops)};
  s.graphs.insert(made);
  *graph = reinterpret_cast<CUgraph>(made);
  return CUDA_SUCCESS;
}

CUresult fakeGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                       unsigned long long flags) {
  FAKE_ENTER("cuGraphInstantiateWithFlags", Needs::context);
  auto *fake = reinterpret_cast<FakeGraph *>(graph);
  if (!exec || !s.graphs.count(fake))
    return CUDA_ERROR_INVALID_VALUE;
  auto *made = new FakeGraphExec{fake->ops};
  s.execs.insert(made);
  ++s.graphsInstantiated;
  *exec = reinterpret_cast<CUgraphExec>(made);
  return CUDA_SUCCESS;
}

CUresult fakeGraphLaunch(CUgraphExec exec, CUstream stream) {
  FAKE_ENTER("cuGraphLaunch", Needs::context);
  auto *fake = reinterpret_cast<FakeGraphExec *>(exec);
  bool ok;
  FakeStream *onto = knownStream(s, stream, &ok);
  if (!ok || !s.execs.count(fake))
    return CUDA_ERROR_INVALID_HANDLE;
  if (onto && onto->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // not modelled
  for (const std::shared_ptr<Op> &op : fake->ops) {
    if (op->isKernel)
      ++s.replayedKernels;
    else
      op->run();
  }
  ++s.graphLaunches;
  return CUDA_SUCCESS;
}

CUresult fakeGraphExecDestroy(CUgraphExec exec) {
  FAKE_ENTER("cuGraphExecDestroy", Needs::context);
  auto *fake = reinterpret_cast<FakeGraphExec *>(exec);
  if (!s.execs.erase(fake))
    return CUDA_ERROR_INVALID_VALUE;
  delete fake;
  return CUDA_SUCCESS;
}

CUresult fakeGraphDestroy(CUgraph graph) {
  FAKE_ENTER("cuGraphDestroy", Needs::context);
  auto *fake = reinterpret_cast<FakeGraph *>(graph);
  if (!s.graphs.erase(fake))
    return CUDA_ERROR_INVALID_VALUE;
  delete fake;
  return CUDA_SUCCESS;
}

//===--- Events -----------------------------------------------------------===//

FakeEvent *knownEvent(State &s, CUevent event) {
  auto *fake = reinterpret_cast<FakeEvent *>(event);
  return s.events.count(fake) ? fake : nullptr;
}

CUresult fakeEventCreate(CUevent *event, unsigned int flags) {
  FAKE_ENTER("cuEventCreate", Needs::context);
  if (!event || (flags & ~0xFu))
    return CUDA_ERROR_INVALID_VALUE;
  auto *fake = new FakeEvent();
  fake->timing = !(flags & CU_EVENT_DISABLE_TIMING);
  s.events.insert(fake);
  *event = reinterpret_cast<CUevent>(fake);
  return CUDA_SUCCESS;
}

CUresult fakeEventDestroy(CUevent event) {
  FAKE_ENTER("cuEventDestroy", Needs::context);
  FakeEvent *fake = knownEvent(s, event);
  if (!fake)
    return CUDA_ERROR_INVALID_HANDLE;
  s.events.erase(fake);
  delete fake;
  return CUDA_SUCCESS;
}

CUresult fakeEventRecord(CUevent event, CUstream stream) {
  FAKE_ENTER("cuEventRecord", Needs::context);
  FakeEvent *fake = knownEvent(s, event);
  bool ok;
  FakeStream *onStream = knownStream(s, stream, &ok);
  if (!fake || !ok)
    return CUDA_ERROR_INVALID_HANDLE;
  // The stream's work runs as it is submitted, so the event is reached now.
  // Inside a capture an event only orders work (timing one there needs
  // CU_EVENT_RECORD_EXTERNAL): kiln times runs outside graphs, so one
  // recorded in a capture is kiln's mistake.
  if (onStream && onStream->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  fake->reached = true;
  fake->milliseconds = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now().time_since_epoch())
                           .count();
  return CUDA_SUCCESS;
}

CUresult fakeEventSynchronize(CUevent event) {
  FAKE_ENTER("cuEventSynchronize", Needs::context);
  return knownEvent(s, event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult fakeEventElapsedTime(float *milliseconds, CUevent start,
                              CUevent end) {
  FAKE_ENTER("cuEventElapsedTime", Needs::context);
  FakeEvent *from = knownEvent(s, start), *to = knownEvent(s, end);
  if (!milliseconds)
    return CUDA_ERROR_INVALID_VALUE;
  if (!from || !to || !from->timing || !to->timing || !from->reached ||
      !to->reached)
    return CUDA_ERROR_INVALID_HANDLE;
  *milliseconds = static_cast<float>(to->milliseconds - from->milliseconds);
  return CUDA_SUCCESS;
}

//===--- Modules and launches ---------------------------------------------===//

/// The number of `.param`s in `.entry name( ... )` within PTX text, or -1
/// when the image declares no such entry.
int countEntryParams(const std::string &image, const std::string &name) {
  for (size_t at = image.find(name); at != std::string::npos;
       at = image.find(name, at + 1)) {
    size_t before = image.rfind(".entry", at);
    if (before == std::string::npos ||
        image.find_first_not_of(" \t\n", before + 6) != at)
      continue;
    size_t open = image.find_first_not_of(" \t\n", at + name.size());
    if (open == std::string::npos || image[open] != '(')
      continue;
    size_t close = image.find(')', open);
    if (close == std::string::npos)
      return -1;
    int count = 0;
    for (size_t p = image.find(".param", open);
         p != std::string::npos && p < close; p = image.find(".param", p + 1))
      ++count;
    return count;
  }
  return -1;
}

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;

CUresult fakeModuleLoadData(CUmodule *module, const void *image) {
  FAKE_ENTER("cuModuleLoadData", Needs::context);
  if (!module || !image)
    return CUDA_ERROR_INVALID_VALUE;
  // Images are NUL-terminated text (PTX), or a fatbin (kiln's flash
  // attention kernels): its header says its size.
  std::string text;
  uint32_t magic;
  std::memcpy(&magic, image, sizeof magic);
  if (magic == kFatbinMagic) {
    uint16_t headerSize;
    uint64_t bodySize;
    std::memcpy(&headerSize, static_cast<const char *>(image) + 6, 2);
    std::memcpy(&bodySize, static_cast<const char *>(image) + 8, 8);
    text.assign(static_cast<const char *>(image), headerSize + bodySize);
  } else {
    text = static_cast<const char *>(image);
  }
  if (text.empty())
    return CUDA_ERROR_INVALID_IMAGE;
  auto *made = new FakeModule();
  made->image = std::move(text);
  s.modules.insert(made);
  *module = reinterpret_cast<CUmodule>(made);
  return CUDA_SUCCESS;
}

CUresult fakeModuleUnload(CUmodule module) {
  FAKE_ENTER("cuModuleUnload", Needs::context);
  auto *fake = reinterpret_cast<FakeModule *>(module);
  if (!s.modules.erase(fake))
    return CUDA_ERROR_INVALID_HANDLE;
  delete fake;
  return CUDA_SUCCESS;
}

CUresult fakeModuleGetFunction(CUfunction *function, CUmodule module,
                               const char *name) {
  FAKE_ENTER("cuModuleGetFunction", Needs::context);
  auto *fake = reinterpret_cast<FakeModule *>(module);
  if (!s.modules.count(fake))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!function || !name)
    return CUDA_ERROR_INVALID_VALUE;
  if (fake->image.find(name) == std::string::npos)
    return CUDA_ERROR_NOT_FOUND;
  std::unique_ptr<FakeFunction> &entry = fake->functions[name];
  if (!entry)
    entry.reset(new FakeFunction{name, countEntryParams(fake->image, name)});
  *function = reinterpret_cast<CUfunction>(entry.get());
  return CUDA_SUCCESS;
}

/// True when [pointer, pointer + 1) is inside a live allocation or pointer
/// is one past its end (an empty buffer's) or null: what a kernel's
/// pointer parameter may be.
bool plausibleBuffer(const State &s, unsigned long long pointer) {
  if (pointer == 0)
    return true;
  auto it = s.allocations.upper_bound(static_cast<uintptr_t>(pointer));
  if (it == s.allocations.begin())
    return false;
  --it;
  return pointer - it->first <= it->second;
}

const FakeFunction *knownFunction(const State &s, CUfunction function) {
  for (const FakeModule *module : s.modules)
    for (const auto &entry : module->functions)
      if (reinterpret_cast<CUfunction>(entry.second.get()) == function)
        return entry.second.get();
  return nullptr;
}

/// kiln's flash attention kernels take one kiln::flash::AttentionParams:
/// every pointer its kernel reads or writes inside a live allocation, the
/// block kFlashThreads threads, and a grid over batch x heads (kv heads
/// for the key side).
bool plausibleFlashLaunch(const State &s, const Launch &launch,
                          const void *param) {
  kiln::flash::AttentionParams p;
  std::memcpy(&p, param, sizeof p);
  auto inside = [&](const void *pointer) {
    return pointer && plausibleBuffer(s, reinterpret_cast<uintptr_t>(pointer));
  };
  bool keySide = launch.name.find("key_value_grad") != std::string::npos;
  bool forward = launch.name.find("forward") != std::string::npos;
  bool ok = inside(p.query) && inside(p.key) && inside(p.value) &&
            launch.blockX == kiln::flash::kFlashThreads &&
            launch.gridY == p.batch * (keySide ? p.kvHeads : p.heads) &&
            (p.dropout == 0 || inside(p.rngState));
  ok = ok && inside(p.result) && inside(p.rowStats);
  if (forward)
    return ok;
  return ok && inside(p.resultGrad) && inside(p.rowDeltas) &&
         (keySide ? inside(p.keyGrad) && inside(p.valueGrad)
                  : inside(p.queryGrad));
}

CUresult fakeFuncSetAttribute(CUfunction function, CUfunction_attribute attrib,
                              int value) {
  FAKE_ENTER("cuFuncSetAttribute", Needs::context);
  auto *kernel = const_cast<FakeFunction *>(knownFunction(s, function));
  if (!kernel)
    return CUDA_ERROR_INVALID_HANDLE;
  if (attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 ||
      value > optInSharedBytes(s))
    return CUDA_ERROR_INVALID_VALUE;
  kernel->maxDynamicShared = value;
  return CUDA_SUCCESS;
}

CUresult fakeLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY,
                          unsigned gridZ, unsigned blockX, unsigned blockY,
                          unsigned blockZ, unsigned sharedBytes,
                          CUstream stream, void **params, void **extra) {
  FAKE_ENTER("cuLaunchKernel", Needs::context);
  const FakeFunction *kernel = knownFunction(s, function);
  bool ok;
  FakeStream *fake = knownStream(s, stream, &ok);
  if (!kernel || !ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (gridX == 0 || gridY == 0 || gridZ == 0 || blockX == 0 || blockY == 0 ||
      blockZ == 0 || uint64_t(blockX) * blockY * blockZ > 1024 ||
      int64_t(sharedBytes) > kernel->maxDynamicShared || !params || extra)
    return CUDA_ERROR_INVALID_VALUE;
  Launch launch;
  launch.name = kernel->name;
  launch.gridX = gridX;
  launch.gridY = gridY;
  launch.blockX = blockX;
  launch.sharedBytes = sharedBytes;
  launch.captured = fake && fake->capturing;
  bool flash = launch.name.rfind("kiln_flash_", 0) == 0;
  if (flash && !plausibleFlashLaunch(s, launch, params[0]))
    return CUDA_ERROR_INVALID_VALUE;
  for (int p = 0; p < kernel->paramCount && !flash; ++p) {
    unsigned long long value;
    std::memcpy(&value, params[p], sizeof(value));
    launch.params.push_back(value);
  }
  // kiln's kernel ABI: device pointers, then int64 rangeSize, one thread
  // per index. A stray pointer or too few threads would fail (or silently
  // skip work) on the GPU.
  if (!launch.params.empty()) {
    for (size_t p = 0; p + 1 < launch.params.size(); ++p)
      if (!plausibleBuffer(s, launch.params[p]))
        return CUDA_ERROR_INVALID_VALUE;
    long long range = static_cast<long long>(launch.params.back());
    if (range < 0 ||
        uint64_t(gridX) * gridY * gridZ * blockX * blockY * blockZ <
            uint64_t(range))
      return CUDA_ERROR_INVALID_VALUE;
  }
  auto op = std::make_shared<Op>();
  op->isKernel = true;
  if (CUresult r = submit(fake, op); r != CUDA_SUCCESS)
    return r;
  s.launches.push_back(launch);
  return CUDA_SUCCESS;
}

//===--- Errors -----------------------------------------------------------===//

/// cuGetErrorName and cuGetErrorString: `describe` is errorName or
/// errorText (FakeCudaErrors.cpp).
CUresult describeError(CUresult error, const char **out,
                       const char *(*describe)(CUresult)) {
  if (!out)
    return CUDA_ERROR_INVALID_VALUE;
  *out = describe(error);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fakeGetErrorName(CUresult error, const char **name) {
  FAKE_ENTER("cuGetErrorName", Needs::nothing);
  return describeError(error, name, errorName);
}

CUresult fakeGetErrorString(CUresult error, const char **text) {
  FAKE_ENTER("cuGetErrorString", Needs::nothing);
  return describeError(error, text, errorText);
}

//===--- cuGetProcAddress -------------------------------------------------===//

/// Each ABI of each entry point with the CUDA version that introduced it:
/// a request gets the newest ABI not newer than the version asked, as from
/// the real driver.
struct EntryPoint {
  const char *name;
  int version;
  void *function;
};

template <typename F> void *fn(F *function) {
  return reinterpret_cast<void *>(function);
}

const EntryPoint kEntryPoints[] = {
    {"cuInit", 2000, fn(fakeInit)},
    {"cuDriverGetVersion", 2020, fn(fakeDriverGetVersion)},
    {"cuDeviceGetCount", 2000, fn(fakeDeviceGetCount)},
    {"cuDeviceGet", 2000, fn(fakeDeviceGet)},
    {"cuDeviceGetName", 2000, fn(fakeDeviceGetName)},
    {"cuDeviceGetAttribute", 2000, fn(fakeDeviceGetAttribute)},
    {"cuDevicePrimaryCtxRetain", 7000, fn(fakeDevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease", 7000, fn(fakeDevicePrimaryCtxRelease)},
    {"cuCtxSetCurrent", 4000, fn(fakeCtxSetCurrent)},
    {"cuCtxSynchronize", 2000, fn(fakeCtxSynchronizeV2000)},
    {"cuCtxSynchronize", 13000, fn(fakeCtxSynchronizeV13000)},
    {"cuMemAlloc", 3020, fn(fakeMemAlloc)},
    {"cuMemFree", 3020, fn(fakeMemFree)},
    {"cuMemGetInfo", 3020, fn(fakeMemGetInfo)},
    {"cuMemcpyHtoDAsync", 3020, fn(fakeMemcpyHtoDAsync)},
    {"cuMemcpyDtoHAsync", 3020, fn(fakeMemcpyDtoHAsync)},
    {"cuMemcpyDtoDAsync", 3020, fn(fakeMemcpyDtoDAsync)},
    {"cuMemsetD8Async", 3020, fn(fakeMemsetD8Async)},
    {"cuStreamCreate", 2000, fn(fakeStreamCreate)},
    {"cuStreamDestroy", 4000, fn(fakeStreamDestroy)},
    {"cuStreamSynchronize", 2000, fn(fakeStreamSynchronize)},
    {"cuStreamBeginCapture", 10010, fn(fakeStreamBeginCapture)},
    {"cuStreamEndCapture", 10000, fn(fakeStreamEndCapture)},
    {"cuGraphInstantiateWithFlags", 11040, fn(fakeGraphInstantiateWithFlags)},
    {"cuGraphLaunch", 10000, fn(fakeGraphLaunch)},
    {"cuGraphExecDestroy", 10000, fn(fakeGraphExecDestroy)},
    {"cuGraphDestroy", 10000, fn(fakeGraphDestroy)},
    {"cuModuleLoadData", 2000, fn(fakeModuleLoadData)},
    {"cuModuleUnload", 2000, fn(fakeModuleUnload)},
    {"cuModuleGetFunction", 2000, fn(fakeModuleGetFunction)},
    {"cuLaunchKernel", 4000, fn(fakeLaunchKernel)},
    {"cuFuncSetAttribute", 9000, fn(fakeFuncSetAttribute)},
    {"cuEventCreate", 2000, fn(fakeEventCreate)},
    {"cuEventDestroy", 4000, fn(fakeEventDestroy)},
    {"cuEventRecord", 2000, fn(fakeEventRecord)},
    {"cuEventSynchronize", 2000, fn(fakeEventSynchronize)},
    {"cuEventElapsedTime", 2000, fn(fakeEventElapsedTime)},
    {"cuGetErrorName", 6000, fn(fakeGetErrorName)},
    {"cuGetErrorString", 6000, fn(fakeGetErrorString)},
};

} // namespace

FAKE_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    cuuint64_t flags, CUdriverProcAddressQueryResult *found) {
  std::lock_guard<std::recursive_mutex> lock(state().mutex);
  if (!symbol || !pfn)
    return CUDA_ERROR_INVALID_VALUE;
  state().requestedVersions[symbol] = cudaVersion;
  const EntryPoint *best = nullptr;
  bool known = false;
  for (const EntryPoint &e : kEntryPoints) {
    if (std::strcmp(e.name, symbol) != 0)
      continue;
    known = true;
    if (e.version <= cudaVersion && (!best || e.version > best->version))
      best = &e;
  }
  *pfn = best ? best->function : nullptr;
  if (found)
    *found = best    ? CU_GET_PROC_ADDRESS_SUCCESS
             : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                     : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
