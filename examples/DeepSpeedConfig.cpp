// Reads a DeepSpeed config as the Trainer does, and the Trainer's --fsdp
// options as a ZeRO stage; see DeepSpeedConfig.h.
#include "examples/DeepSpeedConfig.h"

#include "examples/TrainerLog.h"
#include "frontends/nn/JsonText.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

namespace kiln::train {
namespace {

using llvm::json::Object;
using llvm::json::Value;

std::string shown(const Value &value) {
  std::string out;
  llvm::raw_string_ostream(out) << value;
  return out;
}

bool isAuto(const Value &value) {
  std::optional<llvm::StringRef> text = value.getAsString();
  return text && *text == "auto";
}

/// An object's keys in order, so that the first problem reported does not
/// depend on the hash table's; "type" first, so that an optimizer or
/// scheduler kiln does not build is named before its parameters are.
std::vector<std::string> sortedKeys(const Object &object) {
  std::vector<std::string> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first.str());
  std::sort(
      keys.begin(), keys.end(), [](const std::string &a, const std::string &b) {
        return std::make_pair(a != "type", a) < std::make_pair(b != "type", b);
      });
  return keys;
}

/// Settings that tune DeepSpeed's communication, memory or reports and
/// leave what a step computes as it is.
const std::set<std::string> &topLevelTuning() {
  static const std::set<std::string> keys = {"steps_per_print",
                                             "wall_clock_breakdown",
                                             "memory_breakdown",
                                             "dump_state",
                                             "zero_allow_untested_optimizer",
                                             "zero_force_ds_cpu_optimizer",
                                             "flops_profiler",
                                             "tensorboard",
                                             "wandb",
                                             "csv_monitor",
                                             "comet",
                                             "comms_logger",
                                             "checkpoint",
                                             "activation_checkpointing",
                                             "aio"};
  return keys;
}

const std::set<std::string> &zeroTuning() {
  static const std::set<std::string> keys = {
      "overlap_comm",           "contiguous_gradients",
      "reduce_bucket_size",     "allgather_bucket_size",
      "allgather_partitions",   "reduce_scatter",
      "round_robin_gradients",  "use_multi_rank_bucket_allreduce",
      "sub_group_size",         "ignore_unused_parameters",
      "load_from_fp32_weights", "elastic_checkpoint",
      "offload_optimizer",      "offload_param"};
  return keys;
}

/// Settings whose other values change the step, each with the one value
/// kiln-train runs (its default) and what kiln does instead.
struct Fixed {
  Value value;
  const char *why;
};
const std::map<std::string, Fixed> &fixedSettings() {
  static const std::map<std::string, Fixed> settings = [] {
    std::map<std::string, Fixed> s;
    const char *f32Average =
        "kiln averages the gradients over the processes in f32, after the "
        "sum";
    s.emplace("prescale_gradients", Fixed{false, f32Average});
    s.emplace("gradient_predivide_factor", Fixed{1.0, f32Average});
    s.emplace("communication_data_type", Fixed{"fp32", f32Average});
    s.emplace("sparse_gradients", Fixed{false, "gradients are dense"});
    s.emplace("zero_optimization.cpu_offload",
              Fixed{false, "the optimizer's state stays with the parameters"});
    s.emplace("zero_optimization.zero_hpz_partition_size",
              Fixed{1, "parameters are not sharded"});
    for (const char *key :
         {"zero_quantized_weights", "zero_quantized_gradients",
          "zero_quantized_nontrainable_weights"})
      s.emplace(std::string("zero_optimization.") + key,
                Fixed{false, "nothing is quantized"});
    s.emplace("fp16.fp16_master_weights_and_grads",
              Fixed{false, "master weights and gradients are f32"});
    for (const char *section : {"bf16", "bfloat16"}) // the same section
      s.emplace(std::string(section) + ".immediate_grad_update",
                Fixed{false, "gradients are f32 and summed in the step"});
    s.emplace("optimizer.params.adam_w_mode",
              Fixed{true, "kiln's optimizer is AdamW (decoupled decay)"});
    s.emplace("optimizer.params.bias_correction",
              Fixed{true, "kiln's AdamW corrects its moments' bias"});
    s.emplace("optimizer.params.amsgrad",
              Fixed{false, "kiln's AdamW is not AMSGrad"});
    s.emplace("scheduler.params.last_batch_iteration",
              Fixed{-1, "the schedule starts with the run (a resumed run "
                        "takes its step from the checkpoint)"});
    return s;
  }();
  return settings;
}

/// Reads one config; each method returns the first problem, or OK.
class Reader {
public:
  explicit Reader(DeepSpeedConfig &out) : out_(out) {}

