// Reverse-mode autograd over lazy nodes: one vector-Jacobian-product rule per
// primitive op in a table, and a reverse walk (tinygrad's gradient.py). The
// walk first marks the nodes that lie on a path to a leaf requiring grad;
// only those get gradient nodes, so a frozen parameter costs nothing.
#include "frontends/lazy/CallSites.h"
#include "frontends/lazy/Eager.h"
#include "frontends/lazy/Node.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace kiln {

using namespace lazy;

namespace {

/// (node, its output gradient, which operands need one) → one gradient per
/// operand; null where none is needed or the operand is not differentiable.
using Grads = std::vector<NodePtr>;
using VjpRule = Grads (*)(const NodePtr &out, const NodePtr &g,
                          const std::vector<bool> &need);

NodePtr mul(const NodePtr &a, const NodePtr &b) {
  return binary(Op::Mul, a, b);
}
NodePtr div(const NodePtr &a, const NodePtr &b) {
  return binary(Op::Div, a, b);
}
NodePtr sub(const NodePtr &a, const NodePtr &b) {
  return binary(Op::Sub, a, b);
}
NodePtr scale(const NodePtr &a, double c) { return mul(a, constantLike(a, c)); }
NodePtr zerosLike(const NodePtr &a) { return constantLike(a, 0); }

std::vector<int64_t> slice(absl::Span<const int64_t> v, size_t from,
                           size_t count) {
  return {v.begin() + from, v.begin() + from + count};
}

/// Operand dims that survive a reduction over `dims` (sorted).
std::vector<int64_t> keptDims(int64_t rank, absl::Span<const int64_t> dims) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d))
      kept.push_back(d);
  return kept;
}

/// d/dlhs of dot_general: contract g with `other` over other's free dims,
/// then transpose into this operand's dimension order. `mine`/`theirs` are
/// {batch, contracting} dims of this operand and of the other one.
NodePtr dotOperandGrad(const NodePtr &g, const NodePtr &self,
                       const NodePtr &other,
                       const std::vector<int64_t> &myBatch,
                       const std::vector<int64_t> &myContract,
                       const std::vector<int64_t> &theirBatch,
                       const std::vector<int64_t> &theirContract,
                       bool selfIsLhs) {
  auto freeDims = [](int64_t rank, const std::vector<int64_t> &a,
                     const std::vector<int64_t> &b) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d)
      if (std::find(a.begin(), a.end(), d) == a.end() &&
          std::find(b.begin(), b.end(), d) == b.end())
        free.push_back(d);
    return free;
  };
  int64_t nb = static_cast<int64_t>(myBatch.size());
  std::vector<int64_t> myFree =
      freeDims(self->shape.size(), myBatch, myContract);
  std::vector<int64_t> theirFree =
      freeDims(other->shape.size(), theirBatch, theirContract);
  // g's dims: batch, lhs free, rhs free.
  int64_t theirFreeStart =
      selfIsLhs ? nb + static_cast<int64_t>(myFree.size()) : nb;
  std::vector<int64_t> gBatch(nb), gContract(theirFree.size());
  std::iota(gBatch.begin(), gBatch.end(), 0);
  std::iota(gContract.begin(), gContract.end(), theirFreeStart);
  NodePtr r = dotGeneral(g, other, gBatch, theirBatch, gContract, theirFree);
  // r's dims: batch, my free, then other's contracting dims in ascending
  // order, which pair with my contracting dims.
  std::vector<int64_t> source; // r dim i holds my dim source[i]
  source.insert(source.end(), myBatch.begin(), myBatch.end());
  source.insert(source.end(), myFree.begin(), myFree.end());
  std::vector<int64_t> sortedTheirs = theirContract;
  std::sort(sortedTheirs.begin(), sortedTheirs.end());
  for (int64_t d : sortedTheirs) {
    size_t k = std::find(theirContract.begin(), theirContract.end(), d) -
               theirContract.begin();
    source.push_back(myContract[k]);
  }
  return transpose(r, invertPermutation(source));
}

