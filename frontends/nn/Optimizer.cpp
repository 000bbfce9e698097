// SGD, AdamW, gradient clipping and learning-rate schedules; see
// Optimizer.h. Updates are recorded under NoGradGuard: they are part of the
// step's graph but not of any gradient.
#include "frontends/nn/Optimizer.h"

#include "frontends/nn/Layers.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include <algorithm>
#include <cmath>

namespace kiln::nn {
namespace {

/// A constant 0-d f64 tensor (for hyper-parameters that never change).
Tensor constant(double value) { return Tensor::full({}, value, DType::f64); }

/// The type a gradient is summed and squared in: f64 stays, the rest f32.
DType wideType(DType gradient) {
  return gradient == DType::f64 ? DType::f64 : DType::f32;
}

/// DistributedDataParallel's mean of `gradient` over the processes, summed
/// in wideType.
Tensor averagedOverProcesses(const Tensor &gradient) {
  Tensor sum = all_reduce(gradient.to(wideType(gradient.dtype())));
  return (sum * (1.0 / double(world_size()))).to(gradient.dtype());
}

} // namespace

Optimizer::Optimizer(NamedTensors params, double lr, StateSharding sharding)
    : params_(std::move(params)), state_(params_.size()), lr_(lr) {
  // Comparisons written so that a NaN fails them, as PyTorch's
  // `not 0.0 <= lr` does.
  if (!(lr >= 0))
    throw Error("optimizer: learning rate must be >= 0, got " +
                std::to_string(lr));
  // A tensor listed twice would be updated twice a step (PyTorch warns
  // that this will become an error), and two tensors under one name would
  // share one entry of a saved optimizer state.
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_map<const void *, size_t> tensors;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto &[name, p] = params_[i];
    if (!p.defined())
      throw Error("optimizer: parameter '" + name + "' is undefined");
    if (!isFloat(p.dtype()))
      throw Error("optimizer: parameter '" + name + "' is not a float tensor");
    if (!names.insert(name).second)
      throw Error("optimizer: two parameters are named '" + name + "'");
    if (auto [it, added] = tensors.emplace(p.impl().get(), i); !added)
      throw Error("optimizer: parameter '" + name + "' is the tensor '" +
                  params_[it->second].first +
                  "' again (list a tied tensor once)");
  }
  gradientElsewhere_.assign(params_.size(), false);
  const int processes =
      sharding == StateSharding::replicated ? 1 : world_size();
  if (processes == 1)
    return;
  shardsGradients_ = sharding == StateSharding::by_parameter_with_gradients;
  // ZeroRedundancyOptimizer's partition: the largest parameters first,
  // each to the process owning the fewest elements so far (the lowest rank
  // on a tie). Every process computes the same from the same parameters.
  rank_ = world_rank();
  std::vector<size_t> order(params_.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return params_[a].second.numel() > params_[b].second.numel();
  });
  std::vector<int64_t> owned(processes, 0);
  owner_.assign(params_.size(), 0);
  for (size_t i : order) {
    int least =
        int(std::min_element(owned.begin(), owned.end()) - owned.begin());
    owner_[i] = least;
    owned[least] += params_[i].second.numel();
  }
}

Optimizer::~Optimizer() = default;

void Optimizer::add_state(const std::string &stateName) {
  // Zeros as device data (not lazy constants): the first step's graph then
  // equals every later step's, so it compiles once.
  stateNames_.push_back(stateName);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!owns(i))
      continue;
    const Tensor &p = params_[i].second;
    state_[i].emplace_back(stateName,
                           Tensor::from_host(HostTensor(p.dtype(), p.shape())));
  }
}

Tensor &Optimizer::state_of(size_t i, const std::string &stateName) {
  for (auto &entry : state_[i])
    if (entry.first == stateName)
      return entry.second;
  throw Error("optimizer: no state '" + stateName + "'");
}

void Optimizer::step() { step_unless(Tensor(), Tensor()); }

