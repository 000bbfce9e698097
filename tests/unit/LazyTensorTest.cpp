// The lazy-tensor frontend: forward values against hand-computed ones, user
// errors thrown at the op call (naming the op and both shapes), the graph
// cache (one compile, then hits; no recompile for a step-varying scalar),
// donation of overwritten buffers, RNG state threading, and frozen
// parameters costing no gradient nodes.
#include "frontends/lazy/Graph.h"
#include "frontends/lazy/Node.h"
#include "frontends/lazy/Tensor.h"
#include "tests/unit/ErrorMessage.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace kiln {
namespace {

void expectValues(const Tensor &t, const std::vector<double> &expected,
                  double tolerance = 1e-6) {
  std::vector<double> got = t.to_vector();
  ASSERT_EQ(got.size(), expected.size()) << t.str();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tolerance) << "element " << i;
}

class LazyTensor : public ::testing::Test {
protected:
  void SetUp() override {
    step(); // nothing pending from an earlier test leaks into this one
    clear_graph_cache();
    metrics::reset();
  }
};

TEST_F(LazyTensor, AddsWithBroadcastingAndScalars) {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector({10, 20, 30}, {3});
  expectValues(a + b, {11, 22, 33, 14, 25, 36});
  expectValues(2.0 * a - 1.0, {1, 3, 5, 7, 9, 11});
  Tensor column = Tensor::from_vector({1, 2}, {2, 1});
  expectValues(a / column, {1, 2, 3, 2, 2.5, 3});
}

TEST_F(LazyTensor, MultipliesMatricesAndBatches) {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector({1, 0, 0, 1, 1, 1}, {3, 2});
  expectValues(a.matmul(b), {4, 5, 10, 11});
  Tensor batch = stack({a, a * 2.0}, 0); // [2, 2, 3]
  Tensor c = batch.matmul(b);
  EXPECT_EQ(c.shape(), (Shape{2, 2, 2}));
  expectValues(c, {4, 5, 10, 11, 8, 10, 20, 22});
  expectValues(batch.bmm(stack({b, b}, 0)), {4, 5, 10, 11, 8, 10, 20, 22});
  expectValues(a.matmul(Tensor::from_vector({1, 1, 1}, {3})), {6, 15});
}

TEST_F(LazyTensor, ReducesWithKeepdim) {
  Tensor x = Tensor::from_vector({1, 5, 3, 4, 2, 6}, {2, 3});
  Tensor s = x.sum({1}, true);
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  expectValues(s, {9, 12});
  expectValues(x.mean({0}), {2.5, 3.5, 4.5});
  expectValues(x.max({-1}), {5, 6});
  expectValues(x.sum(), {21});
}

TEST_F(LazyTensor, ComputesSoftmaxAndCrossEntropyByHand) {
  Tensor logits = Tensor::from_vector({0, 0, std::log(2.0), 1, 2, 3}, {2, 3});
  expectValues(logits.softmax(1),
               {0.25, 0.25, 0.5, 0.0900306, 0.2447285, 0.6652410});
  // Row 0 target 2: -log(0.5); row 1 ignored; mean over one target.
  Tensor targets = Tensor::from_vector({2, -100}, {2}, DType::i64);
  EXPECT_NEAR(cross_entropy(logits, targets).item(), std::log(2.0), 1e-6);
  Tensor both = Tensor::from_vector({2, 0}, {2}, DType::i64);
  EXPECT_NEAR(
      cross_entropy(logits, both).item(),
      (std::log(2.0) + (2 + std::log(std::exp(-2.0) + std::exp(-1.0) + 1))) / 2,
      1e-6);
}

