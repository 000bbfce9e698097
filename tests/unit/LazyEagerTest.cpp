// Eager mode against graph mode: the same op sequence gives the same values
// (bitwise on the reference backend, which both modes run op by op; within
// 1e-5 relative on another backend, whose graphs fuse) for forward ops and
// gradients, and a small GPT-2 trained for 10 steps with AdamW gives the same
// losses. Also: KILN_MODE parsing, assign_ semantics, the eager kernel cache
// (a second identical step compiles nothing), buffers freed when their
// tensors die, and the live/peak device byte counters in both modes.
// KILN_BACKEND picks the backend (the CPU backend by default).
#include "frontends/lazy/Tensor.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Optimizer.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using Program = std::function<std::vector<Tensor>()>;

class LazyEager : public ::testing::Test {
protected:
  void SetUp() override {
    Options o = options_from_env();
    o.mode = Mode::graph;
    set_options(o);
    step();
    clear_graph_cache();
    metrics::reset();
  }
  void TearDown() override { set_mode(Mode::graph); }
};

bool onReference() { return options().backend == Backend::reference; }

/// Runs `program` in `mode` and returns its outputs' values.
std::vector<HostTensor> runIn(Mode mode, const Program &program) {
  set_mode(mode);
  metrics::Counters before = metrics::counters();
  std::vector<Tensor> outputs = program();
  // Eager mode runs every op as it is made: nothing is left for a graph.
  if (mode == Mode::eager) {
    for (const Tensor &t : outputs)
      EXPECT_FALSE(t.is_pending()) << t.str();
    EXPECT_GT(metrics::counters().eagerExecutions, before.eagerExecutions);
  }
  step();
  if (mode == Mode::eager)
    EXPECT_EQ(metrics::counters().graphsTraced, before.graphsTraced);
  std::vector<HostTensor> values;
  for (const Tensor &t : outputs)
    values.push_back(t.to_host());
  set_mode(Mode::graph);
  return values;
}

/// Bitwise on the reference backend; elsewhere within `rtol` (+1e-6 abs).
void expectSame(const std::vector<HostTensor> &graph,
                const std::vector<HostTensor> &eager, double rtol = 1e-5) {
  ASSERT_EQ(graph.size(), eager.size());
  for (size_t i = 0; i < graph.size(); ++i) {
    ASSERT_EQ(graph[i].typeString(), eager[i].typeString()) << "output " << i;
    if (onReference()) {
      EXPECT_TRUE(graph[i].bitwiseEqual(eager[i])) << "output " << i;
      continue;
    }
    for (int64_t k = 0; k < graph[i].numElements(); ++k) {
      double g = graph[i].getDouble(k), e = eager[i].getDouble(k);
      if (std::isnan(g) && std::isnan(e))
        continue;
      EXPECT_NEAR(e, g, 1e-6 + rtol * std::abs(g))
          << "output " << i << " element " << k;
    }
  }
}

Tensor randomTensor(Shape shape, uint32_t seed, double lo = -1, double hi = 1,
                    bool requiresGrad = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  HostTensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, dist(rng));
  return Tensor::from_host(std::move(t), requiresGrad);
}

TEST_F(LazyEager, ParsesKilnMode) {
  const char *saved = std::getenv("KILN_MODE");
  std::string previous = saved ? saved : "";
  unsetenv("KILN_MODE");
  EXPECT_EQ(options_from_env().mode, Mode::graph);
  setenv("KILN_MODE", "eager", 1);
  EXPECT_EQ(options_from_env().mode, Mode::eager);
  setenv("KILN_MODE", "graph", 1);
  EXPECT_EQ(options_from_env().mode, Mode::graph);
  setenv("KILN_MODE", "fast", 1);
  try {
    options_from_env();
    ADD_FAILURE() << "KILN_MODE=fast was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("unknown mode 'fast'"),
              std::string::npos)
        << e.what();
  }
  if (saved)
    setenv("KILN_MODE", previous.c_str(), 1);
  else
    unsetenv("KILN_MODE");
  set_mode(Mode::eager);
  EXPECT_EQ(mode(), Mode::eager);
}

