// A DeepSpeed config read as the Trainer reads one (examples/
// DeepSpeedConfig): the ZeRO-2 config of transformers' documentation
// runs as it is; values given instead of "auto" are compared with the
// flags; WarmupLR / WarmupDecayLR give DeepSpeed's rates, step by step;
// what kiln-train does not build is refused by name; keys left out are
// named with DeepSpeed's defaults.
#include "examples/DeepSpeedConfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace {

using namespace kiln::train;

std::string docsZero2Config() {
  std::ifstream file(std::string(KILN_SOURCE_DIR) +
                     "/tests/tools/Inputs/ds_config_zero2.json");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string errorOf(const std::string &json) {
  absl::StatusOr<DeepSpeedConfig> config = parseDeepSpeedConfig(json, "ds");
  return config.ok() ? "accepted" : std::string(config.status().message());
}

bool mentions(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(DeepSpeedConfigTest, TheDocumentationsZero2ConfigRunsAsItIs) {
  std::string text = docsZero2Config();
  ASSERT_FALSE(text.empty());
  absl::StatusOr<DeepSpeedConfig> config =
      parseDeepSpeedConfig(text, "ds_config_zero2.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->zeroStage, 2);
  // Every value the flags set is "auto": nothing to compare.
  EXPECT_TRUE(config->given.empty());
  ASSERT_TRUE(config->lossScaling);
  EXPECT_EQ(config->lossScaling->initScale, 65536.0);
  EXPECT_EQ(config->lossScaling->window, 1000);
  EXPECT_EQ(config->lossScaling->hysteresis, 2);
  EXPECT_FALSE(config->lossScaling->consecutiveHysteresis);
  EXPECT_EQ(config->lossScaling->minScale, 1.0);
  ASSERT_TRUE(config->schedule);
  EXPECT_FALSE(config->schedule->decay);
  EXPECT_TRUE(config->schedule->logWarmup);
  EXPECT_FALSE(config->schedule->minLr || config->schedule->maxLr ||
               config->schedule->warmupSteps);
  std::vector<std::string> expected = {
      "steps_per_print",
      "wall_clock_breakdown",
      "zero_optimization.allgather_bucket_size",
      "zero_optimization.allgather_partitions",
      "zero_optimization.contiguous_gradients",
      "zero_optimization.offload_optimizer",
      "zero_optimization.overlap_comm",
      "zero_optimization.reduce_bucket_size",
      "zero_optimization.reduce_scatter"};
  std::vector<std::string> got = config->notActedOn;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(config->leftOut.empty());
}

// transformers fills only the keys a config has: one left out would run
// DeepSpeed's default, which the note names.
TEST(DeepSpeedConfigTest, KeysLeftOutAreNamedWithDeepSpeedsDefaults) {
  absl::StatusOr<DeepSpeedConfig> stage1 =
      parseDeepSpeedConfig(R"({"zero_optimization": {"stage": 1}})", "ds");
  ASSERT_TRUE(stage1.ok());
  EXPECT_EQ(stage1->leftOut,
            std::vector<std::string>{"gradient_clipping (DeepSpeed's 0: no "
                                     "clipping)"});
  absl::StatusOr<DeepSpeedConfig> adam = parseDeepSpeedConfig(
      R"({"gradient_clipping": "auto", "optimizer": {"type": "AdamW",
          "params": {"lr": "auto", "betas": "auto"}}})",
      "ds");
  ASSERT_TRUE(adam.ok());
  EXPECT_EQ(adam->leftOut,
            (std::vector<std::string>{"optimizer.params.eps (DeepSpeed's "
                                      "1e-08)",
                                      "optimizer.params.weight_decay "
                                      "(DeepSpeed's 0)"}));
  // fp16.auto_cast is DeepSpeed's own casting: read, not acted on.
  absl::StatusOr<DeepSpeedConfig> cast = parseDeepSpeedConfig(
      R"({"fp16": {"enabled": "auto", "auto_cast": true}})", "ds");
  ASSERT_TRUE(cast.ok()) << cast.status();
  EXPECT_EQ(cast->notActedOn, std::vector<std::string>{"fp16.auto_cast"});
}

