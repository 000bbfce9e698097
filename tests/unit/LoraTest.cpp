// LoRA (frontends/nn/Lora.h) on a tiny GPT-2: an adapted model starts as
// its base, and only the branches train; with non-zero branches its logits
// are those of the merged model (an independent path: plain projections
// with W + B A * alpha / r); the branches' gradients match finite
// differences in f64 and the base gets none; the planned training step is
// smaller than full fine-tuning's and AdamW keeps state for the branches
// only; adapters round-trip through PEFT's files, and a config that does
// not match them is an error naming the file; use_rslora scales by
// alpha / sqrt(r) and round-trips, and DoRA adapters are refused naming
// DoRA. On the token embedding
// (PEFT's lora.Embedding) the branch is named and shaped as PEFT's, starts
// at zero, moves GPT-2's input rows but not its tied head (so merging it
// is refused), matches finite differences, round-trips, and merges into an
// untied table (Llama).
#include "frontends/nn/Lora.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Llama.h"
#include "frontends/nn/Optimizer.h"
#include "frontends/nn/Safetensors.h"

#include "tests/unit/GradCheckSupport.h"
#include "tests/unit/TinyLlama.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <unistd.h>

namespace kiln::nn {
namespace {

/// Adds `tensor` as `name` to the adapter weights kiln saved in `folder`:
/// a file as another writer (PEFT, an edit) could have made it.
void addAdapterTensor(const std::string &folder, const std::string &name,
                      const HostTensor &tensor) {
  const std::string path = folder + "/adapter_model.safetensors";
  absl::StatusOr<SafetensorsData> weights = loadSafetensors(path);
  ASSERT_TRUE(weights.ok()) << weights.status();
  weights->tensors.push_back({name, tensor});
  ASSERT_TRUE(saveSafetensors(path, weights->tensors, {{"format", "pt"}}).ok());
}

GPT2Config tinyConfig(DType dtype = DType::f32) {
  GPT2Config c;
  c.vocab_size = 40;
  c.n_positions = 8;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 2;
  c.with_dropout(0.0);
  c.dtype = dtype;
  c.init_seed = 5;
  c.initializer_range = 0.2;
  return c;
}

using kiln::testing::randomIds;
using kiln::testing::tinyLlama;

LoraConfig loraConfig(std::vector<std::string> targets = {"c_attn"}) {
  LoraConfig c;
  c.r = 4;
  c.alpha = 8;
  c.dropout = 0.0;
  c.target_modules = std::move(targets);
  return c;
}

/// Every LoRA parameter set to random values, so the branches matter.
void randomiseBranches(Module &model, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.3);
  std::map<std::string, HostTensor> state;
  for (auto &[name, param] : trainable_parameters(model)) {
    HostTensor value = param.to_host();
    for (int64_t i = 0; i < value.numElements(); ++i)
      value.setDouble(i, normal(rng));
    state.emplace(name, std::move(value));
  }
  model.load_state_dict(state, /*strict=*/false);
  kiln::step();
}

double maxDifference(const HostTensor &a, const HostTensor &b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numElements(); ++i)
    worst = std::max(worst, std::abs(a.getDouble(i) - b.getDouble(i)));
  return worst;
}

TEST(Lora, StartsAsTheBaseAndTrainsOnlyTheBranches) {
  GPT2LMHeadModel model(tinyConfig());
  Tensor ids = randomIds(2, 8, 40, 1);
  HostTensor before = model.forward(ids).to_host();
  std::vector<std::string> adapted =
      apply_lora(model, loraConfig(), 7, &model.generator());
  EXPECT_EQ(adapted, (std::vector<std::string>{"transformer.h.0.attn.c_attn",
                                               "transformer.h.1.attn.c_attn"}));
  EXPECT_TRUE(model.forward(ids).to_host().bitwiseEqual(before));
  NamedTensors trainable = trainable_parameters(model);
  ASSERT_EQ(trainable.size(), 4u);
  EXPECT_EQ(trainable[0].first, "transformer.h.0.attn.c_attn.lora_A.weight");
  EXPECT_EQ(trainable[0].second.shape(), (Shape{4, 16}));
  EXPECT_EQ(trainable[1].first, "transformer.h.0.attn.c_attn.lora_B.weight");
  EXPECT_EQ(trainable[1].second.shape(), (Shape{48, 4}));
  // PEFT's errors: no module matches, or a match is not a projection.
  GPT2LMHeadModel other(tinyConfig());
  try {
    apply_lora(other, loraConfig({"q_proj", "v_proj"}), 7, nullptr);
    ADD_FAILURE() << "applied LoRA to no module";
  } catch (const Error &e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "target modules {q_proj, v_proj} not found in the base model"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(apply_lora(other, loraConfig({"ln_1"}), 7, nullptr), Error);
  // GPT-2's head is the embeddings' weight: no module to adapt.
  try {
    apply_lora(other, loraConfig({"lm_head"}), 7, nullptr);
    ADD_FAILURE() << "applied LoRA to a tied head";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("lm_head is tied to the input "
                                         "embeddings"),
              std::string::npos)
        << e.what();
  }
}

