// Host lanes (HostLanes.h): one fiber per lane, taking turns in lane order.
// A primitive writes the lane's value into this round's slot and ends the
// turn; when the lane runs again every lane has written, so it reads its
// partner's. Slots alternate by round parity: a lane writing its next
// shuffle's value must not overwrite one a later lane has yet to read.
#include "runtime/HostLanes.h"

#include <dlfcn.h>
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace kiln::runtime {

namespace {

/// A lane's stack: kernel bodies keep small arrays at most.
constexpr size_t kLaneStackBytes = 256 << 10;

struct Warp {
  explicit Warp(int64_t lanes)
      : lanes(lanes), contexts(lanes), stacks(lanes), done(lanes),
        round(lanes, 0) {
    for (auto &stack : stacks)
      stack = std::make_unique<char[]>(kLaneStackBytes);
    for (auto &slot : slots)
      slot.assign(lanes, 0.0);
  }

  int64_t lanes;
  std::vector<ucontext_t> contexts;
  std::vector<std::unique_ptr<char[]>> stacks;
  ucontext_t scheduler;
  std::vector<bool> done;
  /// Per lane: primitives passed (their parity picks the slot).
  std::vector<uint64_t> round;
  std::vector<double> slots[2];
  int64_t current = 0;
  LanedKernelBody body = nullptr;
  void **buffers = nullptr;
  int64_t rowBegin = 0, rowEnd = 0;
};

thread_local Warp *activeWarp = nullptr;

Warp &warp() {
  if (!activeWarp) {
    std::fprintf(stderr, "kiln: a warp primitive ran outside host lanes\n");
    std::abort();
  }
  return *activeWarp;
}

/// Ends the calling lane's turn; returns when its next turn comes.
void endTurn() {
  Warp &w = warp();
  swapcontext(&w.contexts[w.current], &w.scheduler);
}

double shuffleXor(double value, int32_t mask) {
  Warp &w = warp();
  int64_t lane = w.current;
  std::vector<double> &slot = w.slots[w.round[lane]++ & 1];
  slot[lane] = value;
  endTurn();
  // A partner outside the warp gives the lane its own value (shfl's clamp).
  int64_t partner = lane ^ mask;
  return slot[partner < w.lanes ? partner : lane];
}

int64_t laneId() { return warp().current; }

float shuffleXorF32(float value, int32_t mask) {
  return static_cast<float>(shuffleXor(value, mask));
}

double shuffleXorF64(double value, int32_t mask) {
  return shuffleXor(value, mask);
}

void syncWarp() {
  Warp &w = warp();
  ++w.round[w.current];
  endTurn();
}

void laneMain() {
  Warp &w = warp();
  w.body(w.buffers, w.rowBegin, w.rowEnd);
  w.done[w.current] = true;
  // Returning resumes the scheduler (uc_link).
}

/// This thread's warp of `lanes` lanes, kept for its next kernel.
Warp &warpOf(int64_t lanes) {
  thread_local std::vector<std::unique_ptr<Warp>> warps;
  for (auto &w : warps)
    if (w->lanes == lanes)
      return *w;
  warps.push_back(std::make_unique<Warp>(lanes));
  return *warps.back();
}

void runLanes(LanedKernelBody body, void **buffers, int64_t begin,
              int64_t end, int64_t lanes) {
  auto firstRowFrom = [&](int64_t thread) {
    return (thread + lanes - 1) / lanes;
  };
  int64_t rowBegin = firstRowFrom(begin), rowEnd = firstRowFrom(end);
  if (rowBegin >= rowEnd)
    return;
  Warp &w = warpOf(lanes);
  w.body = body;
  w.buffers = buffers;
  w.rowBegin = rowBegin;
  w.rowEnd = rowEnd;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    ucontext_t &c = w.contexts[lane];
    getcontext(&c);
    c.uc_stack.ss_sp = w.stacks[lane].get();
    c.uc_stack.ss_size = kLaneStackBytes;
    c.uc_link = &w.scheduler;
    makecontext(&c, laneMain, 0);
    w.done[lane] = false;
    w.round[lane] = 0;
  }
  Warp *outer = activeWarp;
  activeWarp = &w;
  for (;;) {
    int64_t finished = 0;
    for (int64_t lane = 0; lane < lanes; ++lane) {
      if (!w.done[lane]) {
        w.current = lane;
        swapcontext(&w.scheduler, &w.contexts[lane]);
      }
      finished += w.done[lane];
    }
    if (finished == lanes)
      break;
    // On a GPU such a warp would deadlock or read garbage: a compiler bug.
    if (finished > 0) {
      std::fprintf(stderr,
                   "kiln: the lanes of a warp reached different numbers of "
                   "warp primitives (%lld of %lld finished first)\n",
                   static_cast<long long>(finished),
                   static_cast<long long>(lanes));
      std::abort();
    }
  }
  activeWarp = outer;
}

} // namespace

const HostLaneHooks &hostLaneHooks() {
  static const HostLaneHooks hooks{laneId, shuffleXorF32, shuffleXorF64,
                                   syncWarp, runLanes};
  return hooks;
}

void installHostLaneHooks(void *library) {
  if (auto *table =
          static_cast<HostLaneHooks *>(dlsym(library, kHostLaneHooksSymbol)))
    *table = hostLaneHooks();
}

} // namespace kiln::runtime