TEST(DeepSpeedConfigTest, ValuesGivenAreComparedWithTheFlags) {
  absl::StatusOr<DeepSpeedConfig> config = parseDeepSpeedConfig(
      R"({"train_micro_batch_size_per_gpu": 4, "gradient_clipping": 1.0,
          "optimizer": {"type": "AdamW", "params": {"lr": 3e-5,
            "betas": [0.9, 0.95], "eps": "auto"}},
          "fp16": {"enabled": true}, "bf16": {"enabled": false}})",
      "ds");
  ASSERT_TRUE(config.ok()) << config.status();
  std::map<std::string, double> flags = {{"per_device_train_batch_size", 4},
                                         {"max_grad_norm", 1.0},
                                         {"learning_rate", 3e-5},
                                         {"adam_beta1", 0.9},
                                         {"adam_beta2", 0.95},
                                         {"fp16", 1},
                                         {"bf16", 0}};
  EXPECT_EQ(deepSpeedMismatches(*config, flags), "");
  // A scheduler's maximum given as a number is the learning rate's.
  absl::StatusOr<DeepSpeedConfig> peak = parseDeepSpeedConfig(
      R"({"scheduler": {"type": "WarmupLR", "params": {"warmup_max_lr":
          1e-4}}})",
      "ds");
  ASSERT_TRUE(peak.ok());
  EXPECT_EQ(deepSpeedMismatches(*peak, {{"learning_rate", 5e-5}}),
            "- ds scheduler.params.warmup_max_lr=0.0001 vs hf "
            "learning_rate=5e-05\n");
  flags["per_device_train_batch_size"] = 8;
  flags["learning_rate"] = 5e-5;
  flags["adam_beta2"] = 0.999;
  flags["fp16"] = 0;
  EXPECT_EQ(deepSpeedMismatches(*config, flags),
            "- ds fp16.enabled=True vs hf fp16=False\n"
            "- ds optimizer.params.betas[1]=0.95 vs hf adam_beta2=0.999\n"
            "- ds optimizer.params.lr=3e-05 vs hf learning_rate=5e-05\n"
            "- ds train_micro_batch_size_per_gpu=4 vs hf "
            "per_device_train_batch_size=8\n");
  // A flag left out (the batch under --auto_find_batch_size) is not
  // compared.
  flags.erase("per_device_train_batch_size");
  EXPECT_FALSE(mentions(deepSpeedMismatches(*config, flags), "micro"));
}

TEST(DeepSpeedConfigTest, LossScalingFollowsDeepSpeedsDefaults) {
  // No setting given: ZeRO's DynamicLossScaler (2^32, hysteresis 1).
  absl::StatusOr<DeepSpeedConfig> bare =
      parseDeepSpeedConfig(R"({"fp16": {"enabled": "auto"}})", "ds");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->lossScaling->initScale, std::ldexp(1.0, 32));
  EXPECT_EQ(bare->lossScaling->hysteresis, 1);
  // One given: the config's defaults for the others.
  absl::StatusOr<DeepSpeedConfig> tuned = parseDeepSpeedConfig(
      R"({"fp16": {"loss_scale_window": 500, "consecutive_hysteresis": true,
                   "min_loss_scale": 0.25}})",
      "ds");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->lossScaling->initScale, 65536.0);
  EXPECT_EQ(tuned->lossScaling->window, 500);
  EXPECT_EQ(tuned->lossScaling->hysteresis, 2);
  EXPECT_TRUE(tuned->lossScaling->consecutiveHysteresis);
  EXPECT_EQ(tuned->lossScaling->minScale, 0.25);
  EXPECT_FALSE(parseDeepSpeedConfig("{}", "ds")->lossScaling);
}

/// The rates of steps 1..n (nn::LambdaLR's steps 0..n-1) over `base`.
std::vector<double> rates(const DeepSpeedSchedule &schedule, double base,
                          int64_t warmup, int64_t total, int n) {
  absl::StatusOr<std::function<double(int64_t)>> lambda =
      deepSpeedLearningRates(schedule, base, warmup, total);
  EXPECT_TRUE(lambda.ok()) << lambda.status();
  std::vector<double> out;
  for (int s = 0; s < n && lambda.ok(); ++s)
    out.push_back(base * (*lambda)(s));
  return out;
}

void expectNear(const std::vector<double> &got,
                const std::vector<double> &expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-15) << "step " << i + 1;
}

