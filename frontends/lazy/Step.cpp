// kiln::step(): collect the live tensors with pending computations, cut one
// graph, find its program in the in-memory graph cache by structural hash
// (or lower and compile it, recording why), run it, and make those tensors
// device data. Donation: an input whose tensor was overwritten by assign_
// and that no live tensor still holds is given to the program. With a
// persistent cache directory (Options.cacheDir) a graph new to this process
// is first looked up on disk; with Options.dumpDir it is dumped for kilnc.
// With Options.checkNumerics the outputs are checked for NaN and Inf after
// the run (Numerics.h).
#include "frontends/lazy/Step.h"
#include "frontends/lazy/Eager.h"
#include "frontends/lazy/Graph.h"
#include "frontends/lazy/Lower.h"
#include "frontends/lazy/Numerics.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <unordered_map>

namespace kiln {

using namespace lazy;

namespace {

struct CacheEntry {
  GraphKey key;
  GraphSummary summary;
  std::unique_ptr<runtime::Program> program;
};

/// Structural hash → entries (more than one only on a hash collision).
std::unordered_map<uint64_t, std::vector<CacheEntry>> &graphCache() {
  static std::unordered_map<uint64_t, std::vector<CacheEntry>> cache;
  return cache;
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


/// The graph tag set_graph_tag() names traced graphs with.
std::string &graphTag() {
  static std::string tag = "step";
  return tag;
}

/// The persistent cache of options().cacheDir (cpu backend only), opened
/// on first use and again when the directory or mode changes; null when
/// none is configured. Misses are counted in metrics; warnings (a full or
/// unwritable directory) go to stderr once and the run goes on uncached.
runtime::PersistentCache *persistentCache() {
  static std::unique_ptr<runtime::PersistentCache> cache;
  static std::string openedFor;
  const Options &o = options();
  if (o.cacheDir.empty() || o.backend == Backend::reference)
    return nullptr;
  std::string config = o.cacheDir + (o.cacheReadOnly ? "\n1" : "\n0") +
                       std::to_string(o.cacheMaxBytes);
  if (!cache || openedFor != config) {
    runtime::PersistentCacheOptions cacheOptions;
    cacheOptions.directory = o.cacheDir;
    cacheOptions.readOnly = o.cacheReadOnly;
    if (o.cacheMaxBytes)
      cacheOptions.maxBytes = o.cacheMaxBytes;
    cacheOptions.log = [](const runtime::CacheLogRecord &record) {
      if (record.kind == runtime::CacheLogRecord::Kind::miss)
        ++mutableCounters()
              .persistentMissReasons[std::string(
                  runtime::cacheMissName(record.reason))];
      else if (record.kind == runtime::CacheLogRecord::Kind::warning)
        std::fprintf(stderr, "%s\n", record.message.c_str());
    };
    cache = std::make_unique<runtime::PersistentCache>(cacheOptions);
    openedFor = config;
  }
  return cache.get();
}

/// Throws `what` and `status`'s message: an OutOfMemoryError for a step
/// that does not fit (ResourceExhausted: the device's memory or its cap ran
/// out, or the plan stays over the memory budget), else an Error.
[[noreturn]] void throwStepFailure(const std::string &what,
                                   const absl::Status &status) {
  std::string message = what + std::string(status.message());
  if (absl::IsResourceExhausted(status))
    throw OutOfMemoryError(message);
  throw Error(message);
}

CacheEntry &compileEntry(const Graph &graph, GraphKey key,
                         const std::string &backend) {
  const uint64_t hash = key.hash;
  metrics::Counters &counters = mutableCounters();
  GraphSummary summary = summarize(graph, backend);
  std::string reason = compileReason(summary);
  GraphCompileRequest request = stepRequest();
  request.cache = persistentCache();
  request.dumpDir = options().dumpDir;
  request.passDumpDir = options().passDumpDir;
  request.graphHash = hash;
  request.tag = graphTag();
  request.locations = options().checkNumerics;
  auto start = std::chrono::steady_clock::now();
  auto compiled = compileGraph(graph, request);
  double ms = millisecondsSince(start);
  if (!compiled.ok())
    throwStepFailure("step: compiling or loading the graph failed: ",
                     compiled.status());
  counters.plannedPeakBytes =
      std::max<int64_t>(counters.plannedPeakBytes,
                        static_cast<int64_t>(compiled->cache.plannedPeakBytes));
  if (compiled->cache.hit) {
    // Loaded from the persistent cache: no compile happened.
    ++counters.persistentHits;
    counters.persistentLoadMilliseconds += ms;
  } else {
    counters.persistentMisses += compiled->cache.consulted;
    if (compiled->cache.consulted)
      reason += "; persistent cache: " +
                std::string(runtime::cacheMissName(compiled->cache.reason));
    ++counters.compiles;
    counters.compileMilliseconds += ms;
    counters.compileLog.push_back(
        {hash, reason, ms, summary.numOps, compiled->cache.thunks,
         static_cast<int64_t>(compiled->cache.plannedPeakBytes)});
  }
  auto &bucket = graphCache()[hash];
  bucket.push_back(
      {std::move(key), std::move(summary), std::move(compiled->program)});
  return bucket.back();
}

} // namespace

namespace lazy {

PendingTensors pendingTensors() {
  PendingTensors out;
  std::vector<std::shared_ptr<detail::TensorImpl>> live = liveTensors();
  std::unordered_set<const Node *> held;
  for (const auto &impl : live) {
    if (impl->node->isData()) {
      held.insert(impl->node.get());
    } else {
      out.pending.push_back(impl);
      out.outputs.push_back(impl->node);
    }
  }
  for (const auto &impl : live)
    if (impl->assignedFrom && !held.count(impl->assignedFrom.get()))
      out.donatable[impl->assignedFrom.get()] =
          impl->node->isData() ? nullptr : impl->node.get();
  out.collectives = pendingCollectives();
  return out;
}

GraphCompileRequest stepRequest() {
  GraphCompileRequest request;
  request.backend = compilerBackend(options().backend);
  request.memoryBudgetBytes = options().memoryBudgetBytes;
  request.partition = options().partition;
  request.cudaArch = options().cudaArch;
  request.tf32 = options().tf32;
  request.productType = options().productType;
  return request;
}

std::string compileOptionsText(const GraphCompileRequest &request) {
  std::string text(compiler::backendName(request.backend));
  if (request.backend == compiler::Backend::cuda)
    text += " " + request.cudaArch + (request.tf32 ? " tf32" : "");
  if (request.productType != DType::f32)
    text += " " + std::string(dtypeName(request.productType));
  if (request.memoryBudgetBytes != 0)
    text += " memory-budget " + std::to_string(request.memoryBudgetBytes);
  if (!request.partition)
    text += " partition 0";
  return text;
}

} // namespace lazy

void step() {
  if (eager::enabled())
    return eager::commit(); // everything already ran: only cut history
  // 1. Outputs: live tensors with pending nodes, in creation order; the
  //    donatable old values, after which no assign_ is pending.
  PendingTensors collected = pendingTensors();
  for (const auto &impl : liveTensors())
    impl->assignedFrom = nullptr;
  std::vector<std::shared_ptr<detail::TensorImpl>> &pending =
      collected.pending;
  if (pending.empty() && collected.collectives.empty())
    return;

  // 2. The graph and its cache key. The sums recorded so far are in it,
  // read or not, and no later step runs them again.
  metrics::Counters &counters = mutableCounters();
  ++counters.graphsTraced;
  auto graphStart = std::chrono::steady_clock::now();
  Graph graph =
      buildGraph(collected.outputs, collected.donatable, collected.collectives);
  pendingCollectives().clear();
  std::string backend = lazy::compileOptionsText(lazy::stepRequest());
  GraphKey key = graphKey(graph, backend);

  // 3. Cache lookup, compiling on a miss.
  CacheEntry *entry = nullptr;
  for (CacheEntry &candidate : graphCache()[key.hash])
    if (candidate.key == key)
      entry = &candidate;
  counters.graphMilliseconds += millisecondsSince(graphStart);
  if (entry)
    ++counters.cacheHits;
  else
    entry = &compileEntry(graph, std::move(key), backend);

  // 4. Run: donated buffers move into the program, the rest are lent (the
  // data nodes keep them alive and unchanged until run() returns). The
  // numerics check keeps host copies of the donated ones, which the run
  // consumes, in case it must re-run the step to find a NaN.
  bool checkNumerics = options().checkNumerics;
  std::vector<HostTensor> consumed(checkNumerics ? graph.inputs.size() : 0);
  std::vector<runtime::ProgramInput> inputs;
  inputs.reserve(graph.inputs.size());
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Node &input = *graph.inputs[i];
    if (!input.data)
      throw Error("step: an input's buffer was donated to an earlier step");
    counters.bytesIn += static_cast<int64_t>(input.data->byteSize());
    if (graph.donated[i]) {
      if (checkNumerics)
        consumed[i] = *input.data;
      inputs.push_back(runtime::ProgramInput::donate(std::move(*input.data)));
      input.data.reset();
    } else {
      inputs.push_back(runtime::ProgramInput::borrow(*input.data));
    }
  }
  auto results = lazy::runCounted(*entry->program, std::move(inputs));
  if (!results.ok())
    throwStepFailure("step: running the graph failed: ", results.status());
  if (results->size() != graph.outputs.size())
    throw Error("step: the program returned " +
                std::to_string(results->size()) + " values for " +
                std::to_string(graph.outputs.size()) + " outputs");

