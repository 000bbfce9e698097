// Dynamic loss scaling; see GradScaler.h. Every update is recorded under
// NoGradGuard, into the step's graph, from device state.
#include "frontends/nn/GradScaler.h"

#include "absl/strings/numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace kiln::nn {
namespace {

/// A 0-d tensor holding `value` as device data (not a lazy constant: the
/// state changes every step and the graph must not).
Tensor deviceScalar(double value, DType dtype) {
  HostTensor host(dtype, {});
  host.setDouble(0, value);
  return Tensor::from_host(std::move(host));
}

/// A constant 0-d tensor.
Tensor constant(double value, DType dtype) {
  return Tensor::full({}, value, dtype);
}

bool validScale(double scale) { return std::isfinite(scale) && scale > 0; }

} // namespace

std::map<std::string, std::string> GradScaler::HostState::metadata() const {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", scale);
  std::map<std::string, std::string> fields = {
      {"grad_scaler.scale", text},
      {"grad_scaler.growth_tracker", std::to_string(growth_tracker)},
      {"grad_scaler.skipped_steps", std::to_string(skipped_steps)}};
  if (hysteresis_left)
    fields["grad_scaler.hysteresis_left"] = std::to_string(*hysteresis_left);
  return fields;
}

GradScaler::HostState GradScaler::HostState::from_metadata(
    const std::map<std::string, std::string> &metadata,
    const std::string &source) {
  auto field = [&](const char *key) -> const std::string & {
    auto it = metadata.find(key);
    if (it == metadata.end())
      throw Error("'" + source + "' holds no fp16 loss scaler state (" + key +
                  "): it was not trained with --fp16");
    return it->second;
  };
  HostState state;
  if (!absl::SimpleAtod(field("grad_scaler.scale"), &state.scale) ||
      !absl::SimpleAtoi(field("grad_scaler.growth_tracker"),
                        &state.growth_tracker) ||
      !absl::SimpleAtoi(field("grad_scaler.skipped_steps"),
                        &state.skipped_steps))
    throw Error("'" + source + "': a malformed fp16 loss scaler state");
  if (auto it = metadata.find("grad_scaler.hysteresis_left");
      it != metadata.end()) {
    int64_t left = 0;
    if (!absl::SimpleAtoi(it->second, &left))
      throw Error("'" + source + "': a malformed fp16 loss scaler state");
    state.hysteresis_left = left;
  }
  return state;
}

GradScaler::GradScaler() : GradScaler(Options()) {}

GradScaler::GradScaler(const Options &options) : options_(options) {
  if (!validScale(options.init_scale))
    throw Error("GradScaler: init_scale must be a positive finite number");
  if (!(options.growth_factor > 1.0))
    throw Error("GradScaler: growth_factor must be > 1");
  if (!(options.backoff_factor > 0.0 && options.backoff_factor < 1.0))
    throw Error("GradScaler: backoff_factor must be in (0, 1)");
  // The scale and the clean-step count are f32 device state: the count is
  // exact up to 2^24, and a floor past f32's range would be infinite.
  if (options.growth_interval < 1 || options.growth_interval > (1 << 24))
    throw Error("GradScaler: growth_interval must be in [1, 2^24]");
  if (!(options.min_scale >= 0) ||
      !(options.min_scale <= std::numeric_limits<float>::max()))
    throw Error("GradScaler: min_scale must be a non-negative f32 number");
  if (options.hysteresis < 1)
    throw Error("GradScaler: hysteresis must be >= 1");
  load_state({options.init_scale, 0, 0, std::nullopt});
}

Tensor GradScaler::scale(const Tensor &loss) const {
  return loss * scale_.to(loss.dtype());
}

void GradScaler::unscale_(Optimizer &optimizer) {
  NoGradGuard noGrad;
  Tensor inverse = 1.0 / scale_;
  // x · 0 is 0 for every finite x and NaN for ±Inf and NaN, so the sum of
  // the products is NaN exactly when some gradient is not finite (IEEE:
  // kiln folds no float product by zero, and its kernels assume nothing
  // about NaN), and NaN alone differs from itself.
  Tensor poison;
  for (const auto &[name, param] : optimizer.params()) {
    Tensor grad = param.grad();
    if (!grad.defined())
      continue;
    Tensor unscaled = grad * inverse.to(grad.dtype());
    Tensor p = (unscaled * 0.0).sum().to(DType::f32);
    poison = poison.defined() ? poison + p : p;
    Tensor(param).set_grad(unscaled);
  }
  Tensor zero = constant(0.0, DType::f32);
  // Sharded gradients: each process looked at those it holds, and NaN
  // survives the sum over the processes.
  if (optimizer.shards_gradients())
    poison = all_reduce(poison.defined() ? poison : zero);
  foundInf_ = poison.defined() ? poison.ne(poison) : zero.ne(zero);
  unscaled_ = true;
}

