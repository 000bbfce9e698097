// Random-graph differential testing of the CPU backend: 1000 random
// well-typed graphs (tests/unit/RandomGraph.h), each compiled as one
// executable and compared with the reference evaluator value by value, and
// run a second time with dead arena bytes poisoned (bitwise equal). On a
// mismatch the graph is reduced to the ancestors of the first wrong value
// and written as a reproducer .mlir (path in the failure message).
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

Outcome check(const RandomGraph &graph) {
  ParsedModule parsed = parseModule(graph.toMlir());
  if (!parsed.module)
    return {"generated graph does not parse"};
  auto main = parsed.module->lookupSymbol<mlir::func::FuncOp>("main");
  auto expected = reference::evaluate(main, graph.inputData);
  if (!expected.ok())
    return {"reference: " + expected.status().ToString()};
  auto exe = compiler::cpu::compileExecutable(*parsed.module, "main");
  if (!exe.ok())
    return {"compile: " + exe.status().ToString()};
  // The same executable twice: as planned, and with every dead arena byte
  // poisoned with NaN after each thunk. A plan that reuses memory too early
  // makes the two differ.
  runtime::CpuRuntimeOptions poisoned;
  poisoned.poisonDeadBuffers = true;
  auto program = runtime::loadCpuProgram(*exe);
  auto poisonedProgram = runtime::loadCpuProgram(*exe, poisoned);
  if (!program.ok() || !poisonedProgram.ok())
    return {"load: " + (program.ok() ? poisonedProgram.status()
                                     : program.status()).ToString()};
  auto actual = (*program)->run(runtime::borrowAll(graph.inputData));
  auto again = (*poisonedProgram)->run(runtime::borrowAll(graph.inputData));
  if (!actual.ok() || !again.ok())
    return {"run: " + (actual.ok() ? again.status() : actual.status()).ToString()};
  std::vector<int> results = graph.allResults();
  for (size_t i = 0; i < results.size(); ++i) {
    const GraphValue &v = graph.values[results[i]];
    std::string diff = compareTensors((*actual)[i], (*expected)[i], v.scale);
    if (!diff.empty())
      return {v.name + ": " + diff, results[i]};
    if (!(*actual)[i].bitwiseEqual((*again)[i]))
      return {v.name + ": differs when dead arena bytes are poisoned",
              results[i]};
  }
  return {};
}

std::string writeReproducer(const RandomGraph &graph, int value,
                            uint32_t seed) {
  std::string path = "/tmp/kiln-cpu-repro-" + std::to_string(seed) + ".mlir";
  std::ofstream out(path);
  out << "// CpuRandomGraphTest seed " << seed
      << ": reduced to the ancestors of the first wrong value\n"
      << graph.toMlir({value});
  return path;
}

TEST(CpuRandomGraphs, ThousandGraphsAgreeWithReference) {
  constexpr uint32_t kGraphs = 1000;
  constexpr int kThreads = 2; // each graph has its own MLIRContext
  auto start = std::chrono::steady_clock::now();
  std::mutex mutex;
  std::vector<std::string> failures;
  auto worker = [&](int thread) {
    for (uint32_t seed = thread; seed < kGraphs; seed += kThreads) {
      std::mt19937 rng(seed);
      RandomGraph graph = RandomGraph::generate(rng, 3 + rng() % 6);
      Outcome outcome = check(graph);
      if (outcome.error.empty())
        continue;
      std::string path =
          outcome.firstBadValue >= 0
              ? writeReproducer(graph, outcome.firstBadValue, seed)
              : "(none)";
      std::lock_guard<std::mutex> lock(mutex);
      failures.push_back("seed " + std::to_string(seed) + ": " + outcome.error +
                         "\nreproducer: " + path + "\nfull graph:\n" +
                         graph.toMlir());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(worker, t);
  for (std::thread &t : threads)
    t.join();
  for (size_t i = 0; i < failures.size() && i < 5; ++i)
    ADD_FAILURE() << failures[i];
  EXPECT_EQ(failures.size(), 0u);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("%u random graphs in %.1f s (%d threads)\n", kGraphs, seconds,
              kThreads);
}

} // namespace
} // namespace kiln::testing