  // 5. Pending tensors become device data, also when the numerics check
  // fails: the error leaves the tensors usable (they hold the NaN).
  std::string numericsError;
  if (checkNumerics)
    numericsError = checkStepNumerics(graph, std::move(consumed), *results);
  std::unordered_map<const Node *, NodePtr> data;
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    counters.bytesOut += static_cast<int64_t>((*results)[i].byteSize());
    data[graph.outputs[i].get()] =
        dataNode(std::make_shared<HostTensor>(std::move((*results)[i])));
  }
  for (const auto &impl : pending)
    impl->node = data.at(impl->node.get());
  forgetInternedNodes(); // the graph is about to die whole
  if (!numericsError.empty())
    throw Error(numericsError);
}

void clear_graph_cache() {
  graphCache().clear();
  eager::clearKernelCache();
}

void set_graph_tag(std::string_view tag) { graphTag() = std::string(tag); }

namespace lazy {

compiler::Backend compilerBackend(Backend backend) {
  switch (backend) {
  case Backend::cpu: return compiler::Backend::cpu;
  case Backend::cuda: return compiler::Backend::cuda;
  case Backend::reference: break;
  }
  return compiler::Backend::reference;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

absl::StatusOr<std::vector<HostTensor>>
runCounted(runtime::Program &program,
           std::vector<runtime::ProgramInput> inputs) {
  metrics::Counters &counters = mutableCounters();
  runtime::AllocationStats before = program.allocationStats();
  bool profiling = !options().profilePath.empty();
  program.setProfiling(profiling);
  auto start = std::chrono::steady_clock::now();
  auto results = program.run(std::move(inputs));
  counters.executeMilliseconds += millisecondsSince(start);
  if (profiling && results.ok())
    profileRun(program, start);
  runtime::AllocationStats after = program.allocationStats();
  counters.runtimeAllocations += after.buffers - before.buffers;
  counters.runtimeAllocatedBytes += after.bytes - before.bytes;
  return results;
}

void forcedSync() {
  ++mutableCounters().forcedSyncs;
  step();
}
} // namespace lazy

} // namespace kiln
