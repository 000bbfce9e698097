// kiln-train's learning-rate schedules (see Schedule.h).
#include "examples/Schedule.h"

#include "examples/TrainData.h"

#include "support/JsonNesting.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

namespace kiln::train {

namespace {

/// Each schedule transformers' get_scheduler knows and kiln builds, with
/// the keyword arguments its function takes.
const std::map<std::string, std::set<std::string>> &scheduleArguments() {
  static const std::map<std::string, std::set<std::string>> arguments = {
      {"linear", {}},
      {"cosine", {"num_cycles"}},
      {"cosine_with_restarts", {"num_cycles"}},
      {"polynomial", {"lr_end", "power"}},
      {"constant", {}},
      {"constant_with_warmup", {}},
      {"inverse_sqrt", {"timescale"}},
      {"cosine_with_min_lr", {"num_cycles", "min_lr", "min_lr_rate"}},
  };
  return arguments;
}

/// "a, b, c".
template <typename Names> std::string joined(const Names &names) {
  std::string out;
  for (const auto &name : names)
    out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

/// kwargs[key], else `fallback`.
double argument(const TrainArgs &a, const std::string &key, double fallback) {
  auto it = a.lrSchedulerKwargs.find(key);
  return it == a.lrSchedulerKwargs.end() ? fallback : it->second;
}

/// cosine_with_min_lr's floor over the learning rate: min_lr_rate, or
/// min_lr over the learning rate.
double minLrRate(const TrainArgs &a) {
  auto rate = a.lrSchedulerKwargs.find("min_lr_rate");
  if (rate != a.lrSchedulerKwargs.end())
    return rate->second;
  return a.lrSchedulerKwargs.at("min_lr") / a.learningRate;
}

/// --warmup_steps, else --warmup_ratio of the total, rounded up (the
/// Trainer's get_warmup_steps).
int64_t warmupSteps(const TrainArgs &a, int64_t totalSteps) {
  if (a.warmupSteps > 0)
    return a.warmupSteps;
  return int64_t(std::ceil(a.warmupRatio * double(totalSteps)));
}

} // namespace

std::string parseScheduleKwargs(const std::string &json,
                                std::map<std::string, double> &out) {
  if (std::optional<std::string> deep = jsonNestedTooDeeply(json))
    return "--lr_scheduler_kwargs is not JSON: " + *deep;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return "--lr_scheduler_kwargs is not JSON: " +
           llvm::toString(parsed.takeError());
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return "--lr_scheduler_kwargs must be a JSON object, such as "
           "'{\"num_cycles\": 2}'";
  for (const auto &[key, value] : *object) {
    std::optional<double> n = value.getAsNumber();
    if (!n || !std::isfinite(*n))
      return "--lr_scheduler_kwargs: '" + key.str() + "' must be a number";
    out[key.str()] = *n;
  }
  return "";
}

std::string checkSchedule(const TrainArgs &a) {
  const auto &known = scheduleArguments();
  auto it = known.find(a.lrSchedulerType);
  if (it == known.end()) {
    std::vector<std::string> names;
    for (const auto &entry : known)
      names.push_back(entry.first);
    return "unknown --lr_scheduler_type '" + a.lrSchedulerType +
           "'; expected one of " + joined(names) +
           " (reduce_lr_on_plateau and warmup_stable_decay are not built)";
  }
  for (const auto &[key, value] : a.lrSchedulerKwargs)
    if (!it->second.count(key))
      return "--lr_scheduler_kwargs: the " + a.lrSchedulerType +
             " schedule takes no '" + key + "'" +
             (it->second.empty() ? std::string(" (it takes none)")
                                 : " (it takes " + joined(it->second) + ")");
  if (argument(a, "num_cycles", 1) <= 0)
    return "--lr_scheduler_kwargs: num_cycles must be positive";
  if (a.lrSchedulerType == "polynomial") {
    double end = argument(a, "lr_end", 1e-7);
    if (!(a.learningRate > end))
      return "--lr_scheduler_type polynomial decays to lr_end (" + number(end) +
             "), which must be below --learning_rate (" +
             number(a.learningRate) + ")";
    if (argument(a, "power", 1) < 0)
      return "--lr_scheduler_kwargs: power must not be negative";
  }
  if (a.lrSchedulerType == "inverse_sqrt" && argument(a, "timescale", 1) <= 0)
    return "--lr_scheduler_kwargs: timescale must be positive";
  if (a.lrSchedulerType == "cosine_with_min_lr") {
    bool rate = a.lrSchedulerKwargs.count("min_lr_rate");
    bool lr = a.lrSchedulerKwargs.count("min_lr");
    if (rate == lr)
      return "--lr_scheduler_type cosine_with_min_lr needs one of min_lr "
             "and min_lr_rate in --lr_scheduler_kwargs";
    if (lr && !(a.learningRate > 0))
      return "--lr_scheduler_kwargs: min_lr needs a positive "
             "--learning_rate (use min_lr_rate)";
  }
  return "";
}

nn::LRLambda makeSchedule(const TrainArgs &a, int64_t totalSteps) {
  int64_t warmup = warmupSteps(a, totalSteps);
  // A DeepSpeed config's scheduler replaces the Trainer's, as under the
  // Trainer; its "auto" steps are the Trainer's.
  if (a.deepSpeed && a.deepSpeed->schedule) {
    absl::StatusOr<nn::LRLambda> rates = deepSpeedLearningRates(
        *a.deepSpeed->schedule, a.learningRate, warmup, totalSteps);
    if (!rates.ok())
      throw Failure{"--deepspeed " + a.deepSpeedFile + ": " +
                        std::string(rates.status().message()),
                    2};
    return *rates;
  }
  const std::string &type = a.lrSchedulerType;
  if (type == "cosine")
    return nn::cosine_schedule_with_warmup(warmup, totalSteps,
                                           argument(a, "num_cycles", 0.5));
  if (type == "cosine_with_restarts")
    return nn::cosine_with_hard_restarts_schedule_with_warmup(
        warmup, totalSteps, argument(a, "num_cycles", 1));
  if (type == "polynomial")
    return nn::polynomial_decay_schedule_with_warmup(
        warmup, totalSteps, a.learningRate, argument(a, "lr_end", 1e-7),
        argument(a, "power", 1));
  if (type == "inverse_sqrt")
    return nn::inverse_sqrt_schedule(
        warmup, argument(a, "timescale", warmup ? double(warmup) : 10000.0));
  if (type == "cosine_with_min_lr")
    return nn::cosine_with_min_lr_schedule_with_warmup(
        warmup, totalSteps, argument(a, "num_cycles", 0.5), minLrRate(a));
  if (type == "constant")
    return nn::constant_schedule();
  if (type == "constant_with_warmup")
    return nn::constant_schedule_with_warmup(warmup);
  return nn::linear_schedule_with_warmup(warmup, totalSteps);
}

} // namespace kiln::train
