// kiln-partition: decides which forward values the backward pass reads from
// memory and which it recomputes, by a minimum cut (the partitioner of
// PyTorch's AOTAutograd, over kiln's one training-step function).
//
// The backward pass is every op that depends on a kiln.optimization_barrier
// marked gradient_seed (the frontend ties the seed of backward() to the
// loss); the forward pass is every other op. Steps:
//   1. split the function's top-level ops into forward F and backward B;
//   2. a flow network over F: each op is an edge in → out whose capacity is
//      the bytes of its results (what saving it costs), weighted by 1.1 per
//      hop from the backward so that values next to their backward users are
//      preferred; out → in edges follow F's data flow; an op read by B has
//      out → sink; source → in costs `recompute-cost`, or is infinite for an
//      op that must not run twice (GEMMs, reductions, gathers, scatters,
//      barriers: see isRecomputable) or is a trained weight's 16-bit copy
//      (isRoundedParameter);
//   3. a minimum cut: ops whose in side stays with the source and whose out
//      side does not are saved; ops entirely on the sink side are recomputed
//      (each paid `recompute-cost` bytes, so small values are kept);
//   4. for each B op, the recomputed values it reads are cloned right before
//      it, from saved values and arguments read through one
//      kiln.optimization_barrier with the op's backward operands: the clones
//      run in the backward pass, after the gradient they combine with, and
//      no pass can merge them with the forward originals. Elementwise clones
//      then fuse into their backward consumer and are never stored;
//   5. forward ops nothing reads any more are erased.
// Dropout masks come from kiln.rng_uniform, which is recomputable: the
// backward regenerates them from the RNG state instead of reading them.
#include "passes/Passes.h"

#include "ir/KilnDialect.h"
#include "passes/FusionUtils.h"
#include "passes/Liveness.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <deque>
#include <limits>

namespace kiln {
#define GEN_PASS_DEF_PARTITIONPASS
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

/// Ops cheap enough to run again in the backward pass: elementwise work,
/// layout ops and random numbers (deterministic from their state). GEMMs,
/// gathers, scatters and barriers are kept, and so are reductions: their
/// results are small (a layer norm's statistics, a softmax's row sums),
/// while running one again reads its whole input once more.
bool isRecomputable(Operation *op) {
  if (isa<DotGeneralOp, ReduceOp, GatherOp, ScatterAddOp,
          OptimizationBarrierOp, FusedAttentionOp, FusedAttentionGradOp,
          FusedLinearCrossEntropyOp, FusedLinearCrossEntropyGradOp,
          FusionOp>(op))
    return false;
  return isPure(op) && op->getNumRegions() == 0;
}

/// Whether `op` rounds a trained parameter to fewer bits (kiln-autocast's
/// 16-bit copy of a weight the step updates: an argument with an output
/// alias). Such a copy is saved, never recomputed: the weight is live for
/// the whole step anyway, the copy does not grow with the batch and is
/// small beside what training holds per weight (its gradient and AdamW's
/// two moments, 12 bytes an element in f32, against 2), and recomputing it
/// would be a kernel in the backward pass every step (GPT-2 124M in bf16:
/// 48 kernels and 0.5 GB of traffic a step, against 170 MB held).
/// torch.autocast keeps the casts of weights that require grad for the
/// backward pass in the same way; frozen weights (a LoRA base in f32) are
/// still rounded again, their copy being half their own size.
bool isRoundedParameter(Operation *op) {
  auto convert = dyn_cast<ConvertOp>(op);
  auto argument =
      convert ? dyn_cast<BlockArgument>(convert.getOperand()) : nullptr;
  auto function =
      argument ? dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp())
               : nullptr;
  return function &&
         function.getArgAttr(argument.getArgNumber(),
                             KilnDialect::kOutputAliasAttrName) &&
         byteSizeOf(convert.getType()) < byteSizeOf(argument.getType());
}

/// Dinic's maximum flow on a small network; afterwards, sourceSide() is the
/// source's side of a minimum cut.
class MaxFlow {
public:
  explicit MaxFlow(int nodes) : edges_(nodes), level_(nodes), next_(nodes) {}

  void addEdge(int from, int to, int64_t capacity) {
    edges_[from].push_back({to, capacity, static_cast<int>(edges_[to].size())});
    edges_[to].push_back({from, 0, static_cast<int>(edges_[from].size()) - 1});
  }

  int64_t run(int source, int sink) {
    int64_t total = 0;
    while (levels(source, sink)) {
      std::fill(next_.begin(), next_.end(), 0);
      while (int64_t pushed = push(source, sink, kInfinite))
        total = std::min(kInfinite, total + pushed);
    }
    return total;
  }

