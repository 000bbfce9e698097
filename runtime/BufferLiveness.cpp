// Lifetimes come from one walk over the thunk list: a slot is born at the
// first thunk that touches it and dies at the last. Constants are written
// at load time and arena slots returned as outputs are read after the last
// thunk, so both extend past the ends of the list.
#include "runtime/BufferLiveness.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace kiln::runtime {

void forEachSlotUse(const Thunk &thunk,
                    absl::FunctionRef<void(uint32_t slot, bool isWrite)> use) {
  switch (thunk.kind) {
  case Thunk::Kind::kernel: {
    const KernelThunk &k = thunk.kernel;
    size_t firstResult = k.slots.size() - std::min<size_t>(k.numResults,
                                                           k.slots.size());
    for (size_t i = 0; i < k.slots.size(); ++i)
      use(k.slots[i], i >= firstResult);
    return;
  }
  case Thunk::Kind::gemm:
    use(thunk.gemm.a, false);
    use(thunk.gemm.b, false);
    if (thunk.gemm.accumulates())
      use(thunk.gemm.accumulator, false);
    use(thunk.gemm.c, true);
    return;
  case Thunk::Kind::copy:
    use(thunk.copy.src, false);
    use(thunk.copy.dst, true);
    return;
  case Thunk::Kind::attention:
    for (uint32_t slot : thunk.attention.readSlots())
      use(slot, false);
    for (uint32_t slot : thunk.attention.writtenSlots())
      use(slot, true);
    return;
  case Thunk::Kind::allReduce:
    use(thunk.allReduce.src, false);
    use(thunk.allReduce.dst, true);
    return;
  }
}

std::vector<SlotLifetime> computeSlotLifetimes(const Executable &executable) {
  const BufferPlan &plan = executable.plan;
  std::vector<SlotLifetime> lifetimes(plan.slots.size());
  auto touch = [&](uint32_t slot, int64_t at) {
    SlotLifetime &l = lifetimes[slot];
    if (!l.used())
      l.first = at;
    l.last = std::max(l.last, at);
  };
  for (const ConstantInit &c : plan.constants)
    touch(c.slot, SlotLifetime::kLoaded);
  const int64_t end = static_cast<int64_t>(executable.thunks.size());
  for (int64_t t = 0; t < end; ++t)
    forEachSlotUse(executable.thunks[t],
                   [&](uint32_t slot, bool) { touch(slot, t); });
  for (uint32_t slot : plan.outputSlots)
    touch(slot, end);
  for (const ConstantInit &c : plan.constants)
    touch(c.slot, end);
  return lifetimes;
}

bool mayShareInPlace(const Thunk &thunk, uint32_t operand, uint32_t result) {
  // A GEMM's C may be written over its accumulator (beta = 1 in place).
  if (thunk.kind == Thunk::Kind::gemm)
    return thunk.gemm.accumulates() && thunk.gemm.accumulator == operand &&
           thunk.gemm.c == result;
  // A sum over the processes is taken in place.
  if (thunk.kind == Thunk::Kind::allReduce)
    return thunk.allReduce.src == operand && thunk.allReduce.dst == result;
  if (thunk.kind != Thunk::Kind::kernel)
    return false;
  const KernelThunk &k = thunk.kernel;
  size_t firstResult = k.slots.size() - k.numResults;
  bool isResult = false;
  for (size_t i = firstResult; i < k.slots.size(); ++i)
    isResult |= k.slots[i] == result;
  if (!isResult)
    return false;
  for (uint32_t position : k.inPlaceOperands)
    if (position < firstResult && k.slots[position] == operand)
      return true;
  return false;
}

absl::Status checkArenaOverlaps(const Executable &executable) {
  const BufferPlan &plan = executable.plan;
  std::vector<SlotLifetime> lifetimes = computeSlotLifetimes(executable);
  // Sweep slots by offset; only slots whose byte ranges intersect are
  // compared, so the check stays near-linear for real plans.
  std::vector<uint32_t> arena;
  for (uint32_t s = 0; s < plan.slots.size(); ++s)
    if (plan.slots[s].kind == BufferSlot::Kind::arena &&
        plan.slots[s].bytes > 0 && lifetimes[s].used())
      arena.push_back(s);
  std::sort(arena.begin(), arena.end(), [&](uint32_t a, uint32_t b) {
    return plan.slots[a].offset < plan.slots[b].offset;
  });
  for (size_t i = 0; i < arena.size(); ++i) {
    const BufferSlot &a = plan.slots[arena[i]];
    for (size_t j = i + 1; j < arena.size(); ++j) {
      const BufferSlot &b = plan.slots[arena[j]];
      if (b.offset >= a.offset + a.bytes)
        break;
      const SlotLifetime &la = lifetimes[arena[i]], &lb = lifetimes[arena[j]];
      if (la.last < lb.first || lb.last < la.first)
        continue;
      // The one legal overlap: an operand dying where an in-place kernel
      // writes a result over exactly its bytes.
      auto inPlace = [&](uint32_t dying, uint32_t born) {
        const SlotLifetime &d = lifetimes[dying], &n = lifetimes[born];
        return d.last == n.first && n.first >= 0 &&
               plan.slots[dying].offset == plan.slots[born].offset &&
               plan.slots[dying].bytes == plan.slots[born].bytes &&
               mayShareInPlace(executable.thunks[n.first], dying, born);
      };
      if (inPlace(arena[i], arena[j]) || inPlace(arena[j], arena[i]))
        continue;
      return absl::InternalError(absl::StrCat(
          "memory plan: arena slots ", arena[i], " [", a.offset, ", +",
          a.bytes, ") live in thunks [", la.first, ", ", la.last, "] and ",
          arena[j], " [", b.offset, ", +", b.bytes, ") live in thunks [",
          lb.first, ", ", lb.last, "] share bytes"));
    }
  }
  return absl::OkStatus();
}

} // namespace kiln::runtime