TEST_F(LazyTensor, IdsOutsideTheTableAreErrorsAtTheCall) {
  // The device clamps a gather's index and picks nothing for a loss's
  // target out of range: a model with too few rows for its tokenizer
  // trained on silently. Ids the host holds are checked at the call, as
  // PyTorch's IndexError; ignore_index stays allowed.
  Tensor table = Tensor::ones({4, 2});
  Tensor logits = Tensor::zeros({2, 3});
  Tensor hidden = Tensor::zeros({2, 2});
  Tensor far = Tensor::from_vector({1, 1000000}, {2}, DType::i64);
  Tensor negative = Tensor::from_vector({-1, 2}, {2}, DType::i32);
  EXPECT_EQ(errorMessageOf([&] { (void)embedding(table, far); }),
            "embedding: index 1000000 at position 1 of Tensor<2xi64> is "
            "outside [0, 4)");
  EXPECT_EQ(errorMessageOf([&] { (void)embedding(table, negative); }),
            "embedding: index -1 at position 0 of Tensor<2xi32> is outside "
            "[0, 4)");
  Tensor three = Tensor::from_vector({0, 3}, {2}, DType::i64);
  EXPECT_EQ(errorMessageOf([&] { (void)cross_entropy(logits, three); }),
            "cross_entropy: target 3 at position 1 of Tensor<2xi64> is "
            "outside [0, 3) or -100");
  EXPECT_EQ(errorMessageOf([&] { (void)cross_entropy(logits, three, 3); }), "");
  EXPECT_EQ(
      errorMessageOf([&] { (void)linear_cross_entropy(hidden, table, far); }),
      "linear_cross_entropy: target 1000000 at position 1 of "
      "Tensor<2xi64> is outside [0, 4) or -100");
  // In range, with an ignored target: no error, and the value is right.
  Tensor ok = Tensor::from_vector({2, -100}, {2}, DType::i64);
  EXPECT_NEAR(cross_entropy(logits, ok).item(), std::log(3.0), 1e-6);
  // Ids still to be computed are not read (that would force a sync).
  metrics::reset();
  Tensor pending = far.sum({}, false).reshape({1});
  (void)embedding(table, pending);
  EXPECT_EQ(metrics::counters().forcedSyncs, 0);
}

TEST_F(LazyTensor, ArgmaxTakesANaNAsTheMaxAndRefusesAnEmptyDimension) {
  // PyTorch returns a NaN's position; kiln answered n, past the end.
  Tensor x = Tensor::from_vector({1, NAN, 3, 2, 5, 5}, {2, 3});
  expectValues(x.argmax(1), {1, 1});
  expectValues(x.argmax(0), {1, 0, 1});
  EXPECT_EQ(errorMessageOf([] {
              (void)Tensor::zeros({2, 0}).argmax(1);
            }),
            "argmax: dimension 1 of Tensor<2x0xf32, pending> is empty: no "
            "position to return");
}

TEST_F(LazyTensor, ShapesAndCreatesOnDevice) {
  Tensor x = Tensor::arange(6, DType::f32).reshape({2, -1});
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  expectValues(x.transpose(0, 1), {0, 3, 1, 4, 2, 5});
  expectValues(x.slice(1, 0, 3, 2), {0, 2, 3, 5});
  expectValues(cat({x, Tensor::ones({2, 1})}, 1), {0, 1, 2, 1, 3, 4, 5, 1});
  expectValues(x.pad({0, 1}, {0, 0}, -1), {-1, 0, 1, 2, -1, 3, 4, 5});
  expectValues(Tensor::arange(2, 8, 3), {2, 5});
  expectValues(where(x.gt(Tensor::scalar(2)), x, Tensor::zeros({})),
               {0, 0, 0, 3, 4, 5});
  expectValues(Tensor::full({2}, 0.5).expand({2, 2}), {0.5, 0.5, 0.5, 0.5});
  Tensor table = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor ids = Tensor::from_vector({2, 0, 2}, {3}, DType::i32);
  expectValues(embedding(table, ids), {5, 6, 1, 2, 5, 6});
  expectValues(Tensor::from_vector({-1, 0, 2}, {3}).gelu(),
               {-0.158808, 0, 1.954598}, 1e-5);
}