  absl::Status read(const Object &top) {
    // transformers fills only what the config has: a key left out takes
    // DeepSpeed's default (FusedAdam's for the optimizer).
    if (!top.get("gradient_clipping"))
      out_.leftOut.push_back("gradient_clipping (DeepSpeed's 0: no clipping)");
    if (const Object *optimizer = top.getObject("optimizer")) {
      const Object *params = optimizer->getObject("params");
      for (const auto &[key, value] :
           std::vector<std::pair<const char *, const char *>>{
               {"lr", "0.001"},
               {"betas", "[0.9, 0.999]"},
               {"eps", "1e-08"},
               {"weight_decay", "0"}})
        if (!params || !params->get(key))
          out_.leftOut.push_back(std::string("optimizer.params.") + key +
                                 " (DeepSpeed's " + value + ")");
    }
    for (const std::string &key : sortedKeys(top)) {
      const Value &value = *top.get(key);
      absl::Status status = absl::OkStatus();
      if (fixedSettings().count(key))
        status = checkFixed(value, key);
      else if (key == "zero_optimization")
        status = readZero(value);
      else if (key == "fp16")
        status = readFp16(value);
      else if (key == "bf16" || key == "bfloat16")
        status =
            readSection(value, key, [&](const std::string &k, const Value &v) {
              return k == "enabled" ? flag(v, key + ".enabled", "bf16", true)
                                    : unknown(key + "." + k);
            });
      else if (key == "amp")
        status = readAmp(value);
      else if (key == "optimizer")
        status = readOptimizer(value);
      else if (key == "scheduler")
        status = readScheduler(value);
      else if (key == "train_micro_batch_size_per_gpu")
        status = number(value, key, "per_device_train_batch_size", true);
      else if (key == "gradient_accumulation_steps")
        status = number(value, key, "gradient_accumulation_steps", true);
      else if (key == "train_batch_size")
        status = number(value, key, "train_batch_size", true);
      else if (key == "gradient_clipping")
        status = number(value, key, "max_grad_norm", false);
      else if (topLevelTuning().count(key))
        out_.notActedOn.push_back(key);
      else
        status = unknown(key);
      if (!status.ok())
        return status;
    }
    return absl::OkStatus();
  }

private:
  using Entry = std::function<absl::Status(const std::string &, const Value &)>;

  static absl::Status fail(const std::string &message) {
    return absl::InvalidArgumentError(message);
  }

  /// Each key of the object `value` (named `where`) through `entry`, a
  /// setting of fixedSettings() checked first.
  absl::Status readSection(const Value &value, const std::string &where,
                           const Entry &entry) {
    const Object *object = value.getAsObject();
    if (!object)
      return fail(where + " must be an object");
    for (const std::string &key : sortedKeys(*object)) {
      const Value &member = *object->get(key);
      auto fixed = fixedSettings().find(where + "." + key);
      absl::Status status = fixed != fixedSettings().end()
                                ? checkFixed(member, fixed->first)
                                : entry(key, member);
      if (!status.ok())
        return status;
    }
    return absl::OkStatus();
  }

  absl::Status checkFixed(const Value &value, const std::string &key) {
    const Fixed &fixed = fixedSettings().at(key);
    if (value == fixed.value || value.kind() == Value::Null)
      return absl::OkStatus();
    // 1 and 1.0 are one value.
    if (value.getAsNumber() && fixed.value.getAsNumber() &&
        *value.getAsNumber() == *fixed.value.getAsNumber())
      return absl::OkStatus();
    return fail(key + " = " + shown(value) + " is not built: " + fixed.why +
                " (leave it out, or " + shown(fixed.value) + ")");
  }

  static absl::Status unknown(const std::string &key) {
    return fail("kiln-train does not know \"" + key +
                "\"; it reads the settings of the Trainer's example configs "
                "(docs/DATA-PARALLEL.md lists them), and refuses others "
                "rather than ignore them");
  }

  /// A number (an integer when `integer`) or "auto" for `flag`'s value.
  absl::Status number(const Value &value, const std::string &key,
                      const std::string &flagName, bool integer) {
    if (isAuto(value))
      return absl::OkStatus();
    std::optional<double> n = value.getAsNumber();
    if (!n || !std::isfinite(*n) || (integer && *n != std::floor(*n)))
      return fail(key + " must be " + (integer ? "an integer" : "a number") +
                  " or \"auto\", got " + shown(value));
    out_.given.push_back({key, flagName, *n, false, integer});
    return absl::OkStatus();
  }

