// KILN_CHECK_NUMERICS: counting non-finite values, the step check (the first
// non-finite output, then its origin from Localize.cpp) and the eager check
// (each kernel's result against its operands), worded as the kiln::Error
// messages step() and eager mode throw.
#include "frontends/lazy/Numerics.h"

#include "frontends/lazy/CallSites.h"

#include <cmath>
#include <cstring>

namespace kiln::lazy {

namespace {

std::string typeText(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeString(shape);
}

/// Row-major element `flat` of `shape` as "[1, 3]".
std::string indexText(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return shapeString(index);
}

/// "8 NaN and 0 Inf (the first at [0, 1])"; a 0-d tensor has one place.
std::string countText(const NonFiniteCount &count, const Shape &shape) {
  std::string text = std::to_string(count.nan) + " NaN and " +
                     std::to_string(count.inf) + " Inf";
  if (shape.empty())
    return text;
  return text + " (the first at " + indexText(count.first, shape) + ")";
}

template <typename T>
void countFloats(const std::byte *data, int64_t n, NonFiniteCount &count) {
  for (int64_t i = 0; i < n; ++i) {
    T value;
    std::memcpy(&value, data + i * sizeof(T), sizeof(T));
    if (std::isfinite(value))
      continue;
    ++(std::isnan(value) ? count.nan : count.inf);
    if (count.first < 0)
      count.first = i;
  }
}

} // namespace

NonFiniteCount countNonFinite(const HostTensor &tensor) {
  NonFiniteCount count;
  if (!isFloat(tensor.dtype()) || !tensor.hasContents())
    return count;
  // f32 and f64 read directly (a debug mode still reads every parameter);
  // f16 and bf16 through the exact conversion to double.
  if (tensor.dtype() == DType::f32)
    countFloats<float>(tensor.data(), tensor.numElements(), count);
  else if (tensor.dtype() == DType::f64)
    countFloats<double>(tensor.data(), tensor.numElements(), count);
  else
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      double value = tensor.getDouble(i);
      if (std::isfinite(value))
        continue;
      ++(std::isnan(value) ? count.nan : count.inf);
      if (count.first < 0)
        count.first = i;
    }
  return count;
}

std::string checkStepNumerics(const Graph &graph,
                              std::vector<HostTensor> consumedInputs,
                              const std::vector<HostTensor> &results) {
  // 1. The first output holding a non-finite value.
  size_t bad = results.size();
  NonFiniteCount badCount;
  int64_t badOutputs = 0;
  for (size_t k = 0; k < results.size(); ++k) {
    NonFiniteCount count = countNonFinite(results[k]);
    if (count.any() && badOutputs++ == 0) {
      bad = k;
      badCount = count;
    }
  }
  if (badOutputs == 0)
    return "";
  bool nan = badCount.nan > 0;
  std::string kind = nan ? "NaN" : "Inf";
  const Node &output = *graph.outputs[bad];
  std::string message =
      "KILN_CHECK_NUMERICS: the step produced " + kind + " in output " +
      std::to_string(bad) + " of " + std::to_string(results.size()) + " (" +
      typeText(output.dtype, output.shape) + ", " +
      sites::describe(output.site) + "): " +
      countText(badCount, output.shape);
  if (badOutputs == 2)
    message += "; 1 more output holds non-finite values";
  else if (badOutputs > 2)
    message += "; " + std::to_string(badOutputs - 1) +
               " more outputs hold non-finite values";

  // 2. Its origin, from every input's value before the step.
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    if (!consumedInputs[i].hasContents())
      consumedInputs[i] = *graph.inputs[i]->data;
  absl::StatusOr<NonFiniteOrigin> origin =
      localizeNonFinite(graph, consumedInputs, bad, nan);
  if (!origin.ok())
    return message + "\n  (re-running the step on the reference evaluator "
                     "to find the op failed: " +
           std::string(origin.status().message()) + ")";
  if (origin->referenceFinite)
    return message + "\n  the reference evaluator computes this output " +
           "finite from the same inputs: the backend made the " + kind +
           ", not the model's ops (a backend bug: please report it)";
  if (!origin->node) {
    const Node &input = *graph.inputs[origin->input];
    return message + "\n  no op made it: input " +
           std::to_string(origin->input) + " (" +
           typeText(input.dtype, input.shape) + ", " +
           sites::describe(input.site) + ") already holds " +
           countText(countNonFinite(consumedInputs[origin->input]),
                     input.shape);
  }

  // 3. The op, where the model built it, and the op in the kiln dialect.
  message += "\n  first made by " + origin->opName + " " +
             sites::describe(origin->node->site) + ", from " +
             (nan && origin->operandsHoldInf
                  ? "operands holding Inf but no NaN"
                  : "finite operands") +
             "; its result (" +
             typeText(origin->node->dtype, origin->resultShape) +
             ") holds " + countText(origin->result, origin->resultShape);
  message += "\n  op " + std::to_string(origin->opIndex + 1) + " of " +
             std::to_string(origin->numOps) + " in @main: " + origin->opText;
  if (origin->otherSources > 0)
    message += "\n  (" + std::to_string(origin->otherSources) +
               " other ops or inputs also make " + kind +
               " that reaches this output; this op runs first)";
  return message;
}

std::string checkEagerNumerics(const Node &node) {
  if (!isFloat(node.dtype) || node.op == Op::Constant || !node.data)
    return "";
  NonFiniteCount count = countNonFinite(*node.data);
  if (!count.any())
    return "";
  bool nan = count.nan > 0;
  bool operandsHoldInf = false;
  for (const NodePtr &src : node.srcs) {
    if (!src->data)
      continue;
    NonFiniteCount operand = countNonFinite(*src->data);
    if (nan ? operand.nan > 0 : operand.any())
      return ""; // flows on from device data: the op did not make it
    operandsHoldInf |= operand.inf > 0;
  }
  return std::string("KILN_CHECK_NUMERICS: ") + opName(node.op) +
         " (eager) " + sites::describe(node.site) + " made " +
         (nan ? "NaN" : "Inf") + " from " +
         (nan && operandsHoldInf ? "operands holding Inf but no NaN"
                                 : "finite operands") +
         "; its result (" + typeText(node.dtype, node.shape) + ") holds " +
         countText(count, node.shape);
}

} // namespace kiln::lazy
