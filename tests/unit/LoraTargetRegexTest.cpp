// PEFT's target_modules given as one string: a regular expression matched
// against each module's whole dotted name (frontends/nn/AdapterConfig.h).
// The modules it matches get branches, and no others; the string survives
// adapter_config.json's round trip and is refused beside
// layers_to_transform, as PEFT refuses it; a Python construct std::regex
// would read otherwise is refused by name; and an adapter whose targets
// are a pattern does not load where a list of names was asked for.
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Lora.h"
#include "tests/unit/TinyGPT2.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

namespace kiln::nn {
namespace {

GPT2Config threeLayers() {
  GPT2Config c = kiln::testing::tinyGPT2Config();
  c.n_layer = 3;
  return c;
}

LoraConfig onPattern(const std::string &pattern) {
  LoraConfig c;
  c.r = 4;
  c.alpha = 8;
  c.dropout = 0.0;
  c.target_modules = {pattern};
  c.target_modules_is_regex = true;
  return c;
}

/// An adapter_config.json's text with `targets` as its target_modules
/// (JSON) and `extra` keys.
std::string adapterJson(const std::string &targets,
                        const std::string &extra = "") {
  return R"({"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 4,
             "lora_alpha": 8, "target_modules": )" +
         targets + extra + "}";
}

TEST(LoraTargetRegex, OnlyModulesTheWholeNameMatchesGetBranches) {
  GPT2LMHeadModel model(threeLayers());
  std::vector<std::string> adapted = apply_lora(
      model, onPattern(R"(.*\.h\.[02]\.(attn\.c_attn|mlp\.c_fc))"), 7, nullptr);
  EXPECT_EQ(adapted, (std::vector<std::string>{"transformer.h.0.attn.c_attn",
                                               "transformer.h.0.mlp.c_fc",
                                               "transformer.h.2.attn.c_attn",
                                               "transformer.h.2.mlp.c_fc"}));
  // A class as Python reads it: "[^]]" is any character but ']' (in
  // ECMAScript, any character, then ']').
  GPT2LMHeadModel classes(threeLayers());
  adapted = apply_lora(classes,
                       onPattern(R"(.*\.h\.1\.(attn\.c_attn|mlp\.c_fc[^]]*))"),
                       7, nullptr);
  EXPECT_EQ(adapted, (std::vector<std::string>{"transformer.h.1.attn.c_attn",
                                               "transformer.h.1.mlp.c_fc"}));
  // The match is whole, as re.fullmatch: a bare name matches no module's
  // dotted name, where the same name in a list matches every layer's.
  GPT2LMHeadModel bare(threeLayers());
  try {
    apply_lora(bare, onPattern("c_attn"), 7, nullptr);
    ADD_FAILURE() << "the pattern c_attn matched a dotted name";
  } catch (const Error &e) {
    EXPECT_NE(
        std::string(e.what()).find("no module's name in the base model matches "
                                   "target_modules 'c_attn' whole"),
        std::string::npos)
        << e.what();
  }
}

TEST(LoraTargetRegex, OneStringIsAPatternButAllLinear) {
  absl::StatusOr<AdapterConfigFile> pattern =
      parseAdapterConfigJson(adapterJson(R"(".*\\.(q|v)_proj")"), "p.json");
  ASSERT_TRUE(pattern.ok()) << pattern.status();
  EXPECT_TRUE(pattern->lora.target_modules_is_regex);
  EXPECT_EQ(pattern->lora.target_modules,
            std::vector<std::string>{R"(.*\.(q|v)_proj)"});
  for (const char *names : {R"(["q_proj", "v_proj"])", R"(["q_proj"])",
                            R"("all-linear")", R"("ALL-LINEAR")"}) {
    absl::StatusOr<AdapterConfigFile> list =
        parseAdapterConfigJson(adapterJson(names), "l.json");
    ASSERT_TRUE(list.ok()) << names << ": " << list.status();
    EXPECT_FALSE(list->lora.target_modules_is_regex) << names;
  }
}

TEST(LoraTargetRegex, WhatPythonReadsOtherwiseIsRefusedByName) {
  struct Case {
    const char *targets, *extra, *message;
  };
  for (const Case &c : std::vector<Case>{
           {R"("\\Aq_proj\\Z")", "", "holds \\A"},
           {R"("(?P<name>q)_proj")", "", "holds '(?' other than '(?:'"},
           {R"("q_proj(")", "", "is not a regular expression kiln reads"},
           {R"(".*q_proj")", R"(, "layers_to_transform": [0])",
            "cannot be used when \"target_modules\" is a string"},
           {R"(".*q_proj")", R"(, "layers_pattern": "layers")",
            "cannot be used when \"target_modules\" is a string"},
       }) {
    absl::StatusOr<AdapterConfigFile> parsed =
        parseAdapterConfigJson(adapterJson(c.targets, c.extra), "bad.json");
    ASSERT_FALSE(parsed.ok()) << c.targets << c.extra;
    EXPECT_NE(std::string(parsed.status().message()).find(c.message),
              std::string::npos)
        << parsed.status();
    EXPECT_NE(std::string(parsed.status().message()).find("bad.json"),
              std::string::npos)
        << parsed.status();
  }
}

TEST(LoraTargetRegex, ThePatternRoundTripsAndAListIsRefusedNamingBoth) {
  char dir[] = "/tmp/kiln-lora-regex-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string folder = dir;
  GPT2LMHeadModel model(threeLayers());
  LoraConfig config = onPattern(R"(.*\.h\.1\.attn\.c_attn)");
  apply_lora(model, config, 7, nullptr);
  save_lora_adapter(model, config, folder, "tiny-gpt2");
  std::ifstream in(folder + "/adapter_config.json");
  std::string json((std::istreambuf_iterator<char>(in)), {});
  // A JSON string, as PEFT writes a str target_modules.
  EXPECT_NE(json.find(R"("target_modules": ".*\\.h\\.1\\.attn\\.c_attn")"),
            std::string::npos)
      << json;
  std::string baseModel;
  LoraConfig read = read_lora_adapter_config(folder, baseModel);
  EXPECT_TRUE(read.target_modules_is_regex);
  EXPECT_EQ(read.target_modules, config.target_modules);
  GPT2LMHeadModel loaded(threeLayers());
  apply_lora(loaded, read, 99, nullptr);
  EXPECT_NO_THROW(load_lora_adapter(loaded, read, folder));

  GPT2LMHeadModel listed(threeLayers());
  LoraConfig names = onPattern("c_attn");
  names.target_modules_is_regex = false;
  apply_lora(listed, names, 1, nullptr);
  try {
    load_lora_adapter(listed, names, folder);
    ADD_FAILURE() << "loaded a pattern's adapter on a list of names";
  } catch (const Error &e) {
    EXPECT_NE(
        std::string(e.what()).find(
            R"(the adapter targets the modules matching '.*\.h\.1\.attn\.c_attn'; this model's LoRA targets {c_attn})"),
        std::string::npos)
        << e.what();
  }
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((folder + f).c_str());
  ::rmdir(dir);
}

} // namespace
} // namespace kiln::nn
