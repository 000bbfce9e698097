// The processes of a data-parallel run and the one collective a training
// step needs, as an interface every layer can call without knowing the
// transport: the reference evaluator and the executors run kiln.all_reduce
// through it. The runtime joins the world (runtime/World.h: MPI, loaded
// only when a launcher started several processes); until then, and in a
// process that runs alone, there is no communicator and a sum over the
// processes is the process's own value.
#ifndef KILN_SUPPORT_COLLECTIVES_H
#define KILN_SUPPORT_COLLECTIVES_H

#include "support/HostTensor.h"

#include "absl/status/status.h"

#include <cstdint>
#include <string>

namespace kiln {

/// Defined wholly here (no out-of-line key function), so that the MPI
/// plugin implements it without linking this library.
class Communicator {
public:
  virtual ~Communicator() = default;
  /// This process's place in the world, 0 ≤ rank() < size().
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Replaces the `count` elements of `type` at `data` by their sum over
  /// every process. Every process calls it with the same count and type,
  /// in the same order (each runs the same program); it returns when the
  /// sum is there. f32, f64, i32 and i64.
  virtual absl::Status allReduceSum(void *data, int64_t count, DType type) = 0;
  /// Returns once every process has called it (between steps, in the same
  /// order relative to their sums).
  virtual absl::Status barrier() = 0;
  /// Ends every process of the run with `exitCode` (a process that failed
  /// must not leave the others waiting in a sum). Does not return.
  virtual void abort(int exitCode) = 0;
};

/// Where the launcher put this process: the size and rank Open MPI's
/// mpirun (OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK) or a PMI launcher
/// (PMI_SIZE, PMI_RANK: MPICH's, Slurm's srun) sets; size 1 and rank 0
/// when none did. A malformed pair, or torchrun's WORLD_SIZE above 1
/// without an MPI launcher (kiln's processes find each other through MPI),
/// is an error naming the variables.
struct WorldPlacement {
  int size = 1, rank = 0;
  /// The processes on this machine, which share its memory: Open MPI's
  /// OMPI_COMM_WORLD_LOCAL_SIZE or MPICH's MPI_LOCALNRANKS; all of them
  /// (size) when the launcher does not say, the guess that never
  /// overcommits the machine.
  int localSize = 1;
  /// The variables read, e.g. "OMPI_COMM_WORLD_SIZE/RANK"; empty for none.
  std::string source;
};
absl::StatusOr<WorldPlacement> launcherPlacement();

/// The process's communicator, or null when it runs alone.
Communicator *worldCommunicator();
/// Sets it (runtime/World.cpp, once, when the process joins its world;
/// tests set their own). Not owned.
void setWorldCommunicator(Communicator *communicator);

/// The element types kiln.all_reduce sums.
bool isAllReduceType(DType type);

/// Sums `count` elements at `data` over the world: nothing to do without a
/// communicator in a world of one; an error without one in a larger world
/// (the process never joined it: runtime/World.h), rather than a sum that
/// silently leaves the other processes out.
absl::Status allReduceSumInPlace(void *data, int64_t count, DType type);

} // namespace kiln

#endif // KILN_SUPPORT_COLLECTIVES_H
