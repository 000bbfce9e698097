// When each buffer of an executable holds a value: the lifetimes the memory
// planner packs into the arena, and the facts the executor's checks rely on
// (no two live arena slots share bytes; dead bytes may be poisoned).
#ifndef KILN_RUNTIME_BUFFERLIVENESS_H
#define KILN_RUNTIME_BUFFERLIVENESS_H

#include "runtime/Executable.h"

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

#include <cstdint>
#include <vector>

namespace kiln::runtime {

/// A slot's live range in thunk positions, both ends included: written by
/// thunk `first` (or before the first thunk: kLoaded), last read by thunk
/// `last` (or after the last thunk: kReturned). A slot no thunk touches and
/// nothing returns has first == last == kUnused.
struct SlotLifetime {
  static constexpr int64_t kLoaded = -1;
  static constexpr int64_t kUnused = -2;
  int64_t first = kUnused;
  int64_t last = kUnused;
  bool used() const { return first != kUnused; }
};

/// Calls `use(slot, isWrite)` for every slot thunk `thunk` reads or writes,
/// reads first.
void forEachSlotUse(const Thunk &thunk,
                    absl::FunctionRef<void(uint32_t slot, bool isWrite)> use);

/// Lifetimes of every slot of `executable` (indexed like plan.slots).
/// Constants are live from load to the end; arena slots returned as outputs
/// live until the end (they are copied out after the last thunk).
std::vector<SlotLifetime> computeSlotLifetimes(const Executable &executable);

/// True when thunk `thunk` may write result slot `result` over operand slot
/// `operand`'s bytes: a kernel that reads that operand strictly elementwise,
/// or a GEMM's C over its accumulator.
bool mayShareInPlace(const Thunk &thunk, uint32_t operand, uint32_t result);

/// Checks that no two arena slots whose lifetimes intersect share a byte,
/// except an operand and a result of one in-place-capable kernel where the
/// operand dies (mayShareInPlace). The message names both slots and thunk.
absl::Status checkArenaOverlaps(const Executable &executable);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_BUFFERLIVENESS_H