  /// true, false or "auto" for the boolean flag `flagName`.
  absl::Status flag(const Value &value, const std::string &key,
                    const std::string &flagName, bool compared) {
    if (isAuto(value))
      return absl::OkStatus();
    std::optional<bool> b = value.getAsBoolean();
    if (!b)
      return fail(key + " must be true, false or \"auto\", got " +
                  shown(value));
    if (compared)
      out_.given.push_back({key, flagName, *b ? 1.0 : 0.0, true, false});
    return absl::OkStatus();
  }

  absl::Status readZero(const Value &value) {
    return readSection(
        value, "zero_optimization",
        [&](const std::string &key, const Value &v) {
          if (key == "stage") {
            std::optional<int64_t> stage = v.getAsInteger();
            if (!stage || *stage < 0 || *stage > 3)
              return fail("zero_optimization.stage must be 0, 1, 2 or 3");
            if (*stage == 3)
              return fail(
                  "ZeRO stage 3 (sharded parameters) is not built; stage "
                  "2 shards the optimizer's state and the gradients, "
                  "stage 1 the state alone, stage 0 nothing");
            out_.zeroStage = int(*stage);
            return absl::OkStatus();
          }
          if (zeroTuning().count(key) || absl::StartsWith(key, "stage3_")) {
            out_.notActedOn.push_back("zero_optimization." + key);
            return absl::OkStatus();
          }
          return unknown("zero_optimization." + key);
        });
  }

  /// fp16: "enabled" against --fp16, and the loss scaling. As DeepSpeed's
  /// get_dynamic_loss_scale_args: any of the five settings given, the
  /// others take DeepSpeed's defaults (2^16, 1000, hysteresis 2, 1);
  /// none given, ZeRO's DynamicLossScaler defaults (2^32, hysteresis 1).
  absl::Status readFp16(const Value &value) {
    std::optional<int64_t> power, window, hysteresis;
    std::optional<bool> consecutive;
    std::optional<double> minScale;
    auto integer = [&](const std::string &key, const Value &v, int64_t low,
                       int64_t high, std::optional<int64_t> &into) {
      std::optional<int64_t> n = v.getAsInteger();
      if (!n || *n < low || *n > high)
        return fail("fp16." + key + " must be an integer in [" +
                    std::to_string(low) + ", " + std::to_string(high) +
                    "], got " + shown(v));
      into = *n;
      return absl::OkStatus();
    };
    absl::Status status =
        readSection(value, "fp16", [&](const std::string &key, const Value &v) {
          if (key == "enabled")
            return flag(v, "fp16.enabled", "fp16", true);
          if (key == "auto_cast") { // --fp16 is kiln's own mixed precision
            out_.notActedOn.push_back("fp16.auto_cast");
            return absl::OkStatus();
          }
          if (key == "loss_scale") {
            std::optional<double> n = v.getAsNumber();
            if (n && *n == 0)
              return absl::OkStatus();
            if (!n || !(*n > 0))
              return fail("fp16.loss_scale must be 0 (dynamic scaling), got " +
                          shown(v));
            return fail("fp16.loss_scale = " + shown(v) +
                        ": a static loss scale is not built; 0 scales "
                        "dynamically");
          }
          if (key == "initial_scale_power")
            return integer(key, v, 0, 64, power);
          // The scaler counts clean steps in f32: exact up to 2^24.
          if (key == "loss_scale_window")
            return integer(key, v, 1, int64_t(1) << 24, window);
          if (key == "hysteresis")
            return integer(key, v, 1, int64_t(1) << 20, hysteresis);
          if (key == "consecutive_hysteresis") {
            consecutive = v.getAsBoolean();
            return consecutive ? absl::OkStatus()
                               : fail("fp16.consecutive_hysteresis must be "
                                      "true or false");
          }
          if (key == "min_loss_scale") {
            minScale = v.getAsNumber();
            // The scale is an f32.
            if (!minScale || !(*minScale > 0) ||
                !(*minScale <= std::numeric_limits<float>::max()))
              return fail("fp16.min_loss_scale must be a positive f32 "
                          "number, got " +
                          shown(v));
            return absl::OkStatus();
          }
          return unknown("fp16." + key);
        });
    if (!status.ok())
      return status;
    DeepSpeedLossScaling scaling;
    const bool tuned = power || window || hysteresis || consecutive || minScale;
    scaling.initScale = std::ldexp(1.0, int(power.value_or(tuned ? 16 : 32)));
    scaling.window = window.value_or(1000);
    scaling.hysteresis = hysteresis.value_or(tuned ? 2 : 1);
    scaling.consecutiveHysteresis = consecutive.value_or(false);
    scaling.minScale = minScale.value_or(1);
    out_.lossScaling = scaling;
    return absl::OkStatus();
  }