void Optimizer::step_unless(const Tensor &skip, const Tensor &skipped_before) {
  NoGradGuard noGrad;
  ++steps_;
  // Device inputs, never constants: the values change every step.
  Tensor lr = Tensor::scalar(lr_, DType::f64);
  Tensor stepNumber = Tensor::scalar(static_cast<double>(steps_), DType::f64);
  if (skipped_before.defined())
    stepNumber = stepNumber - skipped_before.to(DType::f64);
  consolidated_.clear();
  end_step(); // nothing kept from a step an exception cut short
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor &p = params_[i].second;
    if (!has_gradient(i))
      continue;
    if (owns(i))
      updateOwned(i, skip, lr, stepNumber);
    // Every process makes the same broadcasts in the same order (each
    // parameter with a gradient, in parameter order), whoever owns them.
    if (sharded())
      p.assign_(broadcast(p.detach(), owner_[i]));
  }
  end_step();
  gradientElsewhere_.assign(params_.size(), false);
}

bool Optimizer::has_gradient(size_t i) const {
  return gradientElsewhere_[i] || params_[i].second.grad().defined();
}

void Optimizer::average_gradients() {
  if (!shardsGradients_)
    return nn::average_gradients(params_);
  NoGradGuard noGrad;
  for (size_t i = params_.size(); i-- > 0;) {
    Tensor &p = params_[i].second;
    if (!p.grad().defined())
      continue;
    // Every process sends its share; the others' mean is dropped as soon
    // as it is made (step() still runs the exchange), so its buffer does
    // not live on to the update.
    Tensor mean = averagedOverProcesses(p.grad());
    if (owns(i)) {
      p.set_grad(mean);
    } else {
      p.zero_grad();
      gradientElsewhere_[i] = true;
    }
  }
}

void Optimizer::updateOwned(size_t i, const Tensor &skip, const Tensor &lr,
                            const Tensor &step) {
  Tensor grad = params_[i].second.grad().detach();
  if (!skip.defined()) {
    update(i, grad, lr, step);
    return;
  }
  // The values before the update (handles to them: assign_ moves the
  // tensors on, not these), then each updated value or its old one.
  std::vector<std::pair<Tensor, Tensor>> updated;
  updated.emplace_back(params_[i].second, params_[i].second.detach());
  for (auto &entry : state_[i])
    updated.emplace_back(entry.second, entry.second.detach());
  update(i, grad, lr, step);
  for (auto &[tensor, before] : updated)
    tensor.assign_(where(skip, before, tensor.detach()));
}

void Optimizer::zero_grad() {
  for (auto &entry : params_)
    entry.second.zero_grad();
  gradientElsewhere_.assign(params_.size(), false);
}

NamedTensors Optimizer::heldState() const {
  NamedTensors out;
  for (size_t i = 0; i < params_.size(); ++i)
    for (const auto &[stateName, tensor] : state_[i])
      out.emplace_back(params_[i].first + "." + stateName, tensor);
  return out;
}

NamedTensors Optimizer::state() const {
  if (!sharded())
    return heldState();
  if (consolidated_.empty() && !stateNames_.empty())
    throw Error("optimizer: its state is sharded over the processes (ZeRO "
                "stage 1); every process calls consolidate_state() first");
  return consolidated_;
}

void Optimizer::consolidate_state(int to) {
  if (!sharded())
    return;
  NoGradGuard noGrad;
  NamedTensors gathered;
  for (size_t i = 0; i < params_.size(); ++i)
    for (const std::string &stateName : stateNames_) {
      // The others' operand gives the shape alone: the parameter's.
      const Tensor &sent = owns(i) ? state_of(i, stateName) : params_[i].second;
      gathered.emplace_back(params_[i].first + "." + stateName,
                            broadcast(sent, owner_[i]));
    }
  kiln::step(); // every process's exchanges run now, kept or not
  if (rank_ == to)
    consolidated_ = std::move(gathered);
}

void Optimizer::check_state(
    const std::map<std::string, HostTensor> &state) const {
  // Every parameter's state, held here or not: each state tensor has its
  // parameter's shape and dtype.
  NamedTensors expected;
  for (size_t i = 0; i < params_.size(); ++i)
    for (const std::string &stateName : stateNames_)
      expected.emplace_back(params_[i].first + "." + stateName,
                            params_[i].second);
  for (const auto &[name, tensor] : expected) {
    auto it = state.find(name);
    if (it == state.end())
      throw Error("optimizer state: missing '" + name + "'");
    if (it->second.shape() != tensor.shape())
      throw Error("optimizer state: '" + name + "' is " +
                  it->second.typeString() + ", expected the shape of " +
                  tensor.str());
  }
  if (state.size() != expected.size())
    for (const auto &entry : state) {
      bool known = false;
      for (const auto &e : expected)
        known = known || e.first == entry.first;
      if (!known)
        throw Error("optimizer state: unexpected '" + entry.first + "'");
    }
}

