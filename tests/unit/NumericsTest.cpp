// KILN_CHECK_NUMERICS on the cpu and reference backends (and cuda where a
// GPU is usable; skipped elsewhere): a NaN injected by the log of a negative
// number inside a small model (it flows into a sum) and an Inf from a
// division by zero make step() throw kiln::Error naming the op, its
// kiln-dialect location and this file's line that built it; a NaN made
// by a gradient rule names the forward op; a NaN that was already in an
// input names the input. A finite model runs as usual and the option changes
// no cache key (the in-memory graph cache and the persistent cache both hit
// across the switch); with the option off nothing is checked. Eager mode
// throws at the op itself. Pass dumps show the ops' call sites. This file is
// built with line tables (-g1) so that its lines can be named.
#include "frontends/lazy/Tensor.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

namespace fs = std::filesystem;

/// A small model-like function: a few ops, the log of values of which some
/// are negative (NaN there), a few more ops, and a sum that the NaN reaches.
/// `logLine` receives the line of the log call, set before the call runs
/// (eager mode throws inside it).
Tensor buildModel(const Tensor &x, const Tensor &w, int *logLine) {
  Tensor h = (x * 2.0 + 1.0).tanh();
  Tensor shifted = h - 0.5;
  Tensor logged = (*logLine = __LINE__, shifted.log());
  Tensor y = (logged * w).exp() + 1.0;
  return y.sum();
}

Tensor modelInput() {
  std::vector<double> values(32);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = (static_cast<double>(i) - 16) / 8; // [-2, 1.875]
  return Tensor::from_vector(values, {4, 8});
}

Tensor modelWeight() { return Tensor::full({4, 8}, 0.25); }

