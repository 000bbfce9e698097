// The JSON files a training job reads besides a model's config.json, each
// through its parser (fuzz/JobFilesFuzzer.cpp fuzzes the same four): a LoRA
// adapter's adapter_config.json, a sharded model's
// model.safetensors.index.json and a checkpoint's trainer_state.json (a
// DeepSpeed config's are in DeepSpeedConfigTest.cpp). Each accepts what
// Hugging Face's tools write and refuses, naming the file, what would hurt
// kiln later: an adapter rank that would become an allocation of 10^12
// floats, an adapter PEFT would build as another model than plain LoRA
// (DoRA, ranks per module, ... each named with its value), a shard path
// outside the folder, a torn log history.
#include "examples/TrainerState.h"
#include "frontends/nn/AdapterConfig.h"
#include "frontends/nn/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace kiln;

/// PEFT's adapter_config.json for r 8 on c_attn, with `field` replaced.
std::string adapterJson(const std::string &field = "") {
  std::string json = R"({"peft_type": "LORA", "task_type": "CAUSAL_LM",
    "base_model_name_or_path": "base", "r": 8, "lora_alpha": 16,
    "lora_dropout": 0.05, "target_modules": ["c_attn"],
    "modules_to_save": null, "fan_in_fan_out": true)";
  return json + (field.empty() ? "" : ", " + field) + "}";
}

std::string adapterError(const std::string &text) {
  absl::StatusOr<nn::AdapterConfigFile> file =
      nn::parseAdapterConfigJson(text, "a/adapter_config.json");
  return file.ok() ? "" : std::string(file.status().message());
}