void Optimizer::load_state(const std::map<std::string, HostTensor> &state,
                           int64_t stepCount) {
  check_state(state);
  NoGradGuard noGrad;
  for (auto &[name, tensor] : heldState()) {
    const HostTensor &host = state.at(name);
    HostTensor value(tensor.dtype(), host.shape());
    for (int64_t j = 0; j < value.numElements(); ++j)
      value.setDouble(j, host.getDouble(j));
    Tensor(tensor).assign_(Tensor::from_host(std::move(value)));
  }
  steps_ = stepCount;
}

//===--- SGD --------------------------------------------------------------===//

SGD::SGD(NamedTensors params, const Options &options)
    : Optimizer(std::move(params), options.lr, options.sharding),
      options_(options) {
  if (!(options.momentum >= 0) || !(options.weight_decay >= 0))
    throw Error("SGD: momentum and weight_decay must be >= 0, got " +
                std::to_string(options.momentum) + " and " +
                std::to_string(options.weight_decay));
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    throw Error("SGD: nesterov needs momentum > 0 and dampening 0");
  if (options.momentum != 0)
    add_state("momentum_buffer");
}

void SGD::update(size_t i, const Tensor &grad, const Tensor &lr,
                 const Tensor &step) {
  Tensor p = params()[i].second;
  const DType dt = p.dtype();
  Tensor g = grad.to(dt);
  if (options_.weight_decay != 0 && !options_.no_decay.count(params()[i].first))
    g = g + p * options_.weight_decay;
  if (options_.momentum != 0) {
    Tensor &buf = state_of(i, "momentum_buffer");
    Tensor next;
    if (options_.dampening == 0) {
      // buf starts at zero, so the first step gives buf = g as PyTorch's
      // "buf = clone(g)" does, without a first-step special case.
      next = buf * options_.momentum + g;
    } else {
      Tensor first = step.eq(constant(1.0));
      next = where(first, g,
                   buf * options_.momentum + g * (1 - options_.dampening));
    }
    buf.assign_(next);
    g = options_.nesterov ? g + next * options_.momentum : next;
  }
  p.assign_(p - lr.to(dt) * g);
}

//===--- AdamW ------------------------------------------------------------===//

AdamW::AdamW(NamedTensors params, const Options &options)
    : Optimizer(std::move(params), options.lr, options.sharding),
      options_(options) {
  if (!(options.beta1 >= 0 && options.beta1 < 1) ||
      !(options.beta2 >= 0 && options.beta2 < 1))
    throw Error("AdamW: betas must be in [0, 1), got " +
                std::to_string(options.beta1) + " and " +
                std::to_string(options.beta2));
  if (!(options.eps >= 0))
    throw Error("AdamW: eps must be >= 0, got " + std::to_string(options.eps));
  if (!(options.weight_decay >= 0))
    throw Error("AdamW: weight_decay must be >= 0, got " +
                std::to_string(options.weight_decay));
  add_state("exp_avg");
  add_state("exp_avg_sq");
}

const AdamW::StepScalars &AdamW::stepScalars(DType dt, const Tensor &lr,
                                             const Tensor &step) {
  for (const StepScalars &made : stepScalars_)
    if (made.dtype == dt)
      return made;
  // Step-dependent scalars in f64 from the step input (PyTorch computes them
  // in double on the host). β^t is exp(t log β) with log β folded on the
  // host: exact to f64 rounding, and exp is cheaper than a general pow on
  // every backend.
  auto correction = [&](double beta) { // 1 - β^t
    return beta == 0 ? constant(1.0) : 1.0 - (step * std::log(beta)).exp();
  };
  StepScalars made{dt, (lr / correction(options_.beta1)).to(dt),
                   correction(options_.beta2).sqrt().to(dt), Tensor()};
  if (options_.weight_decay != 0)
    made.decayFactor = (1.0 - lr * options_.weight_decay).to(dt);
  return stepScalars_.emplace_back(std::move(made));
}