TEST_F(LazyEager, ForwardOpsMatchGraphMode) {
  Program program = [] {
    manual_seed(7);
    Tensor x = randomTensor({4, 6}, 1), w = randomTensor({6, 5}, 2);
    Tensor b = randomTensor({5}, 3), pos = randomTensor({4, 6}, 4, 0.1, 2);
    Tensor labels = Tensor::from_vector({0, 4, 2, -100}, {4}, DType::i64);
    Tensor ids = Tensor::from_vector({1, 3, 0}, {3}, DType::i64);
    Tensor h = x.matmul(w) + b;
    return std::vector<Tensor>{
        h,
        h.softmax(-1),
        h.log_softmax(0),
        gelu(h),
        layer_norm(x, randomTensor({6}, 5), randomTensor({6}, 6)),
        cross_entropy(h, labels),
        x.sum({1}, true) * 0.5 - x.mean(),
        x.max({0}),
        x.argmax(1),
        x.transpose(0, 1).slice(0, 1, 6, 2),
        cat({x, pos}, 0).pad({1, 0}, {0, 2}, -1.0),
        where(x.gt(Tensor::scalar(0.0)), pos.sqrt(), pos.rsqrt()),
        pos.log() + x.exp() + x.tanh() + x.sigmoid() + x.abs().pow(1.5),
        x.clamp(-0.5, 0.5).to(DType::f16).to(DType::f32),
        embedding(w, ids),
        dropout(x, 0.3),
        Tensor::randn({3, 3}),
        Tensor::arange(2, 11, 3),
        stack({x, x * x}, 1).reshape({8, 6}).matmul(w),
        stack({x, pos}, 0).bmm(stack({w, w * 0.5}, 0)),
    };
  };
  std::vector<HostTensor> graph = runIn(Mode::graph, program);
  metrics::reset();
  std::vector<HostTensor> eager = runIn(Mode::eager, program);
  expectSame(graph, eager);
  const metrics::Counters &m = metrics::counters();
  EXPECT_EQ(m.compiles, 0) << metrics::report();
  EXPECT_GT(m.eagerKernelsCompiled, 20) << metrics::report();
  EXPECT_GT(m.eagerExecutions, m.eagerKernelsCompiled) << metrics::report();
}

TEST_F(LazyEager, OpsRunAtOnceInEagerMode) {
  set_mode(Mode::eager);
  Tensor x = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  Tensor y = (x * 2.0 + 1.0).sum({1});
  EXPECT_FALSE(y.is_pending());
  EXPECT_EQ(y.to_vector(), (std::vector<double>{8, 16}));
  EXPECT_EQ(metrics::counters().forcedSyncs, 0);
  EXPECT_EQ(metrics::counters().graphsTraced, 0);
}

TEST_F(LazyEager, SwitchingModesRunsWhatIsPending) {
  Tensor x = Tensor::from_vector({1, 2, 3}, {3}, DType::f32, true);
  Tensor y = x * 2.0; // pending in graph mode
  EXPECT_TRUE(y.is_pending());
  set_mode(Mode::eager);
  EXPECT_FALSE(y.is_pending());
  EXPECT_EQ(metrics::counters().graphsTraced, 1);
  Tensor z = (y * x).sum(); // eager, on the graph's results
  EXPECT_FALSE(z.is_pending());
  EXPECT_EQ(z.item(), 28);
  z.backward(); // after item(): eager keeps the structure until step()
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{2, 4, 6}));
  step();
  EXPECT_THROW(z.backward(), Error); // step() cut the history, as in graph
  set_mode(Mode::graph);
  Tensor w = z + 1.0;
  EXPECT_TRUE(w.is_pending());
  EXPECT_EQ(w.item(), 29);
}