// PEFT's "all-linear": every Linear / Conv1D projection but the head, by
// the last part of its name, in the model's order.
// A fused projection computed part by part (Phi-3's qkv_proj and
// gate_up_proj) gives its whole result's features, the bias and a LoRA
// branch with a nonzero lora_B included; parts that do not add up to the
// features are refused.
TEST(Lora, ASplitProjectionGivesTheSlicesOfTheWholeOne) {
  set_options(options_from_env());
  InitContext init(/*seed=*/3, DType::f32);
  Linear fused(/*in=*/12, /*out=*/20, init, /*bias=*/true, /*std=*/0.3);
  {
    NoGradGuard noGrad;
    fused.bias.assign_(Tensor::rand({20}));
  }
  fused.add_lora(/*r=*/4, /*scaling=*/8.0 / 4, /*dropout=*/0.0, init, nullptr);
  randomiseBranches(fused, 11);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(2 * 5 * 12);
  for (double &v : values)
    v = normal(rng);
  Tensor x = Tensor::from_vector(values, {2, 5, 12});
  NoGradGuard noGrad;
  std::vector<double> whole = fused.forward(x).to_vector();
  std::vector<Tensor> parts = fused.forward_split(x, {8, 6, 6});
  ASSERT_EQ(parts.size(), 3u);
  int64_t start = 0;
  for (const Tensor &part : parts) {
    const int64_t width = part.size(-1);
    std::vector<double> got = part.to_vector();
    for (int64_t row = 0; row < 10; ++row)
      for (int64_t f = 0; f < width; ++f)
        EXPECT_NEAR(got[size_t(row * width + f)],
                    whole[size_t(row * 20 + start + f)], 1e-5)
            << "row " << row << ", feature " << start + f;
    start += width;
  }
  EXPECT_EQ(start, 20);
  EXPECT_THROW(fused.forward_split(x, {8, 6}), Error);
  EXPECT_THROW(fused.forward_split(x, {20, 0}), Error);
}

TEST(Lora, AllLinearNamesEveryProjectionButTheHead) {
  GPT2LMHeadModel model(tinyConfig());
  using Names = std::vector<std::string>;
  EXPECT_EQ(expand_lora_targets(model, {"all-linear"}),
            (Names{"c_attn", "c_proj", "c_fc"}));
  EXPECT_EQ(expand_lora_targets(model, {"ALL-LINEAR"}),
            (Names{"c_attn", "c_proj", "c_fc"}));
  EXPECT_EQ(expand_lora_targets(model, {"c_attn", "all-linear"}),
            (Names{"c_attn", "all-linear"})); // PEFT's shorthand is alone
  EXPECT_EQ(expand_lora_targets(model, {"c_fc"}), Names{"c_fc"});
}

TEST(Lora, LogitsAreTheMergedModelsAndMergingChangesOnlyTargets) {
  GPT2LMHeadModel model(tinyConfig());
  apply_lora(model, loraConfig({"c_attn", "c_fc"}), 7, &model.generator());
  randomiseBranches(model, 3);
  Tensor ids = randomIds(2, 8, 40, 2);
  HostTensor adapted = model.forward(ids).to_host();

  NamedTensors merged = merged_state_dict(model);
  std::map<std::string, HostTensor> state;
  for (auto &[name, tensor] : merged)
    state.emplace(name, tensor.to_host());
  GPT2LMHeadModel plain(tinyConfig()); // no branches: the base path only
  plain.load_state_dict(state, /*strict=*/true);
  HostTensor viaMerge = plain.forward(ids).to_host();
  double worst = 0;
  for (int64_t i = 0; i < adapted.numElements(); ++i)
    worst =
        std::max(worst, std::abs(adapted.getDouble(i) - viaMerge.getDouble(i)));
  EXPECT_LT(worst, 2e-5);
  // The branches changed the output (the comparison is not vacuous), and
  // untargeted weights are carried over untouched.
  GPT2LMHeadModel base(tinyConfig());
  HostTensor baseLogits = base.forward(ids).to_host();
  double moved = 0;
  for (int64_t i = 0; i < adapted.numElements(); ++i)
    moved = std::max(moved,
                     std::abs(adapted.getDouble(i) - baseLogits.getDouble(i)));
  EXPECT_GT(moved, 1e-2);
  EXPECT_TRUE(state.at("transformer.h.0.attn.c_proj.weight")
                  .bitwiseEqual(
                      base.transformer->h[0]->attn->c_proj->weight.to_host()));
  EXPECT_FALSE(state.at("transformer.h.0.attn.c_attn.weight")
                   .bitwiseEqual(
                       base.transformer->h[0]->attn->c_attn->weight.to_host()));
}