void AdamW::update(size_t i, const Tensor &grad, const Tensor &lr,
                   const Tensor &step) {
  Tensor p = params()[i].second;
  const DType dt = p.dtype();
  const double b1 = options_.beta1, b2 = options_.beta2;
  Tensor g = grad.to(dt);
  const StepScalars &k = stepScalars(dt, lr, step);

  Tensor &m = state_of(i, "exp_avg");
  Tensor &v = state_of(i, "exp_avg_sq");
  Tensor m1 = m + (g - m) * (1 - b1); // lerp, as PyTorch
  Tensor v1 = v * b2 + g * g * (1 - b2);
  Tensor decayed = p;
  if (options_.weight_decay != 0 && !options_.no_decay.count(params()[i].first))
    decayed = p * k.decayFactor;
  Tensor denom = v1.sqrt() / k.bc2Sqrt + options_.eps;
  m.assign_(m1);
  v.assign_(v1);
  p.assign_(decayed - k.stepSize * (m1 / denom));
}

std::set<std::string> bias_and_norm_names(Module &model) {
  std::set<std::string> names;
  for (const auto &[name, tensor] : model.named_parameters())
    if (name == "bias" ||
        (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0))
      names.insert(name);
  for (const auto &[name, module] : model.named_modules())
    if (dynamic_cast<LayerNorm *>(module) || dynamic_cast<RMSNorm *>(module))
      names.insert(name + ".weight");
  return names;
}

//===--- Clipping ---------------------------------------------------------===//

void average_gradients(const NamedTensors &params) {
  if (world_size() == 1)
    return;
  NoGradGuard noGrad;
  // In reverse, as DistributedDataParallel's buckets: the order backward
  // makes the gradients in, so the step can sum each as soon as it exists
  // (the sums run in the order they are recorded).
  for (auto entry = params.rbegin(); entry != params.rend(); ++entry) {
    Tensor p = entry->second;
    if (p.grad().defined())
      p.set_grad(averagedOverProcesses(p.grad()));
  }
}

namespace {

/// The sum of g's squared elements, in `type`.
Tensor squaredNorm(const Tensor &g, DType type) {
  Tensor wide = g.to(type);
  return (wide * wide).sum();
}

/// clip_grad_norm_'s scaling of the gradients of `params` by max_norm /
/// (norm + 1e-6), clamped to 1.
void scaleByNorm(const std::vector<Tensor> &params, const Tensor &norm,
                 double max_norm) {
  Tensor coef = (max_norm / (norm + 1e-6)).clamp(0.0, 1.0);
  for (Tensor p : params)
    if (p.grad().defined())
      p.set_grad(p.grad() * coef.to(p.grad().dtype()));
}

} // namespace

Tensor clip_grad_norm_(const std::vector<Tensor> &params, double max_norm) {
  NoGradGuard noGrad;
  Tensor sumSq;
  DType dt = DType::f32;
  for (const Tensor &p : params)
    if (p.grad().defined()) {
      // Every square in the first gradient's wide type.
      if (!sumSq.defined())
        dt = wideType(p.grad().dtype());
      Tensor s = squaredNorm(p.grad(), dt);
      sumSq = sumSq.defined() ? sumSq + s : s;
    }
  if (!sumSq.defined())
    return Tensor::scalar(0.0);
  Tensor norm = sumSq.sqrt();
  if (std::isfinite(max_norm))
    scaleByNorm(params, norm, max_norm);
  return norm;
}

Tensor clip_grad_norm_(Optimizer &optimizer, double max_norm) {
  std::vector<Tensor> params;
  for (const auto &entry : optimizer.params())
    params.push_back(entry.second);
  if (!optimizer.shards_gradients())
    return clip_grad_norm_(params, max_norm);
  NoGradGuard noGrad;
  // One slot per parameter with a gradient: its owner's squared norm,
  // zeros elsewhere. After the sum over the processes every process adds
  // the slots in parameter order, as the replicated clip_grad_norm_ adds
  // the squares (x + 0 is x: the same norm, bit for bit).
  std::vector<Tensor> shares;
  DType dt = DType::f32;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!optimizer.has_gradient(i))
      continue;
    if (shares.empty()) // a gradient has its parameter's type
      dt = wideType(params[i].dtype());
    shares.push_back(params[i].grad().defined()
                         ? squaredNorm(params[i].grad(), dt).reshape({1})
                         : Tensor::full({1}, 0, dt));
  }
  if (shares.empty())
    return Tensor::scalar(0.0);
  Tensor gathered = all_reduce(cat(shares, 0));
  Tensor sumSq;
  for (int64_t i = 0; i < int64_t(shares.size()); ++i) {
    Tensor s = gathered.slice(0, i, i + 1).reshape({});
    sumSq = sumSq.defined() ? sumSq + s : s;
  }
  Tensor norm = sumSq.sqrt();
  if (std::isfinite(max_norm))
    scaleByNorm(params, norm, max_norm);
  return norm;
}