TEST_F(LazyTensor, ThrowsAtTheOpCallNamingBothShapes) {
  Tensor a = Tensor::zeros({2, 3});
  Tensor b = Tensor::zeros({4, 5});
  try {
    (void)a.matmul(b);
    FAIL() << "matmul of [2, 3] and [4, 5] did not throw";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "matmul: shapes [2, 3] and [4, 5] cannot be multiplied");
  }
  try {
    (void)(a + b);
    FAIL() << "add of [2, 3] and [4, 5] did not throw";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "add: shapes [2, 3] and [4, 5] cannot be broadcast");
  }
  EXPECT_THROW((void)a.reshape({4}), Error);
  EXPECT_THROW((void)a.sum({2}), Error);
  EXPECT_THROW((void)(a + Tensor::zeros({3}, DType::f64)), Error);
  EXPECT_THROW((void)cross_entropy(a, Tensor::zeros({3}, DType::i64)), Error);
  // Thrown at trace time: no graph was built or run.
  EXPECT_EQ(metrics::counters().graphsTraced, 0);
}

TEST_F(LazyTensor, CompilesOnceThenHitsTheCache) {
  Tensor w = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  for (int i = 0; i < 2; ++i) {
    Tensor y = (w.matmul(w) + 1.0).tanh().sum();
    step();
    EXPECT_FALSE(y.is_pending());
  }
  EXPECT_EQ(metrics::counters().compiles, 1);
  EXPECT_EQ(metrics::counters().cacheHits, 1);
  EXPECT_EQ(metrics::counters().compileLog[0].reason, "first sight");
  EXPECT_NE(metrics::report().find("cache hits:     1"), std::string::npos)
      << metrics::report();
}

TEST_F(LazyTensor, StepVaryingScalarDoesNotRecompile) {
  Tensor p = Tensor::from_vector({1, 1}, {2});
  for (int i = 0; i < 3; ++i) {
    Tensor lr = Tensor::scalar(0.1 * (i + 1));
    p.assign_(p - lr * p);
    step();
  }
  expectValues(p, {0.9 * 0.8 * 0.7, 0.9 * 0.8 * 0.7});
  EXPECT_EQ(metrics::counters().compiles, 1) << metrics::report();
  EXPECT_EQ(metrics::counters().cacheHits, 2);
  // A plain double is a constant: a new value is a new graph, and the
  // recompilation says why.
  p.assign_(p * 0.5);
  step();
  p.assign_(p * 0.25);
  step();
  ASSERT_EQ(metrics::counters().compiles, 3);
  EXPECT_EQ(metrics::counters().compileLog[2].reason,
            "different constant values");
}

TEST_F(LazyTensor, ExplainsEachRecompile) {
  Tensor a = Tensor::ones({2, 3});
  Tensor y = a.exp();
  step();
  Tensor b = Tensor::from_vector({1, 2, 3, 4}, {4});
  Tensor z = b.exp();
  step();
  ASSERT_EQ(metrics::counters().compileLog.size(), 2u);
  EXPECT_EQ(metrics::counters().compileLog[1].reason.rfind(
                "different input shapes", 0),
            0u)
      << metrics::counters().compileLog[1].reason;
  Tensor w = b.exp().tanh();
  step();
  ASSERT_EQ(metrics::counters().compileLog.size(), 3u);
  EXPECT_EQ(metrics::counters().compileLog[2].reason,
            "different op count (2 vs 1); different ops (+1 tanh)");
}

TEST_F(LazyTensor, ItemBeforeStepIsAForcedSync) {
  Tensor x = Tensor::from_vector({1, 2}, {2});
  EXPECT_EQ((x * 3.0).sum().item(), 9);
  EXPECT_EQ(metrics::counters().forcedSyncs, 1);
  EXPECT_EQ(x.sum().item(), 3); // x itself is data, but its sum is not
  EXPECT_EQ(metrics::counters().forcedSyncs, 2);
}