TEST(Lora, BranchGradientsMatchFiniteDifferencesAndTheBaseGetsNone) {
  GPT2LMHeadModel model(tinyConfig(DType::f64));
  apply_lora(model, loraConfig(), 7, &model.generator());
  randomiseBranches(model, 4);
  Tensor ids = randomIds(2, 8, 40, 3);
  Tensor loss = model.loss(ids, ids);
  loss.backward();
  kiln::step();
  for (auto &[name, param] : model.named_parameters())
    EXPECT_EQ(param.grad().defined(), name.find(".lora_") != std::string::npos)
        << name;

  std::mt19937_64 rng(9);
  for (auto &[name, param] : trainable_parameters(model)) {
    HostTensor base = param.to_host(), grad = param.grad().to_host();
    for (int probe = 0; probe < 3; ++probe) {
      int64_t index = int64_t(rng() % uint64_t(base.numElements()));
      auto lossAt = [&](double delta) {
        HostTensor moved = base;
        moved.setDouble(index, base.getDouble(index) + delta);
        NoGradGuard noGrad;
        Tensor p = param;
        p.assign_(Tensor::from_host(std::move(moved)));
        Tensor l = model.loss(ids, ids);
        kiln::step();
        return l.item();
      };
      const double h = 1e-4;
      double numeric =
          (lossAt(-2 * h) - 8 * lossAt(-h) + 8 * lossAt(h) - lossAt(2 * h)) /
          (12 * h);
      EXPECT_NEAR(grad.getDouble(index), numeric,
                  1e-6 * std::abs(numeric) + 1e-10)
          << name << "[" << index << "]";
      NoGradGuard noGrad;
      Tensor p = param;
      p.assign_(Tensor::from_host(base));
      kiln::step();
    }
  }
}

TEST(Lora, TheStepPlansLessThanFullFineTuningAndAdamKeepsBranchStateOnly) {
  Options o = options_from_env();
  Options saved = o;
  o.backend = Backend::cpu;
  o.mode = Mode::graph;
  set_options(o);
  auto planStep = [](bool lora) {
    GPT2Config c = tinyConfig();
    c.n_embd = 64;
    c.n_head = 4;
    c.vocab_size = 200;
    auto model = std::make_shared<GPT2LMHeadModel>(c);
    if (lora)
      apply_lora(*model, loraConfig({"c_attn", "c_proj", "c_fc"}), 7,
                 &model->generator());
    kiln::step();
    NamedTensors params =
        lora ? trainable_parameters(*model) : model->named_parameters();
    AdamW optimizer(params, AdamW::Options{});
    std::optional<uint64_t> peak = plan_traced([&]() -> TracedStep {
      Tensor ids = randomIds(4, 8, 200, 5);
      Tensor loss = model->loss(ids, ids);
      loss.backward();
      optimizer.step();
      optimizer.zero_grad();
      return std::make_shared<Tensor>(loss);
    });
    return std::pair{peak.value_or(0), params.size()};
  };
  auto [full, fullParams] = planStep(false);
  auto [lora, loraParams] = planStep(true);
  // A and B on 4 projections a layer (c_proj is attn.c_proj and
  // mlp.c_proj, as PEFT matches suffixes), 2 layers.
  EXPECT_EQ(loraParams, 2u * 4u * 2u);
  EXPECT_GT(fullParams, loraParams);
  ASSERT_GT(lora, 0u);
  // No base gradients, no AdamW moments for the base: the frozen weights
  // are read, nothing more.
  EXPECT_LT(double(lora), 0.75 * double(full)) << lora << " vs " << full;
  set_options(saved);
}