  /// Nodes reachable from the source in the residual network.
  std::vector<bool> sourceSide(int source) const {
    std::vector<bool> seen(edges_.size());
    std::deque<int> queue{source};
    seen[source] = true;
    while (!queue.empty()) {
      int n = queue.front();
      queue.pop_front();
      for (const Edge &e : edges_[n])
        if (e.capacity > 0 && !seen[e.to]) {
          seen[e.to] = true;
          queue.push_back(e.to);
        }
    }
    return seen;
  }

private:
  struct Edge {
    int to;
    int64_t capacity;
    int reverse;
  };

  bool levels(int source, int sink) {
    std::fill(level_.begin(), level_.end(), -1);
    std::deque<int> queue{source};
    level_[source] = 0;
    while (!queue.empty()) {
      int n = queue.front();
      queue.pop_front();
      for (const Edge &e : edges_[n])
        if (e.capacity > 0 && level_[e.to] < 0) {
          level_[e.to] = level_[n] + 1;
          queue.push_back(e.to);
        }
    }
    return level_[sink] >= 0;
  }

  // Iterative depth-first search along the level graph: one augmenting
  // path per call (networks here have thousands of nodes; recursion as deep
  // as a path could overflow the stack).
  int64_t push(int source, int sink, int64_t limit) {
    std::vector<int> path; // edge indices taken, per node on the path
    std::vector<int> nodes{source};
    while (!nodes.empty()) {
      int n = nodes.back();
      if (n == sink) {
        int64_t flow = limit;
        for (size_t i = 0; i + 1 < nodes.size(); ++i)
          flow = std::min(flow, edges_[nodes[i]][path[i]].capacity);
        for (size_t i = 0; i + 1 < nodes.size(); ++i) {
          Edge &e = edges_[nodes[i]][path[i]];
          e.capacity -= flow;
          edges_[e.to][e.reverse].capacity += flow;
        }
        return flow;
      }
      bool advanced = false;
      for (int &i = next_[n]; i < static_cast<int>(edges_[n].size()); ++i) {
        const Edge &e = edges_[n][i];
        if (e.capacity > 0 && level_[e.to] == level_[n] + 1) {
          path.push_back(i);
          nodes.push_back(e.to);
          advanced = true;
          break;
        }
      }
      if (advanced)
        continue;
      // Dead end: retreat and skip the edge that led here.
      level_[n] = -1;
      nodes.pop_back();
      if (!path.empty()) {
        path.pop_back();
        ++next_[nodes.back()];
      }
    }
    return 0;
  }

  std::vector<std::vector<Edge>> edges_;
  std::vector<int> level_, next_;
};

