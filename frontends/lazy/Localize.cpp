// Finding the op that made a step's NaN or Inf: the graph is lowered again
// (with locations), run op by op on the reference evaluator from the step's
// inputs, and walked back from the bad output. Built without RTTI, like the
// MLIR it includes: failures are absl::Status, never exceptions.
//
// The walk, rather than "the first op in program order with a non-finite
// result", because models make harmless non-finite values: a -inf mask that
// exp() turns into 0 never reaches an output, and must not be blamed for a
// NaN made elsewhere.
#include "frontends/lazy/GraphLowering.h"
#include "frontends/lazy/Numerics.h"

#include "ir/KilnDialect.h"
#include "ir/reference/Evaluator.h"

#include "absl/status/status.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace kiln::lazy {

namespace {

/// The values of one evaluation: what each holds, and each op's position.
struct Evaluation {
  llvm::DenseMap<mlir::Value, NonFiniteCount> counts;
  llvm::DenseMap<mlir::Operation *, int64_t> order;
};

/// "holds the kind of value being traced": a NaN, or for an Inf any
/// non-finite value (an Inf is made by an op whose operands are finite).
bool holds(const NonFiniteCount &count, bool nan) {
  return nan ? count.nan > 0 : count.any();
}

std::string printOp(mlir::Operation *op, mlir::func::FuncOp function) {
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  // An AsmState over the whole function numbers SSA values as a dump of
  // the function does.
  mlir::AsmState state(function, flags);
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, state);
  return text;
}

} // namespace

absl::StatusOr<NonFiniteOrigin>
localizeNonFinite(const Graph &graph, const std::vector<HostTensor> &inputs,
                  size_t output, bool nan) {
  // 1. Lower again, remembering each op's node.
  OpOrigins origins;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      lowerGraph(graph, /*locations=*/true, &origins);
  auto function = module->lookupSymbol<mlir::func::FuncOp>("main");
  if (!function)
    return absl::InternalError("the lowered graph has no @main");

  // 2. Run it, counting the non-finite elements of every value.
  Evaluation evaluation;
  mlir::Block &body = function.getBody().front();
  for (auto [argument, input] : llvm::zip(body.getArguments(), inputs))
    evaluation.counts[argument] = countNonFinite(input);
  auto observe = [&](mlir::Operation *op,
                     llvm::ArrayRef<const HostTensor *>,
                     llvm::ArrayRef<HostTensor> results) {
    evaluation.order[op] = static_cast<int64_t>(evaluation.order.size());
    for (auto [value, result] : llvm::zip(op->getResults(), results))
      evaluation.counts[value] = countNonFinite(result);
  };
  absl::StatusOr<std::vector<HostTensor>> results =
      reference::evaluate(function, inputs, observe);
  if (!results.ok())
    return results.status();

  // 3. Walk back from the output through operands holding such values; an
  // op none of whose operands does is a source.
  NonFiniteOrigin origin;
  mlir::Value root = body.getTerminator()->getOperand(output);
  if (!holds(evaluation.counts.lookup(root), nan)) {
    origin.referenceFinite = true;
    return origin;
  }
  std::vector<mlir::Value> worklist{root};
  llvm::DenseSet<mlir::Value> visited{root};
  std::vector<mlir::Value> sources; // results of the ops that made it
  std::vector<int64_t> inputSources;
  while (!worklist.empty()) {
    mlir::Value value = worklist.back();
    worklist.pop_back();
    mlir::Operation *op = value.getDefiningOp();
    if (!op) {
      inputSources.push_back(
          mlir::cast<mlir::BlockArgument>(value).getArgNumber());
      continue;
    }
    bool fromOperands = false;
    for (mlir::Value operand : op->getOperands())
      if (holds(evaluation.counts.lookup(operand), nan)) {
        fromOperands = true;
        if (visited.insert(operand).second)
          worklist.push_back(operand);
      }
    if (!fromOperands)
      sources.push_back(value);
  }
  origin.otherSources =
      static_cast<int64_t>(sources.size() + inputSources.size()) - 1;

  // 4. The source first in program order (an op, else the first input).
  if (sources.empty()) {
    origin.input = *std::min_element(inputSources.begin(), inputSources.end());
    return origin;
  }
  mlir::Value made = *std::min_element(
      sources.begin(), sources.end(), [&](mlir::Value a, mlir::Value b) {
        return evaluation.order.lookup(a.getDefiningOp()) <
               evaluation.order.lookup(b.getDefiningOp());
      });
  mlir::Operation *first = made.getDefiningOp();
  origin.node = origins.lookup(first);
  origin.opName = first->getName().getStringRef().str();
  origin.opText = printOp(first, function);
  origin.opIndex = evaluation.order.lookup(first);
  origin.numOps = static_cast<int64_t>(evaluation.order.size());
  for (mlir::Value operand : first->getOperands())
    origin.operandsHoldInf |= evaluation.counts.lookup(operand).inf > 0;
  origin.result = evaluation.counts.lookup(made);
  if (auto type = mlir::dyn_cast<mlir::RankedTensorType>(made.getType()))
    origin.resultShape = type.getShape().vec();
  return origin;
}

} // namespace kiln::lazy