/// step()'s kiln::Error message, or "" when it throws none.
std::string stepError() {
  try {
    step();
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// "<this file>:57 in " and the location `loc("<this file>":57:0)`: the
/// line tables name the file as the compiler was given it, as __FILE__.
std::string siteOf(int line) {
  return std::string(__FILE__) + ":" + std::to_string(line) + " in ";
}
std::string locOf(int line) {
  return "loc(\"" + std::string(__FILE__) + "\":" + std::to_string(line) +
         ":0)";
}

class Numerics : public ::testing::TestWithParam<Backend> {
protected:
  void SetUp() override {
    step();
    saved_ = options();
    // The check is backend-generic; cuda runs where a GPU is usable.
    try {
      check_backend_available(GetParam());
    } catch (const Error &error) {
      GTEST_SKIP() << error.what();
    }
    Options o = saved_;
    o.mode = Mode::graph;
    o.backend = GetParam();
    o.checkNumerics = true;
    set_options(o);
    clear_graph_cache();
    metrics::reset();
  }
  void TearDown() override {
    set_options(saved_);
    clear_graph_cache();
  }
  void setCheck(bool on, Mode mode = Mode::graph) {
    Options o = options();
    o.checkNumerics = on;
    o.mode = mode;
    set_options(o);
  }

  Options saved_;
};

TEST_P(Numerics, NamesTheLogThatMadeANaNWithItsLocationAndLine) {
  int logLine = 0;
  Tensor loss = buildModel(modelInput(), modelWeight(), &logLine);
  std::string message = stepError();
  ASSERT_FALSE(message.empty()) << "step() threw nothing";
  EXPECT_TRUE(contains(message, "KILN_CHECK_NUMERICS: the step produced NaN "
                                "in output 0 of 1 (f32 []"))
      << message;
  EXPECT_TRUE(contains(message, "first made by kiln.log built at " +
                                    siteOf(logLine) +
                                    "kiln::(anonymous namespace)::buildModel"
                                    ", from finite operands"))
      << message;
  // The op in the dialect, with its location.
  EXPECT_TRUE(contains(message, "= kiln.log %")) << message;
  EXPECT_TRUE(contains(message, locOf(logLine))) << message;
  // Inputs x = (i - 16) / 8: h - 0.5 = tanh(2x + 1) - 0.5 < 0 for
  // x < -0.2253, i.e. the first 15 of 32 elements.
  EXPECT_TRUE(contains(message, "holds 15 NaN and 0 Inf (the first at [0, 0])"))
      << message;
  // The tensors still hold the step's values.
  EXPECT_FALSE(loss.is_pending());
  EXPECT_TRUE(std::isnan(loss.item()));
}

TEST_P(Numerics, NamesTheDivisionThatMadeAnInf) {
  Tensor a = Tensor::from_vector({1, 2, 3, 4}, {4});
  Tensor zero = Tensor::from_vector({1, 0, 1, 1}, {4});
  int divLine = 0;
  Tensor q = (divLine = __LINE__, a / zero);
  Tensor total = (q * 2.0).sum();
  std::string message = stepError();
  // q and the sum both hold an Inf: the first output is reported.
  EXPECT_TRUE(contains(message, "the step produced Inf in output 0 of 2 (f32 "
                                "[4]"))
      << message;
  EXPECT_TRUE(contains(message, "1 more output holds non-finite values"))
      << message;
  EXPECT_TRUE(contains(message, "first made by kiln.div built at " +
                                    siteOf(divLine)))
      << message;
  EXPECT_TRUE(contains(message, "holds 0 NaN and 1 Inf (the first at [1])"))
      << message;
  EXPECT_TRUE(contains(message, locOf(divLine))) << message;
  EXPECT_TRUE(std::isinf(total.item()));
}

TEST_P(Numerics, NamesTheForwardOpOfAGradientThatMadeAnInf) {
  Tensor x = Tensor::from_vector({0, 1, 4}, {3}, DType::f32, true);
  int sqrtLine = 0, backwardLine = 0;
  Tensor root = (sqrtLine = __LINE__, x.sqrt());
  Tensor loss = root.sum();
  (backwardLine = __LINE__, loss.backward());
  Tensor grad = x.grad();
  // d sqrt(x)/dx at 0 is Inf: the gradient's value, not the loss's.
  std::string message = stepError();
  EXPECT_TRUE(contains(message, "produced Inf")) << message;
  EXPECT_TRUE(contains(message, "in the gradient of sqrt built at " +
                                    siteOf(sqrtLine)))
      << message;
  EXPECT_TRUE(contains(message, "(backward() called at " +
                                    siteOf(backwardLine)))
      << message;
  EXPECT_TRUE(contains(message, "loc(\"gradient of sqrt\"(")) << message;
  EXPECT_TRUE(std::isinf(grad.to_vector()[0]));
  EXPECT_EQ(loss.item(), 3);
}

TEST_P(Numerics, NamesAnInputThatAlreadyHeldTheNaN) {
  int inputLine = 0;
  Tensor x = (inputLine = __LINE__, Tensor::from_vector({1, NAN, 2}, {3}));
  Tensor y = (x * 2.0).sum();
  std::string message = stepError();
  EXPECT_TRUE(contains(message, "no op made it: input 0 (f32 [3], built at " +
                                    siteOf(inputLine)))
      << message;
  EXPECT_TRUE(contains(message, "already holds 1 NaN and 0 Inf (the first "
                                "at [1])"))
      << message;
}

TEST_P(Numerics, AFiniteStepPassesAndTheSwitchCostsNoRecompile) {
  // Compiled with the option off, run again with it on: the graph cache
  // hits (locations are not in its key) and the values are the same.
  setCheck(false);
  Tensor w = Tensor::from_vector({0.5, -1, 2, 0.25}, {2, 2});
  auto run = [&] {
    Tensor x = Tensor::from_vector({1, 2}, {1, 2});
    Tensor y = (x.matmul(w) + 1.0).tanh().log_softmax(1);
    EXPECT_EQ(stepError(), "");
    return y.to_vector();
  };
  std::vector<double> off = run();
  setCheck(true);
  std::vector<double> on = run();
  std::vector<double> again = run();
  EXPECT_EQ(metrics::counters().compiles, 1);
  EXPECT_EQ(metrics::counters().cacheHits, 2);
  EXPECT_EQ(off, on);
  EXPECT_EQ(on, again);
}

TEST_P(Numerics, OffChecksNothing) {
  setCheck(false);
  int logLine = 0;
  Tensor loss = buildModel(modelInput(), modelWeight(), &logLine);
  EXPECT_EQ(stepError(), "");
  EXPECT_TRUE(std::isnan(loss.item()));
}

TEST_P(Numerics, EagerModeThrowsAtTheOpThatMadeTheNaN) {
  setCheck(true, Mode::eager);
  int logLine = 0;
  std::string message;
  try {
    buildModel(modelInput(), modelWeight(), &logLine);
  } catch (const Error &error) {
    message = error.what();
  }
  EXPECT_TRUE(contains(message, "KILN_CHECK_NUMERICS: log (eager) built at " +
                                    siteOf(logLine)))
      << message;
  EXPECT_TRUE(contains(message, "made NaN from finite operands")) << message;
  // A -inf constant is the user's own value, not a numerics error.
  Tensor masked = Tensor::full({2}, -INFINITY).exp();
  EXPECT_EQ(masked.to_vector(), std::vector<double>({0, 0}));
}

INSTANTIATE_TEST_SUITE_P(Backends, Numerics,
                         ::testing::Values(Backend::cpu, Backend::reference,
                                           Backend::cuda),
                         [](const ::testing::TestParamInfo<Backend> &info) {
                           return std::string(backendName(info.param));
                         });

TEST(NumericsOptions, ComeFromTheEnvironmentOnlyWhenSetToOne) {
  ::unsetenv("KILN_CHECK_NUMERICS");
  EXPECT_FALSE(options_from_env().checkNumerics);
  ::setenv("KILN_CHECK_NUMERICS", "1", 1);
  EXPECT_TRUE(options_from_env().checkNumerics);
  ::setenv("KILN_CHECK_NUMERICS", "0", 1);
  EXPECT_FALSE(options_from_env().checkNumerics);
  ::unsetenv("KILN_CHECK_NUMERICS");
}

//===--- Caches and dumps (cpu backend) -----------------------------------===//

class NumericsCpu : public ::testing::Test {
protected:
  void SetUp() override {
    step();
    saved_ = options();
    char dir[] = "/tmp/kiln-numerics-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    clear_graph_cache();
    metrics::reset();
  }
  void TearDown() override {
    set_options(saved_);
    clear_graph_cache();
    fs::remove_all(dir_);
  }
  Options cpuOptions(bool check) {
    Options o = saved_;
    o.mode = Mode::graph;
    o.backend = Backend::cpu;
    o.checkNumerics = check;
    return o;
  }

  Options saved_;
  std::string dir_;
};

TEST_F(NumericsCpu, LocationsLeaveThePersistentCacheKeyUnchanged) {
  auto run = [] {
    Tensor x = Tensor::from_vector({1, 2, 3}, {3});
    Tensor y = (x * 3.0).exp().sum();
    step();
    return y.item();
  };
  Options o = cpuOptions(false);
  o.cacheDir = dir_ + "/cache";
  set_options(o);
  double off = run();
  EXPECT_EQ(metrics::counters().compiles, 1);
  // A new process as far as the frontend knows, now with locations.
  clear_graph_cache();
  metrics::reset();
  o.checkNumerics = true;
  set_options(o);
  double on = run();
  EXPECT_EQ(metrics::counters().compiles, 0);
  EXPECT_EQ(metrics::counters().persistentHits, 1);
  EXPECT_EQ(off, on);
}

/// The one file `name` under the pass dump `dir` (graph-<hash>/name).
std::string readDump(const std::string &dir, const std::string &name) {
  for (const auto &graph : fs::directory_iterator(dir)) {
    std::ifstream in(graph.path() / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  return "";
}

TEST_F(NumericsCpu, PassDumpsShowEachOpsCallSite) {
  Options o = cpuOptions(true);
  o.passDumpDir = dir_ + "/on";
  set_options(o);
  int expLine = 0;
  Tensor x = Tensor::from_vector({1, 2, 3}, {3});
  Tensor y = (expLine = __LINE__, x.exp());
  step();
  std::string dump = readDump(dir_ + "/on", "00-input.mlir");
  // The op's location may be printed as an alias (#loc2 = loc(...)).
  EXPECT_TRUE(contains(dump, "kiln.exp %arg0 : tensor<3xf32> loc(")) << dump;
  EXPECT_TRUE(contains(dump, locOf(expLine))) << dump;

  // Off: the same graph, compiled again, dumps no location at all.
  clear_graph_cache();
  o = cpuOptions(false);
  o.passDumpDir = dir_ + "/off";
  set_options(o);
  Tensor z = x.exp();
  step();
  dump = readDump(dir_ + "/off", "00-input.mlir");
  EXPECT_TRUE(contains(dump, "kiln.exp")) << dump;
  EXPECT_FALSE(contains(dump, "loc(")) << dump;
}

} // namespace
} // namespace kiln
