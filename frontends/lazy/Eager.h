// Eager mode (internal to frontends/lazy): every node runs the moment it is
// created, as a single-op program compiled once per signature (op,
// attributes, operand and result types) and kept in an eager kernel cache.
// The node keeps its op and operands, so autograd walks the same structure
// as in graph mode, and carries its computed device data, so nothing is
// pending. A tensor handle that needs no history (no grad, or a leaf) gets a
// fresh data node sharing the buffer, which cuts the structure behind it:
// buffers die with the last tensor or node that holds them, as in PyTorch's
// eager mode. step() only cuts what autograd held (assign_ already made
// parameters and optimizer state their new values). In graph mode every
// function here is a no-op that returns its argument.
#ifndef KILN_FRONTENDS_LAZY_EAGER_H
#define KILN_FRONTENDS_LAZY_EAGER_H

#include "frontends/lazy/Node.h"

namespace kiln::lazy::eager {

/// True when options().mode is Mode::eager.
bool enabled();

/// "graph" | "eager" → the mode; throws kiln::Error on another name.
Mode parseMode(std::string_view name);

/// A node just built (or found interned) → the same node; in eager mode its
/// value (and that of any operand without one) is computed now. Throws
/// kiln::Error, at the op's call site, when compiling or running fails.
const NodePtr &run(const NodePtr &node);

/// The node a tensor handle is about to hold → what it should hold. In eager
/// mode, unless `keepHistory` (a non-leaf that requires grad, whose
/// structure backward() walks), a fresh data node sharing the computed
/// buffer: the structure behind it is freed once nothing else holds it.
NodePtr settle(NodePtr node, bool keepHistory);

/// step() in eager mode: every live tensor's node becomes a data node
/// (freeing the autograd history of the step) and no buffer is donated.
void commit();

/// Drops the compiled single-op kernels (the next use of each compiles).
void clearKernelCache();

/// Keeps the buffers of `nodes` (eager results no handle holds) from being
/// released by their consumers while it lives, then releases those that
/// nothing saved (the gradients a rule returns, while they accumulate).
class PinScope {
public:
  explicit PinScope(const std::vector<NodePtr> &nodes);
  ~PinScope();
  PinScope(const PinScope &) = delete;
  PinScope &operator=(const PinScope &) = delete;

private:
  std::vector<NodePtr> pinned_;
};

/// After a backward pass: the buffers its gradient rules read (Node::
/// savedForBackward) are released unless a tensor handle holds them, as
/// PyTorch frees saved tensors; a second backward recomputes them.
void releaseSavedValues(const std::vector<NodePtr> &history);

} // namespace kiln::lazy::eager

namespace kiln::lazy {

/// The values an op's gradient rule (Autograd.cpp's VJP table) reads:
/// operand i when bit i of `operands` is set, and the op's own result.
/// Eager mode keeps exactly these buffers for backward (Node::held).
struct SavedValues {
  uint32_t operands = 0;
  bool result = false;
};
SavedValues savedByGradient(Op op);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_EAGER_H
