// The planner in three steps:
// 1. Lifetimes: runtime::computeSlotLifetimes over the thunk list.
// 2. In-place groups: walking the thunks in order, a result of an
//    elementwise kernel joins the group of a same-sized operand that dies
//    in that kernel; a group is one arena range with the union lifetime.
// 3. Offsets, greedy by size with best fit (as TFLite's arena planner and
//    XLA's heap simulator do): groups from largest to smallest each take
//    the smallest gap, among groups already placed whose lifetimes
//    intersect theirs, that fits them; else they go past the last one.
#include "compiler/MemoryPlanner.h"

#include "runtime/BufferLiveness.h"
#include "support/ByteSize.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <numeric>

namespace kiln::compiler {

using runtime::BufferSlot;
using runtime::SlotLifetime;

namespace {

constexpr uint64_t kAlignment = runtime::kSlotAlignment;

uint64_t alignUp(uint64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

uint64_t valueBytes(const runtime::ProgramValue &value) {
  uint64_t n = byteWidth(value.dtype);
  for (int64_t d : value.shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

/// Arena slots sharing one byte range: an operand and the in-place results
/// written over it, one after another.
struct Group {
  std::vector<uint32_t> slots;
  uint64_t bytes = 0;
  int64_t first = 0, last = 0;
  uint64_t offset = 0;
  bool intersects(const Group &other) const {
    return first <= other.last && other.first <= last;
  }
};

class Planner {
public:
  Planner(runtime::Executable &executable, const MemoryPlanOptions &options)
      : exe_(executable), plan_(executable.plan), options_(options),
        lifetimes_(runtime::computeSlotLifetimes(executable)),
        groupOf_(plan_.slots.size(), -1) {}

  MemoryPlanReport run(const std::vector<std::string> &origins);

private:
  bool isArena(uint32_t slot) const {
    return plan_.slots[slot].kind == BufferSlot::Kind::arena &&
           lifetimes_[slot].used();
  }
  void formGroups();
  void mergeInPlace(size_t thunk);
  /// Puts `result` (born at `thunk`) in `operand`'s group when the group
  /// ends there and the sizes match; true when it did.
  bool mergePair(size_t thunk, uint32_t operand, uint32_t result);
  void placeGroups();
  /// Places the groups in `order`, each at the smallest gap among the
  /// groups placed before it whose lifetimes meet its own (best fit), or
  /// above them all; returns the arena's end.
  uint64_t bestFit(const std::vector<uint32_t> &order);

  runtime::Executable &exe_;
  runtime::BufferPlan &plan_;
  MemoryPlanOptions options_;
  std::vector<SlotLifetime> lifetimes_;
  std::vector<int> groupOf_;
  std::vector<Group> groups_;
};

void Planner::formGroups() {
  for (uint32_t s = 0; s < plan_.slots.size(); ++s) {
    if (!isArena(s))
      continue;
    groupOf_[s] = groups_.size();
    groups_.push_back({{s}, plan_.slots[s].bytes, lifetimes_[s].first,
                       lifetimes_[s].last, 0});
  }
  if (options_.reuse && options_.inPlace)
    for (size_t t = 0; t < exe_.thunks.size(); ++t)
      mergeInPlace(t);
}

void Planner::mergeInPlace(size_t thunk) {
  const runtime::Thunk &t = exe_.thunks[thunk];
  if (t.kind == runtime::Thunk::Kind::gemm && t.gemm.accumulates()) {
    mergePair(thunk, t.gemm.accumulator, t.gemm.c);
    return;
  }
  if (t.kind == runtime::Thunk::Kind::allReduce) {
    mergePair(thunk, t.allReduce.src, t.allReduce.dst);
    return;
  }
  if (t.kind != runtime::Thunk::Kind::kernel || t.kernel.inPlaceOperands.empty())
    return;
  const runtime::KernelThunk &k = t.kernel;
  size_t firstResult = k.slots.size() - k.numResults;
  std::vector<bool> taken(k.slots.size(), false);
  for (size_t r = firstResult; r < k.slots.size(); ++r)
    for (uint32_t p : k.inPlaceOperands) {
      uint32_t operand = k.slots[p];
      if (taken[p] || !mergePair(thunk, operand, k.slots[r]))
        continue;
      // A slot named twice among the operands is one buffer: take it once.
      for (uint32_t q : k.inPlaceOperands)
        taken[q] = taken[q] || k.slots[q] == operand;
      break;
    }
}

bool Planner::mergePair(size_t thunk, uint32_t operand, uint32_t result) {
  if (!isArena(result) || lifetimes_[result].first != int64_t(thunk) ||
      groups_[groupOf_[result]].slots.size() != 1 || operand == result ||
      !isArena(operand))
    return false;
  Group &g = groups_[groupOf_[operand]];
  // The operand's whole group must end here, so nothing reads it later.
  if (g.last != int64_t(thunk) || g.bytes != plan_.slots[result].bytes)
    return false;
  Group &own = groups_[groupOf_[result]];
  g.last = std::max(g.last, own.last);
  g.slots.push_back(result);
  own.slots.clear();
  groupOf_[result] = groupOf_[operand];
  return true;
}

void Planner::placeGroups() {
  std::vector<uint32_t> order;
  for (uint32_t g = 0; g < groups_.size(); ++g)
    if (!groups_[g].slots.empty())
      order.push_back(g);
  if (!options_.reuse) {
    uint64_t end = 0;
    for (uint32_t g : order) {
      groups_[g].offset = end;
      end += alignUp(groups_[g].bytes);
    }
    plan_.arenaBytes = end;
    return;
  }
  // Best fit in three orders (TFLite's and XLA's heap simulators try
  // several too): the largest groups first, the earliest first, the
  // largest size × lifetime first; the smallest arena wins, so the plan is
  // never worse than the first order's. Which order packs best changes with
  // the schedule (on the GPT-2 steps measured so far they tie).
  auto bySize = [&](uint32_t a, uint32_t b) {
    if (groups_[a].bytes != groups_[b].bytes)
      return groups_[a].bytes > groups_[b].bytes;
    return groups_[a].first < groups_[b].first;
  };
  auto byStart = [&](uint32_t a, uint32_t b) {
    if (groups_[a].first != groups_[b].first)
      return groups_[a].first < groups_[b].first;
    return groups_[a].bytes > groups_[b].bytes;
  };
  auto byArea = [&](uint32_t a, uint32_t b) {
    auto area = [&](uint32_t g) {
      return static_cast<double>(groups_[g].bytes) *
             static_cast<double>(groups_[g].last - groups_[g].first + 1);
    };
    if (area(a) != area(b))
      return area(a) > area(b);
    return bySize(a, b);
  };
  std::vector<uint64_t> bestOffsets;
  uint64_t bestEnd = UINT64_MAX;
  for (int pass = 0; pass < 3; ++pass) {
    if (pass == 0)
      std::stable_sort(order.begin(), order.end(), bySize);
    else if (pass == 1)
      std::stable_sort(order.begin(), order.end(), byStart);
    else
      std::stable_sort(order.begin(), order.end(), byArea);
    uint64_t end = bestFit(order);
    if (end < bestEnd) {
      bestEnd = end;
      bestOffsets.clear();
      for (const Group &g : groups_)
        bestOffsets.push_back(g.offset);
    }
  }
  for (size_t g = 0; g < groups_.size(); ++g)
    groups_[g].offset = bestOffsets[g];
  plan_.arenaBytes = bestEnd;
}

uint64_t Planner::bestFit(const std::vector<uint32_t> &order) {
  // The placed groups by offset, so the gaps among a group's neighbours
  // are read in address order without sorting them for each group (ties
  // in any order: equal offsets give the same gaps).
  std::vector<uint32_t> byOffset;
  uint64_t arenaEnd = 0;
  for (uint32_t g : order) {
    Group &group = groups_[g];
    uint64_t size = alignUp(group.bytes), cursor = 0;
    uint64_t best = UINT64_MAX, bestGap = UINT64_MAX;
    for (uint32_t h : byOffset) {
      const Group &n = groups_[h];
      if (!n.intersects(group))
        continue;
      if (n.offset >= cursor && n.offset - cursor >= size &&
          n.offset - cursor < bestGap) {
        best = cursor;
        bestGap = n.offset - cursor;
      }
      cursor = std::max(cursor, n.offset + alignUp(n.bytes));
    }
    group.offset = best != UINT64_MAX ? best : cursor;
    arenaEnd = std::max(arenaEnd, group.offset + size);
    byOffset.insert(std::upper_bound(byOffset.begin(), byOffset.end(),
                                     group.offset,
                                     [&](uint64_t offset, uint32_t h) {
                                       return offset < groups_[h].offset;
                                     }),
                    g);
  }
  return arenaEnd;
}

} // namespace

MemoryPlanReport describeMemoryPlan(const runtime::Executable &executable,
                                    const std::vector<std::string> &origins) {
  const runtime::BufferPlan &plan = executable.plan;
  std::vector<SlotLifetime> lifetimes =
      runtime::computeSlotLifetimes(executable);
  MemoryPlanReport out;
  out.arenaBytes = plan.arenaBytes;
  for (const BufferSlot &slot : plan.slots)
    if (slot.kind == BufferSlot::Kind::arena)
      out.unplannedArenaBytes += alignUp(slot.bytes);
  for (const runtime::ProgramValue &v : executable.signature.inputs)
    out.inputBytes += valueBytes(v);
  for (size_t o = 0; o < plan.outputSlots.size(); ++o) {
    const BufferSlot &s = plan.slots[plan.outputSlots[o]];
    bool inDonor = s.kind == BufferSlot::Kind::output && plan.outputDonors[o] >= 0;
    if (!inDonor)
      out.freshOutputBytes += valueBytes(executable.signature.outputs[o]);
  }
  out.peakBytes = out.arenaBytes + out.inputBytes + out.freshOutputBytes;

  // Live arena bytes per thunk, from +bytes at birth and -bytes after the
  // last use. A result written in place over a dying operand holds no new
  // bytes at its birth, so it counts from the next thunk.
  int64_t n = executable.thunks.size();
  auto at = [&](int64_t t) { return std::clamp<int64_t>(t, 0, n); };
  std::vector<int64_t> born(plan.slots.size(), -1);
  for (uint32_t s = 0; s < plan.slots.size(); ++s) {
    const SlotLifetime &l = lifetimes[s];
    if (plan.slots[s].kind != BufferSlot::Kind::arena || !l.used())
      continue;
    born[s] = at(l.first);
    if (l.first < 0 || l.first >= n)
      continue;
    runtime::forEachSlotUse(executable.thunks[l.first], [&](uint32_t o, bool write) {
      if (!write && o != s && lifetimes[o].last == l.first &&
          plan.slots[o].kind == BufferSlot::Kind::arena &&
          plan.slots[o].offset == plan.slots[s].offset &&
          plan.slots[o].bytes == plan.slots[s].bytes &&
          runtime::mayShareInPlace(executable.thunks[l.first], o, s))
        born[s] = l.first + 1;
    });
    out.inPlaceReuses += born[s] == l.first + 1;
  }
  std::vector<int64_t> delta(n + 2, 0);
  for (uint32_t s = 0; s < plan.slots.size(); ++s) {
    if (born[s] < 0 || born[s] > at(lifetimes[s].last))
      continue;
    delta[born[s]] += plan.slots[s].bytes;
    delta[at(lifetimes[s].last) + 1] -= plan.slots[s].bytes;
  }
  int64_t live = 0;
  for (int64_t t = 0; t <= n; ++t) {
    live += delta[t];
    if (uint64_t(live) > out.peakLiveArenaBytes || out.peakThunk < 0) {
      out.peakLiveArenaBytes = live;
      out.peakThunk = t;
    }
  }
  for (uint32_t s = 0; s < plan.slots.size(); ++s)
    if (born[s] >= 0 && born[s] <= out.peakThunk &&
        at(lifetimes[s].last) >= out.peakThunk)
      out.largestAtPeak.push_back(
          {s, plan.slots[s].bytes, s < origins.size() ? origins[s] : ""});
  std::sort(out.largestAtPeak.begin(), out.largestAtPeak.end(),
            [](const LiveBuffer &a, const LiveBuffer &b) {
              return a.bytes != b.bytes ? a.bytes > b.bytes : a.slot < b.slot;
            });
  if (out.largestAtPeak.size() > 10)
    out.largestAtPeak.resize(10);
  return out;
}

namespace {

MemoryPlanReport Planner::run(const std::vector<std::string> &origins) {
  formGroups();
  placeGroups();
  for (const Group &g : groups_)
    for (uint32_t s : g.slots)
      plan_.slots[s].offset = g.offset;
  return describeMemoryPlan(exe_, origins);
}

std::string formatLargest(const MemoryPlanReport &report) {
  std::string out;
  for (const LiveBuffer &b : report.largestAtPeak)
    absl::StrAppend(&out, "  ", formatByteSize(b.bytes), "  slot ", b.slot,
                    b.origin.empty() ? "" : "  ", b.origin, "\n");
  return out;
}

} // namespace

MemoryPlanReport planMemory(runtime::Executable &executable,
                            const std::vector<std::string> &slotOrigins,
                            const MemoryPlanOptions &options) {
  return Planner(executable, options).run(slotOrigins);
}

absl::Status checkMemoryBudget(const MemoryPlanReport &report,
                               uint64_t budgetBytes) {
  if (budgetBytes == 0 || report.peakBytes <= budgetBytes)
    return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the step's planned peak memory ", formatByteSize(report.peakBytes),
      " exceeds the memory budget ", formatByteSize(budgetBytes), " (arena ",
      formatByteSize(report.arenaBytes), ", inputs ",
      formatByteSize(report.inputBytes), ", fresh outputs ",
      formatByteSize(report.freshOutputBytes),
      ")\nlargest buffers live at the "
      "peak (thunk ",
      report.peakThunk, "):\n", formatLargest(report)));
}

std::string formatMemoryPlan(const MemoryPlanReport &report) {
  return absl::StrCat(
      "planned peak: ", formatByteSize(report.peakBytes), " (",
      report.peakBytes, " bytes)\n  arena: ", formatByteSize(report.arenaBytes),
      " (", report.arenaBytes, " bytes; one slot per value would need ",
      formatByteSize(report.unplannedArenaBytes),
      ")\n  inputs: ", formatByteSize(report.inputBytes),
      "\n  fresh outputs: ", formatByteSize(report.freshOutputBytes),
      "\n  in-place reuses: ", report.inPlaceReuses,
      "\n  peak live arena: ", formatByteSize(report.peakLiveArenaBytes),
      " at thunk ", report.peakThunk, "\nlargest buffers live at the peak:\n",
      formatLargest(report));
}

} // namespace kiln::compiler