TEST(AdapterConfigTest, ReadsWhatPeftWritesAndWritesItBack) {
  absl::StatusOr<nn::AdapterConfigFile> file =
      nn::parseAdapterConfigJson(adapterJson(), "adapter_config.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->lora.r, 8);
  EXPECT_EQ(file->lora.alpha, 16);
  EXPECT_EQ(file->lora.dropout, 0.05);
  EXPECT_EQ(file->lora.target_modules, std::vector<std::string>{"c_attn"});
  EXPECT_TRUE(file->lora.modules_to_save.empty());
  EXPECT_EQ(file->base_model, "base");

  nn::LoraConfig config = file->lora;
  config.modules_to_save = {"ln_f"};
  // Numbers as PEFT writes them (Python's json), not 0.050000000000000003.
  std::string written = nn::adapterConfigJson(config, "base", true);
  EXPECT_NE(written.find("\"lora_dropout\": 0.05,"), std::string::npos)
      << written;
  EXPECT_NE(written.find("\"lora_alpha\": 16,"), std::string::npos) << written;
  absl::StatusOr<nn::AdapterConfigFile> again =
      nn::parseAdapterConfigJson(written, "written");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->lora.modules_to_save, std::vector<std::string>{"ln_f"});
  EXPECT_EQ(again->lora.target_modules, config.target_modules);
  EXPECT_EQ(again->base_model, "base");
  // PEFT's "all-linear" is the one string that is not a regular
  // expression (LoraTargetRegexTest has those).
  file = nn::parseAdapterConfigJson(
      adapterJson().replace(adapterJson().find("[\"c_attn\"]"), 10,
                            "\"all-linear\""),
      "adapter_config.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->lora.target_modules, std::vector<std::string>{"all-linear"});
  EXPECT_FALSE(file->lora.target_modules_is_regex);
}

TEST(AdapterConfigTest, RefusesSettingsNoAdapterHas) {
  // Later keys win in llvm::json: each case overrides one field.
  EXPECT_NE(adapterError(adapterJson("\"r\": 0")).find("\"r\" in [1, 65536]"),
            std::string::npos);
  EXPECT_NE(adapterError(adapterJson("\"r\": 1000000000000")).find("\"r\""),
            std::string::npos);
  EXPECT_NE(adapterError(adapterJson("\"r\": 8.5")).find("\"r\""),
            std::string::npos);
  EXPECT_NE(adapterError(adapterJson("\"lora_alpha\": 1e999"))
                .find("finite number \"lora_alpha\""),
            std::string::npos);
  EXPECT_NE(adapterError(adapterJson("\"lora_dropout\": 1"))
                .find("\"lora_dropout\" must be a number in [0, 1)"),
            std::string::npos);
  EXPECT_NE(adapterError(adapterJson("\"target_modules\": [\"q_proj\", 7]"))
                .find("a string or a list of strings"),
            std::string::npos);
  EXPECT_NE(adapterError(adapterJson("\"target_modules\": []"))
                .find("no \"target_modules\""),
            std::string::npos);
  EXPECT_NE(adapterError(adapterJson("\"use_rslora\": 1"))
                .find("\"use_rslora\" must be true or false"),
            std::string::npos);
  EXPECT_NE(adapterError("[1]").find("a/adapter_config.json: not a JSON "
                                     "object"),
            std::string::npos);
  EXPECT_NE(adapterError("{\"r\": ").find("a/adapter_config.json: not JSON"),
            std::string::npos);
  // An absent or null dropout is none, as PEFT reads it.
  EXPECT_EQ(adapterError(adapterJson("\"lora_dropout\": null")), "");
}

TEST(AdapterConfigTest, UseRsloraIsReadAndWrittenBack) {
  absl::StatusOr<nn::AdapterConfigFile> file =
      nn::parseAdapterConfigJson(adapterJson(), "adapter_config.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_FALSE(file->lora.use_rslora);
  EXPECT_DOUBLE_EQ(file->lora.scaling(), 16.0 / 8);
  file = nn::parseAdapterConfigJson(adapterJson("\"use_rslora\": true"),
                                    "adapter_config.json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->lora.use_rslora);
  EXPECT_DOUBLE_EQ(file->lora.scaling(), 16.0 / std::sqrt(8.0));

  std::string written = nn::adapterConfigJson(file->lora, "base", true);
  EXPECT_NE(written.find("\"use_rslora\": true"), std::string::npos) << written;
  absl::StatusOr<nn::AdapterConfigFile> again =
      nn::parseAdapterConfigJson(written, "written");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->lora.use_rslora);
}

// Settings that make PEFT build another model than plain LoRA: each is
// refused by name, with the value the file holds and what kiln loads.
TEST(AdapterConfigTest, RefusesSettingsThatChangeTheModelByName) {
  const std::string plain = "kiln trains and loads plain LoRA adapters";
  struct Case {
    std::string field, message, supported;
  };
  for (const Case &c : std::vector<Case>{
           {"\"use_dora\": true", "\"use_dora\": true (DoRA) is not supported",
            plain},
           {"\"use_qalora\": true", "\"use_qalora\": true (QA-LoRA)", plain},
           {"\"lora_bias\": true", "\"lora_bias\": true (a bias on lora_B)",
            plain},
           {"\"rank_pattern\": {\"c_attn\": 4}",
            "\"rank_pattern\": {\"c_attn\":4} (ranks per module)", plain},
           {"\"alpha_pattern\": {\"c_attn\": 32}",
            "\"alpha_pattern\": {\"c_attn\":32} (lora_alpha per module)",
            plain},
           {"\"exclude_modules\": [\"c_proj\"]",
            "\"exclude_modules\": [\"c_proj\"] (modules left out", plain},
           {"\"layer_replication\": [[0, 1], [0, 1]]",
            "\"layer_replication\": [[0,1],[0,1]] (layers repeated", plain},
           {"\"trainable_token_indices\": [3]",
            "\"trainable_token_indices\": [3] (trainable token embedding "
            "rows)",
            plain},
           {"\"target_parameters\": [\"experts\"]",
            "\"target_parameters\": [\"experts\"] (LoRA on bare parameters)",
            plain},
           {"\"alora_invocation_tokens\": [7]",
            "\"alora_invocation_tokens\": [7] (activated LoRA)", plain},
           {"\"arrow_config\": {\"top_k\": 3}",
            "\"arrow_config\": {\"top_k\":3} (Arrow routing)", plain},
           {"\"bias\": \"all\"",
            "\"bias\": \"all\" (the base's biases trained and saved too) "
            "is not supported",
            plain},
           {"\"bias\": \"lora_only\"", "\"bias\": \"lora_only\" (", plain},
           {"\"peft_type\": \"IA3\"",
            "\"peft_type\": \"IA3\" (not a LoRA adapter) is not supported",
            plain},
           {"\"task_type\": \"SEQ_CLS\"",
            "\"task_type\": \"SEQ_CLS\" (not a causal language model)",
            "kiln loads adapters on causal language models (CAUSAL_LM)"},
       }) {
    std::string error = adapterError(adapterJson(c.field));
    EXPECT_EQ(error.rfind("a/adapter_config.json: ", 0), 0u) << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << error;
    EXPECT_NE(error.find(c.supported), std::string::npos) << error;
  }
  // A long value is cut short.
  std::string many = "\"rank_pattern\": {";
  for (int i = 0; i < 40; ++i)
    many += "\"h." + std::to_string(i) + ".c_attn\": 4, ";
  many += "\"c_fc\": 2}";
  std::string error = adapterError(adapterJson(many));
  EXPECT_NE(error.find("... (ranks per module) is not supported"),
            std::string::npos)
      << error;
  EXPECT_LT(error.size(), 400u) << error;
}

// layers_to_transform: PEFT's one index or list of them (layer 0 is a
// layer, not an unset value); layers_pattern a name or a list of plain
// dotted names. Anything else is refused naming the key.
TEST(AdapterConfigTest, ReadsTheLayersToTransform) {
  auto layers = [](const std::string &field) {
    absl::StatusOr<nn::AdapterConfigFile> file =
        nn::parseAdapterConfigJson(adapterJson(field), "a/adapter_config.json");
    return file.ok() ? file->lora.layers_to_transform
                     : std::vector<int64_t>{-1};
  };
  EXPECT_EQ(layers("\"layers_to_transform\": 0"), std::vector<int64_t>{0});
  EXPECT_EQ(layers("\"layers_to_transform\": [2, 0]"),
            (std::vector<int64_t>{2, 0}));
  absl::StatusOr<nn::AdapterConfigFile> patterned = nn::parseAdapterConfigJson(
      adapterJson("\"layers_to_transform\": [1], \"layers_pattern\": "
                  "\"layers\""),
      "a/adapter_config.json");
  ASSERT_TRUE(patterned.ok()) << patterned.status();
  EXPECT_EQ(patterned->lora.layers_pattern, std::vector<std::string>{"layers"});
  for (const char *field :
       {"\"layers_to_transform\": [-1]", "\"layers_to_transform\": [1.5]",
        "\"layers_to_transform\": \"all\""})
    EXPECT_NE(adapterError(adapterJson(field))
                  .find("\"layers_to_transform\" must be a layer index"),
              std::string::npos)
        << field;
  EXPECT_NE(adapterError(adapterJson("\"layers_to_transform\": [0], "
                                     "\"layers_pattern\": \"h|layers\""))
                .find("\"layers_pattern\" 'h|layers': kiln matches layer "
                      "lists by their plain dotted names"),
            std::string::npos);
}

// What PEFT writes for plain LoRA, and keys that do not change the model,
// load.
TEST(AdapterConfigTest, AcceptsDefaultsAndKeysThatLeaveTheModelAlone) {
  for (const char *field : {
           "\"use_dora\": false",
           "\"rank_pattern\": {}",
           "\"alpha_pattern\": {}",
           "\"layers_to_transform\": null",
           "\"layers_to_transform\": []",
           "\"layers_pattern\": null",
           "\"exclude_modules\": null",
           "\"bias\": \"none\"",
           "\"task_type\": null",
           "\"lora_bias\": false",
           "\"trainable_token_indices\": null",
           "\"target_parameters\": []",
           "\"inference_mode\": true",
           "\"revision\": \"main\"",
           "\"init_lora_weights\": \"gaussian\"",
           "\"fan_in_fan_out\": false",
           "\"megatron_config\": null",
           "\"runtime_config\": {\"ephemeral_gpu_offload\": false}",
           "\"auto_mapping\": null",
           "\"peft_version\": \"0.17.1\"",
       })
    EXPECT_EQ(adapterError(adapterJson(field)), "") << field;
  // PEFT's own file for plain LoRA, every key as save_pretrained writes it.
  nn::LoraConfig config;
  config.target_modules = {"c_attn"};
  EXPECT_EQ(adapterError(nn::adapterConfigJson(config, "base", true)), "");
}

std::string indexError(const std::string &shard) {
  absl::StatusOr<std::map<std::string, std::string>> map =
      nn::parseSafetensorsIndex("{\"weight_map\": {\"w\": " + shard + "}}",
                                "m/model.safetensors.index.json");
  return map.ok() ? "" : std::string(map.status().message());
}

TEST(SafetensorsIndexTest, ShardsAreFileNamesInTheFolder) {
  absl::StatusOr<std::map<std::string, std::string>> map =
      nn::parseSafetensorsIndex(
          R"({"metadata": {"total_size": 8}, "weight_map": {
            "a": "model-00001-of-00002.safetensors",
            "b": "model-00002-of-00002.safetensors"}})",
          "index");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->at("b"), "model-00002-of-00002.safetensors");
  for (const char *bad : {"\"../secret.safetensors\"", "\"..\"", "\".\"",
                          "\"\"", "\"/etc/passwd\"", "7", "null"})
    EXPECT_EQ(indexError(bad), "m/model.safetensors.index.json: the file of "
                               "w is not a file name in the folder")
        << bad;
  absl::StatusOr<std::map<std::string, std::string>> none =
      nn::parseSafetensorsIndex("{\"metadata\": {}}", "index");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "index: no \"weight_map\" object");
}

