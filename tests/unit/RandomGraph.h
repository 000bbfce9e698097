// A generator of random well-typed kiln graphs (ranks 0-4) for differential
// testing: each step picks an op, finds operands of fitting types among the
// values made so far (adding fresh inputs where an op needs one), and
// records the op as MLIR text. Values carry an error scale (how far rounding
// differences may have grown) and an `exact` flag: discontinuous ops (floor,
// sign, compare, float→int convert) only take exact values, so a one-ulp
// difference upstream cannot flip them.
#ifndef KILN_TESTS_UNIT_RANDOMGRAPH_H
#define KILN_TESTS_UNIT_RANDOMGRAPH_H

#include "support/HostTensor.h"

#include <random>
#include <set>
#include <string>
#include <vector>

namespace kiln::testing {

struct GraphValue {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  bool isInput = false;
  bool donated = false; // inputs: marked {kiln.donate}
  double scale = 1;  // tolerance multiplier
  bool exact = true; // bit-identical to the reference expected
};

struct GraphOp {
  std::string text;          // one or more MLIR lines
  std::vector<int> operands; // value indices
  std::vector<int> results;  // value indices
};

class RandomGraph {
public:
  /// A graph of `numOps` random ops; inputs are drawn from `rng` as well.
  static RandomGraph generate(std::mt19937 &rng, int numOps);

  /// @main over every input, computing the ancestors of `outputs` and
  /// returning them (all op results when `outputs` is empty).
  std::string toMlir(std::vector<int> outputs = {}) const;

  /// Value indices @main returns for `toMlir({})`, in order.
  std::vector<int> allResults() const;

  std::vector<GraphValue> values;
  std::vector<GraphOp> ops;
  std::vector<HostTensor> inputData;
};

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_RANDOMGRAPH_H
