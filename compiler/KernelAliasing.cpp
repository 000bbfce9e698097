// Exclusive kernel buffers (KernelAliasing.h): each launch's parameters
// mapped to the memory they will name when the program runs, compared pair
// by pair.
#include "compiler/KernelAliasing.h"

#include <algorithm>

namespace kiln::compiler {

namespace {

using runtime::BufferSlot;

/// The memory a slot names while the program runs: an input's buffer (a
/// donated input's is also the buffer of the output written into it), an
/// output's own buffer, or a byte range of the arena.
struct Region {
  BufferSlot::Kind space = BufferSlot::Kind::arena;
  uint64_t begin = 0, end = 0; // input/output: [position, position + 1)

  bool overlaps(const Region &other) const {
    return space == other.space && begin < other.end && other.begin < end;
  }
};

Region regionOf(const runtime::BufferPlan &plan, uint32_t slot) {
  const BufferSlot &s = plan.slots[slot];
  switch (s.kind) {
  case BufferSlot::Kind::input:
    return {BufferSlot::Kind::input, s.input, s.input + uint64_t{1}};
  case BufferSlot::Kind::output: {
    // Conservative: a runtime may still give the output a buffer of its
    // own (two outputs naming one donor), never the other way round.
    int32_t donor =
        s.input < plan.outputDonors.size() ? plan.outputDonors[s.input] : -1;
    if (donor >= 0)
      return {BufferSlot::Kind::input, uint64_t(donor), uint64_t(donor) + 1};
    return {BufferSlot::Kind::output, s.input, s.input + uint64_t{1}};
  }
  case BufferSlot::Kind::arena:
    // A slot of no bytes is never accessed: it overlaps nothing.
    return {BufferSlot::Kind::arena, s.offset, s.offset + s.bytes};
  }
  return {};
}

/// One launch: position p is exclusive when no other position overlaps it
/// while either is a result (the last numResults slots).
std::vector<BufferAccess> accessIn(const runtime::BufferPlan &plan,
                                   const runtime::KernelThunk &kernel) {
  size_t n = kernel.slots.size();
  size_t firstResult = n - std::min<size_t>(kernel.numResults, n);
  std::vector<Region> regions;
  regions.reserve(n);
  for (uint32_t slot : kernel.slots)
    regions.push_back(regionOf(plan, slot));
  std::vector<BufferAccess> access(n);
  for (size_t p = 0; p < n; ++p)
    access[p] = p < firstResult ? BufferAccess::exclusiveRead
                                : BufferAccess::exclusiveWrite;
  for (size_t p = 0; p < n; ++p)
    for (size_t q = p + 1; q < n; ++q)
      if ((p >= firstResult || q >= firstResult) &&
          regions[p].overlaps(regions[q]))
        access[p] = access[q] = BufferAccess::shared;
  return access;
}

} // namespace

std::map<std::string, std::vector<BufferAccess>>
kernelBufferAccess(const runtime::Executable &executable) {
  std::map<std::string, std::vector<BufferAccess>> bySymbol;
  for (const runtime::Thunk &thunk : executable.thunks) {
    if (thunk.kind != runtime::Thunk::Kind::kernel)
      continue;
    std::vector<BufferAccess> launch = accessIn(executable.plan, thunk.kernel);
    auto [it, first] = bySymbol.try_emplace(thunk.kernel.symbol, launch);
    if (first)
      continue;
    std::vector<BufferAccess> &all = it->second;
    // Launches of one symbol have one parameter list; should two ever
    // differ, every parameter is shared.
    if (all.size() != launch.size()) {
      all.assign(std::max(all.size(), launch.size()), BufferAccess::shared);
      continue;
    }
    for (size_t p = 0; p < all.size(); ++p)
      if (launch[p] == BufferAccess::shared)
        all[p] = BufferAccess::shared;
  }
  return bySymbol;
}

} // namespace kiln::compiler
