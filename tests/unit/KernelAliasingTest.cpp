// Which kernel parameters may be declared noalias (compiler/KernelAliasing.h),
// on hand-built plans: one case per way two parameters of a launch can
// share bytes, each beside the plan where they do not.
#include "compiler/KernelAliasing.h"

#include "ExecutableTestSupport.h"

#include "gtest/gtest.h"

namespace kiln::compiler {
namespace {

using runtime::BufferSlot;
using testing::kernelThunk;
using testing::slot;
using Access = std::vector<BufferAccess>;
constexpr BufferAccess kShared = BufferAccess::shared;
constexpr BufferAccess kRead = BufferAccess::exclusiveRead;
constexpr BufferAccess kWrite = BufferAccess::exclusiveWrite;

/// An executable of the given slots and one kernel launch per entry of
/// `launches` (its slots; the last is the result), all of symbol "k"
/// unless named.
struct Program {
  runtime::Executable exe;

  uint32_t add(BufferSlot s) {
    exe.plan.slots.push_back(s);
    return exe.plan.slots.size() - 1;
  }
  uint32_t input(uint32_t position) {
    return add(slot(BufferSlot::Kind::input, position, 0, 256));
  }
  uint32_t arena(uint64_t offset, uint64_t bytes = 256) {
    return add(slot(BufferSlot::Kind::arena, 0, offset, bytes));
  }
  /// Output `position`, written into input `donor`'s buffer (or -1).
  uint32_t output(uint32_t position, int32_t donor) {
    if (exe.plan.outputDonors.size() <= position)
      exe.plan.outputDonors.resize(position + 1, -1);
    exe.plan.outputDonors[position] = donor;
    return add(slot(BufferSlot::Kind::output, position, 0, 256));
  }
  void launch(std::vector<uint32_t> slots, const std::string &symbol = "k") {
    exe.thunks.push_back(kernelThunk(symbol, std::move(slots), 64, true));
  }
  Access accessOf(const std::string &symbol = "k") const {
    auto all = kernelBufferAccess(exe);
    auto it = all.find(symbol);
    return it == all.end() ? Access{} : it->second;
  }
};

TEST(KernelAliasing, BuffersOfTheirOwnAreExclusive) {
  Program p;
  uint32_t x = p.input(0), a = p.arena(0), r = p.arena(256);
  p.launch({x, a, r});
  EXPECT_EQ(p.accessOf(), (Access{kRead, kRead, kWrite}));
}

TEST(KernelAliasing, AResultWrittenOverItsDyingOperandSharesWithIt) {
  Program p;
  uint32_t x = p.input(0), a = p.arena(0), r = p.arena(0);
  p.launch({x, a, r});
  EXPECT_EQ(p.accessOf(), (Access{kRead, kShared, kShared}));
}

TEST(KernelAliasing, ArenaRangesThatOnlyPartlyOverlapShare) {
  Program p;
  uint32_t a = p.arena(0, 512), r = p.arena(448, 256), s = p.arena(704, 64);
  p.launch({a, r});
  p.launch({a, s}, "k2"); // [704, 768) starts past a's end at 512
  EXPECT_EQ(p.accessOf(), (Access{kShared, kShared}));
  EXPECT_EQ(p.accessOf("k2"), (Access{kRead, kWrite}));
}

TEST(KernelAliasing, ASlotOfNoBytesOverlapsNothing) {
  Program p;
  uint32_t a = p.arena(0, 256), empty = p.arena(0, 0);
  p.launch({a, empty});
  EXPECT_EQ(p.accessOf(), (Access{kRead, kWrite}));
}

TEST(KernelAliasing, AnOutputWrittenIntoItsDonorSharesWithThatInput) {
  Program donated, fresh;
  uint32_t w = donated.input(0), g = donated.input(1),
           out = donated.output(0, /*donor=*/0);
  donated.launch({w, g, out});
  EXPECT_EQ(donated.accessOf(), (Access{kShared, kRead, kShared}));
  // The same kernel writing a buffer of the output's own.
  w = fresh.input(0), g = fresh.input(1), out = fresh.output(0, -1);
  fresh.launch({w, g, out});
  EXPECT_EQ(fresh.accessOf(), (Access{kRead, kRead, kWrite}));
}

TEST(KernelAliasing, AScatterAddingIntoItsOwnOperandSharesIt) {
  Program p;
  uint32_t table = p.arena(0), ids = p.input(0), updates = p.input(1);
  p.launch({table, ids, updates, table});
  EXPECT_EQ(p.accessOf(), (Access{kShared, kRead, kRead, kShared}));
}

TEST(KernelAliasing, AnOperandNamedTwiceStaysExclusive) {
  // Neither position is written, so reading one buffer through both is
  // what `noalias readonly` allows.
  Program p;
  uint32_t x = p.input(0), r = p.arena(0);
  p.launch({x, x, r});
  EXPECT_EQ(p.accessOf(), (Access{kRead, kRead, kWrite}));
}

TEST(KernelAliasing, TwoResultsOfOneBufferShare) {
  Program p;
  uint32_t x = p.input(0), r = p.arena(0);
  runtime::Thunk t = kernelThunk("k", {x, r, r}, 64, true);
  t.kernel.numResults = 2;
  p.exe.thunks.push_back(t);
  EXPECT_EQ(p.accessOf(), (Access{kRead, kShared, kShared}));
}

TEST(KernelAliasing, ASymbolIsExclusiveOnlyWhereEveryLaunchIs) {
  Program p;
  uint32_t x = p.input(0), a = p.arena(0), b = p.arena(256), c = p.arena(512);
  p.launch({x, a, b}); // all exclusive
  p.launch({x, c, c}); // the second operand in place
  p.launch({x, b, a}, "other");
  EXPECT_EQ(p.accessOf(), (Access{kRead, kShared, kShared}));
  EXPECT_EQ(p.accessOf("other"), (Access{kRead, kRead, kWrite}));
}

TEST(KernelAliasing, LaunchesThatDisagreeOnTheParameterCountShareAll) {
  Program p;
  uint32_t x = p.input(0), a = p.arena(0), b = p.arena(256);
  p.launch({x, a});
  p.launch({x, a, b});
  EXPECT_EQ(p.accessOf(), (Access{kShared, kShared, kShared}));
}

TEST(KernelAliasing, OnlyKernelThunksAreDescribed) {
  Program p;
  uint32_t a = p.arena(0), b = p.arena(256);
  p.exe.thunks.push_back(testing::copyThunk(a, b, 256));
  EXPECT_TRUE(kernelBufferAccess(p.exe).empty());
}

} // namespace
} // namespace kiln::compiler
