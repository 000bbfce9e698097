// Memory planning over an executable's thunk list: the last step before
// code is fixed, where every buffer is known (fusion results, GEMM operand
// transposes, copies). Values whose lifetimes do not intersect share arena
// bytes; an elementwise kernel's result takes over an operand that dies in
// it. The planned peak is known before anything runs, and a plan that
// exceeds a budget fails with the buffers that made the peak.
//
// Backend-neutral: it reads and writes only runtime::Executable, so the
// CUDA backend plans device memory with the same code.
#ifndef KILN_COMPILER_MEMORYPLANNER_H
#define KILN_COMPILER_MEMORYPLANNER_H

#include "runtime/Executable.h"

#include "absl/status/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::compiler {

struct MemoryPlanOptions {
  /// Off: every arena slot keeps bytes of its own (the unplanned layout,
  /// for comparisons and for bisecting a suspected planner bug).
  bool reuse = true;
  /// Let elementwise kernels write results over operands dying in them.
  bool inPlace = true;
};

/// One buffer live at the peak, for reports and budget errors.
struct LiveBuffer {
  uint32_t slot = 0;
  uint64_t bytes = 0;
  /// What produced it (an op and its location), when the compiler said.
  std::string origin;
};

struct MemoryPlanReport {
  /// The arena after planning, and what one slot per value would need.
  uint64_t arenaBytes = 0;
  uint64_t unplannedArenaBytes = 0;
  /// Caller-held buffers: inputs (parameters, optimizer state, the batch)
  /// and outputs the program allocates (those without a donated input).
  uint64_t inputBytes = 0;
  uint64_t freshOutputBytes = 0;
  /// arena + inputs + fresh outputs: the memory a step needs at its peak.
  uint64_t peakBytes = 0;
  /// The thunk at which the arena's live bytes peak, and those bytes.
  int64_t peakThunk = -1;
  uint64_t peakLiveArenaBytes = 0;
  /// The largest arena buffers live at peakThunk, largest first (≤ 10).
  std::vector<LiveBuffer> largestAtPeak;
  /// Results written over an operand's bytes in the kernel it dies in.
  int inPlaceReuses = 0;
};

/// Assigns `executable.plan` arena offsets (64-byte aligned, best-fit by
/// decreasing size) and sets arenaBytes. `slotOrigins`, indexed like
/// plan.slots (may be shorter), names each slot's producer for reports.
/// The result never has two simultaneously live slots sharing a byte
/// except an in-place pair (runtime::checkArenaOverlaps holds).
MemoryPlanReport planMemory(runtime::Executable &executable,
                            const std::vector<std::string> &slotOrigins = {},
                            const MemoryPlanOptions &options = {});

/// The report of an executable already planned (a cache hit, a loaded
/// file), read from its offsets and thunks alone.
MemoryPlanReport describeMemoryPlan(const runtime::Executable &executable,
                                    const std::vector<std::string> &slotOrigins = {});

/// OK when report.peakBytes ≤ budgetBytes (0: no budget); else a
/// ResourceExhausted error listing the ten largest buffers live at the peak.
absl::Status checkMemoryBudget(const MemoryPlanReport &report,
                               uint64_t budgetBytes);

/// A human-readable summary (kilnc --print-plan, kiln-bench).
std::string formatMemoryPlan(const MemoryPlanReport &report);

} // namespace kiln::compiler

#endif // KILN_COMPILER_MEMORYPLANNER_H