//===--- Schedules --------------------------------------------------------===//

namespace {
double warmupFactor(int64_t step, int64_t warmup) {
  return static_cast<double>(step) /
         static_cast<double>(std::max<int64_t>(1, warmup));
}

/// How far past the warmup `step` is, as a fraction of the decay's steps.
double decayProgress(int64_t step, int64_t warmup, int64_t total) {
  return static_cast<double>(step - warmup) /
         static_cast<double>(std::max<int64_t>(1, total - warmup));
}
} // namespace

LRLambda constant_schedule() {
  return [](int64_t) { return 1.0; };
}

LRLambda constant_schedule_with_warmup(int64_t warmup) {
  return [warmup](int64_t step) {
    return step < warmup ? warmupFactor(step, warmup) : 1.0;
  };
}

LRLambda linear_schedule_with_warmup(int64_t warmup, int64_t total) {
  return [warmup, total](int64_t step) {
    if (step < warmup)
      return warmupFactor(step, warmup);
    return std::max(
        0.0, static_cast<double>(total - step) /
                 static_cast<double>(std::max<int64_t>(1, total - warmup)));
  };
}

LRLambda cosine_schedule_with_warmup(int64_t warmup, int64_t total,
                                     double numCycles) {
  return [warmup, total, numCycles](int64_t step) {
    if (step < warmup)
      return warmupFactor(step, warmup);
    double progress = decayProgress(step, warmup, total);
    return std::max(0.0,
                    0.5 * (1.0 + std::cos(M_PI * numCycles * 2.0 * progress)));
  };
}

LRLambda cosine_with_min_lr_schedule_with_warmup(int64_t warmup, int64_t total,
                                                 double numCycles,
                                                 double minLrRate) {
  // The cosine's factor is never negative (1 + cos >= 0), so its clamp at
  // 0 does not change it before the minimum is added.
  LRLambda cosine = cosine_schedule_with_warmup(warmup, total, numCycles);
  return [warmup, cosine, minLrRate](int64_t step) {
    if (step < warmup)
      return cosine(step);
    return std::max(0.0, cosine(step) * (1 - minLrRate) + minLrRate);
  };
}

LRLambda cosine_with_hard_restarts_schedule_with_warmup(int64_t warmup,
                                                        int64_t total,
                                                        double numCycles) {
  return [warmup, total, numCycles](int64_t step) {
    if (step < warmup)
      return warmupFactor(step, warmup);
    double progress = decayProgress(step, warmup, total);
    if (progress >= 1.0)
      return 0.0;
    return std::max(
        0.0,
        0.5 * (1.0 + std::cos(M_PI * std::fmod(numCycles * progress, 1.0))));
  };
}

LRLambda polynomial_decay_schedule_with_warmup(int64_t warmup, int64_t total,
                                               double baseLr, double lrEnd,
                                               double power) {
  if (!(baseLr > lrEnd))
    throw Error("polynomial schedule: lr_end (" + std::to_string(lrEnd) +
                ") must be smaller than the learning rate (" +
                std::to_string(baseLr) + ")");
  return [=](int64_t step) {
    if (step < warmup)
      return warmupFactor(step, warmup);
    if (step > total)
      return lrEnd / baseLr;
    double remaining = 1.0 - decayProgress(step, warmup, total);
    return ((baseLr - lrEnd) * std::pow(remaining, power) + lrEnd) / baseLr;
  };
}

LRLambda inverse_sqrt_schedule(int64_t warmup, double timescale) {
  if (!(timescale > 0))
    throw Error("inverse_sqrt schedule: the timescale must be positive");
  return [warmup, timescale](int64_t step) {
    if (step < warmup)
      return warmupFactor(step, warmup);
    double shift = timescale - static_cast<double>(warmup);
    return 1.0 / std::sqrt((static_cast<double>(step) + shift) / timescale);
  };
}

LambdaLR::LambdaLR(Optimizer &optimizer, LRLambda lambda)
    : optimizer_(optimizer), lambda_(std::move(lambda)), base_(optimizer.lr()) {
  optimizer_.set_lr(base_ * lambda_(0));
}

void LambdaLR::step() { set_step(step_ + 1); }

void LambdaLR::set_step(int64_t step) {
  step_ = step;
  optimizer_.set_lr(base_ * lambda_(step_));
}

} // namespace kiln::nn
