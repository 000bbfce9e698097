// Internal hooks between the tensor handles and step(): the forced sync that
// to_host()/item() run on a pending tensor, and the metrics counters that
// step() updates.
#ifndef KILN_FRONTENDS_LAZY_STEP_H
#define KILN_FRONTENDS_LAZY_STEP_H

#include "compiler/Compiler.h"
#include "frontends/lazy/Tensor.h"
#include "runtime/Program.h"

#include <chrono>
#include <vector>

namespace kiln::lazy {

/// The compiler's backend for a frontend backend.
compiler::Backend compilerBackend(Backend backend);

/// Runs step() on behalf of a host transfer and counts it as a forced sync.
void forcedSync();

/// The counters behind kiln::metrics, for step() to update.
metrics::Counters &mutableCounters();

/// Milliseconds from `start` to now.
double millisecondsSince(std::chrono::steady_clock::time_point start);

/// Runs a compiled graph or eager kernel, adding its time and the buffers
/// its run allocated to the counters (graph mode and eager mode alike).
absl::StatusOr<std::vector<HostTensor>>
runCounted(runtime::Program &program,
           std::vector<runtime::ProgramInput> inputs);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_STEP_H