/// The VJP table, indexed by Op. Ops absent from it (leaves, comparisons,
/// logical ops, random numbers, detach) pass no gradient; scatter_add has no
/// rule because only gather's gradient creates it (no double backward).
const std::array<VjpRule, kNumOps> &vjpTable() {
  static const std::array<VjpRule, kNumOps> table = [] {
    std::array<VjpRule, kNumOps> t{};
    auto set = [&t](Op op, VjpRule rule) { t[static_cast<int>(op)] = rule; };
    // kiln.fused_attention: one gradient node per operand needing one; the
    // three lower to one kiln.fused_attention_grad.
    set(Op::Attention, [](auto &o, auto &g, auto &need) -> Grads {
      const auto &src = o->srcs;
      NodePtr state = src.size() > 3 ? src[3] : nullptr;
      AttentionAttrs attrs = attentionAttrsOf(*o);
      Grads grads(src.size());
      for (int64_t i = 0; i < 3; ++i)
        if (need[i])
          grads[i] = attentionGrad(src[0], src[1], src[2], g, state, attrs, i);
      return grads;
    });
    // kiln.fused_linear_cross_entropy: hidden's and weight's gradients (the
    // labels have none); the two lower to one op.
    set(Op::LinearCrossEntropy, [](auto &o, auto &g, auto &need) -> Grads {
      const auto &src = o->srcs;
      Grads grads(src.size());
      for (int64_t i = 0; i < 2; ++i)
        if (need[i])
          grads[i] = linearCrossEntropyGrad(src[0], src[1], src[2], g,
                                            o->ints[0], i, o->scalar);
      return grads;
    });
    set(Op::Neg,
        [](auto &, auto &g, auto &) -> Grads { return {unary(Op::Neg, g)}; });
    // y = sum over processes of x: each x moves every process's loss, so
    // its gradient is the sum of theirs (Horovod's and torch.distributed's
    // rule for a summing all-reduce).
    set(Op::AllReduce, [](auto &, auto &g, auto &) -> Grads {
      return {unary(Op::AllReduce, g)};
    });
    set(Op::Abs, [](auto &o, auto &g, auto &) -> Grads {
      return {mul(g, unary(Op::Sign, o->srcs[0]))};
    });
    set(Op::Exp, [](auto &o, auto &g, auto &) -> Grads { return {mul(g, o)}; });
    set(Op::Log,
        [](auto &o, auto &g, auto &) -> Grads { return {div(g, o->srcs[0])}; });
    set(Op::Tanh, [](auto &o, auto &g, auto &) -> Grads {
      return {mul(g, sub(constantLike(o, 1), mul(o, o)))};
    });
    set(Op::Sqrt, [](auto &o, auto &g, auto &) -> Grads {
      return {div(g, scale(o, 2))};
    });
    set(Op::Rsqrt, [](auto &o, auto &g, auto &) -> Grads {
      return {mul(g, scale(mul(o, mul(o, o)), -0.5))};
    });
    set(Op::Logistic, [](auto &o, auto &g, auto &) -> Grads {
      return {mul(g, mul(o, sub(constantLike(o, 1), o)))};
    });
    set(Op::Add, [](auto &, auto &g, auto &) -> Grads { return {g, g}; });
    set(Op::Sub, [](auto &, auto &g, auto &) -> Grads {
      return {g, unary(Op::Neg, g)};
    });
    set(Op::Mul, [](auto &o, auto &g, auto &) -> Grads {
      return {mul(g, o->srcs[1]), mul(g, o->srcs[0])};
    });
    set(Op::Div, [](auto &o, auto &g, auto &) -> Grads {
      const NodePtr &b = o->srcs[1];
      return {div(g, b), unary(Op::Neg, div(mul(g, o), b))};
    });
    // Ties send the whole gradient to the first operand.
    set(Op::Max, [](auto &o, auto &g, auto &) -> Grads {
      NodePtr first = compare(Cmp::GE, o->srcs[0], o->srcs[1]);
      return {select(first, g, zerosLike(g)), select(first, zerosLike(g), g)};
    });
    set(Op::Min, [](auto &o, auto &g, auto &) -> Grads {
      NodePtr first = compare(Cmp::LE, o->srcs[0], o->srcs[1]);
      return {select(first, g, zerosLike(g)), select(first, zerosLike(g), g)};
    });
    set(Op::Pow, [](auto &o, auto &g, auto &need) -> Grads {
      const NodePtr &a = o->srcs[0], &b = o->srcs[1];
      Grads r(2);
      if (need[0])
        r[0] = mul(g, mul(b, binary(Op::Pow, a, sub(b, constantLike(b, 1)))));
      if (need[1])
        r[1] = mul(g, mul(unary(Op::Log, a), o));
      return r;
    });
    set(Op::Select, [](auto &o, auto &g, auto &) -> Grads {
      const NodePtr &p = o->srcs[0];
      return {nullptr, select(p, g, zerosLike(g)), select(p, zerosLike(g), g)};
    });
    set(Op::Convert, [](auto &o, auto &g, auto &) -> Grads {
      return {convert(g, o->srcs[0]->dtype)};
    });
    set(Op::Broadcast, [](auto &o, auto &g, auto &) -> Grads {
      const NodePtr &x = o->srcs[0];
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < static_cast<int64_t>(o->shape.size()); ++d) {
        auto it = std::find(o->ints.begin(), o->ints.end(), d);
        if (it == o->ints.end() ||
            (x->shape[it - o->ints.begin()] == 1 && o->shape[d] != 1))
          dims.push_back(d);
      }
      return {reshape(reduce(Op::ReduceSum, g, dims), x->shape)};
    });
    set(Op::Reshape, [](auto &o, auto &g, auto &) -> Grads {
      return {reshape(g, o->srcs[0]->shape)};
    });
    set(Op::Transpose, [](auto &o, auto &g, auto &) -> Grads {
      return {transpose(g, invertPermutation(o->ints))};
    });
    set(Op::Slice, [](auto &o, auto &g, auto &) -> Grads {
      const Shape &in = o->srcs[0]->shape;
      size_t rank = in.size();
      NodePtr r = g;
      std::vector<int64_t> low(rank, 0), high(rank, 0);
      for (size_t d = 0; d < rank; ++d) {
        int64_t start = o->ints[d], stride = o->ints[2 * rank + d];
        int64_t m = r->shape[d];
        if (stride > 1 && m > 0) {
          // Interleave stride-1 zeros after each element: [.., m, 1, ..]
          // padded to [.., m, s, ..], merged, then cut to the input's extent.
          Shape split;
          for (size_t i = 0; i < rank; ++i) {
            split.push_back(r->shape[i]);
            if (i == d)
              split.push_back(1);
          }
          std::vector<int64_t> lo(rank + 1, 0), hi(rank + 1, 0);
          hi[d + 1] = stride - 1;
          r = pad(reshape(r, split), lo, hi, 0);
          Shape merged = r->shape;
          merged[d] *= stride;
          merged.erase(merged.begin() + d + 1);
          r = reshape(r, merged);
          std::vector<int64_t> s0(rank, 0), lim = r->shape, st(rank, 1);
          lim[d] = std::min(lim[d], in[d] - start);
          r = lazy::slice(r, s0, lim, st);
        }
        low[d] = start;
        high[d] = in[d] - start - r->shape[d];
      }
      return {pad(r, low, high, 0)};
    });
    set(Op::Concatenate, [](auto &o, auto &g, auto &) -> Grads {
      int64_t dim = o->ints[0], offset = 0;
      Grads r;
      for (const NodePtr &x : o->srcs) {
        std::vector<int64_t> start(g->shape.size(), 0),
            limit = g->shape, strides(g->shape.size(), 1);
        start[dim] = offset;
        limit[dim] = offset += x->shape[dim];
        r.push_back(lazy::slice(g, start, limit, strides));
      }
      return r;
    });
    set(Op::Pad, [](auto &o, auto &g, auto &) -> Grads {
      size_t rank = g->shape.size();
      std::vector<int64_t> start = slice(o->ints, 0, rank), limit = start;
      for (size_t d = 0; d < rank; ++d)
        limit[d] += o->srcs[0]->shape[d];
      return {lazy::slice(g, start, limit, std::vector<int64_t>(rank, 1))};
    });
    set(Op::ReduceSum, [](auto &o, auto &g, auto &) -> Grads {
      const NodePtr &x = o->srcs[0];
      return {broadcastInDim(g, x->shape, keptDims(x->shape.size(), o->ints))};
    });
    // The gradient is shared equally by the elements that attain the max.
    set(Op::ReduceMax, [](auto &o, auto &g, auto &) -> Grads {
      const NodePtr &x = o->srcs[0];
      std::vector<int64_t> kept = keptDims(x->shape.size(), o->ints);
      NodePtr mask = convert(
          compare(Cmp::EQ, x, broadcastInDim(o, x->shape, kept)), x->dtype);
      NodePtr count =
          reduce(Op::ReduceSum, mask, {o->ints.begin(), o->ints.end()});
      return {mul(mask, broadcastInDim(div(g, count), x->shape, kept))};
    });
    set(Op::DotGeneral, [](auto &o, auto &g, auto &need) -> Grads {
      absl::Span<const int64_t> v = o->ints;
      size_t nb = v[0], nc = v[1];
      std::vector<int64_t> lb = slice(v, 2, nb), rb = slice(v, 2 + nb, nb),
                           lc = slice(v, 2 + 2 * nb, nc),
                           rc = slice(v, 2 + 2 * nb + nc, nc);
      const NodePtr &a = o->srcs[0], &b = o->srcs[1];
      Grads r(2);
      if (need[0])
        r[0] = dotOperandGrad(g, a, b, lb, lc, rb, rc, true);
      if (need[1])
        r[1] = dotOperandGrad(g, b, a, rb, rc, lb, lc, false);
      return r;
    });
    set(Op::Gather, [](auto &o, auto &g, auto &) -> Grads {
      const NodePtr &x = o->srcs[0];
      return {scatterAdd(zerosLike(x), o->srcs[1], g, o->ints[0]), nullptr};
    });
    return t;
  }();
  return table;
}

} // namespace

