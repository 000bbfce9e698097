// Tests of dynamic loss scaling (nn::GradScaler) on the cpu backend: an f16
// overflow skips the whole update (parameters, AdamW's moments and its
// step numbering) and halves the scale, decided on the device within one
// compiled graph; clean steps grow the scale every growth_interval; in f32
// a power-of-two scale changes no bit of training; bad states are refused.
#include "frontends/nn/GradScaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace kiln::nn {
namespace {

/// Sets the matrix products' type for one test and restores the options.
struct ProductTypeScope {
  explicit ProductTypeScope(DType type) {
    Options o = options_from_env();
    o.productType = type;
    set_options(o);
  }
  ~ProductTypeScope() { set_options(options_from_env()); }
};

/// W [8, 8] fitted so that X W reaches a target: the gradient of W is a
/// matrix product (Xᵀ dY), which kiln-autocast rounds to f16, so a large
/// loss scale overflows it.
struct Regression {
  Tensor w, x, target;
  AdamW optimizer;
  Regression()
      : w(Tensor::from_vector(values(64, 1), {8, 8}, DType::f32,
                              /*requires_grad=*/true)),
        x(Tensor::from_vector(values(128, 2), {16, 8}, DType::f32)),
        target(Tensor::from_vector(values(128, 3), {16, 8}, DType::f32)),
        optimizer({{"w", w}}, adamOptions()) {}

  void step(GradScaler *scaler) {
    Tensor error = x.matmul(w) - target;
    backward_and_step((error * error).mean(), optimizer, 0.0, scaler);
    kiln::step();
  }

  static std::vector<double> values(int n, int seed) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
      v.push_back(std::sin(0.7 * i + seed));
    return v;
  }
  static AdamW::Options adamOptions() {
    AdamW::Options o;
    o.lr = 1e-2;
    return o;
  }
};

TEST(GradScaler, AnOverflowSkipsTheUpdateAndHalvesTheScale) {
  ProductTypeScope f16(DType::f16);
  const double initial = std::ldexp(1.0, 40);
  const int64_t steps = 45;
  metrics::reset();
  Regression skipping;
  GradScaler::Options options;
  options.init_scale = initial;
  GradScaler scaler(options);
  std::vector<double> w0 = skipping.w.to_vector();

  // 2^40 times the gradient is far past f16's 65504: skipped, nothing moved.
  skipping.step(&scaler);
  GradScaler::HostState first = scaler.state();
  EXPECT_EQ(first.scale, initial / 2);
  EXPECT_EQ(first.skipped_steps, 1);
  EXPECT_EQ(first.growth_tracker, 0);
  EXPECT_EQ(skipping.w.to_vector(), w0);
  for (const auto &[name, moment] : skipping.optimizer.state())
    for (double m : moment.to_vector())
      ASSERT_EQ(m, 0.0) << name;

  for (int64_t s = 1; s < steps; ++s)
    skipping.step(&scaler);
  GradScaler::HostState last = scaler.state();
  const int64_t skipped = last.skipped_steps;
  // The scale halved once per skip until the gradients fit, then held.
  EXPECT_GT(skipped, 10);
  EXPECT_LT(skipped, steps - 5);
  EXPECT_EQ(last.scale, std::ldexp(initial, -static_cast<int>(skipped)));
  EXPECT_EQ(last.growth_tracker, steps - skipped);
  std::printf("%lld of %lld steps skipped; scale 2^%d\n",
              (long long)skipped, (long long)steps,
              static_cast<int>(std::log2(last.scale)));
  // One graph for skipped and applied steps alike.
  EXPECT_EQ(metrics::counters().compiles, 1) << metrics::report();

  // The skips left no trace: a run that starts at the final scale and
  // takes only the applied steps ends on the same bits (AdamW's bias
  // corrections counted only the applied updates).
  Regression direct;
  GradScaler::Options fitted;
  fitted.init_scale = last.scale;
  GradScaler directScaler(fitted);
  for (int64_t s = 0; s < steps - skipped; ++s)
    direct.step(&directScaler);
  EXPECT_EQ(directScaler.state().skipped_steps, 0);
  EXPECT_EQ(skipping.w.to_vector(), direct.w.to_vector());
  EXPECT_NE(skipping.w.to_vector(), w0);
}

TEST(GradScaler, CleanStepsGrowTheScaleEveryGrowthInterval) {
  ProductTypeScope f16(DType::f16);
  Regression regression;
  GradScaler::Options options;
  options.init_scale = 16;
  options.growth_interval = 3;
  GradScaler scaler(options);
  for (int s = 0; s < 7; ++s)
    regression.step(&scaler);
  GradScaler::HostState state = scaler.state();
  EXPECT_EQ(state.skipped_steps, 0);
  EXPECT_EQ(state.scale, 64.0); // doubled after steps 3 and 6
  EXPECT_EQ(state.growth_tracker, 1);
}

