// PEFT's layers_to_transform and layers_pattern (frontends/nn/Lora.h): a
// module's layer is read from its name as PEFT's regular expressions read
// it; only the target modules of the listed layers get a branch (a target
// naming a module whole keeps it, as in PEFT), the settings round-trip
// through adapter_config.json, and an adapter of other layers is refused
// naming them.
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Lora.h"
#include "tests/unit/TinyGPT2.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

namespace kiln::nn {
namespace {

/// The tests' tiny GPT-2 (TinyGPT2.h) with a third layer, so that a list
/// of layers can leave one out in the middle.
GPT2Config threeLayers() {
  GPT2Config c = kiln::testing::tinyGPT2Config();
  c.n_layer = 3;
  return c;
}

LoraConfig onLayers(std::vector<int64_t> layers,
                    std::vector<std::string> targets = {"c_attn"}) {
  LoraConfig c;
  c.r = 4;
  c.alpha = 8;
  c.dropout = 0.0;
  c.target_modules = std::move(targets);
  c.layers_to_transform = std::move(layers);
  return c;
}

TEST(LoraLayers, TheLayerIsReadFromTheNameAsPeftReadsIt) {
  // Without a pattern: the first all-digit part after any part but the
  // first, followed by another part (PEFT's lazy `.*?\.[^.]*\.(\d+)\.`).
  EXPECT_EQ(lora_layer_index("transformer.h.3.attn.c_attn"), 3);
  EXPECT_EQ(lora_layer_index("model.layers.12.self_attn.q_proj"), 12);
  // The layer, not a nested index (a mixture's expert).
  EXPECT_EQ(lora_layer_index("model.layers.1.mlp.experts.0.up_proj"), 1);
  // No part before the list, or the number last: no layer.
  EXPECT_EQ(lora_layer_index("h.3.attn"), std::nullopt);
  EXPECT_EQ(lora_layer_index("transformer.h.3"), std::nullopt);
  EXPECT_EQ(lora_layer_index("lm_head"), std::nullopt);
  // With patterns: the part after the named list, the list first in the
  // name too; patterns tried in order.
  EXPECT_EQ(lora_layer_index("transformer.h.3.attn.c_attn", {"h"}), 3);
  EXPECT_EQ(lora_layer_index("layers.2.mlp.up_proj", {"layers"}), 2);
  EXPECT_EQ(
      lora_layer_index("model.layers.1.mlp.experts.0.up_proj", {"experts"}), 0);
  EXPECT_EQ(lora_layer_index("transformer.h.3.attn.c_attn", {"blocks"}),
            std::nullopt);
  EXPECT_EQ(lora_layer_index("model.decoder.layers.4.fc1",
                             {"blocks", "decoder.layers"}),
            4);
}

TEST(LoraLayers, OnlyTheListedLayersGetBranches) {
  GPT2LMHeadModel model(threeLayers());
  std::vector<std::string> adapted =
      apply_lora(model, onLayers({0, 2}, {"c_attn", "c_fc"}), 7, nullptr);
  EXPECT_EQ(adapted, (std::vector<std::string>{"transformer.h.0.attn.c_attn",
                                               "transformer.h.0.mlp.c_fc",
                                               "transformer.h.2.attn.c_attn",
                                               "transformer.h.2.mlp.c_fc"}));
  // A pattern that names no list in the model's names leaves no target,
  // which apply_lora refuses as PEFT does.
  GPT2LMHeadModel unmatched(threeLayers());
  LoraConfig blocks = onLayers({0});
  blocks.layers_pattern = {"blocks"};
  EXPECT_THROW(apply_lora(unmatched, blocks, 7, nullptr), Error);
  // A target that names a module whole is adapted in any layer (PEFT
  // applies the layers to suffix matches only).
  GPT2LMHeadModel whole(threeLayers());
  adapted =
      apply_lora(whole, onLayers({0}, {"c_attn", "transformer.h.1.mlp.c_proj"}),
                 7, nullptr);
  EXPECT_EQ(adapted, (std::vector<std::string>{"transformer.h.0.attn.c_attn",
                                               "transformer.h.1.mlp.c_proj"}));
}

TEST(LoraLayers, TheLayersRoundTripAndAnotherListIsRefusedNamingIt) {
  char dir[] = "/tmp/kiln-lora-layers-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string folder = dir;
  GPT2LMHeadModel model(threeLayers());
  LoraConfig config = onLayers({1});
  config.layers_pattern = {"h"};
  apply_lora(model, config, 7, nullptr);
  save_lora_adapter(model, config, folder, "tiny-gpt2");
  std::ifstream in(folder + "/adapter_config.json");
  std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(json.find("\"layers_to_transform\": [\n    1\n  ]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"layers_pattern\": [\n    \"h\"\n  ]"),
            std::string::npos)
      << json;
  std::string baseModel;
  LoraConfig read = read_lora_adapter_config(folder, baseModel);
  EXPECT_EQ(read.layers_to_transform, std::vector<int64_t>{1});
  EXPECT_EQ(read.layers_pattern, std::vector<std::string>{"h"});
  GPT2LMHeadModel loaded(threeLayers());
  apply_lora(loaded, read, 99, nullptr);
  EXPECT_NO_THROW(load_lora_adapter(loaded, read, folder));

  GPT2LMHeadModel other(threeLayers());
  LoraConfig everyLayer = onLayers({});
  everyLayer.layers_pattern = {};
  apply_lora(other, everyLayer, 1, nullptr);
  try {
    load_lora_adapter(other, everyLayer, folder);
    ADD_FAILURE() << "loaded an adapter of layer 1 on every layer";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the adapter layers (layers_to_transform) {1}; this "
                  "model's LoRA layers (layers_to_transform) {}"),
              std::string::npos)
        << e.what();
  }
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((folder + f).c_str());
  ::rmdir(dir);
}

} // namespace
} // namespace kiln::nn