namespace lazy {

SavedValues savedByGradient(Op op) {
  // What the rules above read besides shapes and attributes; keep in step
  // with them (a value missing here is recomputed in eager mode, not
  // wrong).
  constexpr uint32_t first = 1, second = 2, all = ~0u;
  switch (op) {
  case Op::Abs:
  case Op::Log:
  case Op::Select: // the predicate (a dropout mask, as PyTorch saves)
  case Op::ReduceMax:
    return {first, op == Op::ReduceMax};
  case Op::Mul:
  case Op::Max:
  case Op::Min:
  case Op::DotGeneral:
    return {first | second, false};
  case Op::Div:
    return {second, true};
  case Op::Pow:
    return {first | second, true};
  case Op::Exp:
  case Op::Tanh:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Logistic:
    return {0, true};
  case Op::Gather:
    return {second, false}; // the indices
  case Op::Attention:
  case Op::LinearCrossEntropy:
    return {all, false};
  default:
    return {};
  }
}

} // namespace lazy

namespace {

void runBackward(const Tensor &root, NodePtr seed) {
  if (!root.requires_grad())
    throw Error("backward: " + root.str() + " does not require grad");
  if (!root.is_leaf() && nodeOf(root)->isData())
    throw Error("backward: the graph of " + root.str() +
                " was already executed by step() or a sync; call backward() "
                "before step(), item() or to_host()");
  // 1. The targets: live leaves that require grad, in creation order (the
  // order their gradients are made in, hence step()'s outputs).
  std::vector<detail::TensorImpl *> targets;
  auto live = liveTensors();
  for (const auto &impl : live)
    if (impl->requiresGrad && impl->isLeaf)
      targets.push_back(impl.get());

  // 2. Nodes on a path to a target; gradients stop at detach and data.
  // Indexed by the walk's numbering (Node::position).
  std::vector<NodePtr> order = postOrder({nodeOf(root)});
  const uint64_t walk = lastPostOrderWalk();
  auto indexOf = [&](const Node &n) -> size_t {
    if (n.visitedBy != walk) // a rule walked the graph: never silently wrong
      throw Error("backward: internal error: the graph was walked again "
                  "while its gradients were recorded");
    return n.position;
  };
  std::vector<char> isTarget(order.size()), onPath(order.size());
  for (const detail::TensorImpl *target : targets)
    if (target->node->visitedBy == walk)
      isTarget[target->node->position] = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node &n = *order[i];
    bool on = isTarget[i];
    if (!on && n.op != Op::Detach)
      for (const NodePtr &src : n.srcs)
        on |= onPath[src->position] != 0;
    onPath[i] = on;
  }

