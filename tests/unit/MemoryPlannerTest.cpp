// The memory planner on hand-built thunk lists: reuse where lifetimes are
// disjoint, in-place only where an operand dies in an elementwise kernel,
// never two live buffers sharing bytes (checked by the runtime's overlap
// check, which is itself shown to catch a bad plan), the budget error, and
// randomised programs packed no worse than their peak liveness allows.
#include "compiler/MemoryPlanner.h"
#include "runtime/BufferLiveness.h"

#include "gtest/gtest.h"

#include <random>

namespace kiln::compiler {
namespace {

using runtime::BufferSlot;
using runtime::Executable;
using runtime::Thunk;

/// Builds executables slot by slot and kernel by kernel.
class ProgramBuilder {
public:
  uint32_t input(uint64_t bytes) {
    BufferSlot s;
    s.kind = BufferSlot::Kind::input;
    s.input = exe.signature.inputs.size();
    s.bytes = bytes;
    exe.signature.inputs.push_back({DType::f32, {int64_t(bytes / 4)}, false});
    return add(s);
  }
  uint32_t buffer(uint64_t bytes) {
    BufferSlot s;
    s.bytes = bytes;
    return add(s);
  }
  void kernel(std::vector<uint32_t> operands, std::vector<uint32_t> results,
              std::vector<uint32_t> inPlace = {}) {
    Thunk t;
    t.kind = Thunk::Kind::kernel;
    t.kernel.symbol = "k";
    t.kernel.slots = operands;
    t.kernel.slots.insert(t.kernel.slots.end(), results.begin(), results.end());
    t.kernel.numResults = results.size();
    t.kernel.inPlaceOperands = std::move(inPlace);
    exe.thunks.push_back(t);
  }
  void output(uint32_t slot) {
    exe.plan.outputSlots.push_back(slot);
    exe.plan.outputDonors.push_back(-1);
    exe.signature.outputs.push_back(
        {DType::f32, {int64_t(exe.plan.slots[slot].bytes / 4)}, false});
  }
  uint64_t offset(uint32_t slot) const { return exe.plan.slots[slot].offset; }