TEST(DeepSpeedConfigTest, WarmupSchedulesGiveDeepSpeedsRates) {
  // WarmupLR, log warmup over 4 steps of the Trainer's, up to 1e-3: the
  // minimum before the first step and at iteration 0, then
  // log(it + 1) / log(4), then the maximum.
  DeepSpeedSchedule log;
  const double lr = 1e-3;
  expectNear(rates(log, lr, 4, 100, 7),
             {0, 0, lr * std::log(2.0) / std::log(4.0),
              lr * std::log(3.0) / std::log(4.0), lr, lr, lr});
  // Linear, from a minimum of 1e-4: it / 4.
  DeepSpeedSchedule linear;
  linear.logWarmup = false;
  linear.minLr = 1e-4;
  expectNear(rates(linear, lr, 4, 100, 6),
             {1e-4, 1e-4, 1e-4 + 0.9e-3 / 4, 1e-4 + 0.9e-3 / 2,
              1e-4 + 0.9e-3 * 3 / 4, lr});
  // No warmup asked: DeepSpeed warms up over 2 steps at least.
  expectNear(rates(linear, lr, 0, 100, 4), {1e-4, 1e-4, 1e-4 + 0.9e-3 / 2, lr});
  // WarmupDecayLR: after 4 steps, (total - it) / (total - 4) down to the
  // minimum at iteration 10, and no lower.
  DeepSpeedSchedule decay;
  decay.decay = true;
  decay.logWarmup = false;
  std::vector<double> got = rates(decay, lr, 4, 10, 13);
  expectNear(
      std::vector<double>(got.begin() + 5, got.end()),
      {lr, lr * 5 / 6, lr * 4 / 6, lr * 3 / 6, lr * 2 / 6, lr / 6, 0, 0});
  // A config's maximum need not be the base rate.
  DeepSpeedSchedule higher;
  higher.maxLr = 2e-3;
  EXPECT_NEAR(rates(higher, lr, 2, 10, 4).back(), 2e-3, 1e-15);
}

TEST(DeepSpeedConfigTest, StepCountsGivenMustBeTheRuns) {
  absl::StatusOr<DeepSpeedConfig> config = parseDeepSpeedConfig(
      R"({"scheduler": {"type": "WarmupDecayLR", "params": {
            "warmup_num_steps": 10, "total_num_steps": 100}}})",
      "ds");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(deepSpeedLearningRates(*config->schedule, 1e-3, 10, 100).ok());
  absl::StatusOr<std::function<double(int64_t)>> other =
      deepSpeedLearningRates(*config->schedule, 1e-3, 0, 60);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "these values differ from the Trainer's (make them \"auto\"):\n"
            "- ds scheduler.params.warmup_num_steps=10 vs hf warmup_steps=0\n"
            "- ds scheduler.params.total_num_steps=100 vs hf "
            "num_training_steps (calculated)=60\n");
  // Left out, the warmup is DeepSpeed's 1000 steps, unchecked.
  absl::StatusOr<DeepSpeedConfig> bare =
      parseDeepSpeedConfig(R"({"scheduler": {"type": "WarmupLR"}})", "ds");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->schedule->warmupSteps, 1000);
  EXPECT_EQ(bare->schedule->maxLr, 0.001);
  EXPECT_TRUE(deepSpeedLearningRates(*bare->schedule, 5e-5, 0, 10).ok());
}