TEST_F(LazyTensor, DonatesTheOldValueOfAnAssignedTensor) {
  char dir[] = "/tmp/kiln-lazy-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  Options saved = options();
  Options dumping = saved;
  dumping.dumpDir = dir;
  set_options(dumping);
  Tensor p = Tensor::from_vector({1, 2}, {2});
  Tensor kept = Tensor::from_vector({3, 4}, {2});
  Tensor other = kept;
  p.assign_(p * kept);
  step();
  set_options(saved);
  expectValues(p, {3, 8});
  ASSERT_EQ(metrics::counters().compileLog.size(), 1u);
  char name[64];
  std::snprintf(name, sizeof name, "/graph-%016llx.mlir",
                static_cast<unsigned long long>(
                    metrics::counters().compileLog[0].graphHash));
  std::ifstream in(std::string(dir) + name);
  std::stringstream text;
  text << in.rdbuf();
  // p's old buffer is donated; `kept`, still alive, is not.
  EXPECT_EQ(text.str().find("kiln.donate"), text.str().rfind("kiln.donate"))
      << text.str();
  EXPECT_NE(text.str().find("kiln.donate"), std::string::npos) << text.str();
  std::system((std::string("rm -rf ") + dir).c_str());
}

TEST_F(LazyTensor, DropoutThreadsTheRngStateWithoutRecompiling) {
  Generator generator(42);
  Tensor x = Tensor::from_vector(std::vector<double>(64, 1.0), {64});
  std::vector<std::vector<double>> masks;
  for (int i = 0; i < 2; ++i) {
    Tensor y = dropout(x, 0.5, true, &generator);
    step();
    masks.push_back(y.to_vector());
  }
  EXPECT_NE(masks[0], masks[1]);
  for (double v : masks[0])
    EXPECT_TRUE(v == 0 || v == 2) << v;
  EXPECT_EQ(metrics::counters().compiles, 1) << metrics::report();
  Generator same(42);
  Tensor again = dropout(x, 0.5, true, &same);
  EXPECT_EQ(again.to_vector(), masks[0]);
}

TEST_F(LazyTensor, RandnIsStandardNormal) {
  Generator generator(7);
  std::vector<double> v =
      Tensor::randn({4096}, DType::f32, &generator).to_vector();
  double mean = 0, square = 0;
  for (double x : v) {
    mean += x / v.size();
    square += x * x / v.size();
  }
  EXPECT_NEAR(mean, 0, 0.05);
  EXPECT_NEAR(std::sqrt(square - mean * mean), 1, 0.05);
}

TEST_F(LazyTensor, FrozenParametersCreateNoGradientNodes) {
  auto backwardNodes = [](bool withFrozenBranch) {
    Tensor w = Tensor::randn({3, 3}).requires_grad_();
    Tensor frozen = Tensor::randn({3, 3});
    Tensor x = Tensor::randn({2, 3});
    Tensor loss = x.matmul(w).tanh().sum();
    if (withFrozenBranch)
      loss = loss + x.matmul(frozen).exp().sum();
    uint64_t before = lazy::nodesCreated();
    loss.backward();
    EXPECT_TRUE(w.grad().defined());
    EXPECT_FALSE(frozen.grad().defined());
    EXPECT_FALSE(x.grad().defined());
    return lazy::nodesCreated() - before;
  };
  EXPECT_EQ(backwardNodes(true), backwardNodes(false));
  step();
}

TEST_F(LazyTensor, GradientsAccumulateAndNoGradGuardStopsRecording) {
  Tensor w = Tensor::from_vector({1, 2}, {2}, DType::f32, true);
  (w * w).sum().backward();
  (w * 3.0).sum().backward();
  expectValues(w.grad(), {5, 7});
  {
    NoGradGuard guard;
    EXPECT_FALSE((w * 2.0).requires_grad());
  }
  EXPECT_TRUE((w * 2.0).requires_grad());
  w.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  Tensor loss = (w * w).sum();
  step();
  EXPECT_THROW(loss.backward(), Error);
}

TEST_F(LazyTensor, SplitsAndFindsTheArgmax) {
  Tensor x = Tensor::from_vector({3, 1, 3, 0, 5, 2}, {2, 3});
  expectValues(x.argmax(1), {0, 1});
  EXPECT_EQ(x.argmax(0, true).shape(), (Shape{1, 3}));
  std::vector<Tensor> pieces = x.split(2, 1);
  ASSERT_EQ(pieces.size(), 2u);
  expectValues(pieces[1], {3, 2});
}