  /// apex's amp: only disabled (the Trainer fills "auto" with false unless
  /// --fp16_backend apex).
  absl::Status readAmp(const Value &value) {
    const Object *object = value.getAsObject();
    if (!object)
      return fail("amp must be an object");
    if (const Value *enabled = object->get("enabled"))
      if (!isAuto(*enabled) && *enabled != Value(false))
        return fail("amp.enabled = " + shown(*enabled) +
                    ": apex's amp is not built; --fp16 and --bf16 are "
                    "kiln's mixed precision");
    return absl::OkStatus();
  }

  absl::Status readOptimizer(const Value &value) {
    return readSection(
        value, "optimizer", [&](const std::string &key, const Value &v) {
          if (key == "type") {
            std::optional<llvm::StringRef> type = v.getAsString();
            std::string lower = type ? absl::AsciiStrToLower(type->str()) : "";
            // DeepSpeed's "Adam" is AdamW unless adam_w_mode is false.
            if (lower == "adamw" || lower == "adam")
              return absl::OkStatus();
            return fail("optimizer.type = " + shown(v) +
                        ": kiln-train's optimizer is AdamW (\"AdamW\", or "
                        "\"Adam\" in its default adam_w_mode)");
          }
          if (key == "params")
            return readOptimizerParams(v);
          return unknown("optimizer." + key);
        });
  }

  absl::Status readOptimizerParams(const Value &value) {
    return readSection(
        value, "optimizer.params", [&](const std::string &key, const Value &v) {
          const std::string where = "optimizer.params." + key;
          if (key == "lr")
            return number(v, where, "learning_rate", false);
          if (key == "eps")
            return number(v, where, "adam_epsilon", false);
          if (key == "weight_decay")
            return number(v, where, "weight_decay", false);
          if (key == "torch_adam") { // which kernel runs AdamW
            out_.notActedOn.push_back(where);
            return absl::OkStatus();
          }
          if (key == "betas") {
            if (isAuto(v))
              return absl::OkStatus();
            const llvm::json::Array *betas = v.getAsArray();
            if (!betas || betas->size() != 2)
              return fail(where + " must be two numbers or \"auto\", got " +
                          shown(v));
            for (size_t i = 0; i < 2; ++i)
              if (isAuto((*betas)[i])) // the Trainer fills the pair alone
                return fail(where + " must be two numbers or \"auto\", got " +
                            shown(v));
              else if (absl::Status s = number(
                           (*betas)[i], where + "[" + std::to_string(i) + "]",
                           i ? "adam_beta2" : "adam_beta1", false);
                       !s.ok())
                return s;
            return absl::OkStatus();
          }
          return unknown(where);
        });
  }