TEST(Lora, AdaptersRoundTripThroughPeftFilesAndMismatchesAreNamed) {
  char dir[] = "/tmp/kiln-lora-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  GPT2LMHeadModel model(tinyConfig());
  LoraConfig config = loraConfig();
  apply_lora(model, config, 7, &model.generator());
  randomiseBranches(model, 6);
  save_lora_adapter(model, config, dir, "tiny-gpt2");
  std::ifstream in(std::string(dir) + "/adapter_config.json");
  std::string json((std::istreambuf_iterator<char>(in)), {});
  for (const char *field :
       {"\"peft_type\": \"LORA\"", "\"task_type\": \"CAUSAL_LM\"", "\"r\": 4",
        "\"lora_alpha\": 8", "\"fan_in_fan_out\": true",
        "\"base_model_name_or_path\": \"tiny-gpt2\""})
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;
  absl::StatusOr<SafetensorsData> weights =
      loadSafetensors(std::string(dir) + "/adapter_model.safetensors");
  ASSERT_TRUE(weights.ok());
  EXPECT_NE(weights->find("base_model.model.transformer.h.1.attn.c_attn."
                          "lora_B.weight"),
            nullptr);

  GPT2LMHeadModel loaded(tinyConfig());
  apply_lora(loaded, config, 99, &loaded.generator());
  load_lora_adapter(loaded, config, dir);
  kiln::step();
  NamedTensors a = trainable_parameters(model),
               b = trainable_parameters(loaded);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i].second.to_host().bitwiseEqual(b[i].second.to_host()))
        << a[i].first;

  auto expectMismatch = [&](LoraConfig other, const std::string &needle) {
    GPT2LMHeadModel m(tinyConfig());
    apply_lora(m, other, 1, nullptr);
    try {
      load_lora_adapter(m, other, dir);
      ADD_FAILURE() << "loaded a mismatched adapter";
    } catch (const Error &e) {
      std::string what = e.what();
      EXPECT_NE(what.find("adapter_config.json"), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  LoraConfig rank = config;
  rank.r = 8;
  expectMismatch(rank, "the adapter has r 4, lora_alpha 8; this model's LoRA "
                       "has r 8");
  expectMismatch(loraConfig({"c_attn", "c_fc"}),
                 "the adapter targets {c_attn}; this model's LoRA targets "
                 "{c_attn, c_fc}");
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((std::string(dir) + f).c_str());
  ::rmdir(dir);
}

// PEFT's use_rslora: the branch is scaled by alpha / sqrt(r), so an
// rslora model's logits are those of a plain one whose alpha is sqrt(r)
// times larger (same branch values), and differ from the plain one's with
// the same alpha. The setting round-trips through adapter_config.json: the
// folder read back builds the rslora model (bit for bit), and a plain
// model's LoRA refuses it by name.
TEST(Lora, RsloraScalesByTheRootOfTheRankAndRoundTrips) {
  Tensor ids = randomIds(2, 8, 40, 4);
  auto logits = [&](LoraConfig config, std::string *saveTo = nullptr) {
    GPT2LMHeadModel model(tinyConfig());
    apply_lora(model, config, 7, &model.generator());
    randomiseBranches(model, 3);
    if (saveTo)
      save_lora_adapter(model, config, *saveTo, "tiny-gpt2");
    return model.forward(ids).to_host();
  };
  LoraConfig rslora = loraConfig({"c_attn", "wte"}); // r 4, alpha 8
  rslora.use_rslora = true;
  EXPECT_DOUBLE_EQ(rslora.scaling(), 8.0 / 2);
  LoraConfig plain = loraConfig({"c_attn", "wte"});
  LoraConfig plainScaledUp = plain;
  plainScaledUp.alpha = 8 * std::sqrt(4.0);
  char dir[] = "/tmp/kiln-lora-rslora-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string folder = dir;
  HostTensor withRslora = logits(rslora, &folder);
  EXPECT_LT(maxDifference(withRslora, logits(plainScaledUp)), 1e-5);
  EXPECT_GT(maxDifference(withRslora, logits(plain)), 1e-2);

  std::ifstream in(folder + "/adapter_config.json");
  std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(json.find("\"use_rslora\": true"), std::string::npos) << json;
  std::string baseModel;
  LoraConfig read = read_lora_adapter_config(folder, baseModel);
  EXPECT_TRUE(read.use_rslora);
  GPT2LMHeadModel loaded(tinyConfig());
  apply_lora(loaded, read, 99, &loaded.generator());
  load_lora_adapter(loaded, read, folder);
  kiln::step();
  EXPECT_TRUE(loaded.forward(ids).to_host().bitwiseEqual(withRslora));

  GPT2LMHeadModel asPlain(tinyConfig());
  apply_lora(asPlain, plain, 1, nullptr);
  try {
    load_lora_adapter(asPlain, plain, folder);
    ADD_FAILURE() << "loaded an rslora adapter as plain LoRA";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the adapter has r 4, lora_alpha 8, use_rslora; this "
                  "model's LoRA has r 4, lora_alpha 8"),
              std::string::npos)
        << e.what();
  }
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((folder + f).c_str());
  ::rmdir(dir);
}