  Executable exe;

private:
  uint32_t add(const BufferSlot &s) {
    exe.plan.slots.push_back(s);
    return exe.plan.slots.size() - 1;
  }
};

TEST(MemoryPlannerTest, ChainReusesDeadBuffers) {
  ProgramBuilder p;
  uint32_t x = p.input(1024);
  uint32_t a = p.buffer(1024), b = p.buffer(1024), c = p.buffer(1024),
           d = p.buffer(1024);
  p.kernel({x}, {a});
  p.kernel({a}, {b});
  p.kernel({b}, {c});
  p.kernel({c}, {d});
  p.output(d);
  MemoryPlanReport report = planMemory(p.exe);
  // Two buffers alternate: each value dies in the kernel after its own.
  EXPECT_EQ(report.arenaBytes, 2048u);
  EXPECT_EQ(report.unplannedArenaBytes, 4096u);
  EXPECT_NE(p.offset(a), p.offset(b));
  EXPECT_EQ(p.offset(a), p.offset(c));
  EXPECT_TRUE(runtime::checkArenaOverlaps(p.exe).ok());
}

TEST(MemoryPlannerTest, ElementwiseKernelsUpdateInPlace) {
  ProgramBuilder p;
  uint32_t x = p.input(1024);
  uint32_t a = p.buffer(1024), b = p.buffer(1024), c = p.buffer(1024);
  p.kernel({x}, {a});
  p.kernel({a}, {b}, {0});
  p.kernel({b}, {c}, {0});
  p.output(c);
  MemoryPlanReport report = planMemory(p.exe);
  EXPECT_EQ(report.arenaBytes, 1024u);
  EXPECT_EQ(report.inPlaceReuses, 2);
  EXPECT_EQ(p.offset(a), p.offset(b));
  EXPECT_EQ(p.offset(b), p.offset(c));
  EXPECT_TRUE(runtime::checkArenaOverlaps(p.exe).ok());
}

TEST(MemoryPlannerTest, NoInPlaceWhenTheOperandIsReadLater) {
  ProgramBuilder p;
  uint32_t x = p.input(1024);
  uint32_t a = p.buffer(1024), b = p.buffer(1024), c = p.buffer(1024);
  p.kernel({x}, {a});
  p.kernel({a}, {b}, {0}); // a is read again below: b must not overwrite it
  p.kernel({a, b}, {c}, {0, 1});
  p.output(c);
  MemoryPlanReport report = planMemory(p.exe);
  EXPECT_NE(p.offset(a), p.offset(b));
  // c may take a's or b's bytes: both die in the last kernel.
  EXPECT_EQ(report.inPlaceReuses, 1);
  EXPECT_EQ(report.arenaBytes, 2048u);
  EXPECT_TRUE(runtime::checkArenaOverlaps(p.exe).ok());
}

TEST(MemoryPlannerTest, NoInPlaceWithoutTheKernelsPermission) {
  ProgramBuilder p;
  uint32_t x = p.input(1024);
  uint32_t a = p.buffer(1024), b = p.buffer(1024);
  p.kernel({x}, {a});
  p.kernel({a}, {b}); // e.g. a transpose: reads a at other indices
  p.output(b);
  planMemory(p.exe);
  EXPECT_NE(p.offset(a), p.offset(b));
}

TEST(MemoryPlannerTest, ReuseOffKeepsOneRangePerValue) {
  ProgramBuilder p;
  uint32_t x = p.input(64);
  uint32_t a = p.buffer(100), b = p.buffer(64);
  p.kernel({x}, {a});
  p.kernel({a}, {b}, {0});
  p.output(b);
  MemoryPlanReport report = planMemory(p.exe, {}, {/*reuse=*/false});
  EXPECT_EQ(report.arenaBytes, 128u + 64u); // 100 rounds up to 128
  EXPECT_EQ(p.offset(a), 0u);
  EXPECT_EQ(p.offset(b), 128u);
}

TEST(MemoryPlannerTest, OverlapCheckCatchesABadPlan) {
  ProgramBuilder p;
  uint32_t x = p.input(1024);
  uint32_t a = p.buffer(1024), b = p.buffer(1024), c = p.buffer(1024);
  p.kernel({x}, {a});
  p.kernel({x}, {b});
  p.kernel({a, b}, {c});
  p.output(c);
  planMemory(p.exe);
  ASSERT_TRUE(runtime::checkArenaOverlaps(p.exe).ok());
  p.exe.plan.slots[b].offset = p.exe.plan.slots[a].offset + 512;
  absl::Status status = runtime::checkArenaOverlaps(p.exe);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("share bytes"), std::string::npos)
      << status;
}

TEST(MemoryPlannerTest, BudgetErrorListsTheLargestLiveBuffers) {
  ProgramBuilder p;
  uint32_t x = p.input(1 << 20);
  uint32_t big = p.buffer(8 << 20), small = p.buffer(1 << 20),
           out = p.buffer(1 << 20);
  p.kernel({x}, {big});
  p.kernel({x}, {small});
  p.kernel({big, small}, {out});
  p.output(out);
  std::vector<std::string> origins(p.exe.plan.slots.size());
  origins[big] = "kiln.broadcast_in_dim at loc(\"model.py\":3:1)";
  origins[small] = "kiln.exp";
  MemoryPlanReport report = planMemory(p.exe, origins);
  EXPECT_EQ(report.peakBytes,
            report.arenaBytes + report.inputBytes + report.freshOutputBytes);
  EXPECT_TRUE(checkMemoryBudget(report, 0).ok());
  EXPECT_TRUE(checkMemoryBudget(report, report.peakBytes).ok());
  absl::Status status = checkMemoryBudget(report, report.peakBytes - 1);
  ASSERT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  std::string message(status.message());
  EXPECT_NE(message.find("exceeds the memory budget"), std::string::npos);
  size_t first = message.find("8.0 MiB"), second = message.find("kiln.exp");
  ASSERT_NE(first, std::string::npos) << message;
  ASSERT_NE(second, std::string::npos) << message;
  EXPECT_LT(first, second) << "largest first";
  EXPECT_NE(message.find("model.py"), std::string::npos) << message;
}

// Random DAGs of kernels: the plan never overlaps live buffers, is never
// larger than one range per value, and never smaller than the bytes live
// at the busiest thunk.
TEST(MemoryPlannerTest, RandomProgramsPackSafely) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    ProgramBuilder p;
    std::vector<uint32_t> values{p.input(256)};
    int kernels = 2 + rng() % 40;
    for (int k = 0; k < kernels; ++k) {
      std::vector<uint32_t> operands;
      int n = 1 + rng() % 3;
      for (int i = 0; i < n; ++i)
        operands.push_back(values[rng() % values.size()]);
      uint64_t bytes = 64 * (1 + rng() % 8);
      uint32_t result = p.buffer(bytes);
      std::vector<uint32_t> inPlace;
      for (uint32_t i = 0; i < operands.size(); ++i)
        if (rng() % 2)
          inPlace.push_back(i);
      p.kernel(operands, {result}, inPlace);
      values.push_back(result);
    }
    p.output(values.back());
    MemoryPlanReport report = planMemory(p.exe);
    ASSERT_TRUE(runtime::checkArenaOverlaps(p.exe).ok()) << "trial " << trial;
    EXPECT_LE(report.arenaBytes, report.unplannedArenaBytes);
    EXPECT_GE(report.arenaBytes, report.peakLiveArenaBytes);
  }
}

} // namespace
} // namespace kiln::compiler
