// kiln::step(): collect the live tensors with pending computations, cut one
// graph, find its program in the in-memory graph cache by structural hash
// (or lower and compile it, recording why), run it, and make those tensors
// device data. Donation: an input whose tensor was overwritten by assign_
// and that no live tensor still holds is given to the program.
#include "frontends/lazy/Step.h"
#include "frontends/lazy/Graph.h"
#include "frontends/lazy/Lower.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace kiln {

using namespace lazy;

namespace {

struct CacheEntry {
  std::string key;
  GraphSummary summary;
  std::unique_ptr<runtime::Program> program;
};

/// Structural hash → entries (more than one only on a hash collision).
std::unordered_map<uint64_t, std::vector<CacheEntry>> &graphCache() {
  static std::unordered_map<uint64_t, std::vector<CacheEntry>> cache;
  return cache;
}

compiler::Backend compilerBackend(Backend backend) {
  return backend == Backend::cpu ? compiler::Backend::cpu
                                 : compiler::Backend::reference;
}

/// "first sight", or how `summary` differs from the nearest cached graph.
std::string compileReason(const GraphSummary &summary) {
  std::string best = "first sight";
  int64_t bestDistance = INT64_MAX, bestOpDelta = INT64_MAX;
  for (const auto &[hash, entries] : graphCache())
    for (const CacheEntry &entry : entries) {
      int64_t distance;
      std::string reason = describeDifference(summary, entry.summary, distance);
      int64_t opDelta = std::llabs(summary.numOps - entry.summary.numOps);
      if (distance < bestDistance ||
          (distance == bestDistance && opDelta < bestOpDelta)) {
        best = reason;
        bestDistance = distance;
        bestOpDelta = opDelta;
      }
    }
  return best;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

CacheEntry &compileEntry(const Graph &graph, std::string key, uint64_t hash,
                         const std::string &backend) {
  metrics::Counters &counters = mutableCounters();
  GraphSummary summary = summarize(graph, backend);
  std::string reason = compileReason(summary);
  std::string dumpPath;
  if (!options().dumpDir.empty()) {
    char name[40];
    std::snprintf(name, sizeof name, "/graph-%016llx.mlir",
                  static_cast<unsigned long long>(hash));
    dumpPath = options().dumpDir + name;
  }
  auto start = std::chrono::steady_clock::now();
  auto program =
      compileGraph(graph, compilerBackend(options().backend), dumpPath);
  double ms = millisecondsSince(start);
  if (!program.ok())
    throw Error("step: compiling the graph failed: " +
                std::string(program.status().message()));
  ++counters.compiles;
  counters.compileMilliseconds += ms;
  counters.compileLog.push_back({hash, reason, ms, summary.numOps});
  auto &bucket = graphCache()[hash];
  bucket.push_back({std::move(key), std::move(summary), std::move(*program)});
  return bucket.back();
}

} // namespace

void step() {
  // 1. Outputs: live tensors with pending nodes, in creation order.
  std::vector<std::shared_ptr<detail::TensorImpl>> live = liveTensors(),
                                                   pending;
  std::vector<NodePtr> outputs;
  std::unordered_set<const Node *> held, donatable;
  for (const auto &impl : live) {
    if (impl->node->isData()) {
      held.insert(impl->node.get());
    } else {
      pending.push_back(impl);
      outputs.push_back(impl->node);
    }
  }
  for (const auto &impl : live)
    if (impl->assignedFrom && !held.count(impl->assignedFrom.get()))
      donatable.insert(impl->assignedFrom.get());
  for (const auto &impl : live)
    impl->assignedFrom = nullptr;
  if (pending.empty())
    return;

  // 2. The graph and its cache key.
  metrics::Counters &counters = mutableCounters();
  ++counters.graphsTraced;
  Graph graph = buildGraph(outputs, donatable);
  std::string backend = options().backend == Backend::cpu ? "cpu" : "reference";
  std::string key = "backend " + backend + "\n" + canonicalForm(graph);
  uint64_t hash = fingerprint(key);

  // 3. Cache lookup, compiling on a miss.
  CacheEntry *entry = nullptr;
  for (CacheEntry &candidate : graphCache()[hash])
    if (candidate.key == key)
      entry = &candidate;
  if (entry)
    ++counters.cacheHits;
  else
    entry = &compileEntry(graph, std::move(key), hash, backend);

  // 4. Run: donated buffers move into the program, the rest are copied.
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Node &input = *graph.inputs[i];
    if (!input.data)
      throw Error("step: an input's buffer was donated to an earlier step");
    counters.bytesIn += static_cast<int64_t>(input.data->byteSize());
    if (graph.donated[i]) {
      inputs.push_back(std::move(*input.data));
      input.data.reset();
    } else {
      inputs.push_back(*input.data);
    }
  }
  auto start = std::chrono::steady_clock::now();
  auto results = entry->program->run(std::move(inputs));
  counters.executeMilliseconds += millisecondsSince(start);
  if (!results.ok())
    throw Error("step: running the graph failed: " +
                std::string(results.status().message()));
  if (results->size() != graph.outputs.size())
    throw Error("step: the program returned " +
                std::to_string(results->size()) + " values for " +
                std::to_string(graph.outputs.size()) + " outputs");

  // 5. Pending tensors become device data.
  std::unordered_map<const Node *, NodePtr> data;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    counters.bytesOut += static_cast<int64_t>((*results)[i].byteSize());
    data[graph.outputs[i].get()] =
        dataNode(std::make_shared<HostTensor>(std::move((*results)[i])));
  }
  for (const auto &impl : pending)
    impl->node = data.at(impl->node.get());
}

void clear_graph_cache() { graphCache().clear(); }

namespace lazy {
void forcedSync() {
  ++mutableCounters().forcedSyncs;
  step();
}
} // namespace lazy

} // namespace kiln
