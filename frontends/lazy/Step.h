// Internal hooks between the tensor handles and step(): the forced sync that
// to_host()/item() run on a pending tensor, and the metrics counters that
// step() updates.
#ifndef KILN_FRONTENDS_LAZY_STEP_H
#define KILN_FRONTENDS_LAZY_STEP_H

#include "compiler/Compiler.h"
#include "frontends/lazy/Lower.h"
#include "frontends/lazy/Node.h"
#include "frontends/lazy/Tensor.h"
#include "runtime/Program.h"

#include <chrono>
#include <unordered_map>
#include <vector>

namespace kiln::lazy {

/// The compiler's backend for a frontend backend.
compiler::Backend compilerBackend(Backend backend);

/// What step() would compute now: the live tensors with pending nodes (in
/// creation order), their nodes (the graph's outputs), and each donatable
/// old value (replaced by assign_, held by no live tensor) → the pending
/// node that replaces it (null when a data node does).
struct PendingTensors {
  std::vector<std::shared_ptr<detail::TensorImpl>> pending;
  std::vector<NodePtr> outputs;
  std::unordered_map<const Node *, const Node *> donatable;
  /// The sums over the processes recorded since the last step
  /// (pendingCollectives()), which run read or not.
  std::vector<NodePtr> collectives;
};
PendingTensors pendingTensors();

/// The compile request the options make for a step's graph (backend,
/// budget, partition, target, precision); no cache, dump or tag.
GraphCompileRequest stepRequest();

/// The options of `request` that change what it compiles, as text: the
/// backend (with the cuda architecture and TF32), the product type, the
/// memory budget and the partitioner. In the in-process graph cache's key,
/// so changing any of them between steps compiles again, and in the
/// summary that says why a graph missed.
std::string compileOptionsText(const GraphCompileRequest &request);

/// Runs step() on behalf of a host transfer and counts it as a forced sync.
void forcedSync();

/// The counters behind kiln::metrics, for step() to update.
metrics::Counters &mutableCounters();

/// Milliseconds from `start` to now.
double millisecondsSince(std::chrono::steady_clock::time_point start);

/// Runs a compiled graph or eager kernel, adding its time and the buffers
/// its run allocated to the counters (graph mode and eager mode alike), and
/// its thunks' times to the profile when Options::profilePath is set.
absl::StatusOr<std::vector<HostTensor>>
runCounted(runtime::Program &program,
           std::vector<runtime::ProgramInput> inputs);

/// Hands `program`'s profile of the run that began at `start` to the
/// process's profiler (Profiling.cpp).
void profileRun(runtime::Program &program,
                std::chrono::steady_clock::time_point start);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_STEP_H