// An adapter folder whose config says DoRA is refused when read; one whose
// config was edited to plain LoRA still holds DoRA's magnitude vectors,
// which are named as DoRA's rather than as unknown tensors.
TEST(Lora, DoraAdaptersAreRefusedNamingDora) {
  char dir[] = "/tmp/kiln-lora-dora-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string folder = dir;
  GPT2LMHeadModel model(tinyConfig());
  LoraConfig config = loraConfig();
  apply_lora(model, config, 7, &model.generator());
  save_lora_adapter(model, config, folder, "tiny-gpt2");
  absl::StatusOr<SafetensorsData> weights =
      loadSafetensors(folder + "/adapter_model.safetensors");
  ASSERT_TRUE(weights.ok());
  addAdapterTensor(
      folder,
      "base_model.model.transformer.h.0.attn.c_attn.lora_magnitude_vector",
      weights->tensors.front().tensor);
  auto loadError = [&] {
    GPT2LMHeadModel m(tinyConfig());
    apply_lora(m, config, 1, nullptr);
    try {
      load_lora_adapter(m, config, folder);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(loadError().find("lora_magnitude_vector is DoRA's magnitude "
                             "vector; DoRA (use_dora) is not supported"),
            std::string::npos)
      << loadError();

  std::string text = adapterConfigJson(config, "tiny-gpt2", true);
  text.replace(text.find("\"use_dora\": false"), 17, "\"use_dora\": true");
  std::ofstream(folder + "/adapter_config.json") << text;
  EXPECT_NE(loadError().find("adapter_config.json: \"use_dora\": true (DoRA) "
                             "is not supported"),
            std::string::npos)
      << loadError();
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((folder + f).c_str());
  ::rmdir(dir);
}

// PEFT's modules_to_save: the named modules train whole beside the
// branches, their tensors go into the adapter file under their own names
// (as PEFT's get_peft_model_state_dict writes them) and come back on load;
// the tied token embedding is refused, and a config that trains other
// modules whole is named.
TEST(Lora, ModulesToSaveTrainWholeAndRoundTrip) {
  char dir[] = "/tmp/kiln-lora-save-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  GPT2LMHeadModel model(tinyConfig());
  LoraConfig config = loraConfig();
  config.modules_to_save = {"ln_f"};
  apply_lora(model, config, 7, &model.generator());
  std::vector<std::string> names;
  for (auto &[name, param] : trainable_parameters(model))
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "transformer.h.0.attn.c_attn.lora_A.weight",
                       "transformer.h.0.attn.c_attn.lora_B.weight",
                       "transformer.h.1.attn.c_attn.lora_A.weight",
                       "transformer.h.1.attn.c_attn.lora_B.weight",
                       "transformer.ln_f.weight", "transformer.ln_f.bias"}));
  randomiseBranches(model, 6); // the branches and ln_f
  save_lora_adapter(model, config, dir, "tiny-gpt2");
  std::ifstream in(std::string(dir) + "/adapter_config.json");
  std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(json.find("\"modules_to_save\": [\n    \"ln_f\"\n  ]"),
            std::string::npos)
      << json;
  absl::StatusOr<SafetensorsData> weights =
      loadSafetensors(std::string(dir) + "/adapter_model.safetensors");
  ASSERT_TRUE(weights.ok());
  EXPECT_EQ(weights->tensors.size(), 6u);
  EXPECT_NE(weights->find("base_model.model.transformer.ln_f.weight"), nullptr);

  GPT2LMHeadModel loaded(tinyConfig());
  std::string base;
  LoraConfig read = read_lora_adapter_config(dir, base);
  EXPECT_EQ(read.modules_to_save, std::vector<std::string>{"ln_f"});
  apply_lora(loaded, read, 99, &loaded.generator());
  load_lora_adapter(loaded, read, dir);
  kiln::step();
  Tensor ids = randomIds(2, 8, 40, 1);
  EXPECT_TRUE(
      loaded.forward(ids).to_host().bitwiseEqual(model.forward(ids).to_host()));

  GPT2LMHeadModel without(tinyConfig());
  apply_lora(without, loraConfig(), 1, nullptr);
  try {
    load_lora_adapter(without, loraConfig(), dir);
    ADD_FAILURE() << "loaded an adapter that trains ln_f whole";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the adapter trains {ln_f} whole (modules_to_save); this "
                  "model's LoRA trains {}"),
              std::string::npos)
        << e.what();
  }
  GPT2LMHeadModel tied(tinyConfig());
  LoraConfig embeddings = loraConfig();
  embeddings.modules_to_save = {"wte"};
  try {
    apply_lora(tied, embeddings, 1, nullptr);
    ADD_FAILURE() << "trained the tied embedding as a module to save";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("transformer.wte is tied to the "
                                         "output layer"),
              std::string::npos)
        << e.what();
  }
  // A module to save with submodules (each block's MLP) saves every
  // parameter it trains, its projections' included.
  char mlpDir[] = "/tmp/kiln-lora-mlp-XXXXXX";
  ASSERT_NE(::mkdtemp(mlpDir), nullptr);
  GPT2LMHeadModel mlp(tinyConfig());
  LoraConfig wholeMlp = loraConfig();
  wholeMlp.modules_to_save = {"mlp"};
  apply_lora(mlp, wholeMlp, 1, nullptr);
  save_lora_adapter(mlp, wholeMlp, mlpDir, "tiny-gpt2");
  absl::StatusOr<SafetensorsData> mlpWeights =
      loadSafetensors(std::string(mlpDir) + "/adapter_model.safetensors");
  ASSERT_TRUE(mlpWeights.ok());
  EXPECT_EQ(mlpWeights->tensors.size(), trainable_parameters(mlp).size());
  EXPECT_NE(
      mlpWeights->find("base_model.model.transformer.h.1.mlp.c_fc.weight"),
      nullptr);
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((std::string(mlpDir) + f).c_str());
  ::rmdir(mlpDir);
  // PEFT names a module to save by a plain suffix of its name: "_1" is
  // every block's ln_1 (the targets' rule, a whole dotted part, found
  // none; with Llama's "norm", PEFT trains every input_layernorm too).
  GPT2LMHeadModel suffix(tinyConfig());
  LoraConfig bySuffix = loraConfig();
  bySuffix.modules_to_save = {"_1"};
  apply_lora(suffix, bySuffix, 1, nullptr);
  std::vector<std::string> whole;
  for (auto &[name, param] : suffix.named_parameters())
    if (param.requires_grad() && name.find("lora_") == std::string::npos)
      whole.push_back(name);
  EXPECT_EQ(whole, (std::vector<std::string>{"transformer.h.0.ln_1.weight",
                                             "transformer.h.0.ln_1.bias",
                                             "transformer.h.1.ln_1.weight",
                                             "transformer.h.1.ln_1.bias"}));
  LoraConfig missing = loraConfig();
  missing.modules_to_save = {"score"};
  EXPECT_THROW(apply_lora(tied, missing, 1, nullptr), Error);
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((std::string(dir) + f).c_str());
  ::rmdir(dir);
}