TEST_F(LazyTensor, HashesTheSameProgramTheSameWay) {
  // Fresh tensors, fresh node ids and fresh parameter tags: same hash.
  auto run = [] {
    Tensor w = Tensor::zeros({2, 2}).requires_grad_();
    Tensor x = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
    (x.matmul(w).tanh().sum()).backward();
    step();
    return metrics::counters().compileLog.back().graphHash;
  };
  uint64_t first = run();
  clear_graph_cache();
  EXPECT_EQ(run(), first);
}

TEST_F(LazyTensor, KeysTellStructureConstantsAndOptionsApart) {
  using namespace lazy;
  // x * c + x over a fresh data node each time: node ids never reach the key.
  auto keyOf = [](double c, std::string_view options, bool donate = false) {
    NodePtr x = nodeOf(Tensor::from_vector({1, 2}, {2}));
    NodePtr y = binary(Op::Add, binary(Op::Mul, x, constantLike(x, c)), x);
    std::unordered_map<const Node *, const Node *> donatable;
    if (donate)
      donatable[x.get()] = nullptr;
    return graphKey(buildGraph({y}, donatable), options);
  };
  GraphKey two = keyOf(2, "cpu");
  EXPECT_EQ(keyOf(2, "cpu"), two);
  EXPECT_EQ(keyOf(2, "cpu").hash, two.hash);
  EXPECT_FALSE(keyOf(3, "cpu") == two);
  EXPECT_FALSE(keyOf(2, "cuda sm_90") == two);
  EXPECT_FALSE(keyOf(2, "cpu", /*donate=*/true) == two);
  // A constant's sign bit is a value like any other.
  EXPECT_FALSE(keyOf(0.0, "cpu") == keyOf(-0.0, "cpu"));
  // The same words under a longer options text: the length keeps them apart.
  EXPECT_FALSE(keyOf(2, std::string_view("cpu\0", 4)) == two);
  // An op's scalar attribute (a loss's soft cap, an attention's dropout) is
  // in the key: the same graph with another cap is another program.
  auto lossKeyOf = [](double softcap) {
    NodePtr h = nodeOf(Tensor::from_vector({1, 2, 3, 4}, {2, 2}));
    NodePtr w = nodeOf(Tensor::from_vector({1, 0, 0, 1, 1, 1}, {3, 2}));
    NodePtr labels = nodeOf(Tensor::from_vector({0, 2}, {2}, DType::i64));
    return graphKey(
        buildGraph({linearCrossEntropy(h, w, labels, -100, softcap)}, {}),
        "cpu");
  };
  EXPECT_EQ(lossKeyOf(2), lossKeyOf(2));
  EXPECT_FALSE(lossKeyOf(2) == lossKeyOf(3));
  EXPECT_FALSE(lossKeyOf(0) == lossKeyOf(3));
}

TEST_F(LazyTensor, DeadNodesAndTensorsLeaveTheTables) {
  using namespace lazy;
  const size_t interned = internedNodeCount();
  const size_t live = liveTensors().size();
  Tensor a = Tensor::from_vector({1, 2}, {2});
  {
    Tensor sum = a;
    for (int i = 0; i < 2000; ++i)
      sum = sum * 1.5 + a;
    EXPECT_GE(internedNodeCount(), interned + 2000);
  }
  // Only `a` is left: no dead node in the intern table, no dead tensor in
  // the registry.
  EXPECT_EQ(internedNodeCount(), interned);
  EXPECT_EQ(liveTensors().size(), live + 1);
  // The registry keeps creation order across a death in the middle.
  Tensor b = a + 1.0, c = a + 2.0, d = a + 3.0;
  c = Tensor();
  auto now = liveTensors();
  ASSERT_EQ(now.size(), live + 3);
  EXPECT_EQ(now[live].get(), a.impl().get());
  EXPECT_EQ(now[live + 1].get(), b.impl().get());
  EXPECT_EQ(now[live + 2].get(), d.impl().get());
}