TEST(TrainerStateTest, LogHistoryReadsBackAsWritten) {
  train::TrainerState state;
  state.global_step = 4;
  state.epoch = 0.5;
  state.max_steps = 8;
  state.train_batch_size = 2;
  state.best_metric = 2.25;
  state.best_model_checkpoint = "out/\"checkpoint-4\"";
  state.log_history = {
      train::logEntryJson({{"loss", 5.4321}, {"epoch", 0.25}, {"step", 2}}),
      train::logEntryJson({{"loss", std::nan("")}, {"step", 4}})};
  EXPECT_EQ(state.log_history[1], "{\"loss\": null, \"step\": 4}");
  std::string text = train::trainerStateJson(state);
  absl::StatusOr<std::vector<std::string>> history =
      train::parseLogHistory(text);
  ASSERT_TRUE(history.ok()) << history.status() << "\n" << text;
  EXPECT_EQ(*history, state.log_history);

  // A comma after a space (JobFilesFuzzer's finding, 2026-12-03): the
  // space was kept in the entry, so the history changed when saved again.
  history = train::parseLogHistory("\"log_history\": [\n  {\"a\": 4} ,\n"
                                   "  {\"b\": 5}\n]\n");
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(*history, (std::vector<std::string>{"{\"a\": 4}", "{\"b\": 5}"}));
  state.log_history = *history;
  EXPECT_EQ(train::parseLogHistory(train::trainerStateJson(state)).value(),
            *history);

  state.log_history.clear();
  history = train::parseLogHistory(train::trainerStateJson(state));
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_TRUE(history->empty());
  // The Trainer's own file: sorted keys, so the history may end "],", and
  // an empty one on its line.
  history = train::parseLogHistory("{\n  \"log_history\": [],\n  "
                                   "\"max_steps\": 2\n}\n");
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_TRUE(history->empty());
  history =
      train::parseLogHistory("{\n  \"log_history\": [\n    {\"a\": 1},\n"
                             "    {\"b\": 2}\n  ],\n  \"max_steps\": 2\n}\n");
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(*history, (std::vector<std::string>{"{\"a\": 1}", "{\"b\": 2}"}));
}

TEST(TrainerStateTest, TornOrEditedHistoryIsAnError) {
  train::TrainerState state;
  state.log_history = {"{\"loss\": 1.5, \"step\": 1}",
                       "{\"loss\": 1.25, \"step\": 2}"};
  std::string text = train::trainerStateJson(state);
  // A file cut inside the history (an editor's crash: kiln writes whole).
  absl::StatusOr<std::vector<std::string>> torn =
      train::parseLogHistory(text.substr(0, text.find("\"step\": 2")));
  ASSERT_FALSE(torn.ok());
  torn = train::parseLogHistory(text.substr(0, text.rfind("\n  ]")));
  ASSERT_FALSE(torn.ok());
  EXPECT_EQ(torn.status().message(),
            "no \"log_history\": [ ... ] as kiln writes it");
  std::string notObject = text;
  notObject.replace(notObject.find("{\"loss\": 1.25"), 1, "[");
  EXPECT_FALSE(train::parseLogHistory(notObject).ok());
}

} // namespace
