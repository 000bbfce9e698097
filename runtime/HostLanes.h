// Host lanes: a GPU warp run on one CPU thread, so that the kernels written
// for several threads per row (the compiler's FusionKernelOptions::lanes:
// a warp per row, its lanes meeting by shuffles) can be compiled for the
// cpu and checked against the reference evaluator on a machine without a
// GPU. Each lane is a fiber (ucontext) running the kernel's body over the
// same rows; a warp primitive (a shuffle, a sync) ends the lane's turn and
// the lanes take turns in order, so every lane has reached the primitive
// before any passes it, as a warp's lanes do. A test form, not a fast one:
// a turn costs two context switches.
//
// A kernel library compiled with lanes (compiler/cpu/CodeGen.cpp) defines
// the warp primitives and each laned kernel's entry as calls through the
// table it exports as `kiln_host_lanes`; the cpu executor fills the table
// when it loads such a library.
#ifndef KILN_RUNTIME_HOSTLANES_H
#define KILN_RUNTIME_HOSTLANES_H

#include <cstdint>

namespace kiln::runtime {

/// A kernel body: (buffers, begin, end) over rows.
using LanedKernelBody = void (*)(void **, int64_t, int64_t);

/// The table `kiln_host_lanes` of a library compiled with lanes, in this
/// order (the code generator indexes it).
struct HostLaneHooks {
  /// The calling lane's id.
  int64_t (*laneId)();
  /// The value of the lane whose id differs from the caller's in `mask`'s
  /// bits (a butterfly step every lane of the warp takes).
  float (*shuffleXorF32)(float value, int32_t mask);
  double (*shuffleXorF64)(double value, int32_t mask);
  /// Returns once every lane has reached it.
  void (*syncWarp)();
  /// Runs `body` over the rows of threads [begin, end) (a laned kernel's
  /// range counts threads, `lanes` a row, as on the GPU: the rows whose
  /// first thread lies in the range), one fiber a lane.
  void (*runLanes)(LanedKernelBody body, void **buffers, int64_t begin,
                   int64_t end, int64_t lanes);
};

/// The exported table's name.
inline constexpr const char *kHostLaneHooksSymbol = "kiln_host_lanes";

/// The hooks themselves (what installHostLaneHooks writes).
const HostLaneHooks &hostLaneHooks();

/// Fills `library`'s (a dlopen handle) table, if it has one.
void installHostLaneHooks(void *library);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_HOSTLANES_H
