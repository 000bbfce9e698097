// The shared random-graph differential check (RandomGraphCheck.h): parse
// each generated graph, evaluate the reference, hand the module to the
// backend, compare, and write a reduced reproducer on a mismatch.
#include "RandomGraphCheck.h"

#include "CpuTestSupport.h"
#include "RandomGraph.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

namespace kiln::testing {
namespace {

struct Outcome {
  std::string error; // empty when the graph passed
  int firstBadValue = -1;
};

Outcome checkGraph(const RandomGraph &graph, const RunOnBackend &run) {
  ParsedModule parsed = parseModule(graph.toMlir());
  if (!parsed.module)
    return {"generated graph does not parse"};
  auto main = parsed.module->lookupSymbol<mlir::func::FuncOp>("main");
  // The reference first: compiling runs the pipeline over the module in
  // place.
  auto expected = reference::evaluate(main, graph.inputData);
  if (!expected.ok())
    return {"reference: " + expected.status().ToString()};
  BackendRuns runs = run(*parsed.module, graph.inputData);
  if (!runs.error.empty())
    return {runs.error};
  std::vector<int> results = graph.allResults();
  if (runs.results.size() != results.size() ||
      runs.rerun.size() != results.size())
    return {"the backend returned " + std::to_string(runs.results.size()) +
            " and " + std::to_string(runs.rerun.size()) + " results, not " +
            std::to_string(results.size())};
  for (size_t i = 0; i < results.size(); ++i) {
    const GraphValue &v = graph.values[results[i]];
    std::string diff = compareTensors(runs.results[i], (*expected)[i], v.scale);
    if (!diff.empty())
      return {v.name + ": " + diff, results[i]};
    if (!runs.results[i].bitwiseEqual(runs.rerun[i]))
      return {v.name + ": " + runs.rerunDiffers, results[i]};
  }
  return {};
}

std::string writeReproducer(const RandomGraphCheck &check,
                            const RandomGraph &graph, int value,
                            uint32_t seed) {
  std::string path = "/tmp/kiln-" + check.backend + "-repro-" +
                     std::to_string(seed) + ".mlir";
  std::ofstream out(path);
  out << "// " << check.testName << " seed " << seed
      << ": reduced to the ancestors of the first wrong value\n"
      << graph.toMlir({value});
  return path;
}

} // namespace

std::vector<std::string> checkRandomGraphs(const RandomGraphCheck &check) {
  std::mutex mutex;
  std::vector<std::string> failures;
  auto worker = [&](int thread) {
    for (uint32_t seed = thread; seed < check.graphs; seed += check.threads) {
      std::mt19937 rng(seed);
      RandomGraph graph = RandomGraph::generate(rng, 3 + rng() % 6);
      Outcome outcome = checkGraph(graph, check.run);
      if (outcome.error.empty())
        continue;
      std::string path =
          outcome.firstBadValue >= 0
              ? writeReproducer(check, graph, outcome.firstBadValue, seed)
              : "(none)";
      std::lock_guard<std::mutex> lock(mutex);
      failures.push_back("seed " + std::to_string(seed) + ": " + outcome.error +
                         "\nreproducer: " + path + "\nfull graph:\n" +
                         graph.toMlir());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < check.threads; ++t)
    threads.emplace_back(worker, t);
  for (std::thread &t : threads)
    t.join();
  return failures;
}

void expectRandomGraphsMatchReference(const RandomGraphCheck &check) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> failures = checkRandomGraphs(check);
  for (size_t i = 0; i < failures.size() && i < 5; ++i)
    ADD_FAILURE() << failures[i];
  EXPECT_EQ(failures.size(), 0u);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("%u random graphs in %.1f s (%d threads)\n", check.graphs,
              seconds, check.threads);
}

} // namespace kiln::testing
