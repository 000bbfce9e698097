// Helpers shared by the reference evaluator's tests: parse MLIR text holding
// a func.func @main, evaluate it on host tensors, and build or read tensors
// from plain lists so each test states its inputs and hand-computed answers.
#ifndef KILN_TESTS_UNIT_EVALUATORTESTSUPPORT_H
#define KILN_TESTS_UNIT_EVALUATORTESTSUPPORT_H

#include "ir/KilnDialect.h"
#include "ir/reference/Evaluator.h"
#include "support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "absl/status/status.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace kiln::testing {

/// MLIR text with a func.func @main + its inputs → @main's results, or the
/// evaluator's error (a parse failure is reported as InvalidArgument).
inline absl::StatusOr<std::vector<HostTensor>>
runMain(const std::string &source, const std::vector<HostTensor> &inputs = {}) {
  mlir::MLIRContext context;
  context.loadDialect<KilnDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return absl::InvalidArgumentError("test MLIR does not parse");
  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    return absl::InvalidArgumentError("test MLIR has no @main");
  return reference::evaluate(main, inputs);
}

/// Like runMain, but a failure fails the test and yields no results.
inline std::vector<HostTensor>
mustRun(const std::string &source, const std::vector<HostTensor> &inputs = {}) {
  absl::StatusOr<std::vector<HostTensor>> results = runMain(source, inputs);
  if (!results.ok()) {
    ADD_FAILURE() << "evaluation failed: " << results.status().ToString();
    return {};
  }
  return *std::move(results);
}

/// The single result of `source` (a failure fails the test, giving an empty
/// f32 tensor, so the comparisons that follow fail too rather than crash).
inline HostTensor runOne(const std::string &source,
                         const std::vector<HostTensor> &inputs = {}) {
  std::vector<HostTensor> results = mustRun(source, inputs);
  if (results.size() != 1) {
    ADD_FAILURE() << "expected one result, got " << results.size();
    return HostTensor(DType::f32, {0});
  }
  return std::move(results.front());
}

/// (dtype, shape, values) → a tensor; each value is stored through setDouble.
inline HostTensor floats(DType dtype, std::vector<int64_t> shape,
                         const std::vector<double> &values) {
  HostTensor tensor(dtype, std::move(shape));
  EXPECT_EQ(tensor.numElements(), static_cast<int64_t>(values.size()));
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.setDouble(i, values[i]);
  return tensor;
}

/// (dtype, shape, values) → a tensor; each value is stored through setInt.
inline HostTensor ints(DType dtype, std::vector<int64_t> shape,
                       const std::vector<int64_t> &values) {
  HostTensor tensor(dtype, std::move(shape));
  EXPECT_EQ(tensor.numElements(), static_cast<int64_t>(values.size()));
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.setInt(i, values[i]);
  return tensor;
}

/// A tensor's elements as doubles (floats) or int64s (integers and i1).
inline std::vector<double> asDoubles(const HostTensor &tensor) {
  std::vector<double> values;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    values.push_back(tensor.getDouble(i));
  return values;
}
inline std::vector<int64_t> asInts(const HostTensor &tensor) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    values.push_back(tensor.getInt(i));
  return values;
}

/// The sign bit of each element of a float tensor (to tell -0 from +0).
inline std::vector<bool> signBits(const HostTensor &tensor) {
  std::vector<bool> bits;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    bits.push_back(std::signbit(tensor.getDouble(i)));
  return bits;
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_EVALUATORTESTSUPPORT_H
