// The host's share of a lazy training step, phase by phase: recording the
// forward pass, the backward pass and the update (clipping, AdamW), then
// step()'s cut, key and cache lookup, and what step() spends besides that
// and the program's run (outputs becoming device data, the last step's
// nodes freed). On a GPU the device waits for this work whenever the loop
// reads a result every step, and a small model's step is mostly this work,
// so it is measured on its own: GPT-2's 12 layers at a width where the
// compiled program itself runs in a few milliseconds on the CPU, since the
// host's work depends on the layer count, not on the width.
//
// Each phase is timed around its calls (the benchmark's manual time is the
// host work before the run: recording plus the key); counters give every
// phase in milliseconds a step. Run: build/bin/kiln-host-bench
// --benchmark_min_time=3 --benchmark_repetitions=3.
#include "frontends/lazy/Node.h"
#include "frontends/lazy/Tensor.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/GradScaler.h"
#include "frontends/nn/Optimizer.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void BM_Host_Gpt2Step(benchmark::State &state) {
  using namespace kiln;
  Options options = kiln::options();
  options.mode = Mode::graph;
  set_options(options);
  set_backend("cpu");
  nn::GPT2Config config;
  config.n_layer = 12;
  config.n_head = 4;
  config.n_embd = 64;
  config.vocab_size = 256;
  config.n_positions = 64;
  config.with_dropout(0.1);
  nn::GPT2LMHeadModel model(config);
  kiln::step();
  model.train();
  nn::AdamW::Options o;
  o.lr = 1e-3;
  o.weight_decay = 0.01;
  o.no_decay = nn::bias_and_norm_names(model);
  nn::AdamW opt(model.named_parameters(), o);

  const int64_t batch = 1, seq = 16;
  HostTensor ids(DType::i64, {batch, seq});
  for (int64_t i = 0; i < batch * seq; ++i)
    reinterpret_cast<int64_t *>(ids.data())[i] = (i * 7) % config.vocab_size;
  auto oneStep = [&](double *phases) {
    auto t0 = Clock::now();
    Tensor input = Tensor::from_host(HostTensor(ids));
    Tensor loss = model.loss(input, input);
    auto t1 = Clock::now();
    loss.backward();
    auto t2 = Clock::now();
    nn::clip_grad_norm_(opt, 1.0);
    opt.step();
    opt.zero_grad();
    auto t3 = Clock::now();
    metrics::Counters before = metrics::counters();
    kiln::step();
    auto t4 = Clock::now();
    const metrics::Counters &after = metrics::counters();
    double graph = after.graphMilliseconds - before.graphMilliseconds;
    double execute = after.executeMilliseconds - before.executeMilliseconds;
    if (phases) {
      phases[0] += millisecondsBetween(t0, t1);
      phases[1] += millisecondsBetween(t1, t2);
      phases[2] += millisecondsBetween(t2, t3);
      phases[3] += graph;
      phases[4] += execute;
      phases[5] += millisecondsBetween(t3, t4) - graph - execute;
    }
    return millisecondsBetween(t0, t3) + graph;
  };
  for (int warm = 0; warm < 3; ++warm) // the compile, then steady state
    oneStep(nullptr);
  double phases[6] = {};
  const uint64_t nodesBefore = kiln::lazy::nodesCreated();
  for (auto _ : state)
    state.SetIterationTime(oneStep(phases) / 1000.0);
  const char *names[6] = {"forward_ms",   "backward_ms", "update_ms",
                          "graph_key_ms", "execute_ms",  "step_rest_ms"};
  for (int i = 0; i < 6; ++i)
    state.counters[names[i]] = phases[i] / double(state.iterations());
  state.counters["nodes_per_step"] =
      double(kiln::lazy::nodesCreated() - nodesBefore) /
      double(state.iterations());
}
BENCHMARK(BM_Host_Gpt2Step)->Unit(benchmark::kMillisecond)->UseManualTime();

} // namespace

BENCHMARK_MAIN();
