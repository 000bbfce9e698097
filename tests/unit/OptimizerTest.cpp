// Tests of the nn optimizers against hand-computed steps (SGD with momentum,
// dampening, Nesterov and weight decay; AdamW with bias correction and
// decoupled weight decay), of the HF learning-rate schedules at chosen
// steps, of clip_grad_norm_, and of the rule that a changing learning rate
// never causes a recompilation.
#include "frontends/nn/Optimizer.h"
#include "tests/unit/ErrorMessage.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::nn {
namespace {

/// A parameter p (f64) whose loss sum(p * c) has gradient c.
struct Problem {
  Tensor p;
  Tensor c;
  Problem(std::vector<double> p0, std::vector<double> coefs,
          DType dtype = DType::f64) {
    int64_t n = static_cast<int64_t>(p0.size());
    p = Tensor::from_vector(p0, {n}, dtype, /*requires_grad=*/true);
    c = Tensor::from_vector(coefs, {n}, dtype);
  }
  NamedTensors named() const { return {{"p", p}}; }
  /// backward, optimizer step, zero_grad, kiln::step → p's values.
  std::vector<double> step(Optimizer &opt) {
    (p * c).sum().backward();
    opt.step();
    opt.zero_grad();
    kiln::step();
    return p.to_vector();
  }
};

void expectNear(const std::vector<double> &got, const std::vector<double> &want,
                double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(SGD, MomentumAndWeightDecayMatchHandComputedSteps) {
  Problem prob({1.0, -2.0}, {0.5, 3.0});
  SGD::Options o;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.weight_decay = 0.01;
  SGD opt(prob.named(), o);
  // Step 1: g = c + 0.01 p = [0.51, 2.98]; buf = g; p -= 0.1 g.
  expectNear(prob.step(opt), {0.949, -2.298}, 1e-12);
  // Step 2: g = [0.50949, 2.97702]; buf = 0.9 [0.51, 2.98] + g
  //   = [0.96849, 5.65902]; p -= 0.1 buf.
  expectNear(prob.step(opt), {0.852151, -2.863902}, 1e-12);
  EXPECT_EQ(opt.step_count(), 2);
}

TEST(SGD, DampeningAppliesFromTheSecondStep) {
  Problem prob({1.0, -2.0}, {0.5, 3.0});
  SGD::Options o;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.dampening = 0.5;
  SGD opt(prob.named(), o);
  // Step 1: buf = g (no dampening on the first step, as PyTorch).
  expectNear(prob.step(opt), {0.95, -2.3}, 1e-12);
  // Step 2: buf = 0.9 [0.5, 3] + 0.5 [0.5, 3] = [0.7, 4.2].
  expectNear(prob.step(opt), {0.88, -2.72}, 1e-12);
}

TEST(SGD, NesterovLooksAhead) {
  Problem prob({1.0, -2.0}, {0.5, 3.0});
  SGD::Options o;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.nesterov = true;
  SGD opt(prob.named(), o);
  // buf = g; update = g + 0.9 buf = 1.9 [0.5, 3] = [0.95, 5.7].
  expectNear(prob.step(opt), {0.905, -2.57}, 1e-12);
}

TEST(AdamW, MatchesHandComputedSteps) {
  Problem prob({1.0, -2.0}, {0.5, 3.0});
  AdamW::Options o;
  o.lr = 0.1;
  o.weight_decay = 0.01;
  AdamW opt(prob.named(), o);
  // Step 1: p *= 1 - 0.1 * 0.01; m = 0.1 g; v = 0.001 g²; the bias
  // corrections 0.1 and 0.001 make the update lr * g / (|g| + eps).
  std::vector<double> p1 = prob.step(opt);
  expectNear(p1, {0.999 - 0.05 / (0.5 + 1e-8), -1.998 - 0.3 / (3.0 + 1e-8)},
             1e-12);
  EXPECT_NEAR(p1[0], 0.89900000200, 1e-10);
  EXPECT_NEAR(p1[1], -2.09799999967, 1e-10);

  // Step 2 (same gradient): m = 0.9 (0.1 g) + 0.1 g = 0.19 g,
  // v = 0.999 (0.001 g²) + 0.001 g² = 0.001999 g², bc1 = 0.19,
  // bc2 = 0.001999: the update is again lr * g / (|g| + eps') in exact
  // arithmetic; computed here step by step.
  std::vector<double> want;
  for (int i = 0; i < 2; ++i) {
    double g = i == 0 ? 0.5 : 3.0;
    double m = 0.19 * g, v = 0.001999 * g * g;
    double bc1 = 1 - 0.9 * 0.9, bc2 = 1 - 0.999 * 0.999;
    double p = p1[i] * (1 - 0.1 * 0.01);
    want.push_back(p -
                   (0.1 / bc1) * m / (std::sqrt(v) / std::sqrt(bc2) + 1e-8));
  }
  expectNear(prob.step(opt), want, 1e-12);
}

TEST(AdamW, SkipsWeightDecayForExemptParameters) {
  Problem decayed({1.0, -2.0}, {0.5, 3.0});
  Problem exempt({1.0, -2.0}, {0.5, 3.0});
  AdamW::Options o;
  o.lr = 0.1;
  o.weight_decay = 0.5;
  o.no_decay = {"exempt"};
  AdamW opt({{"decayed", decayed.p}, {"exempt", exempt.p}}, o);
  ((decayed.p * decayed.c).sum() + (exempt.p * exempt.c).sum()).backward();
  opt.step();
  kiln::step();
  // Step 1 moves each entry by lr * g / (|g| + eps) ~ 0.1 toward -g; decay
  // multiplies by 1 - 0.1 * 0.5 first, only where not exempt.
  expectNear(exempt.p.to_vector(), {0.9, -2.1}, 1e-7);
  expectNear(decayed.p.to_vector(), {0.95 - 0.1, -1.9 - 0.1}, 1e-7);
}

TEST(AdamW, WorksInF32WithinRounding) {
  Problem prob({1.0, -2.0}, {0.5, 3.0}, DType::f32);
  AdamW::Options o;
  o.lr = 0.1;
  AdamW opt(prob.named(), o);
  expectNear(prob.step(opt), {0.89900000200, -2.09799999967}, 1e-6);
}

TEST(Optimizer, ChangingTheLearningRateDoesNotRecompile) {
  Problem prob({1.0, -2.0}, {0.5, 3.0});
  AdamW opt(prob.named(), AdamW::Options());
  prob.step(opt);
  int64_t compiles = metrics::counters().compiles;
  for (double lr : {0.5, 0.25, 0.125}) {
    opt.set_lr(lr);
    prob.step(opt);
  }
  EXPECT_EQ(metrics::counters().compiles, compiles) << metrics::report();
}

TEST(Optimizer, SkipsParametersWithoutGradients) {
  Tensor used = Tensor::from_vector({1.0}, {1}, DType::f64, true);
  Tensor unused = Tensor::from_vector({5.0}, {1}, DType::f64, true);
  SGD::Options o;
  o.lr = 0.5;
  SGD opt({{"used", used}, {"unused", unused}}, o);
  (used * 2.0).sum().backward();
  opt.step();
  kiln::step();
  EXPECT_DOUBLE_EQ(used.item(), 0.0);
  EXPECT_DOUBLE_EQ(unused.item(), 5.0);
}

TEST(ClipGradNorm, ScalesGradientsToTheMaxNormAndReturnsTheNorm) {
  Tensor a = Tensor::from_vector({0.0, 0.0}, {2}, DType::f64, true);
  Tensor b = Tensor::from_vector({0.0}, {1}, DType::f64, true);
  Tensor ca = Tensor::from_vector({3.0, 4.0}, {2}, DType::f64);
  Tensor cb = Tensor::from_vector({12.0}, {1}, DType::f64);
  ((a * ca).sum() + (b * cb).sum()).backward();
  // Global norm sqrt(9 + 16 + 144) = 13.
  Tensor norm = clip_grad_norm_({a, b}, 6.5);
  kiln::step();
  EXPECT_NEAR(norm.item(), 13.0, 1e-12);
  double coef = 6.5 / (13.0 + 1e-6);
  expectNear(a.grad().to_vector(), {3 * coef, 4 * coef}, 1e-12);
  expectNear(b.grad().to_vector(), {12 * coef}, 1e-12);

  // Under the limit the gradients are unchanged.
  Tensor n2 = clip_grad_norm_({a, b}, 100.0);
  kiln::step();
  EXPECT_NEAR(n2.item(), 6.5, 1e-6);
  expectNear(a.grad().to_vector(), {3 * coef, 4 * coef}, 1e-12);
}

TEST(LRSchedule, MatchesHuggingFaceAtChosenSteps) {
  LRLambda linear = linear_schedule_with_warmup(10, 100);
  EXPECT_DOUBLE_EQ(linear(0), 0.0);
  EXPECT_DOUBLE_EQ(linear(5), 0.5);
  EXPECT_DOUBLE_EQ(linear(10), 1.0);
  EXPECT_DOUBLE_EQ(linear(55), 0.5); // (100 - 55) / 90
  EXPECT_DOUBLE_EQ(linear(100), 0.0);
  EXPECT_DOUBLE_EQ(linear(120), 0.0);

  LRLambda cosine = cosine_schedule_with_warmup(10, 110);
  EXPECT_DOUBLE_EQ(cosine(0), 0.0);
  EXPECT_DOUBLE_EQ(cosine(5), 0.5);
  EXPECT_DOUBLE_EQ(cosine(10), 1.0);
  EXPECT_NEAR(cosine(35), 0.5 + 0.5 * std::sqrt(0.5), 1e-15); // progress 1/4
  EXPECT_NEAR(cosine(60), 0.5, 1e-15);                        // progress 1/2
  EXPECT_NEAR(cosine(110), 0.0, 1e-15);

  LRLambda warm = constant_schedule_with_warmup(4);
  EXPECT_DOUBLE_EQ(warm(2), 0.5);
  EXPECT_DOUBLE_EQ(warm(4), 1.0);
  EXPECT_DOUBLE_EQ(warm(1000), 1.0);
  EXPECT_DOUBLE_EQ(constant_schedule()(7), 1.0);
}

// The values of transformers' optimization.py formulas at these steps,
// worked by hand (warmup 10 of 110 steps where there is a decay).
TEST(LRSchedule, TheRestOfHuggingFacesSchedulesMatchAtChosenSteps) {
  // Two hard restarts: each half of the decay is a whole cosine to 0.
  LRLambda restarts =
      cosine_with_hard_restarts_schedule_with_warmup(10, 110, 2);
  EXPECT_DOUBLE_EQ(restarts(5), 0.5);
  EXPECT_DOUBLE_EQ(restarts(10), 1.0);
  EXPECT_NEAR(restarts(35), 0.5, 1e-15); // (2 · 1/4) mod 1 = 1/2
  EXPECT_NEAR(restarts(60), 1.0, 1e-15); // the restart
  EXPECT_NEAR(restarts(85), 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(restarts(110), 0.0);
  EXPECT_DOUBLE_EQ(restarts(500), 0.0);
  // One cycle is the plain cosine's half-wave.
  LRLambda oneCycle = cosine_with_hard_restarts_schedule_with_warmup(10, 110);
  LRLambda cosine = cosine_schedule_with_warmup(10, 110);
  for (int64_t step : {10, 23, 60, 97, 109})
    EXPECT_NEAR(oneCycle(step), cosine(step), 1e-15) << step;

  // ((1e-3 - 1e-7) · remaining² + 1e-7) / 1e-3.
  LRLambda poly =
      polynomial_decay_schedule_with_warmup(10, 110, 1e-3, 1e-7, 2.0);
  EXPECT_DOUBLE_EQ(poly(5), 0.5);
  EXPECT_DOUBLE_EQ(poly(10), 1.0);
  EXPECT_NEAR(poly(60), 0.250075, 1e-15);
  EXPECT_NEAR(poly(110), 1e-4, 1e-15);
  EXPECT_NEAR(poly(111), 1e-4, 1e-15); // lr_end after the last step
  EXPECT_THROW(polynomial_decay_schedule_with_warmup(10, 110, 1e-7, 1e-7),
               Error);

  // 1 / sqrt((step + timescale - warmup) / timescale).
  LRLambda inverse = inverse_sqrt_schedule(4, 10);
  EXPECT_DOUBLE_EQ(inverse(2), 0.5);
  EXPECT_DOUBLE_EQ(inverse(4), 1.0);
  EXPECT_DOUBLE_EQ(inverse(34), 0.5);
  EXPECT_THROW(inverse_sqrt_schedule(4, 0), Error);

  // The half-cosine from 1 to min_lr_rate 0.1.
  LRLambda floor = cosine_with_min_lr_schedule_with_warmup(10, 110, 0.5, 0.1);
  EXPECT_DOUBLE_EQ(floor(5), 0.5);
  EXPECT_DOUBLE_EQ(floor(10), 1.0);
  EXPECT_NEAR(floor(60), 0.55, 1e-15);
  EXPECT_NEAR(floor(110), 0.1, 1e-15);
}

TEST(LRSchedule, LambdaLRDrivesTheOptimizer) {
  Tensor p = Tensor::from_vector({0.0}, {1}, DType::f64, true);
  SGD::Options o;
  o.lr = 0.1;
  SGD opt({{"p", p}}, o);
  LambdaLR sched(opt, linear_schedule_with_warmup(2, 4));
  // Step 0 applies at construction (HF: the first update uses lr 0).
  std::vector<double> lrs = {opt.lr()};
  for (int i = 0; i < 5; ++i) {
    sched.step();
    lrs.push_back(opt.lr());
  }
  expectNear(lrs, {0.0, 0.05, 0.1, 0.05, 0.0, 0.0}, 1e-15);
  sched.set_step(1);
  EXPECT_DOUBLE_EQ(opt.lr(), 0.05);
}

TEST(Optimizer, RejectsBadArguments) {
  Tensor p = Tensor::from_vector({0.0}, {1}, DType::f64, true);
  AdamW::Options bad;
  bad.beta1 = 1.0;
  EXPECT_THROW(AdamW({{"p", p}}, bad), Error);
  SGD::Options nesterov;
  nesterov.nesterov = true;
  EXPECT_THROW(SGD({{"p", p}}, nesterov), Error);
  Tensor ints = Tensor::from_vector({1.0}, {1}, DType::i64);
  EXPECT_THROW(SGD({{"i", ints}}, SGD::Options()), Error);
}

TEST(Optimizer, RefusesWhatPyTorchRefusesNaNsIncluded) {
  // Each was accepted before: a NaN learning rate made every weight NaN at
  // the first step, a tensor listed twice was updated twice a step, and
  // two tensors under one name shared one entry of a saved state.
  Tensor p = Tensor::from_vector({0.0}, {1}, DType::f32, true);
  Tensor q = Tensor::from_vector({0.0}, {1}, DType::f32, true);
  AdamW::Options nanLr;
  nanLr.lr = NAN;
  EXPECT_EQ(errorMessageOf([&] {
              AdamW({{"p", p}}, nanLr);
            }),
            "optimizer: learning rate must be >= 0, got nan");
  AdamW::Options nanBeta;
  nanBeta.beta2 = NAN;
  EXPECT_EQ(errorMessageOf([&] {
              AdamW({{"p", p}}, nanBeta);
            }),
            "AdamW: betas must be in [0, 1), got 0.900000 and nan");
  AdamW::Options decay;
  decay.weight_decay = -0.01;
  EXPECT_EQ(errorMessageOf([&] {
              AdamW({{"p", p}}, decay);
            }),
            "AdamW: weight_decay must be >= 0, got -0.010000");
  SGD::Options momentum;
  momentum.momentum = -0.9;
  EXPECT_EQ(errorMessageOf([&] {
              SGD({{"p", p}}, momentum);
            }),
            "SGD: momentum and weight_decay must be >= 0, got -0.900000 and "
            "0.000000");
  EXPECT_EQ(errorMessageOf([&] {
              AdamW({{"p", p}, {"tied", p}}, AdamW::Options());
            }),
            "optimizer: parameter 'tied' is the tensor 'p' again (list a tied "
            "tensor once)");
  EXPECT_EQ(errorMessageOf([&] {
              AdamW({{"p", p}, {"p", q}}, AdamW::Options());
            }),
            "optimizer: two parameters are named 'p'");
  EXPECT_EQ(errorMessageOf([&] {
              AdamW({{"p", p}, {"q", q}}, AdamW::Options());
            }),
            "");
}

} // namespace
} // namespace kiln::nn
