// Helpers for the native backends' differential tests: parse MLIR text,
// compile it with a backend (the CPU by default, or any ProgramFactory, as
// the CUDA tests pass), run it and the reference evaluator on the same
// inputs (random values mixed with NaN, ±Inf, -0 and denormals), and compare
// with the tolerances of docs/TESTING.md.
#ifndef KILN_TESTS_UNIT_CPUTESTSUPPORT_H
#define KILN_TESTS_UNIT_CPUTESTSUPPORT_H

#include "compiler/cpu/CpuCompiler.h"
#include "ir/KilnDialect.h"
#include "ir/reference/Evaluator.h"
#include "runtime/CpuExecutor.h"
#include "support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::testing {

/// The comparison rule of docs/TESTING.md: non-finite values must match
/// exactly (NaN with NaN, ±Inf with the same Inf); finite floats within
/// tol(dtype) * scale * (1 + |expected|); integers and i1 exactly.
inline double baseTolerance(DType dtype) {
  switch (dtype) {
  case DType::f64:
    return 1e-12;
  case DType::f32:
    return 1e-5;
  case DType::f16:
    return 2e-3;
  case DType::bf16:
    return 1.6e-2;
  default:
    return 0;
  }
}

/// Empty string when `actual` matches `expected`, else the first mismatch.
inline std::string compareTensors(const HostTensor &actual,
                                  const HostTensor &expected, double scale) {
  std::ostringstream os;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return "type mismatch: " + actual.typeString() + " vs " +
           expected.typeString();
  double tol = baseTolerance(expected.dtype()) * scale;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    if (!isFloat(expected.dtype())) {
      if (actual.getInt(i) != expected.getInt(i)) {
        os << "element " << i << ": got " << actual.getInt(i) << ", expected "
           << expected.getInt(i);
        return os.str();
      }
      continue;
    }
    double a = actual.getDouble(i), e = expected.getDouble(i);
    bool ok;
    if (std::isnan(e) || std::isinf(e))
      ok = std::isnan(e) ? std::isnan(a) : a == e;
    else
      ok = std::isfinite(a) && std::fabs(a - e) <= tol * (1 + std::fabs(e));
    if (!ok) {
      os.precision(17);
      os << "element " << i << ": got " << a << ", expected " << e
         << " (tolerance " << tol << ")";
      return os.str();
    }
  }
  return "";
}

/// Values that exercise IEEE corner cases, mixed into random inputs.
inline double specialValue(std::mt19937 &rng) {
  static const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    -0.0,
                                    0.0,
                                    1e-40,  // an f32 denormal
                                    -3e-39, // another
                                    1.0,
                                    -1.0};
  return specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
}

/// A random tensor: floats mostly in [-range, range] with ~1/8 specials
/// (when `specials`), integers in [-9, 9], i1 0/1.
inline HostTensor randomTensor(DType dtype, std::vector<int64_t> shape,
                               std::mt19937 &rng, double range = 4,
                               bool specials = true) {
  HostTensor t(dtype, std::move(shape));
  std::uniform_real_distribution<double> uniform(-range, range);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (dtype == DType::i1)
      t.setInt(i, rng() % 2);
    else if (!isFloat(dtype))
      t.setInt(i, static_cast<int64_t>(rng() % 19) - 9);
    else if (specials && rng() % 8 == 0)
      t.setDouble(i, specialValue(rng));
    else
      t.setDouble(i, uniform(rng));
  }
  return t;
}

/// Random tensors of the (dtype, shape) `specs`, drawn in order from one
/// generator seeded `seed` (randomTensor's range 4; with `specials`, some
/// NaN, infinities and signed zeros among them).
inline std::vector<HostTensor> randomInputs(
    std::initializer_list<std::pair<DType, std::vector<int64_t>>> specs,
    unsigned seed = 1, bool specials = true) {
  std::mt19937 rng(seed);
  std::vector<HostTensor> out;
  for (const auto &[dtype, shape] : specs)
    out.push_back(randomTensor(dtype, shape, rng, 4, specials));
  return out;
}

/// An rng state tensor: (key, counter).
inline HostTensor rngState(int64_t key, int64_t counter) {
  HostTensor state(DType::i64, {2});
  state.setInt(0, key);
  state.setInt(1, counter);
  return state;
}

