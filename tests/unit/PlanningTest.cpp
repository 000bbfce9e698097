// Planning a step without running it (frontends/lazy/Planning.cpp): a
// traced training step's planned peak grows with its batch and is the one
// the real step's compile reports; planning leaves no trace (training
// afterwards has bit-identical losses, and nothing compiled or ran); the
// batch bisection agrees with trying every batch; planning where nothing
// can be planned is a clear error; a budget low enough to recompute a GEMM
// trains to the same losses.
#include "TinyGPT2.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

namespace kiln::testing {
namespace {

/// The tiny model's training step at `batch`, traced on `t`'s model with a
/// probe AdamW (forward, backward, clipping, update).
TracedStep traceTinyStep(TinyGPT2Training &t, int64_t batch) {
  struct Probe {
    Probe(nn::NamedTensors params, const nn::AdamW::Options &options)
        : optimizer(std::move(params), options) {}
    nn::AdamW optimizer;
    Tensor loss;
  };
  nn::AdamW::Options o;
  o.lr = 3e-3;
  o.weight_decay = 0.01;
  auto probe = std::make_shared<Probe>(t.model.named_parameters(), o);
  Tensor ids = Tensor::from_vector(std::vector<double>(batch * 32, 1.0),
                                   {batch, 32}, DType::i64);
  probe->loss = t.model.loss(ids, ids);
  probe->loss.backward();
  nn::clip_grad_norm_(t.model.parameters(), 1.0);
  probe->optimizer.step();
  probe->optimizer.zero_grad();
  return probe;
}

/// Compiled graphs on the cpu backend, under `budget` bytes (0: none).
Options cpuOptions(uint64_t budget = 0) {
  Options o = options_from_env();
  o.backend = Backend::cpu;
  o.mode = Mode::graph;
  o.memoryBudgetBytes = budget;
  return o;
}

TEST(Planning, PeakGrowsWithTheBatchAndIsTheCompiledStepsPeak) {
  set_options(cpuOptions());
  TinyGPT2Training t(10);
  metrics::reset();
  std::optional<uint64_t> four = plan_traced([&] { return traceTinyStep(t, 4); });
  std::optional<uint64_t> eight =
      plan_traced([&] { return traceTinyStep(t, 8); });
  ASSERT_TRUE(four && eight);
  EXPECT_GT(*four, 0u);
  EXPECT_GT(*eight, *four);
  // Planned, not compiled or run.
  EXPECT_EQ(metrics::counters().compiles, 0) << metrics::report();
  EXPECT_EQ(metrics::counters().graphsTraced, 0) << metrics::report();
  // The real step at batch 4 (other ids, the run's own AdamW) is the same
  // graph: its compile plans the same peak.
  t.step();
  EXPECT_EQ(metrics::counters().compiles, 1);
  EXPECT_EQ(metrics::counters().plannedPeakBytes, static_cast<int64_t>(*four));
}

TEST(Planning, LeavesTheTrainingAsItWas) {
  set_options(cpuOptions());
  std::vector<double> plain, planned;
  {
    TinyGPT2Training t(10);
    for (int s = 0; s < 3; ++s)
      plain.push_back(t.step().item());
  }
  {
    TinyGPT2Training t(10);
    for (int s = 0; s < 3; ++s) {
      // Between steps, and with the step half traced: the probe's trace
      // replaces parameters, gradients and the dropout state, all put back.
      ASSERT_TRUE(plan_traced([&] { return traceTinyStep(t, 8); }));
      Tensor loss = t.model.loss(t.input, t.input);
      ASSERT_TRUE(plan_traced([&] { return traceTinyStep(t, 2); }));
      loss.backward();
      nn::clip_grad_norm_(t.model.parameters(), 1.0);
      t.opt.step();
      t.sched.step();
      t.opt.zero_grad();
      kiln::step();
      planned.push_back(loss.item());
    }
  }
  ASSERT_EQ(plain.size(), planned.size());
  for (size_t s = 0; s < plain.size(); ++s)
    EXPECT_EQ(plain[s], planned[s]) << "step " << s;
  EXPECT_NE(plain.front(), plain.back()) << "the loss must move";
}

TEST(Planning, BisectionFindsWhatTryingEveryBatchFinds) {
  set_options(cpuOptions());
  TinyGPT2Training t(10);
  std::optional<uint64_t> three =
      plan_traced([&] { return traceTinyStep(t, 3); });
  ASSERT_TRUE(three);
  // Batch 3's peak as the budget: recomputation under it fits more than 3,
  // but not 16 (whose saved GEMM inputs alone are 5 times larger).
  const uint64_t budget = *three;
  set_options(cpuOptions(budget));
  int64_t exhaustive = 0;
  for (int64_t b = 1; b <= 16; ++b) {
    std::optional<uint64_t> peak =
        plan_traced([&] { return traceTinyStep(t, b); });
    if (peak && *peak <= budget)
      exhaustive = b;
  }
  ASSERT_GE(exhaustive, 3);
  ASSERT_LT(exhaustive, 16);
  auto trace = [&](int64_t b) { return traceTinyStep(t, b); };
  std::vector<int64_t> probed;
  auto record = [&](int64_t b, std::optional<uint64_t>) {
    probed.push_back(b);
  };
  // From the top, as auto_find_batch_size asks: 16 does not fit.
  EXPECT_EQ(largest_planned_batch(16, 16, trace, record), exhaustive);
  EXPECT_EQ(probed.front(), 16);
  EXPECT_LE(probed.size(), 5u); // 16, then at most four halvings
  // From below, as kilnc plan --max_batch climbs under a loose limit: the
  // same answer, and no probe past twice it (a probe's cost grows with
  // its batch).
  probed.clear();
  EXPECT_EQ(largest_planned_batch(1 << 20, 1, trace, record), exhaustive);
  EXPECT_EQ(probed.front(), 1);
  EXPECT_LE(*std::max_element(probed.begin(), probed.end()), 2 * exhaustive);
  EXPECT_LE(probed.size(), 8u); // 1, 2, 4, 8, (16,) then a bisection
  // One probe when the asked batch fits, from either end.
  probed.clear();
  EXPECT_EQ(largest_planned_batch(2, 2, trace, record), 2);
  EXPECT_EQ(probed, std::vector<int64_t>({2}));
  probed.clear();
  EXPECT_EQ(largest_planned_batch(1, 1, trace, record), 1);
  EXPECT_EQ(probed, std::vector<int64_t>({1}));
  // None when not even batch 1 fits: one probe from below.
  set_options(cpuOptions(1024));
  EXPECT_EQ(largest_planned_batch(4, 4, trace), 0);
  probed.clear();
  EXPECT_EQ(largest_planned_batch(1024, 1, trace, record), 0);
  EXPECT_EQ(probed, std::vector<int64_t>({1}));
}

/// How many times "kiln.dot_general" occurs in the dump after pass `pass`
/// (the file "NN-<pass>.mlir", whatever its number) of the step's graph
/// under `dumpDir` (-1 when there is none).
int gemmsInDump(const std::string &dumpDir, const std::string &pass) {
  std::error_code error;
  for (llvm::sys::fs::directory_iterator graph(dumpDir, error), end;
       graph != end && !error; graph.increment(error)) {
    std::string file;
    for (llvm::sys::fs::directory_iterator dump(graph->path(), error), last;
         dump != last && !error; dump.increment(error))
      if (llvm::StringRef(dump->path()).ends_with("-" + pass + ".mlir"))
        file = dump->path();
    std::ifstream in(file);
    if (file.empty() || !in)
      continue;
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    int count = 0;
    for (size_t at = text.find("kiln.dot_general"); at != std::string::npos;
         at = text.find("kiln.dot_general", at + 1))
      ++count;
    return count;
  }
  return -1;
}

TEST(Planning, ABudgetThatRecomputesGemmsTrainsTheSame) {
  set_options(cpuOptions());
  std::vector<double> plain, budgeted;
  uint64_t unlimited = 0;
  {
    TinyGPT2Training t(10);
    std::optional<uint64_t> peak =
        plan_traced([&] { return traceTinyStep(t, 4); });
    ASSERT_TRUE(peak);
    unlimited = *peak;
    for (int s = 0; s < 3; ++s)
      plain.push_back(t.step().item());
  }
  // 92% of the step's peak is below what recomputing cheap values reaches
  // for this model, within what recomputing a GEMM too reaches.
  const uint64_t budget = unlimited * 92 / 100;
  llvm::SmallString<128> dumpDir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-remat", dumpDir));
  Options o = cpuOptions(budget);
  o.passDumpDir = dumpDir.str().str();
  set_options(o);
  metrics::reset();
  {
    TinyGPT2Training t(10);
    for (int s = 0; s < 3; ++s)
      budgeted.push_back(t.step().item());
  }
  set_options(options_from_env());
  // One compile, within the budget, with more GEMMs after the
  // rematerializer than before it.
  EXPECT_EQ(metrics::counters().compiles, 1) << metrics::report();
  EXPECT_GT(metrics::counters().plannedPeakBytes, 0);
  EXPECT_LE(static_cast<uint64_t>(metrics::counters().plannedPeakBytes),
            budget);
  int scheduled = gemmsInDump(o.passDumpDir, "kiln-schedule");
  int rematerialized = gemmsInDump(o.passDumpDir, "kiln-rematerialize");
  llvm::sys::fs::remove_directories(o.passDumpDir);
  EXPECT_GT(scheduled, 0);
  EXPECT_GT(rematerialized, scheduled);
  ASSERT_EQ(plain.size(), budgeted.size());
  for (size_t s = 0; s < plain.size(); ++s)
    EXPECT_EQ(plain[s], budgeted[s]) << "step " << s;
}

TEST(Planning, MemoryOutsidePlansIsWhatNoTensorHolds) {
  constexpr uint64_t MiB = 1 << 20;
  const uint64_t before = memory_outside_plans();
  ASSERT_GT(before, 0u); // code and libraries at least
  // Tensor data, resident, is not outside the plans...
  HostTensor tensor(DType::f32, {16 << 20}); // 64 MiB
  for (int64_t i = 0; i < tensor.numElements(); i += 1024)
    tensor.setDouble(i, 2.0);
  EXPECT_LT(memory_outside_plans(), before + 4 * MiB);
  // ...the process's own allocations are.
  std::vector<char> heap(64 * MiB, 1);
  EXPECT_GE(memory_outside_plans(), before + 60 * MiB);
  EXPECT_EQ(heap[12345] + tensor.getDouble(1024), 3.0);
}

TEST(Planning, WhereNothingCanBePlannedIsAClearError) {
  set_options(cpuOptions());
  TinyGPT2Training t(10);
  auto trace = [&](int64_t b) { return traceTinyStep(t, b); };
  try {
    largest_planned_batch(4, 4, trace);
    ADD_FAILURE() << "no budget must be an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("no memory budget"),
              std::string::npos)
        << e.what();
  }
  Options reference = cpuOptions();
  reference.backend = Backend::reference;
  set_options(reference);
  bool traced = false;
  try {
    plan_traced([&] {
      traced = true;
      return trace(2);
    });
    ADD_FAILURE() << "the reference backend plans nothing";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("reference backend plans no memory"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(traced) << "refused before tracing anything";
  // The failed plan left the model as it was: a step still trains.
  set_options(cpuOptions());
  EXPECT_TRUE(std::isfinite(t.step().item()));
  set_options(options_from_env());
}

TEST(Planning, AStepOverItsBudgetIsAnOutOfMemoryError) {
  // What a largest-batch search catches by type (kiln-bench's worker); any
  // other failure of a step stays a plain Error.
  set_options(cpuOptions(/*budget=*/1024));
  TinyGPT2Training t(10);
  try {
    t.step();
    ADD_FAILURE() << "a 1 KiB budget fits no step";
  } catch (const OutOfMemoryError &e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the memory budget"),
              std::string::npos)
        << e.what();
  }
  set_options(options_from_env());
}

} // namespace
} // namespace kiln::testing
