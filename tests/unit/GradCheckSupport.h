// A whole-model gradient check shared by the model tests: the gradient that
// backward() gives for randomly chosen parameter entries must match a
// five-point central finite difference of the loss,
// (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h with h = 1e-4, whose truncation
// error is O(h^4) ~ 1e-16 and rounding error ~ 1e-11 at a loss of ~5 in f64.
// The tolerance |analytic - numeric| <= 1e-6 |numeric| + 1e-10 is tight
// (rtol 1e-6) yet robust. A check of zeros against zeros proves nothing, so
// most entries checked must have real gradients.
#ifndef KILN_TESTS_UNIT_GRADCHECKSUPPORT_H
#define KILN_TESTS_UNIT_GRADCHECKSUPPORT_H

#include "frontends/nn/Module.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

namespace kiln::testing {

/// Token ids [batch, seq] drawn uniformly from [0, vocab) by `rng` (i64).
inline Tensor randomIds(int64_t batch, int64_t seq, int64_t vocab,
                        std::mt19937_64 &rng) {
  std::vector<double> ids(size_t(batch * seq));
  for (double &id : ids)
    id = static_cast<double>(rng() % uint64_t(vocab));
  return Tensor::from_vector(ids, {batch, seq}, DType::i64);
}

/// The same from a fresh generator seeded with `seed`.
inline Tensor randomIds(int64_t batch, int64_t seq, int64_t vocab,
                        uint64_t seed) {
  std::mt19937_64 rng(seed);
  return randomIds(batch, seq, vocab, rng);
}

/// Checks `entries` distinct random entries of `params` against finite
/// differences of `loss()` (which records the f64 loss; each call is run by
/// kiln::step()). At least `minNonZero` of them must have a gradient above
/// 1e-5.
inline void expectGradientsMatchFiniteDifferences(
    nn::NamedTensors params, const std::function<Tensor()> &loss, uint64_t seed,
    int entries = 20, int minNonZero = 15) {
  Tensor first = loss();
  first.backward();
  kiln::step();
  const double loss0 = first.item();
  ASSERT_TRUE(std::isfinite(loss0));

  auto lossWith = [&](Tensor &p, const HostTensor &base, int64_t index,
                      double delta) {
    HostTensor moved = base;
    moved.setDouble(index, base.getDouble(index) + delta);
    NoGradGuard noGrad;
    p.assign_(Tensor::from_host(std::move(moved)));
    Tensor l = loss();
    kiln::step();
    return l.item();
  };

  std::mt19937_64 rng(seed);
  const double h = 1e-4;
  int checked = 0, large = 0;
  double worst = 0;
  std::set<std::pair<size_t, int64_t>> seen;
  while (checked < entries) {
    size_t which = rng() % params.size();
    auto &[name, p] = params[which];
    int64_t index = static_cast<int64_t>(rng() % p.numel());
    if (!seen.insert({which, index}).second)
      continue; // distinct entries
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
  EXPECT_GE(large, minNonZero);
  std::printf("loss %.6f, worst relative error %.3g\n", loss0, worst);
}

/// The same over every parameter of `model`.
inline void expectGradientsMatchFiniteDifferences(
    nn::Module &model, const std::function<Tensor()> &loss, uint64_t seed,
    int entries = 20, int minNonZero = 15) {
  expectGradientsMatchFiniteDifferences(model.named_parameters(), loss, seed,
                                        entries, minNonZero);
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_GRADCHECKSUPPORT_H
