// The control and introspection API of the fake CUDA libraries that the
// CUDA runtime's tests run against (no GPU needed): libkiln-fake-cuda.so
// (a driver: cuGetProcAddress_v2 and the entry points kiln takes through
// it) and libkiln-fake-cublaslt.so (cuBLASLt's matmul subset, computed on
// the host). Tests dlopen the same paths kiln loads, so they share one
// instance, and dlsym these functions (declared here so that decltype gives
// their types). Plain C types only: tests need no CUDA header.
//
// The fake driver's model: "device memory" is host memory (filled with
// 0xCD garbage when allocated, as device memory is not zeroed); work on a
// stream runs at once, except while the stream is being captured, when it
// is recorded into the graph and run by each cuGraphLaunch. Kernels run
// nothing (they are PTX): a launch is recorded, with its grid, block and
// parameter values. A kernel's parameter count comes from its
// `.entry name(.param ..., .param ...)` declaration in the module text
// (without one, its launches record no parameters). Copies, memsets and
// the fake cuBLASLt's matmuls really run. Every device pointer a call names
// must lie inside a live allocation, else the call fails with
// CUDA_ERROR_INVALID_VALUE (a device-to-device copy between overlapping
// ranges too); launches are held to kiln's kernel ABI (device pointers,
// then int64 rangeSize, at least one thread per index) the same way. So an
// executor's bookkeeping errors show.
#ifndef KILN_TESTS_FAKE_CUDA_FAKECUDA_H
#define KILN_TESTS_FAKE_CUDA_FAKECUDA_H

#ifdef __cplusplus
extern "C" {
#endif

//===--- libkiln-fake-cuda.so ---------------------------------------------===//

/// Back to one device "Fake CUDA Device", compute capability 9.0, 80 GiB;
/// no faults; counters and launch records cleared. Live allocations,
/// streams, modules and graphs stay (a program may still hold them), and so
/// do the entry-point versions requested (a process resolves them once).
void fake_cuda_reset(void);
void fake_cuda_set_device_count(int count);
void fake_cuda_set_compute_capability(int major, int minor);
/// Allocations that would take live bytes beyond this fail with
/// CUDA_ERROR_OUT_OF_MEMORY.
void fake_cuda_set_total_memory(unsigned long long bytes);
/// The call to entry point `name` (e.g. "cuLaunchKernel") after `skip`
/// successful ones returns `result` (a CUresult) instead of running; one
/// pending fault per name.
/// A process the test cannot call into (a tool) arms the same faults with
/// KILN_FAKE_CUDA_FAULTS="name:skip:result[,...]", and the memory size with
/// KILN_FAKE_CUDA_TOTAL_MEMORY=bytes (read when the library first runs).
void fake_cuda_fail_call(const char *name, int skip, int result);
void fake_cuda_fail_next(const char *name, int result);

/// The CUDA version `name` was last requested at through
/// cuGetProcAddress_v2, or -1.
int fake_cuda_requested_version(const char *name);
/// Calls of entry point `name` (plain name, no _v2) since the reset.
int fake_cuda_calls_of(const char *name);

/// Kernel launches since the reset (during captures included).
int fake_cuda_launch_count(void);
const char *fake_cuda_launch_name(int launch);
unsigned fake_cuda_launch_grid_x(int launch);
unsigned fake_cuda_launch_block_x(int launch);
unsigned fake_cuda_launch_grid_y(int launch);
unsigned fake_cuda_launch_shared_bytes(int launch);
/// The launch's parameter count (-1: no such launch) and the 8 bytes of
/// parameter `param` (a device pointer, or the int64 rangeSize last).
int fake_cuda_launch_param_count(int launch);
unsigned long long fake_cuda_launch_param(int launch, int param);
/// The last parameter as int64 (kiln's rangeSize), or -1.
long long fake_cuda_launch_range(int launch);
/// 1 when the launch was recorded into a graph being captured.
int fake_cuda_launch_captured(int launch);
/// Graphs instantiated, graph launches, and kernel nodes those replayed.
int fake_cuda_graphs_instantiated(void);
int fake_cuda_graph_launches(void);
/* A capture in progress on a stream of the fake's own, as another thread's
   program would have; the end returns 1 when something invalidated it
   meanwhile (a context-wide synchronize), 0 if not, -1 if none began. */
void fake_cuda_begin_foreign_capture(void);
int fake_cuda_end_foreign_capture(void);
int fake_cuda_replayed_kernels(void);

/// Successful cuMemAlloc calls and their bytes since the reset.
int fake_cuda_allocations(void);
unsigned long long fake_cuda_allocated_bytes(void);
/// Allocations live now, and their bytes.
int fake_cuda_live_allocations(void);
unsigned long long fake_cuda_live_bytes(void);
/// Bytes copied host → device and device → host since the reset.
unsigned long long fake_cuda_bytes_to_device(void);
unsigned long long fake_cuda_bytes_to_host(void);
/// Streams, modules, graphs, executable graphs and primary-context
/// references alive now (0 once every program is gone).
int fake_cuda_live_objects(void);

/// For the fake cuBLASLt: runs `run(arg)` on `stream` now, or records it
/// into the stream's capture; `release(arg)` when no longer needed. Returns
/// a CUresult.
int fake_cuda_stream_enqueue(void *stream, void (*run)(void *), void *arg,
                             void (*release)(void *));
/// 1 when [pointer, pointer + bytes) lies inside one live allocation.
int fake_cuda_check_device_range(unsigned long long pointer,
                                 unsigned long long bytes);

//===--- libkiln-fake-cublaslt.so -----------------------------------------===//

/// Clears counters and faults (live objects stay).
void fake_cublaslt_reset(void);
/// The next call of `name` (e.g. "cublasLtMatmul") returns `status`.
void fake_cublaslt_fail_next(const char *name, int status);
int fake_cublaslt_calls_of(const char *name);
/// Matmuls computed (run at once, or replayed by a graph launch).
int fake_cublaslt_matmuls_executed(void);
/// The compute type (cublasComputeType_t) of the last descriptor created.
int fake_cublaslt_last_compute_type(void);
/// Handles, descriptors, layouts and preferences alive now.
int fake_cublaslt_live_objects(void);

#ifdef __cplusplus
}
#endif

#endif // KILN_TESTS_FAKE_CUDA_FAKECUDA_H