  absl::Status readScheduler(const Value &value) {
    DeepSpeedSchedule schedule;
    // DeepSpeed's defaults for what the config leaves out (a key left out
    // is neither filled by the Trainer nor checked).
    schedule.minLr = 0, schedule.maxLr = 0.001, schedule.warmupSteps = 1000;
    bool typed = false, hasTotal = false, totalAuto = false;
    std::optional<int64_t> total;
    absl::Status status = readSection(
        value, "scheduler", [&](const std::string &key, const Value &v) {
          if (key == "type") {
            std::optional<llvm::StringRef> type = v.getAsString();
            if (type && (*type == "WarmupLR" || *type == "WarmupDecayLR")) {
              schedule.decay = *type == "WarmupDecayLR";
              typed = true;
              return absl::OkStatus();
            }
            return fail("scheduler.type = " + shown(v) +
                        ": kiln-train builds DeepSpeed's WarmupLR and "
                        "WarmupDecayLR; without a scheduler section, "
                        "--lr_scheduler_type chooses the Trainer's (cosine, "
                        "linear, ...)");
          }
          if (key != "params")
            return unknown("scheduler." + key);
          return readSection(
              v, "scheduler.params",
              [&](const std::string &param, const Value &p) {
                const std::string where = "scheduler.params." + param;
                if (param == "warmup_type") {
                  std::optional<llvm::StringRef> type = p.getAsString();
                  if (!type || (*type != "log" && *type != "linear"))
                    return fail(where + " must be \"log\" or \"linear\", got " +
                                shown(p));
                  schedule.logWarmup = *type == "log";
                  return absl::OkStatus();
                }
                if (param == "warmup_min_lr" || param == "warmup_max_lr") {
                  std::optional<double> &into = param == "warmup_min_lr"
                                                    ? schedule.minLr
                                                    : schedule.maxLr;
                  if (isAuto(p)) {
                    into.reset();
                    return absl::OkStatus();
                  }
                  into = p.getAsNumber();
                  if (!into || !std::isfinite(*into) || *into < 0)
                    return fail(where +
                                " must be a non-negative number or "
                                "\"auto\", got " +
                                shown(p));
                  // The maximum is --learning_rate's, as the Trainer checks it.
                  if (param == "warmup_max_lr")
                    out_.given.push_back(
                        {where, "learning_rate", *into, false});
                  return absl::OkStatus();
                }
                if (param == "warmup_num_steps" || param == "total_num_steps") {
                  const bool isTotal = param == "total_num_steps";
                  hasTotal = hasTotal || isTotal;
                  if (isAuto(p)) {
                    if (isTotal)
                      totalAuto = true;
                    else
                      schedule.warmupSteps.reset(),
                          schedule.checkWarmup = false;
                    return absl::OkStatus();
                  }
                  std::optional<int64_t> n = p.getAsInteger();
                  if (!n || *n < 0 || *n > (int64_t(1) << 40))
                    return fail(where +
                                " must be a step count or \"auto\", got " +
                                shown(p));
                  if (isTotal)
                    total = *n;
                  else
                    schedule.warmupSteps = *n, schedule.checkWarmup = true;
                  return absl::OkStatus();
                }
                return unknown(where);
              });
        });
    if (!status.ok())
      return status;
    if (!typed)
      return fail("scheduler needs a \"type\" (WarmupLR or WarmupDecayLR)");
    if (hasTotal && !schedule.decay)
      return fail("scheduler.params.total_num_steps: WarmupLR takes none "
                  "(WarmupDecayLR decays over it)");
    if (schedule.decay && !hasTotal)
      return fail("WarmupDecayLR needs scheduler.params.total_num_steps "
                  "(\"auto\": the run's steps)");
    schedule.totalSteps = totalAuto ? std::nullopt : total;
    out_.schedule = schedule;
    return absl::OkStatus();
  }

  DeepSpeedConfig &out_;
};

} // namespace

absl::StatusOr<DeepSpeedConfig> readDeepSpeedConfig(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return absl::InvalidArgumentError(absl::StrCat(
        "--deepspeed ", path, ": cannot read it: ", file.getError().message()));
  const llvm::StringRef text = (*file)->getBuffer();
  return parseDeepSpeedConfig(std::string_view(text.data(), text.size()), path);
}

absl::StatusOr<DeepSpeedConfig> parseDeepSpeedConfig(std::string_view text,
                                                     std::string_view what) {
  auto fail = [&](const std::string &message) {
    return absl::InvalidArgumentError("--deepspeed " + std::string(what) +
                                      ": " + message);
  };
  absl::StatusOr<Value> config = nn::parseJsonText(text);
  if (!config.ok())
    return fail(std::string(config.status().message()));
  const Object *top = config->getAsObject();
  if (!top)
    return fail("a DeepSpeed config is a JSON object");
  DeepSpeedConfig out;
  if (absl::Status status = Reader(out).read(*top); !status.ok())
    return fail(std::string(status.message()));
  return out;
}

std::string deepSpeedMismatches(const DeepSpeedConfig &config,
                                const std::map<std::string, double> &flags) {
  std::string out;
  // As Python prints the values (the Trainer's message is an f-string).
  auto text = [](double value, const DeepSpeedValue &as) {
    if (as.boolean)
      return std::string(value != 0 ? "True" : "False");
    if (as.integer && value == std::floor(value) && std::abs(value) < 1e18)
      return std::to_string(int64_t(value));
    return pythonFloat(value);
  };
  for (const DeepSpeedValue &given : config.given) {
    auto flag = flags.find(given.flag);
    if (flag == flags.end() || flag->second == given.value)
      continue;
    out += "- ds " + given.key + "=" + text(given.value, given) + " vs hf " +
           given.flag + "=" + text(flag->second, given) + "\n";
  }
  return out;
}

