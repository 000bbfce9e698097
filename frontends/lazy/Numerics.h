// KILN_CHECK_NUMERICS (internal to frontends/lazy): the checks step() and
// eager mode run when Options::checkNumerics is on, and the localization
// that names the first op that made a NaN or an Inf. Numerics.cpp counts
// and words the messages; Localize.cpp (the MLIR part) re-lowers the graph
// and steps it on the reference evaluator, so the search works whatever
// backend ran the step.
#ifndef KILN_FRONTENDS_LAZY_NUMERICS_H
#define KILN_FRONTENDS_LAZY_NUMERICS_H

#include "frontends/lazy/Graph.h"

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace kiln::lazy {

/// How many elements of a tensor are NaN and ±Inf, and the first of
/// either (-1 when all are finite; integer tensors are always finite).
struct NonFiniteCount {
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t first = -1;
  bool any() const { return nan + inf > 0; }
};

/// Reads the tensor on the host (a device result is fetched) and counts.
NonFiniteCount countNonFinite(const HostTensor &tensor);

/// Where the first non-finite value of one output came from.
struct NonFiniteOrigin {
  /// The reference evaluator computed the output finite: the backend, not
  /// the model, made the value (nothing else below is set).
  bool referenceFinite = false;
  /// The op that made it: its node, its op name ("kiln.log"), its text
  /// with SSA names and location (`%4 = kiln.log %3 : ... loc(...)`), its
  /// position among @main's numOps ops (from 0), and what its operands held.
  const Node *node = nullptr;
  std::string opName;
  std::string opText;
  int64_t opIndex = -1;
  int64_t numOps = 0;
  bool operandsHoldInf = false;
  NonFiniteCount result;
  std::vector<int64_t> resultShape;
  /// Else the input it came from (no op made it), or -1.
  int64_t input = -1;
  /// Other ops (or inputs) that made the same kind of value reaching the
  /// output; the reported one is first in program order.
  int64_t otherSources = 0;
};

/// graph + its inputs' values + one output whose value holds a NaN
/// (`nan`) or else an Inf → its origin: the graph is lowered again and run
/// op by op on the reference evaluator; from the output back through the
/// operands holding such values, the source first in program order. A NaN
/// is made by an op whose operands hold no NaN (Inf - Inf counts), an Inf
/// by one whose operands are all finite. Fails when lowering or evaluating
/// fails.
absl::StatusOr<NonFiniteOrigin>
localizeNonFinite(const Graph &graph, const std::vector<HostTensor> &inputs,
                  size_t output, bool nan);

/// A step's graph, host copies of the inputs it consumed (donated; the
/// others may be empty tensors, read from their nodes) and its results →
/// the error message naming the first non-finite output and its origin,
/// or "" when every float output is finite.
std::string checkStepNumerics(const Graph &graph,
                              std::vector<HostTensor> consumedInputs,
                              const std::vector<HostTensor> &results);

/// An eager node just run → the error message when its result holds a NaN
/// made from operands without one, or an Inf made from finite operands;
/// "" otherwise. Constants are the user's own values and never fail;
/// non-finite values that only flow on from a device-data operand do not
/// either (graph mode reports those when they reach a step's output).
std::string checkEagerNumerics(const Node &node);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_NUMERICS_H
