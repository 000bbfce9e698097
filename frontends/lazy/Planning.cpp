// Planning a step without running it: the memory a training step would
// need at some batch size, read from the compiler's memory plan (the
// pipeline, lowering and planner a real compile runs, stopped before code
// generation), and a bisection over batch sizes on it: the batch advisor
// behind kiln-train's --auto_find_batch_size. A probe traces a step on the
// live model, so every tensor it touches is put back afterwards.
#include "frontends/lazy/Eager.h"
#include "frontends/lazy/Graph.h"
#include "frontends/lazy/Lower.h"
#include "frontends/lazy/Node.h"
#include "frontends/lazy/Step.h"
#include "support/HostTensor.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <unistd.h>

namespace kiln {

using namespace lazy;

namespace {

/// Throws where nothing can be planned, before anything is traced (in
/// eager mode a probe would run the step it should only plan).
void checkPlannable(const char *caller) {
  if (eager::enabled())
    throw Error(std::string(caller) +
                ": eager mode runs every op at once; there is no step to plan");
  if (options().backend == Backend::reference)
    throw Error(std::string(caller) +
                ": the reference backend plans no memory; use the cpu or "
                "cuda backend");
}

/// The resident set in bytes (statm's second field, in pages); 0 where
/// /proc is absent.
uint64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t sizePages = 0, residentPages = 0;
  if (!(statm >> sizePages >> residentPages))
    return 0;
  return residentPages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

/// The first node whose shape has more elements than kiln's IR allows
/// (kMaxTensorElements), or null.
const Node *pastTheElementLimit(const Graph &graph) {
  for (const NodePtr &node : graph.nodes)
    if (!boundedElementCount(node->shape))
      return node.get();
  return nullptr;
}

} // namespace

uint64_t memory_outside_plans() {
  uint64_t resident = residentBytes(), tensors = residentMappedBytes();
  return resident > tensors ? resident - tensors : 0;
}

uint64_t memory_for_plans() {
  constexpr uint64_t kHeldOutsidePlans = 128ull << 20;
  absl::StatusOr<uint64_t> available =
      compiler::memoryAvailable(compilerBackend(options().backend));
  if (!available.ok())
    throw Error(std::string(available.status().message()));
  if (*available <= kHeldOutsidePlans)
    throw Error("only " + std::to_string(*available) +
                " bytes of memory are available for the " +
                std::string(backendName(options().backend)) +
                " backend's programs: nothing is left to plan a step in");
  return *available - kHeldOutsidePlans;
}

std::optional<uint64_t> plan_step(std::string *overBudget) {
  checkPlannable("plan_step");
  PendingTensors collected = pendingTensors();
  if (collected.pending.empty() && collected.collectives.empty())
    return 0;
  Graph graph =
      buildGraph(collected.outputs, collected.donatable, collected.collectives);
  // No memory holds a tensor past the IR's element limit: such a step does
  // not fit, as one over the budget does (the batch advisor's bisection
  // then looks below it) rather than failing to compile.
  if (const Node *huge = pastTheElementLimit(graph)) {
    if (overBudget) {
      std::string dims;
      for (int64_t dim : huge->shape)
        dims += (dims.empty() ? "" : "x") + std::to_string(dim);
      *overBudget = "a tensor of shape " + dims + " has more than 2^40 " +
                    "elements, the most a kiln tensor may have";
    }
    return std::nullopt;
  }
  GraphCompileRequest request = stepRequest();
  // With KILN_DUMP_GRAPHS the planned graph is written as step() writes
  // the graphs it compiles, so `kilnc compile --print-thunks` can show the
  // kernels of a step that was only planned (a model too large to run).
  request.dumpDir = options().dumpDir;
  if (!request.dumpDir.empty()) {
    request.graphHash = graphKey(graph, compileOptionsText(request)).hash;
    request.tag = "plan";
  }
  absl::StatusOr<uint64_t> peak = planGraph(graph, request);
  if (peak.ok())
    return *peak;
  if (peak.status().code() == absl::StatusCode::kResourceExhausted) {
    if (overBudget)
      *overBudget = std::string(peak.status().message());
    return std::nullopt;
  }
  throw Error("plan_step: planning the graph failed: " +
              std::string(peak.status().message()));
}

std::optional<uint64_t> plan_traced(const std::function<TracedStep()> &trace,
                                    std::string *overBudget) {
  checkPlannable("plan_traced");
  struct Saved {
    std::shared_ptr<detail::TensorImpl> impl;
    NodePtr node, assignedFrom;
    Tensor grad;
    bool requiresGrad, isLeaf;
  };
  std::vector<Saved> saved;
  for (const auto &impl : liveTensors())
    saved.push_back({impl, impl->node, impl->assignedFrom, impl->grad,
                     impl->requiresGrad, impl->isLeaf});
  // The probe's sums over the processes are not the run's.
  const size_t collectives = pendingCollectives().size();
  auto restore = [&] {
    pendingCollectives().resize(collectives);
    for (Saved &s : saved) {
      s.impl->node = s.node;
      s.impl->assignedFrom = s.assignedFrom;
      s.impl->grad = s.grad;
      s.impl->requiresGrad = s.requiresGrad;
      s.impl->isLeaf = s.isLeaf;
    }
  };
  try {
    TracedStep alive = trace();
    std::optional<uint64_t> peak = plan_step(overBudget);
    alive.reset();
    restore();
    return peak;
  } catch (...) {
    restore();
    throw;
  }
}

int64_t largest_planned_batch(
    int64_t most, int64_t first,
    const std::function<TracedStep(int64_t)> &traceStep,
    const std::function<void(int64_t, std::optional<uint64_t>)> &report) {
  checkPlannable("largest_planned_batch");
  const uint64_t budget = options().memoryBudgetBytes;
  if (budget == 0)
    throw Error("largest_planned_batch: no memory budget to fit (set "
                "Options::memoryBudgetBytes)");
  if (most < 1)
    return 0;
  auto fits = [&](int64_t batch) {
    std::optional<uint64_t> peak =
        plan_traced([&] { return traceStep(batch); });
    if (report)
      report(batch, peak);
    return peak && *peak <= budget;
  };
  // lo fits (0 trivially); hi does not, or is past `most` while no probe
  // has failed. A probe's cost grows with its batch (attention and loss
  // chunks, and the recomputation an over-budget plan tries: Gemma 3 1B's
  // full fine-tune plans batch 128 in a minute, 1024 in over ten), so the
  // search climbs by doubling from a probe that fits and never plans more
  // than twice the answer; from one that does not, it halves, or, far
  // apart, probes the middle in log space to find the answer's octave.
  constexpr int64_t kFarApart = 1024;
  const int64_t pastMost = most + 1;
  int64_t lo = 0, hi = pastMost;
  int64_t probe = std::clamp<int64_t>(first, 1, most);
  while (true) {
    (fits(probe) ? lo : hi) = probe;
    if (hi - lo <= 1)
      return lo;
    if (hi == pastMost)
      probe = std::min(2 * lo, most);
    else if (lo == 0 && hi > kFarApart)
      probe = static_cast<int64_t>(std::sqrt(double(hi)));
    else if (lo > 0 && hi / lo > kFarApart)
      probe = static_cast<int64_t>(std::sqrt(double(lo) * double(hi)));
    else
      probe = lo + (hi - lo) / 2;
    probe = std::clamp(probe, lo + 1, hi - 1);
  }
}

} // namespace kiln