void GradScaler::step(Optimizer &optimizer) {
  if (!unscaled_)
    unscale_(optimizer);
  optimizer.step_unless(foundInf_, skipped_);
  update();
}

void GradScaler::update() {
  NoGradGuard noGrad;
  if (!unscaled_)
    throw Error("GradScaler::update: no unscale_ or step this step");
  unscaled_ = false;
  // PyTorch's _amp_update_scale_: an overflow backs the scale off and
  // restarts the count; growth_interval clean steps grow it.
  Tensor zero = constant(0.0, DType::f32);
  Tensor clean = where(foundInf_, zero, growthTracker_ + 1.0);
  Tensor grow = clean.ge(
      constant(static_cast<double>(options_.growth_interval), DType::f32));
  // DeepSpeed's DynamicLossScaler.update_scale: with hysteresis, an
  // overflow backs off only once the count is down to 1; until then it
  // counts down. The count is full again when the scale grows (or after
  // any clean step, consecutive_hysteresis).
  Tensor backOff = foundInf_;
  if (hysteresisLeft_.defined()) {
    Tensor one = constant(1.0, DType::f32);
    Tensor full =
        constant(static_cast<double>(options_.hysteresis), DType::f32);
    Tensor exhausted = hysteresisLeft_.le(one);
    backOff = where(foundInf_, exhausted, foundInf_);
    Tensor afterClean = options_.consecutive_hysteresis
                            ? full
                            : where(grow, full, hysteresisLeft_);
    hysteresisLeft_.assign_(where(
        foundInf_, where(exhausted, hysteresisLeft_, hysteresisLeft_ - 1.0),
        afterClean));
  }
  Tensor backedOff = scale_ * options_.backoff_factor;
  if (options_.min_scale > 0)
    backedOff = backedOff.maximum(constant(options_.min_scale, DType::f32));
  Tensor next = where(backOff, backedOff,
                      where(grow, scale_ * options_.growth_factor, scale_));
  scale_.assign_(next);
  growthTracker_.assign_(where(grow, zero, clean));
  skipped_.assign_(skipped_ + foundInf_.to(DType::f64));
}

GradScaler::HostState GradScaler::state() const {
  HostState s;
  s.scale = scale_.item();
  s.growth_tracker = static_cast<int64_t>(growthTracker_.item());
  s.skipped_steps = static_cast<int64_t>(skipped_.item());
  if (hysteresisLeft_.defined())
    s.hysteresis_left = static_cast<int64_t>(hysteresisLeft_.item());
  return s;
}

void GradScaler::load_state(const HostState &state) {
  if (!validScale(state.scale))
    throw Error("GradScaler: the loss scale must be a positive finite "
                "number, got " +
                std::to_string(state.scale));
  if (state.growth_tracker < 0 || state.skipped_steps < 0)
    throw Error("GradScaler: step counts must be >= 0");
  // A count saved under a larger hysteresis (the run's config changed)
  // is cut to this scaler's.
  const int64_t hysteresisLeft = std::min(
      state.hysteresis_left.value_or(options_.hysteresis), options_.hysteresis);
  if (hysteresisLeft < 1)
    throw Error("GradScaler: the overflows left before a back-off must be "
                ">= 1, got " +
                std::to_string(hysteresisLeft));
  NoGradGuard noGrad;
  Tensor scale = deviceScalar(state.scale, DType::f32);
  Tensor tracker =
      deviceScalar(static_cast<double>(state.growth_tracker), DType::f32);
  Tensor skipped =
      deviceScalar(static_cast<double>(state.skipped_steps), DType::f64);
  Tensor left;
  if (options_.hysteresis > 1)
    left = deviceScalar(static_cast<double>(hysteresisLeft), DType::f32);
  if (!scale_.defined()) {
    scale_ = scale, growthTracker_ = tracker, skipped_ = skipped;
    hysteresisLeft_ = left;
    return;
  }
  scale_.assign_(scale);
  growthTracker_.assign_(tracker);
  skipped_.assign_(skipped);
  if (left.defined())
    hysteresisLeft_.assign_(left);
}

Tensor backward_and_step(const Tensor &loss, Optimizer &optimizer,
                         double max_grad_norm, GradScaler *scaler) {
  (scaler ? scaler->scale(loss) : loss).backward();
  // Before the scaler looks for overflow: an inf on one process is in every
  // process's sum (with sharded gradients, in its owner's, and unscale_
  // gathers what each process found), so all of them skip the step
  // together.
  optimizer.average_gradients();
  if (scaler)
    scaler->unscale_(optimizer);
  // Measured without clipping too, as the Trainer logs it.
  Tensor norm = clip_grad_norm_(
      optimizer, max_grad_norm > 0 ? max_grad_norm
                                   : std::numeric_limits<double>::infinity());
  if (scaler)
    scaler->step(optimizer);
  else
    optimizer.step();
  optimizer.zero_grad();
  return norm;
}

} // namespace kiln::nn
