// The shared random-graph differential check (RandomGraphCheck.h): parse
// each generated graph, evaluate the reference, hand the module to the
// backend, compare, and write a reduced reproducer on a mismatch.
#include "RandomGraphCheck.h"

#include "CpuTestSupport.h"
#include "RandomGraph.h"

#include "llvm/Support/Signals.h"

#include <unistd.h>

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

/// Per value: whether it depends on a scatter_add, whose float sums an
/// atomic kernel adds in no fixed order. (Integer sums are exact in any
/// order, and the generator compares or converts to integers only values
/// that are exact: for those the reference's comparison is exact too.)
std::vector<bool> dependsOnScatter(const RandomGraph &graph) {
  std::vector<bool> depends(graph.values.size(), false);
  for (const GraphOp &op : graph.ops) {
    bool any = op.text.find("kiln.scatter_add") != std::string::npos;
    for (int operand : op.operands)
      any = any || depends[operand];
    for (int result : op.results)
      depends[result] = any;
  }
  return depends;
}

Outcome checkGraph(const RandomGraph &graph, const RandomGraphCheck &check) {
  const RunOnBackend &run = check.run;
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
  std::vector<bool> reordered;
  if (check.floatAtomicsReorder)
    reordered = dependsOnScatter(graph);
  for (size_t i = 0; i < results.size(); ++i) {
    const GraphValue &v = graph.values[results[i]];
    std::string diff = compareTensors(runs.results[i], (*expected)[i], v.scale);
    if (!diff.empty())
      return {v.name + ": " + diff, results[i]};
    if (!reordered.empty() && reordered[results[i]]) {
      std::string again = compareTensors(runs.rerun[i], (*expected)[i], v.scale);
      if (!again.empty())
        return {v.name + ": " + runs.rerunDiffers + ": " + again, results[i]};
    } else if (!runs.results[i].bitwiseEqual(runs.rerun[i])) {
      return {v.name + ": " + runs.rerunDiffers, results[i]};
    }
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

/// The graph this thread is checking, for crashLocator.
thread_local const std::string *tGraphText = nullptr;

/// On a crash (the GPU machine has no debugger): the crashing thread's
/// graph, then LLVM's stack trace. Best effort: write(2) only, no locks.
void crashLocator(void *) {
  const std::string *text = tGraphText;
  if (!text)
    return;
  constexpr char kHeader[] = "\nrandom graph check: crashed in this graph:\n";
  (void)!::write(2, kHeader, sizeof(kHeader) - 1);
  (void)!::write(2, text->data(), text->size());
}

void reportCrashes() {
  static const bool installed = [] {
    llvm::sys::PrintStackTraceOnErrorSignal("");
    llvm::sys::AddSignalHandler(crashLocator, nullptr);
    return true;
  }();
  (void)installed;
}

} // namespace

std::vector<std::string> checkRandomGraphs(const RandomGraphCheck &check) {
  reportCrashes();
  std::mutex mutex;
  std::vector<std::string> failures;
  auto worker = [&](int thread) {
    for (uint32_t seed = thread; seed < check.graphs; seed += check.threads) {
      std::mt19937 rng(seed);
      RandomGraph graph = RandomGraph::generate(rng, 3 + rng() % 6);
      std::string text = "// seed " + std::to_string(seed) + "\n" + graph.toMlir();
      tGraphText = &text;
      Outcome outcome = checkGraph(graph, check);
      tGraphText = nullptr;
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
