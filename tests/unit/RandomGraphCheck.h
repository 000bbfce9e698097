// The random-graph differential check every native backend shares: random
// well-typed graphs (RandomGraph.h), each compared value by value with the
// reference evaluator under docs/TESTING.md's rule, and run a second time
// in a way that must not change a bit (the CPU poisons dead arena bytes,
// CUDA replays a captured graph). A failing graph is reduced to the
// ancestors of its first wrong value and written as a reproducer .mlir.
// The backend is a parameter: a function that compiles, loads and runs.
#ifndef KILN_TESTS_UNIT_RANDOMGRAPHCHECK_H
#define KILN_TESTS_UNIT_RANDOMGRAPHCHECK_H

#include "support/HostTensor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::testing {

/// What the backend under test made of one graph.
struct BackendRuns {
  /// Empty when both runs happened; else "compile: ...", "load: ..." or
  /// "run: ..." with the status.
  std::string error;
  /// The first run's results (compared with the reference) and the second
  /// run's (must be bitwise equal to the first).
  std::vector<HostTensor> results, rerun;
  /// How the second run differs from the first, for the failure message
  /// ("differs when dead arena bytes are poisoned").
  std::string rerunDiffers;

  /// The backend could not run the graph: `error` says where and why.
  static BackendRuns failure(std::string error) {
    BackendRuns runs;
    runs.error = std::move(error);
    return runs;
  }
};

/// The parsed graph (its @main, the reference already evaluated) and its
/// inputs → both runs on the backend. Called from several threads at once,
/// each with its own MLIRContext.
using RunOnBackend = std::function<BackendRuns(
    mlir::ModuleOp module, const std::vector<HostTensor> &inputs)>;

struct RandomGraphCheck {
  /// Names reproducers: /tmp/kiln-<backend>-repro-<seed>.mlir.
  std::string backend;
  /// The test, named in each reproducer's first line.
  std::string testName;
  /// Graphs with seeds 0 .. graphs-1, spread over `threads` threads.
  uint32_t graphs = 1000;
  int threads = 2;
  RunOnBackend run;
  /// The backend's float scatter_add adds with atomics, in whatever order
  /// its threads arrive (as PyTorch's and XLA's GPU scatters do): values
  /// that depend on one may differ in their last bits between the two
  /// runs, so those are held to the reference's tolerance instead.
  bool floatAtomicsReorder = false;
};

/// Generates and checks every graph → one message per failing graph (seed,
/// the mismatch, the reproducer's path, the full graph).
std::vector<std::string> checkRandomGraphs(const RandomGraphCheck &check);

/// The test body: checkRandomGraphs, the first five failures reported as
/// test failures, and the count, time and threads printed.
void expectRandomGraphsMatchReference(const RandomGraphCheck &check);

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_RANDOMGRAPHCHECK_H