TEST(DeepSpeedConfigTest, WhatIsNotBuiltIsRefusedByName) {
  EXPECT_EQ(errorOf(R"({"zero_optimization": {"stage": 3}})"),
            "--deepspeed ds: ZeRO stage 3 (sharded parameters) is not built; "
            "stage 2 shards the optimizer's state and the gradients, stage "
            "1 the state alone, stage 0 nothing");
  struct Case {
    const char *json, *expected;
  };
  for (const Case &c : std::vector<Case>{
           {R"({"zero_optimization": {"stage": "one"}})",
            "zero_optimization.stage must be 0, 1, 2 or 3"},
           {R"({"optimizer": {"type": "Adafactor"}})",
            "optimizer.type = \"Adafactor\": kiln-train's optimizer is AdamW"},
           {R"({"optimizer": {"type": "Adam", "params": {"adam_w_mode":
                false}}})",
            "optimizer.params.adam_w_mode = false is not built"},
           {R"({"scheduler": {"type": "WarmupCosineLR"}})",
            "scheduler.type = \"WarmupCosineLR\": kiln-train builds "
            "DeepSpeed's WarmupLR and WarmupDecayLR"},
           {R"({"scheduler": {"type": "WarmupDecayLR"}})",
            "WarmupDecayLR needs scheduler.params.total_num_steps"},
           {R"({"scheduler": {"type": "WarmupLR", "params":
                {"total_num_steps": 5}}})",
            "WarmupLR takes none"},
           {R"({"scheduler": {"params": {}}})", "scheduler needs a \"type\""},
           // The type is named before its parameters.
           {R"({"scheduler": {"type": "OneCycle", "params": {"cycle_min_lr":
                0}}})",
            "scheduler.type = \"OneCycle\": kiln-train builds"},
           {R"({"optimizer": {"type": "Lamb", "params": {"max_coeff": 10}}})",
            "optimizer.type = \"Lamb\": kiln-train's optimizer is AdamW"},
           {R"({"optimizer": {"type": "AdamW", "params": [1]}})",
            "optimizer.params must be an object"},
           {R"({"optimizer": {"params": {"betas": [0.9, "auto"]}}})",
            "optimizer.params.betas must be two numbers or \"auto\""},
           {R"({"fp16": {"loss_scale": "auto"}})",
            "fp16.loss_scale must be 0 (dynamic scaling)"},
           {R"({"fp16": {"loss_scale_window": 100000000}})",
            "fp16.loss_scale_window must be an integer in [1, 16777216]"},
           {R"({"fp16": {"min_loss_scale": 1e300}})",
            "fp16.min_loss_scale must be a positive f32 number"},
           {R"({"scheduler": {"type": "WarmupLR", "params": {"warmup_type":
                "cubic"}}})",
            "warmup_type must be \"log\" or \"linear\""},
           {R"({"fp16": {"loss_scale": 128}})", "a static loss scale"},
           {R"({"fp16": {"hysteresis": 0}})", "fp16.hysteresis must be an "
                                              "integer in [1, 1048576]"},
           {R"({"fp16": {"initial_scale_power": 1000}})",
            "fp16.initial_scale_power must be an integer in [0, 64]"},
           {R"({"fp16": {"min_loss_scale": -1}})",
            "fp16.min_loss_scale must be a positive f32 number"},
           {R"({"fp16": {"enabled": "yes"}})",
            "fp16.enabled must be true, false or \"auto\""},
           {R"({"amp": {"enabled": true}})", "apex's amp is not built"},
           {R"({"communication_data_type": "fp16"})",
            "communication_data_type = \"fp16\" is not built: kiln averages "
            "the gradients over the processes in f32"},
           {R"({"prescale_gradients": true})", "prescale_gradients = true"},
           {R"({"train_micro_batch_size_per_gpu": 2.5})",
            "train_micro_batch_size_per_gpu must be an integer or \"auto\""},
           {R"({"optimizer": {"params": {"betas": [0.9]}}})",
            "optimizer.params.betas must be two numbers"},
           {R"({"elasticity": {"enabled": true}})",
            "kiln-train does not know \"elasticity\""},
           {R"({"zero_optimization": {"mics_shard_size": 2}})",
            "kiln-train does not know \"zero_optimization.mics_shard_size\""},
           {"[1, 2]", "a DeepSpeed config is a JSON object"},
           {R"({"zero_optimization": )", "not JSON"}}) {
    std::string error = errorOf(c.json);
    EXPECT_TRUE(mentions(error, c.expected))
        << c.json << "\n  → " << error << "\n  expected: " << c.expected;
    EXPECT_TRUE(error.rfind("--deepspeed ds: ", 0) == 0) << error;
  }
  // Their defaults are accepted, as is stage 3's tuning under stage 2.
  EXPECT_EQ(errorOf(R"({"communication_data_type": null,
      "gradient_predivide_factor": 1, "prescale_gradients": false,
      "zero_optimization": {"stage": 2, "stage3_max_live_parameters": 1e9},
      "amp": {"enabled": "auto", "opt_level": "O1"},
      "bfloat16": {"enabled": "auto", "immediate_grad_update": false}})"),
            "accepted");
}

} // namespace