struct ParsedModule {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

inline ParsedModule parseModule(const std::string &source) {
  ParsedModule parsed;
  parsed.context = std::make_unique<mlir::MLIRContext>();
  parsed.context->loadDialect<KilnDialect, mlir::func::FuncDialect>();
  parsed.module =
      mlir::parseSourceString<mlir::ModuleOp>(source, parsed.context.get());
  return parsed;
}

/// The reference evaluator's results of `module`'s @main on `inputs` (a
/// failure is a test failure and gives no results).
inline std::vector<HostTensor> evaluateMain(mlir::ModuleOp module,
                                            const std::vector<HostTensor> &inputs) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  absl::StatusOr<std::vector<HostTensor>> out =
      reference::evaluate(main, inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : std::vector<HostTensor>{};
}

/// Every result of `actual` within compareTensors' tolerance (times
/// `scale`) of `expected`'s.
inline void expectAllMatch(const std::vector<HostTensor> &actual,
                           const std::vector<HostTensor> &expected,
                           double scale, const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_EQ(compareTensors(actual[i], expected[i], scale), "")
        << what << ", result " << i;
}

/// The reference evaluator gives `rewritten` (a pass's output from
/// `source`) the results it gives `source`, within `scale` times the base
/// tolerance.
inline void expectRewriteKeepsResults(const std::string &source,
                                      mlir::ModuleOp rewritten,
                                      const std::vector<HostTensor> &inputs,
                                      double scale, const std::string &what) {
  ParsedModule direct = parseModule(source);
  ASSERT_TRUE(direct.module) << what;
  expectAllMatch(evaluateMain(rewritten, inputs),
                 evaluateMain(*direct.module, inputs), scale, what);
}

/// `source` after `pass` (nested on functions), which must leave no op of
/// the kinds `isLeft` names.
inline ParsedModule
loweredBy(const std::string &source, std::unique_ptr<mlir::Pass> pass,
          const std::function<bool(mlir::Operation *)> &isLeft) {
  ParsedModule parsed = parseModule(source);
  EXPECT_TRUE(parsed.module);
  mlir::PassManager pm(parsed.context.get());
  pm.enableVerifier(true);
  pm.addNestedPass<mlir::func::FuncOp>(std::move(pass));
  EXPECT_TRUE(mlir::succeeded(pm.run(*parsed.module)));
  bool anyLeft = false;
  parsed.module->walk([&](mlir::Operation *op) { anyLeft |= isLeft(op); });
  EXPECT_FALSE(anyLeft);
  return parsed;
}

/// Checks `grads` (one per leading input of `inputs`) as the gradients of
/// L = Σ @main(inputs)[0] · weights against central differences in f64
/// (step 1e-6); returns how many gradient elements are nonzero, so a caller
/// can insist that they are not trivially zero.
inline int expectGradientsMatchFiniteDifferences(
    mlir::ModuleOp forward, const std::vector<HostTensor> &inputs,
    const HostTensor &weights, const std::vector<HostTensor> &grads) {
  auto loss = [&](const std::vector<HostTensor> &x) {
    std::vector<HostTensor> out = evaluateMain(forward, x);
    double l = 0;
    for (int64_t i = 0; !out.empty() && i < out[0].numElements(); ++i)
      l += out[0].getDouble(i) * weights.getDouble(i);
    return l;
  };
  int nonzero = 0;
  for (size_t operand = 0; operand < grads.size(); ++operand)
    for (int64_t i = 0; i < inputs[operand].numElements(); ++i) {
      const double eps = 1e-6;
      std::vector<HostTensor> plus = inputs, minus = inputs;
      double x = inputs[operand].getDouble(i);
      plus[operand].setDouble(i, x + eps);
      minus[operand].setDouble(i, x - eps);
      double numeric = (loss(plus) - loss(minus)) / (2 * eps);
      double analytic = grads[operand].getDouble(i);
      EXPECT_NEAR(analytic, numeric, 1e-6 * (1 + std::fabs(numeric)))
          << "operand " << operand << " element " << i;
      nonzero += analytic != 0;
    }
  return nonzero;
}

/// A parsed module's @main → a loaded program on the backend under test.
using ProgramFactory =
    std::function<absl::StatusOr<std::unique_ptr<runtime::Program>>(
        mlir::ModuleOp module)>;

/// How a test hands @main its inputs: lent (the program may not write
/// them), or given, so that a donated input's buffer may be written over.
enum class InputPassing { borrowed, given };

/// Compiles `source`'s @main with `factory` and compares it with the
/// reference on `inputs`; `scale` widens the tolerance (e.g. by a reduction
/// length).
inline void expectMatchesReferenceOn(
    const ProgramFactory &factory, const std::string &source,
    const std::vector<HostTensor> &inputs, double scale = 1,
    InputPassing passing = InputPassing::borrowed) {
  ParsedModule parsed = parseModule(source);
  ASSERT_TRUE(parsed.module) << "test MLIR does not parse:\n" << source;
  auto main = parsed.module->lookupSymbol<mlir::func::FuncOp>("main");
  ASSERT_TRUE(main);
  absl::StatusOr<std::vector<HostTensor>> expected =
      reference::evaluate(main, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString() << "\n" << source;
  absl::StatusOr<std::unique_ptr<runtime::Program>> program =
      factory(*parsed.module);
  ASSERT_TRUE(program.ok()) << program.status().ToString() << "\n" << source;
  absl::StatusOr<std::vector<HostTensor>> actual =
      passing == InputPassing::given
          ? (*program)->run(std::vector<HostTensor>(inputs))
          : (*program)->run(runtime::borrowAll(inputs));
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < actual->size(); ++i) {
    std::string diff = compareTensors((*actual)[i], (*expected)[i], scale);
    EXPECT_EQ(diff, "") << "result " << i << " of\n" << source;
  }
}

/// @main compiled for `target` and passed through a serialization round
/// trip, as a cache or a file hands it to the runtime.
inline absl::StatusOr<runtime::Executable>
compileRoundTripped(mlir::ModuleOp module,
                    const compiler::cpu::KernelTarget &target = {}) {
  absl::StatusOr<runtime::Executable> compiled =
      compiler::cpu::compileExecutable(module, "main", nullptr, {}, target);
  if (!compiled.ok())
    return compiled.status();
  return runtime::deserializeExecutable(
      runtime::serializeExecutable(*compiled));
}

/// The CPU backend's programs of @main under `pipeline` and `target` (a
/// CPU target may ask for a GPU kernel form, e.g. atomicScatterAdd, to run
/// it on the CPU's threads).
inline ProgramFactory
cpuPrograms(PipelineOptions pipeline = {},
            compiler::cpu::KernelTarget target = {}) {
  return [pipeline, target](mlir::ModuleOp module) {
    return compiler::cpu::createProgram(module, "main", pipeline, target);
  };
}

/// expectMatchesReferenceOn for the CPU backend (oneDNN GEMMs, 2 threads).
inline void expectMatchesReference(const std::string &source,
                                   const std::vector<HostTensor> &inputs,
                                   double scale = 1) {
  expectMatchesReferenceOn(cpuPrograms(), source, inputs, scale);
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_CPUTESTSUPPORT_H