TEST_F(LazyEager, GradientsMatchGraphMode) {
  Program program = [] {
    Tensor x = randomTensor({4, 6}, 11);
    Tensor w1 = randomTensor({6, 8}, 12, -0.5, 0.5, true);
    Tensor b1 = randomTensor({8}, 13, -0.1, 0.1, true);
    Tensor w2 = randomTensor({8, 3}, 14, -0.5, 0.5, true);
    Tensor g = randomTensor({8}, 15, 0.5, 1.5, true);
    Tensor labels = Tensor::from_vector({0, 2, 1, 2}, {4}, DType::i64);
    Tensor ids = Tensor::from_vector({5, 0, 5}, {3}, DType::i64);
    Tensor h = layer_norm(gelu(x.matmul(w1) + b1), g, Tensor());
    Tensor logits = h.matmul(w2).softmax(-1).log() + h.max({1}, true);
    Tensor loss = cross_entropy(logits, labels);
    loss.backward();
    // A second backward accumulates into the same gradients.
    Tensor extra =
        (w1 * w1).sum() + h.slice(1, 0, 8, 3).exp().mean() +
        cat({h, b1.expand({4, 8})}, 0).pad({0, 1}, {1, 0}, 0.5).sum() * 0.1 +
        embedding(w1, ids).abs().pow(g.slice(0, 0, 8)).sum();
    extra.backward();
    return std::vector<Tensor>{loss,      extra,     w1.grad(),
                               b1.grad(), w2.grad(), g.grad()};
  };
  std::vector<HostTensor> graph = runIn(Mode::graph, program);
  std::vector<HostTensor> eager = runIn(Mode::eager, program);
  expectSame(graph, eager);
}

TEST_F(LazyEager, AssignMakesTheNextValueAndKeepsOldReaders) {
  for (Mode m : {Mode::graph, Mode::eager}) {
    set_mode(m);
    Tensor p = Tensor::from_vector({1, 2, 3}, {3}, DType::f32, true);
    Tensor alias = p;
    Tensor before = p.detach() * 2.0;
    {
      NoGradGuard noGrad;
      p.assign_(p + 1.0);
    }
    EXPECT_EQ(alias.to_vector(), (std::vector<double>{2, 3, 4}));
    step();
    EXPECT_EQ(p.to_vector(), (std::vector<double>{2, 3, 4}));
    EXPECT_EQ(before.to_vector(), (std::vector<double>{2, 4, 6}));
    EXPECT_TRUE(p.requires_grad() && p.is_leaf());
    // The assigned parameter still collects gradients.
    (p * p).sum().backward();
    step();
    EXPECT_EQ(p.grad().to_vector(), (std::vector<double>{4, 6, 8}))
        << (m == Mode::eager ? "eager" : "graph");
  }
}

TEST_F(LazyEager, BuffersDieWithTheirTensors) {
  set_mode(Mode::eager);
  int64_t before = metrics::counters().liveBytes;
  {
    Tensor a = randomTensor({256, 256}, 21);
    Tensor b = (a * 2.0).exp().sum({0});
    EXPECT_GE(metrics::counters().liveBytes, before + 256 * 256 * 4 + 256 * 4);
    EXPECT_GE(metrics::counters().peakLiveBytes,
              before + 2 * 256 * 256 * 4); // a and one temporary at least
  }
  EXPECT_EQ(metrics::counters().liveBytes, before) << metrics::report();
  // Autograd history (activations) lives until step(), then only what the
  // tensors hold remains.
  Tensor w = randomTensor({64, 64}, 22, -1, 1, true);
  int64_t withW = metrics::counters().liveBytes;
  Tensor loss = (randomTensor({32, 64}, 23).matmul(w).tanh()).sum();
  loss.backward();
  EXPECT_GT(metrics::counters().liveBytes, withW + 32 * 64 * 4);
  step();
  // w, its gradient and the loss.
  EXPECT_EQ(metrics::counters().liveBytes, withW + 64 * 64 * 4 + 4)
      << metrics::report();
}