TEST(LoraEmbedding, StartsAsTheBaseWithPeftsNamesAndShapes) {
  GPT2LMHeadModel model(tinyConfig());
  Tensor ids = randomIds(2, 8, 40, 1);
  HostTensor before = model.forward(ids).to_host();
  std::vector<std::string> adapted =
      apply_lora(model, loraConfig({"wte", "c_attn"}), 7, &model.generator());
  EXPECT_EQ(adapted, (std::vector<std::string>{"transformer.wte",
                                               "transformer.h.0.attn.c_attn",
                                               "transformer.h.1.attn.c_attn"}));
  EXPECT_TRUE(model.forward(ids).to_host().bitwiseEqual(before));
  NamedTensors trainable = trainable_parameters(model);
  ASSERT_EQ(trainable.size(), 6u);
  EXPECT_EQ(trainable[0].first, "transformer.wte.lora_embedding_A");
  EXPECT_EQ(trainable[0].second.shape(), (Shape{4, 40}));
  EXPECT_EQ(trainable[1].first, "transformer.wte.lora_embedding_B");
  EXPECT_EQ(trainable[1].second.shape(), (Shape{16, 4}));
  HostTensor a = trainable[0].second.to_host(),
             b = trainable[1].second.to_host();
  double aMax = 0, bMax = 0;
  for (int64_t i = 0; i < a.numElements(); ++i)
    aMax = std::max(aMax, std::abs(a.getDouble(i)));
  for (int64_t i = 0; i < b.numElements(); ++i)
    bMax = std::max(bMax, std::abs(b.getDouble(i)));
  EXPECT_EQ(aMax, 0.0);
  EXPECT_GT(bMax, 0.5); // normal(0, 1): PEFT's init for B
}