// DeepSpeed's variant: with hysteresis 2 the first overflow skips the step
// and keeps the scale, each later one halves it; min_scale floors it.
TEST(GradScaler, HysteresisDelaysTheFirstBackOffAndMinScaleFloorsIt) {
  ProductTypeScope f16(DType::f16);
  const double initial = std::ldexp(1.0, 40);
  Regression delayed;
  GradScaler::Options options;
  options.init_scale = initial;
  options.hysteresis = 2;
  GradScaler scaler(options);
  delayed.step(&scaler);
  GradScaler::HostState first = scaler.state();
  EXPECT_EQ(first.scale, initial);
  EXPECT_EQ(first.skipped_steps, 1);
  EXPECT_EQ(first.hysteresis_left, 1);
  delayed.step(&scaler);
  EXPECT_EQ(scaler.state().scale, initial / 2);
  EXPECT_EQ(scaler.state().hysteresis_left, 1);
  for (int s = 0; s < 40; ++s)
    delayed.step(&scaler);
  GradScaler::HostState last = scaler.state();
  EXPECT_GT(last.skipped_steps, 10);
  EXPECT_LT(last.skipped_steps, 40);
  // One skip held the scale; every other halved it.
  EXPECT_EQ(last.scale,
            std::ldexp(initial, -static_cast<int>(last.skipped_steps - 1)));

  Regression floored;
  GradScaler::Options floor;
  floor.init_scale = initial;
  floor.min_scale = std::ldexp(1.0, 38);
  GradScaler flooredScaler(floor);
  for (int s = 0; s < 4; ++s)
    floored.step(&flooredScaler);
  EXPECT_EQ(flooredScaler.state().scale, floor.min_scale);
  EXPECT_EQ(flooredScaler.state().skipped_steps, 4);
  EXPECT_FALSE(flooredScaler.state().hysteresis_left.has_value());
}

// The count of overflows left comes back after a clean step only with
// consecutive_hysteresis, and always when the scale grows.
TEST(GradScaler, HysteresisIsRestoredByGrowthOrEveryCleanStep) {
  ProductTypeScope f16(DType::f16);
  const double huge = std::ldexp(1.0, 40);
  for (bool consecutive : {false, true}) {
    for (int64_t interval : {1, 100}) {
      Regression regression;
      GradScaler::Options options;
      options.init_scale = huge;
      options.hysteresis = 3;
      options.consecutive_hysteresis = consecutive;
      options.growth_interval = interval;
      GradScaler scaler(options);
      regression.step(&scaler); // overflow: 3 → 2 left, scale kept
      EXPECT_EQ(scaler.state().hysteresis_left, 2);
      EXPECT_EQ(scaler.state().scale, huge);
      scaler.load_state({16.0, 0, 1, 2});
      regression.step(&scaler); // clean
      const bool grew = interval == 1;
      EXPECT_EQ(scaler.state().scale, grew ? 32.0 : 16.0);
      EXPECT_EQ(scaler.state().hysteresis_left, consecutive || grew ? 3 : 2)
          << "consecutive " << consecutive << ", interval " << interval;
    }
  }
  // Through a checkpoint's metadata; a count above the hysteresis (a
  // changed config) is cut to it.
  GradScaler::HostState saved{8.0, 1, 2, 2};
  GradScaler::HostState back =
      GradScaler::HostState::from_metadata(saved.metadata(), "ckpt");
  EXPECT_EQ(back.hysteresis_left, 2);
  GradScaler::Options two;
  two.hysteresis = 2;
  GradScaler smaller(two);
  smaller.load_state({8.0, 0, 0, 5});
  EXPECT_EQ(smaller.state().hysteresis_left, 2);
  EXPECT_THROW(smaller.load_state({8.0, 0, 0, 0}), Error);
  GradScaler::Options bad;
  bad.hysteresis = 0;
  EXPECT_THROW(GradScaler{bad}, Error);
  bad.hysteresis = 1;
  bad.min_scale = -1;
  EXPECT_THROW(GradScaler{bad}, Error);
}

TEST(GradScaler, InF32APowerOfTwoScaleChangesNoBit) {
  ProductTypeScope f32(DType::f32);
  Regression plain, scaled;
  GradScaler scaler;
  for (int s = 0; s < 5; ++s) {
    plain.step(nullptr);
    scaled.step(&scaler);
  }
  EXPECT_EQ(plain.w.to_vector(), scaled.w.to_vector());
  EXPECT_EQ(scaler.state().growth_tracker, 5);
}

TEST(GradScaler, StatesRoundTripAndBadOnesAreRefused) {
  GradScaler scaler;
  scaler.load_state({1024.0, 5, 2, {}});
  GradScaler::HostState state = scaler.state();
  EXPECT_EQ(state.scale, 1024.0);
  EXPECT_EQ(state.growth_tracker, 5);
  EXPECT_EQ(state.skipped_steps, 2);
  // Through a checkpoint's metadata, exactly; without it, refused.
  GradScaler::HostState odd{std::ldexp(1.0, -30) * 3, 7, 11, {}};
  GradScaler::HostState back =
      GradScaler::HostState::from_metadata(odd.metadata(), "ckpt");
  EXPECT_EQ(back.scale, odd.scale);
  EXPECT_EQ(back.growth_tracker, 7);
  EXPECT_EQ(back.skipped_steps, 11);
  EXPECT_THROW(GradScaler::HostState::from_metadata({}, "ckpt"), Error);
  auto malformed = odd.metadata();
  malformed["grad_scaler.scale"] = "many";
  EXPECT_THROW(GradScaler::HostState::from_metadata(malformed, "ckpt"), Error);
  EXPECT_THROW(scaler.load_state({0.0, 0, 0, {}}), Error);
  EXPECT_THROW(scaler.load_state({INFINITY, 0, 0, {}}), Error);
  EXPECT_THROW(scaler.load_state({1.0, -1, 0, {}}), Error);
  GradScaler::Options bad;
  bad.backoff_factor = 1.5;
  EXPECT_THROW(GradScaler{bad}, Error);
  // A refused state changed nothing.
  EXPECT_EQ(scaler.state().scale, 1024.0);
}

} // namespace
} // namespace kiln::nn