  // 3. The reverse walk: each node's gradient is complete once every user
  // (later in post-order) has run. Under KILN_CHECK_NUMERICS the nodes a
  // rule makes are attributed to its forward node.
  uint32_t backwardSite = sites::current();
  // The seed is tied to the root, so the compiler knows where the backward
  // pass begins (kiln-partition) and never merges it with a constant of the
  // forward pass.
  // (Eager mode: settled to data, as every accumulated gradient is, so
  // the rules that read it do not release it for one another.)
  std::vector<NodePtr> grads(order.size());
  grads.back() = eager::settle(gradientSeed(seed, nodeOf(root)), false);
  for (size_t i = order.size(); i-- > 0;) {
    const NodePtr &n = order[i];
    if (!grads[i] || isTarget[i] || !onPath[i])
      continue;
    VjpRule rule = vjpTable()[static_cast<int>(n->op)];
    if (!rule)
      continue;
    std::vector<bool> need;
    for (const NodePtr &src : n->srcs)
      need.push_back(onPath[indexOf(*src)] != 0);
    sites::GradientScope scope(*n, backwardSite);
    Grads srcGrads = rule(n, grads[i], need);
    // Eager mode: a gradient two operands share (x · x) is accumulated
    // twice, so none is released by the first accumulation.
    eager::PinScope pinned(srcGrads);
    for (size_t s = 0; s < n->srcs.size(); ++s) {
      if (!need[s] || !srcGrads[s])
        continue;
      NodePtr &acc = grads[indexOf(*n->srcs[s])];
      // Eager mode keeps gradients as data: nothing differentiates them, and
      // their structure would hold every earlier gradient until step().
      NodePtr sum = acc ? binary(Op::Add, acc, srcGrads[s]) : srcGrads[s];
      acc = eager::settle(std::move(sum), false);
    }
    grads[i] = nullptr; // frees intermediate gradients early
  }

  // The forward values the rules read are no longer needed (eager mode).
  if (eager::enabled())
    eager::releaseSavedValues(order);

  // 4. Accumulate into each target's grad().
  for (detail::TensorImpl *impl : targets) {
    const Node &node = *impl->node;
    if (node.visitedBy != walk || !grads[indexOf(node)])
      continue;
    const NodePtr &g = grads[node.position];
    if (impl->grad.defined())
      assignNode(*impl->grad.impl(), binary(Op::Add, nodeOf(impl->grad), g));
    else
      impl->grad = makeTensor(g);
  }
}

} // namespace

void Tensor::backward() const {
  if (!defined() || numel() != 1)
    throw Error("backward: expected a one-element tensor, got " + str() +
                "; pass a gradient for other shapes");
  runBackward(*this, constantLike(nodeOf(*this), 1));
}

void Tensor::backward(const Tensor &grad_output) const {
  if (!defined() || !grad_output.defined() || grad_output.shape() != shape() ||
      grad_output.dtype() != dtype())
    throw Error("backward: gradient " + grad_output.str() + " does not match " +
                str());
  runBackward(*this, nodeOf(grad_output));
}

} // namespace kiln