TEST_F(LazyTensor, AChainAMillionOpsDeepIsDifferentiatedAndFreed) {
  // A loop that records without stepping (a running sum, a long unrolled
  // recurrence) makes a chain of nodes, each holding the last. Freeing it
  // from each node's destructor in turn recursed once per node and
  // overflowed the stack.
  using namespace lazy;
  const size_t interned = internedNodeCount();
  constexpr int kDepth = 1000000;
  Tensor w = Tensor::from_vector({1, 2}, {2}).requires_grad_();
  {
    Tensor sum = w;
    for (int i = 0; i < kDepth; ++i)
      sum = sum + 1.0;
    sum.sum().backward();
    EXPECT_EQ(w.grad().shape(), w.shape());
    EXPECT_GE(internedNodeCount(), interned + kDepth);
    // The gradient is tied to the loss's graph: computing it would
    // compile the chain, which is not what this test is about.
    w.zero_grad();
  }
  EXPECT_LT(internedNodeCount(), interned + 16); // the chain is gone
  {
    // Each node holding its operand twice (x · x): no handle is the last
    // one until the second is dropped.
    Tensor square = w.detach();
    for (int i = 0; i < kDepth; ++i)
      square = square * square;
  }
  EXPECT_LT(internedNodeCount(), interned + 16);
}

TEST_F(LazyTensor, GradientsAreMadeInTheParametersOrder) {
  // Gradients kept across step() (accumulation) are step outputs, ordered
  // by creation: made in the parameters' order, whatever order the loss
  // reads them in, so every process keys the same program.
  std::vector<Tensor> ws;
  for (int i = 0; i < 16; ++i)
    ws.push_back(Tensor::ones({2}).requires_grad_());
  Tensor loss = ws[15].sum();
  for (int i = 14; i >= 0; --i)
    loss = loss + ws[i].sum() * double(i + 1);
  loss.backward();
  for (int i = 1; i < 16; ++i)
    EXPECT_LT(ws[i - 1].grad().impl()->serial, ws[i].grad().impl()->serial)
        << "parameter " << i;
}

TEST_F(LazyTensor, TrainsAnMlpWithOneSteadyStateGraph) {
  // Two-layer MLP regression with SGD: step 1 also runs the initialization,
  // step 2 compiles the steady-state graph, every later step is a hit.
  manual_seed(3);
  Tensor w1 = (Tensor::randn({4, 8}) * 0.5).requires_grad_();
  Tensor b1 = Tensor::zeros({8}).requires_grad_();
  Tensor w2 = (Tensor::randn({8, 1}) * 0.5).requires_grad_();
  Tensor x = Tensor::randn({16, 4});
  Tensor y = (x.sum({1}, true) * 0.5).tanh();
  step();
  metrics::reset();
  std::vector<double> losses;
  for (int i = 0; i < 8; ++i) {
    Tensor h = dropout(x.matmul(w1) + b1, 0.1).gelu();
    Tensor loss = (h.matmul(w2) - y).pow(2.0).mean();
    loss.backward();
    {
      NoGradGuard noGrad;
      Tensor lr = Tensor::scalar(0.1);
      for (Tensor *p : {&w1, &b1, &w2}) {
        p->assign_(*p - lr * p->grad());
        p->zero_grad();
      }
    }
    step();
    losses.push_back(loss.item());
  }
  EXPECT_LT(losses.back(), 0.7 * losses.front());
  EXPECT_EQ(metrics::counters().compiles, 1) << metrics::report();
  EXPECT_EQ(metrics::counters().cacheHits, 7);
  EXPECT_EQ(metrics::counters().forcedSyncs, 0);
}

TEST_F(LazyTensor, ReadsTheBackendFromTheEnvironmentOnce) {
  setenv("KILN_BACKEND", "reference", 1);
  EXPECT_EQ(options_from_env().backend, Backend::reference);
  setenv("KILN_BACKEND", "tpu", 1);
  EXPECT_THROW(options_from_env(), Error);
  unsetenv("KILN_BACKEND");
  EXPECT_THROW(set_backend("tpu"), Error);
}

} // namespace
} // namespace kiln