struct PartitionPass : public impl::PartitionPassBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (getOperation().isExternal())
      return;
    Block &block = getOperation().getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);

    // 1. Backward: everything that depends on a gradient seed. The seed
    //    barrier itself reads the loss where the forward left it: it is
    //    no backward reader (`readers`) that recomputation could serve.
    DenseSet<Operation *> backward, readers;
    for (Operation *op : ops) {
      auto barrier = dyn_cast<OptimizationBarrierOp>(op);
      bool seed = barrier && barrier.getGradientSeed();
      bool fed = llvm::any_of(op->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && backward.contains(def);
      });
      if (seed || fed)
        backward.insert(op);
      if (fed && !seed)
        readers.insert(op);
    }
    if (backward.empty())
      return;

    // 2. The network over forward ops, nodes 2i (in) and 2i+1 (out).
    DenseMap<Operation *, int> index;
    SmallVector<Operation *> forward;
    for (Operation *op : ops)
      if (!backward.contains(op)) {
        index[op] = forward.size();
        forward.push_back(op);
      }
    int n = forward.size(), source = 2 * n, sink = 2 * n + 1;
    // Hops from each forward op to its nearest backward reader.
    std::vector<int> distance(n, std::numeric_limits<int>::max());
    for (int i = n - 1; i >= 0; --i)
      for (Operation *user : forward[i]->getUsers()) {
        if (readers.contains(user))
          distance[i] = 1;
        else if (auto it = index.find(user);
                 it != index.end() &&
                 distance[it->second] != std::numeric_limits<int>::max())
          distance[i] = std::min(distance[i], distance[it->second] + 1);
      }
    MaxFlow flow(2 * n + 2);
    for (int i = 0; i < n; ++i) {
      Operation *op = forward[i];
      if (distance[i] == std::numeric_limits<int>::max())
        continue; // no backward reader downstream: not part of the cut
      double weight = static_cast<double>(resultBytes(op)) *
                      std::pow(1.1, std::min(distance[i], 100));
      flow.addEdge(2 * i, 2 * i + 1,
                   std::max<int64_t>(1, static_cast<int64_t>(weight)));
      flow.addEdge(source, 2 * i,
                   isRecomputable(op) && !isRoundedParameter(op)
                       ? std::max<int64_t>(1, recomputeCost)
                       : kInfinite);
      for (Operation *user : op->getUsers()) {
        if (readers.contains(user))
          flow.addEdge(2 * i + 1, sink, kInfinite);
        else if (auto it = index.find(user); it != index.end())
          flow.addEdge(2 * i + 1, 2 * it->second, kInfinite);
      }
    }

    // 3. The cut.
    flow.run(source, sink);
    std::vector<bool> sourceSide = flow.sourceSide(source);
    auto recomputed = [&](Value v) {
      Operation *def = v.getDefiningOp();
      auto it = def ? index.find(def) : index.end();
      return it != index.end() && !sourceSide[2 * it->second] &&
             distance[it->second] != std::numeric_limits<int>::max();
    };
    for (int i = 0; i < n; ++i)
      if (sourceSide[2 * i] && !sourceSide[2 * i + 1]) {
        ++numSaved;
        numSavedBytes += resultBytes(forward[i]);
      }

    // 4. Clones before each backward reader (one clone per value, before
    //    its first backward reader; later readers share it).
    IRMapping clones;
    for (Operation *user : ops)
      if (readers.contains(user))
        cloneRecomputed(user, recomputed, backward, clones);

    // 5. Forward ops left without readers.
    for (Operation *op : llvm::reverse(forward))
      if (op->use_empty() && isPure(op)) {
        op->erase();
        ++numErased;
      }
  }

  /// The backward value a recomputation for `user` waits for: the smallest
  /// of user's backward operands, each traced back through recomputable
  /// ops with one backward operand (broadcasts, converts, elementwise ops,
  /// random numbers) to a value an op that is never recomputed made: a
  /// barrier's operand must be a buffer, and such a value is one already,
  /// where a broadcast or an elementwise result would have fused away.
  static Value tieTarget(Operation *user,
                         const DenseSet<Operation *> &backward) {
    auto inBackward = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && backward.contains(def);
    };
    Value best;
    int64_t bestBytes = std::numeric_limits<int64_t>::max();
    for (Value v : user->getOperands()) {
      if (!inBackward(v))
        continue;
      while (Operation *def = v.getDefiningOp()) {
        if (!isRecomputable(def))
          break;
        SmallVector<Value> fed;
        for (Value operand : def->getOperands())
          if (inBackward(operand))
            fed.push_back(operand);
        if (fed.size() != 1)
          break;
        v = fed.front();
      }
      int64_t bytes = resultBytes(v.getDefiningOp());
      if (bytes < bestBytes) {
        best = v;
        bestBytes = bytes;
      }
    }
    return best;
  }

  /// Replaces every recomputed operand of `user` with its clone: made now,
  /// just before `user`, from values read through one barrier, unless an
  /// earlier backward reader made it (`clones` maps originals to clones).
  void cloneRecomputed(Operation *user,
                       const std::function<bool(Value)> &recomputed,
                       const DenseSet<Operation *> &backward,
                       IRMapping &clones) {
    // The ops to clone (in block order) and the leaves they read.
    llvm::SetVector<Operation *> toClone;
    llvm::SetVector<Value> leaves;
    std::function<void(Value)> collect = [&](Value v) {
      if (clones.contains(v))
        return;
      if (!recomputed(v)) {
        // A constant needs no tie: it depends on nothing to be hoisted
        // above, and every fusion clones the constants it reads.
        if (!v.getDefiningOp<ConstantOp>())
          leaves.insert(v);
        return;
      }
      Operation *def = v.getDefiningOp();
      if (toClone.contains(def))
        return;
      for (Value operand : def->getOperands())
        collect(operand);
      toClone.insert(def);
    };
    bool any = false;
    for (Value operand : user->getOperands())
      if (recomputed(operand)) {
        any = true;
        collect(operand);
      }
    if (!any)
      return;

    OpBuilder builder(user);
    IRMapping &mapping = clones;
    SmallVector<Value> tied(leaves.begin(), leaves.end());
    size_t numLeaves = tied.size();
    if (Value after = tieTarget(user, backward))
      tied.push_back(after);
    // Leaves are mapped for this user's clones only (erased below): a later
    // user reads the same saved value through a barrier of its own.
    if (numLeaves > 0) {
      auto barrier = OptimizationBarrierOp::create(builder, user->getLoc(),
                                                   ValueRange(tied),
                                                   /*gradient_seed=*/false);
      for (size_t i = 0; i < numLeaves; ++i)
        mapping.map(tied[i], barrier.getResult(i));
    }
    // toClone holds each op after its operands' ops (post-order).
    for (Operation *op : toClone) {
      builder.clone(*op, mapping);
      ++numRecomputed;
    }
    for (size_t i = 0; i < numLeaves; ++i)
      mapping.erase(tied[i]);
    for (OpOperand &use : user->getOpOperands())
      if (recomputed(use.get()))
        use.set(mapping.lookup(use.get()));
  }
};

} // namespace
} // namespace kiln