// On GPT-2 the table is also the head. The branch moves the input rows, as
// PEFT's lora.Embedding does, and the head keeps the base's table: with the
// branch set, the model's logits are those of a base whose input rows (only)
// are W + ΔW, computed here on the host from the branch's parameters.
TEST(LoraEmbedding, OnATiedTableItMovesTheInputRowsNotTheHead) {
  GPT2LMHeadModel model(tinyConfig());
  apply_lora(model, loraConfig({"wte"}), 7, &model.generator());
  randomiseBranches(model, 3);
  HostTensor a = model.transformer->wte->named_parameters()[1].second.to_host();
  ASSERT_EQ(model.transformer->wte->named_parameters()[1].first,
            "lora_embedding_A");
  HostTensor b = model.transformer->wte->named_parameters()[2].second.to_host();
  HostTensor table = model.transformer->wte->weight.to_host();
  HostTensor moved = table;
  for (int64_t v = 0; v < 40; ++v)
    for (int64_t c = 0; c < 16; ++c) {
      double delta = 0;
      for (int64_t k = 0; k < 4; ++k)
        delta += b.getDouble(c * 4 + k) * a.getDouble(k * 40 + v);
      moved.setDouble(v * 16 + c, table.getDouble(v * 16 + c) + delta * 2.0);
    }
  Tensor ids = randomIds(2, 8, 40, 2);
  HostTensor adapted = model.forward(ids).to_host();

  // The reference: a plain GPT-2 computing the same blocks on the moved
  // rows, and the head on the base's table.
  GPT2LMHeadModel plain(tinyConfig());
  NoGradGuard noGrad;
  Tensor x = embedding(Tensor::from_host(moved), ids) +
             plain.transformer->wpe->forward(Tensor::arange(8));
  for (auto &block : plain.transformer->h)
    x = block->forward(x);
  x = plain.transformer->ln_f->forward(x);
  HostTensor reference = x.reshape({-1, 16})
                             .matmul(Tensor::from_host(table).transpose(0, 1))
                             .reshape({2, 8, 40})
                             .to_host();
  EXPECT_LT(maxDifference(adapted, reference), 2e-5);
  EXPECT_GT(maxDifference(adapted, plain.forward(ids).to_host()), 1e-2);

  // Merging would fold ΔW into the head as well: refused, with the reason.
  ASSERT_TRUE(lora_merge_refusal(model).has_value());
  EXPECT_NE(lora_merge_refusal(model)->find("transformer.wte"),
            std::string::npos);
  EXPECT_THROW(merged_state_dict(model), Error);
}

TEST(LoraEmbedding, BranchGradientsMatchFiniteDifferences) {
  GPT2LMHeadModel model(tinyConfig(DType::f64));
  apply_lora(model, loraConfig({"wte"}), 7, &model.generator());
  randomiseBranches(model, 4);
  Tensor ids = randomIds(2, 8, 40, 3);
  // A's columns of tokens the batch lacks get no gradient: half the
  // entries probed must have one.
  kiln::testing::expectGradientsMatchFiniteDifferences(
      trainable_parameters(model), [&] { return model.loss(ids, ids); }, 9,
      /*entries=*/16, /*minNonZero=*/8);
  for (auto &[name, param] : model.named_parameters())
    EXPECT_EQ(param.grad().defined(),
              name.find(".lora_embedding_") != std::string::npos)
        << name;
}

