// Joining the other processes of a data-parallel run. A launcher (mpirun)
// starts N copies of a program; each finds its place from the launcher's
// variables (support/Collectives.h, launcherPlacement) and, when N > 1,
// joins the others through MPI. MPI lives in a plugin, libkiln-mpi.so
// (runtime/mpi/), loaded only then: a program that runs alone, or on a
// machine without Open MPI (the GPU machine's bundle), never needs it.
#ifndef KILN_RUNTIME_WORLD_H
#define KILN_RUNTIME_WORLD_H

#include "absl/status/status.h"

namespace kiln::runtime {

/// Joins this process's world once (later calls return the first call's
/// result): nothing for a process alone; else loads the plugin
/// (KILN_MPI_PLUGIN names it, by default lib/libkiln-mpi.so beside the
/// program's bin/), initialises MPI and makes its communicator the one
/// kiln.all_reduce uses, each of its collectives under the deadline of
/// support/CollectiveTimeout.h (KILN_COLLECTIVE_TIMEOUT=SECONDS sets it;
/// 1800 by default). An error names what was missing or malformed.
absl::Status joinWorld();

} // namespace kiln::runtime

#endif // KILN_RUNTIME_WORLD_H