absl::StatusOr<std::function<double(int64_t)>>
deepSpeedLearningRates(const DeepSpeedSchedule &schedule, double baseLr,
                       int64_t warmupSteps, int64_t totalSteps) {
  std::string mismatch;
  if (schedule.checkWarmup && schedule.warmupSteps &&
      *schedule.warmupSteps != warmupSteps)
    mismatch += "- ds scheduler.params.warmup_num_steps=" +
                std::to_string(*schedule.warmupSteps) +
                " vs hf warmup_steps=" + std::to_string(warmupSteps) + "\n";
  if (schedule.decay && schedule.totalSteps &&
      *schedule.totalSteps != totalSteps)
    mismatch +=
        "- ds scheduler.params.total_num_steps=" +
        std::to_string(*schedule.totalSteps) +
        " vs hf num_training_steps (calculated)=" + std::to_string(totalSteps) +
        "\n";
  if (!mismatch.empty())
    return absl::InvalidArgumentError(
        "these values differ from the Trainer's (make them \"auto\"):\n" +
        mismatch);
  const double minLr = schedule.minLr.value_or(0);
  const double maxLr = schedule.maxLr.value_or(baseLr);
  if (!(baseLr > 0) && (minLr != 0 || maxLr != 0))
    return absl::InvalidArgumentError(
        "the scheduler's rates are set over --learning_rate, which must be "
        "positive");
  if (baseLr > 0 && !std::isfinite(std::max(minLr, maxLr) / baseLr))
    return absl::InvalidArgumentError(
        "the scheduler's rates are out of range over --learning_rate");
  // DeepSpeed's WarmupLR clamps the warmup to 2 steps at least.
  const int64_t warmup =
      std::max<int64_t>(2, schedule.warmupSteps.value_or(warmupSteps));
  const int64_t total = schedule.totalSteps.value_or(totalSteps);
  const bool log = schedule.logWarmup, decay = schedule.decay;
  return [=](int64_t step) {
    // DeepSpeed sets the minimum before the first step and advances its
    // iteration (from 0) after each: step s + 1 runs at iteration s - 1.
    const int64_t iteration = step - 1;
    double gamma = 0;
    if (iteration < 0)
      gamma = 0;
    else if (iteration < warmup)
      gamma = log ? std::log(double(iteration + 1)) / std::log(double(warmup))
                  : double(iteration) / double(warmup);
    else if (decay)
      gamma = std::max(0.0, double(total - iteration) /
                                std::max(1.0, double(total - warmup)));
    else
      gamma = 1;
    const double rate = minLr + (maxLr - minLr) * gamma;
    return baseLr > 0 ? rate / baseLr : 0.0;
  };
}

absl::StatusOr<std::optional<int>>
fsdpZeroStage(const std::string &options, std::vector<std::string> &notes) {
  if (options.empty() || options == "False" || options == "false")
    return std::nullopt;
  auto fail = [&](const std::string &message) {
    return absl::InvalidArgumentError("--fsdp " + options + ": " + message);
  };
  std::optional<int> stage;
  std::string strategy;
  for (absl::string_view option :
       absl::StrSplit(options, absl::ByAnyChar(" ,"), absl::SkipEmpty())) {
    std::optional<int> asked;
    if (option == "shard_grad_op")
      asked = 2;
    else if (option == "no_shard")
      asked = 0;
    else if (option == "auto_wrap")
      notes.push_back("--fsdp auto_wrap: kiln shards whole parameters, "
                      "so there are no modules to wrap");
    else if (option == "full_shard" || option == "True" || option == "true" ||
             option == "hybrid_shard" || option == "hybrid_shard_zero2")
      return fail(absl::StrCat(
          option, " is not built (sharded parameters, ZeRO stage 3, or "
                  "groups of processes); shard_grad_op shards the "
                  "optimizer's state and the gradients"));
    else if (option == "offload")
      return fail("offload is not built: the optimizer's state stays in "
                  "the device's memory");
    else
      return fail(absl::StrCat("unknown option '", option,
                               "' (shard_grad_op, no_shard, auto_wrap)"));
    if (asked && stage && *stage != *asked)
      return fail(absl::StrCat("one sharding strategy at a time (", strategy,
                               " and ", option, ")"));
    if (asked)
      stage = asked, strategy = std::string(option);
  }
  if (!stage)
    return fail("no sharding strategy (shard_grad_op or no_shard)");
  return stage;
}

} // namespace kiln::train