// PyTorch's saved tensors: an intermediate no handle holds and no gradient
// rule reads is freed once its consumer ran; what a rule reads stays until
// backward has run; a released value asked for again is recomputed, right.
TEST_F(LazyEager, KeepsOnlyWhatGradientsRead) {
  set_mode(Mode::eager);
  const int64_t n = 1 << 18, bytes = n * 4;
  Tensor x = randomTensor({n}, 24, -1, 1, true);
  metrics::reset();
  int64_t before = metrics::counters().liveBytes;
  // x · 2 (Mul keeps x and its other operand), + 1 (Add reads nothing: x · 2
  // goes once it ran), exp (keeps its result for its gradient), sum.
  Tensor loss = ((x * 2.0) + 1.0).exp().sum();
  int64_t held = metrics::counters().liveBytes - before;
  std::printf("held %lld bytes (%lld a tensor), peak %lld\n",
              static_cast<long long>(held), static_cast<long long>(bytes),
              static_cast<long long>(metrics::counters().peakLiveBytes -
                                     before));
  // exp's result and the product's broadcast 2 (x was counted before):
  // not x · 2, x · 2 + 1 or the broadcast 1.
  EXPECT_LE(held, 2 * bytes + 64) << metrics::report();
  loss.backward();
  // 2 exp(2x + 1), from the kept values alone.
  EXPECT_EQ(metrics::counters().eagerRecomputes, 0) << metrics::report();
  std::vector<double> xs = x.to_vector(), gs = x.grad().to_vector();
  for (int64_t i = 0; i < n; i += 4097)
    EXPECT_NEAR(gs[i], 2 * std::exp(2 * xs[i] + 1),
                1e-5 * std::exp(2 * xs[i] + 1))
        << i;
  // Backward released what it read; a second backward (retain_graph's use)
  // computes those values again and gives the same gradient.
  Tensor first = x.grad().detach();
  x.zero_grad();
  loss.backward();
  EXPECT_GT(metrics::counters().eagerRecomputes, 0);
  EXPECT_EQ(x.grad().to_vector(), first.to_vector());
  step();
}

/// The GPT-2 run both modes train: losses, final parameters, metrics.
struct TrainResult {
  std::vector<double> losses;
  std::vector<HostTensor> parameters;
  int64_t parameterBytes = 0;
  int64_t peakLiveBytes = 0;
  int64_t kernelsAfterFirstStep = 0;
  /// liveBytes before the model was built and after it died.
  int64_t liveBefore = 0, liveAfter = 0;
  metrics::Counters counters;
  double seconds = 0;
};

TrainResult trainGPT2(Mode mode, int64_t steps) {
  set_mode(mode);
  metrics::reset();
  nn::GPT2Config c;
  c.vocab_size = 64;
  c.n_positions = 16;
  c.n_embd = 32;
  c.n_layer = 2;
  c.n_head = 2;
  c.with_dropout(0.1);
  c.init_seed = 1;
  c.dropout_seed = 2;
  TrainResult result;
  auto start = std::chrono::steady_clock::now();
  result.liveBefore = metrics::counters().liveBytes;
  {
    nn::GPT2LMHeadModel model(c);
    model.train();
    const int64_t batch = 2, seq = 16;
    std::mt19937_64 rng(5);
    std::vector<double> ids(batch * seq);
    for (double &id : ids)
      id = static_cast<double>(rng() % c.vocab_size);
    Tensor input = Tensor::from_vector(ids, {batch, seq}, DType::i64);
    nn::AdamW::Options o;
    o.lr = 3e-3;
    o.weight_decay = 0.01;
    nn::AdamW opt(model.named_parameters(), o);
    nn::LambdaLR sched(opt, nn::cosine_schedule_with_warmup(3, steps));
    for (const Tensor &p : model.parameters())
      result.parameterBytes +=
          p.numel() * static_cast<int64_t>(byteWidth(p.dtype()));
    for (int64_t s = 0; s < steps; ++s) {
      Tensor loss = model.loss(input, input);
      loss.backward();
      nn::clip_grad_norm_(model.parameters(), 1.0);
      opt.step();
      sched.step();
      opt.zero_grad();
      step();
      result.losses.push_back(loss.item());
      if (s == 0)
        result.kernelsAfterFirstStep = metrics::counters().eagerKernelsCompiled;
    }
    for (const Tensor &p : model.parameters())
      result.parameters.push_back(p.to_host());
  }
  result.liveAfter = metrics::counters().liveBytes;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  result.counters = metrics::counters();
  result.peakLiveBytes = result.counters.peakLiveBytes;
  set_mode(Mode::graph);
  return result;
}

