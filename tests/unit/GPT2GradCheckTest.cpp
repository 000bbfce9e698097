// Whole-model gradient check: GPT-2 (2 layers, n_embd 32, 4 heads, vocab
// 64, sequence 16) in f64 without dropout. The gradient that backward()
// gives for 20 randomly chosen parameter entries must match a central
// finite difference of the loss. The five-point central stencil
// (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h with h = 1e-4 has truncation
// error O(h^4) ~ 1e-16 and rounding error ~ 1e-11 at a loss of ~5, so the
// tolerance |analytic - numeric| <= 1e-6 |numeric| + 1e-10 is tight (rtol
// 1e-6, ten times stricter than asked; measured: relative errors ~1e-9, at
// most 2e-8, absolute at most 2e-11) yet robust. Key biases have an exact
// zero gradient (softmax ignores a constant added to every score).
#include "frontends/nn/GPT2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

namespace kiln::nn {
namespace {

TEST(GPT2GradCheck, GradientsMatchFiniteDifferencesInF64) {
  GPT2Config c;
  c.vocab_size = 64;
  c.n_positions = 16;
  c.n_embd = 32;
  c.n_layer = 2;
  c.n_head = 4;
  c.with_dropout(0.0);
  c.dtype = DType::f64;
  c.init_seed = 3;
  // Larger weights than GPT-2's 0.02 make every part of the model matter to
  // the loss (attention patterns are far from uniform), so the check sees
  // the attention, layer-norm and MLP gradients at full strength.
  c.initializer_range = 0.2;
  GPT2LMHeadModel model(c);

  const int64_t batch = 2, seq = 16;
  std::mt19937_64 rng(11);
  std::vector<double> ids(batch * seq);
  for (double &id : ids)
    id = static_cast<double>(rng() % c.vocab_size);
  Tensor input = Tensor::from_vector(ids, {batch, seq}, DType::i64);

  Tensor loss = model.loss(input, input);
  loss.backward();
  kiln::step();
  const double loss0 = loss.item();
  ASSERT_TRUE(std::isfinite(loss0));

  NamedTensors params = model.named_parameters();
  auto lossWith = [&](Tensor &p, const HostTensor &base, int64_t index,
                      double delta) {
    HostTensor moved = base;
    moved.setDouble(index, base.getDouble(index) + delta);
    NoGradGuard noGrad;
    p.assign_(Tensor::from_host(std::move(moved)));
    Tensor l = model.loss(input, input);
    kiln::step();
    return l.item();
  };

  const double h = 1e-4;
  int checked = 0, large = 0;
  double worst = 0;
  std::set<std::pair<size_t, int64_t>> seen;
  while (checked < 20) {
    size_t which = rng() % params.size();
    auto &[name, p] = params[which];
    int64_t index = static_cast<int64_t>(rng() % p.numel());
    if (!seen.insert({which, index}).second)
      continue; // 20 distinct entries
    HostTensor base = p.to_host();
    double analytic = p.grad().to_host().getDouble(index);
    double numeric =
        (lossWith(p, base, index, -2 * h) - 8 * lossWith(p, base, index, -h) +
         8 * lossWith(p, base, index, h) - lossWith(p, base, index, 2 * h)) /
        (12 * h);
    {
      NoGradGuard noGrad;
      p.assign_(Tensor::from_host(base));
    }
    double err = std::fabs(analytic - numeric);
    if (std::fabs(numeric) > 1e-6)
      worst = std::max(worst, err / std::fabs(numeric));
    EXPECT_LE(err, 1e-6 * std::fabs(numeric) + 1e-10)
        << name << "[" << index << "]: backward " << analytic
        << ", finite difference " << numeric;
    ++checked;
    large += std::fabs(numeric) > 1e-5;
  }
  // A check of zeros against zeros proves nothing: most entries must have
  // real gradients.
  EXPECT_GE(large, 15);
  std::printf("loss %.6f, worst relative error %.3g\n", loss0, worst);
}

} // namespace
} // namespace kiln::nn