TEST(LoraEmbedding, RoundTripsThroughPeftFiles) {
  char dir[] = "/tmp/kiln-lora-embedding-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  GPT2LMHeadModel model(tinyConfig());
  LoraConfig config = loraConfig({"wte", "c_fc"});
  apply_lora(model, config, 7, &model.generator());
  randomiseBranches(model, 6);
  save_lora_adapter(model, config, dir, "tiny-gpt2");
  absl::StatusOr<SafetensorsData> weights =
      loadSafetensors(std::string(dir) + "/adapter_model.safetensors");
  ASSERT_TRUE(weights.ok());
  // PEFT's keys: the parameters themselves, no ".weight".
  EXPECT_NE(weights->find("base_model.model.transformer.wte.lora_embedding_A"),
            nullptr);
  EXPECT_NE(weights->find("base_model.model.transformer.wte.lora_embedding_B"),
            nullptr);

  GPT2LMHeadModel loaded(tinyConfig());
  apply_lora(loaded, config, 99, &loaded.generator());
  load_lora_adapter(loaded, config, dir);
  Tensor ids = randomIds(2, 8, 40, 4);
  EXPECT_TRUE(
      loaded.forward(ids).to_host().bitwiseEqual(model.forward(ids).to_host()));
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((std::string(dir) + f).c_str());
  ::rmdir(dir);
}

// PEFT's save_embedding_layers: an adapter on an embedding carries the
// table's whole base weight as "...wte.base_layer.weight", which PEFT
// loads over the base's (kiln refused the folder); a base weight of a
// module without a branch is still refused.
TEST(LoraEmbedding, LoadsPeftsBaseLayerOfAnAdaptedTable) {
  char dir[] = "/tmp/kiln-lora-base-layer-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string folder = dir;
  GPT2LMHeadModel model(tinyConfig());
  LoraConfig config = loraConfig({"wte", "c_fc"});
  apply_lora(model, config, 7, &model.generator());
  save_lora_adapter(model, config, folder, "tiny-gpt2");
  Tensor table;
  for (auto &[name, param] : model.named_parameters())
    if (name == "transformer.wte.weight")
      table = param;
  ASSERT_TRUE(table.defined());
  HostTensor trained = (table * 2.0).to_host();
  addAdapterTensor(folder, "base_model.model.transformer.wte.base_layer.weight",
                   trained);

  GPT2LMHeadModel loaded(tinyConfig());
  apply_lora(loaded, config, 99, &loaded.generator());
  load_lora_adapter(loaded, config, folder);
  for (auto &[name, param] : loaded.named_parameters())
    if (name == "transformer.wte.weight")
      EXPECT_TRUE(param.to_host().bitwiseEqual(trained));

  addAdapterTensor(
      folder, "base_model.model.transformer.h.0.attn.c_proj.base_layer.weight",
      trained);
  GPT2LMHeadModel refused(tinyConfig());
  apply_lora(refused, config, 99, &refused.generator());
  try {
    load_lora_adapter(refused, config, folder);
    ADD_FAILURE() << "a base weight of a module without a branch loaded";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "c_proj.base_layer.weight is the base weight of a module "
                  "without a LoRA branch here"),
              std::string::npos)
        << e.what();
  }
  for (const char *f : {"/adapter_config.json", "/adapter_model.safetensors"})
    ::unlink((folder + f).c_str());
  ::rmdir(dir);
}

// Llama's head is its own tensor: the branch merges into embed_tokens, and
// a plain model on the merged weights computes the adapted model's logits.
TEST(LoraEmbedding, MergesIntoAnUntiedTable) {
  LlamaForCausalLM model(tinyLlama());
  apply_lora(model, loraConfig({"embed_tokens", "q_proj"}), 7,
             &model.generator());
  randomiseBranches(model, 5);
  EXPECT_FALSE(lora_merge_refusal(model).has_value());
  Tensor ids = randomIds(2, 8, 64, 6);
  HostTensor adapted = model.forward(ids).to_host();
  std::map<std::string, HostTensor> state;
  for (auto &[name, tensor] : merged_state_dict(model))
    state.emplace(name, tensor.to_host());
  LlamaForCausalLM plain(tinyLlama());
  EXPECT_TRUE(
      state.at("lm_head.weight").bitwiseEqual(plain.lm_head->weight.to_host()));
  EXPECT_FALSE(state.at("model.embed_tokens.weight")
                   .bitwiseEqual(plain.model->embed_tokens->weight.to_host()));
  plain.load_state_dict(state, /*strict=*/true);
  EXPECT_LT(maxDifference(adapted, plain.forward(ids).to_host()), 2e-5);
}

} // namespace
} // namespace kiln::nn