TEST_F(LazyEager, GPT2TrainsToTheSameLossesAsGraphMode) {
  const int64_t steps = 20;
  TrainResult graph = trainGPT2(Mode::graph, steps);
  TrainResult eager = trainGPT2(Mode::eager, steps);

  ASSERT_EQ(graph.losses.size(), eager.losses.size());
  bool bitwise = true;
  for (size_t s = 0; s < graph.losses.size(); ++s) {
    EXPECT_NEAR(eager.losses[s], graph.losses[s],
                1e-5 * std::abs(graph.losses[s]))
        << "step " << s;
    bitwise &= eager.losses[s] == graph.losses[s];
  }
  // The loss moves (two flat curves would agree too easily).
  EXPECT_LT(graph.losses.back(), graph.losses.front() - 0.1);
  // Final parameters: bitwise on the reference backend; within f32
  // tolerance on the cpu backend (the compiled step fuses, the eager one
  // runs op by op, so reduction orders may differ).
  ASSERT_EQ(graph.parameters.size(), eager.parameters.size());
  for (size_t i = 0; i < graph.parameters.size(); ++i) {
    const HostTensor &g = graph.parameters[i], &e = eager.parameters[i];
    ASSERT_EQ(g.shape(), e.shape()) << "parameter " << i;
    if (onReference()) {
      EXPECT_TRUE(g.bitwiseEqual(e)) << "parameter " << i;
      continue;
    }
    for (int64_t k = 0; k < g.numElements(); ++k)
      ASSERT_NEAR(e.getDouble(k), g.getDouble(k),
                  1e-5 + 1e-4 * std::abs(g.getDouble(k)))
          << "parameter " << i << " element " << k;
  }
  if (onReference()) {
    EXPECT_TRUE(bitwise);
  }

  // Eager: no graph compiles; every kernel compiled during the first step.
  EXPECT_EQ(eager.counters.compiles, 0);
  EXPECT_EQ(eager.counters.eagerKernelsCompiled, eager.kernelsAfterFirstStep)
      << metrics::report();
  EXPECT_EQ(eager.counters.eagerExecutions,
            eager.counters.eagerCacheHits +
                eager.counters.eagerKernelsCompiled);
  EXPECT_GT(eager.counters.eagerCacheHits, eager.counters.eagerExecutions / 2);
  EXPECT_EQ(graph.counters.eagerExecutions, 0);
  // Every value a gradient rule reads was kept (lazy::savedByGradient):
  // eager mode released nothing it had to compute again.
  EXPECT_EQ(eager.counters.eagerRecomputes, 0) << metrics::report();

  // Peaks: parameters, AdamW's two moments and the gradients are live at
  // once in both modes; eager's peak also holds the step's activations.
  EXPECT_GE(graph.peakLiveBytes, 3 * graph.parameterBytes);
  EXPECT_GE(eager.peakLiveBytes, 4 * eager.parameterBytes);
  EXPECT_LT(eager.peakLiveBytes, 1000 * eager.parameterBytes);
  // Everything the runs held died with the model, optimizer and inputs.
  EXPECT_EQ(graph.liveAfter, graph.liveBefore);
  EXPECT_EQ(eager.liveAfter, eager.liveBefore);
  std::printf("GPT-2 (%lld parameter bytes), %lld steps, losses %.5f -> "
              "%.5f%s\n  graph: %.2f s, peak %lld bytes, %lld compiles "
              "(%.0f ms), execute %.0f ms\n  eager: %.2f s, peak %lld bytes, "
              "%lld kernels compiled (%.0f ms), %lld hits, %lld run (%.0f "
              "ms)\n",
              static_cast<long long>(graph.parameterBytes),
              static_cast<long long>(steps), graph.losses.front(),
              graph.losses.back(), bitwise ? " (bitwise equal)" : "",
              graph.seconds, static_cast<long long>(graph.peakLiveBytes),
              static_cast<long long>(graph.counters.compiles),
              graph.counters.compileMilliseconds,
              graph.counters.executeMilliseconds, eager.seconds,
              static_cast<long long>(eager.peakLiveBytes),
              static_cast<long long>(eager.counters.eagerKernelsCompiled),
              eager.counters.compileMilliseconds,
              static_cast<long long>(eager.counters.eagerCacheHits),
              static_cast<long long>(eager.counters.eagerExecutions),
              eager.counters.executeMilliseconds);
}

} // namespace
} // namespace kiln
