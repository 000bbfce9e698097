// Tests of the nn modules and GPT-2's structure: Hugging Face parameter
// names, layouts and count, the tied head, GPT-2's initialisation, the
// causal mask, train/eval mode, Linear, and loading HF-style safetensors
// files with missing and unexpected keys reported.
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Optimizer.h"
#include "frontends/nn/Safetensors.h"

#include "tests/unit/GradCheckSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <unistd.h>

namespace kiln::nn {
namespace {

GPT2Config tinyConfig() {
  GPT2Config c;
  c.vocab_size = 50;
  c.n_positions = 12;
  c.n_embd = 16;
  c.n_layer = 2;
  c.n_head = 2;
  c.with_dropout(0.0);
  return c;
}

using kiln::testing::randomIds;

double stddev(const std::vector<double> &v) {
  double mean = 0, sq = 0;
  for (double x : v)
    mean += x;
  mean /= v.size();
  for (double x : v)
    sq += (x - mean) * (x - mean);
  return std::sqrt(sq / v.size());
}

TEST(GPT2, HasHuggingFaceParameterNamesAndLayouts) {
  GPT2Config c = tinyConfig();
  c.n_layer = 1;
  GPT2LMHeadModel model(c);
  const int64_t C = 16;
  std::vector<std::pair<std::string, Shape>> want = {
      {"transformer.wte.weight", {50, C}},
      {"transformer.wpe.weight", {12, C}},
      {"transformer.h.0.ln_1.weight", {C}},
      {"transformer.h.0.ln_1.bias", {C}},
      {"transformer.h.0.attn.c_attn.weight", {C, 3 * C}},
      {"transformer.h.0.attn.c_attn.bias", {3 * C}},
      {"transformer.h.0.attn.c_proj.weight", {C, C}},
      {"transformer.h.0.attn.c_proj.bias", {C}},
      {"transformer.h.0.ln_2.weight", {C}},
      {"transformer.h.0.ln_2.bias", {C}},
      {"transformer.h.0.mlp.c_fc.weight", {C, 4 * C}},
      {"transformer.h.0.mlp.c_fc.bias", {4 * C}},
      {"transformer.h.0.mlp.c_proj.weight", {4 * C, C}},
      {"transformer.h.0.mlp.c_proj.bias", {C}},
      {"transformer.ln_f.weight", {C}},
      {"transformer.ln_f.bias", {C}},
  };
  NamedTensors got = model.named_parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].second.shape(), want[i].second) << want[i].first;
    EXPECT_TRUE(got[i].second.requires_grad()) << want[i].first;
  }
}

TEST(GPT2, CountsParametersAsTheFormulaSays) {
  GPT2Config c = tinyConfig();
  GPT2LMHeadModel model(c);
  const int64_t C = c.n_embd;
  // Embeddings, 12C² + 13C per block, the final layer norm; the head is
  // tied, so it adds nothing.
  int64_t want = c.vocab_size * C + c.n_positions * C +
                 c.n_layer * (12 * C * C + 13 * C) + 2 * C;
  EXPECT_EQ(model.num_parameters(), want);
}

TEST(GPT2, InitialisesAsGPT2Does) {
  GPT2Config c = tinyConfig();
  c.n_embd = 64;
  c.vocab_size = 512;
  GPT2LMHeadModel model(c);
  auto *block = model.transformer->h[1].get();
  EXPECT_NEAR(stddev(model.transformer->wte->weight.to_vector()), 0.02, 0.002);
  EXPECT_NEAR(stddev(block->attn->c_attn->weight.to_vector()), 0.02, 0.002);
  // Residual projections: 0.02 / sqrt(2 n_layer) = 0.01.
  EXPECT_NEAR(stddev(block->attn->c_proj->weight.to_vector()), 0.01, 0.001);
  EXPECT_NEAR(stddev(block->mlp->c_proj->weight.to_vector()), 0.01, 0.001);
  for (double v : block->mlp->c_fc->bias.to_vector())
    EXPECT_EQ(v, 0.0);
  for (double v : block->ln_2->weight.to_vector())
    EXPECT_EQ(v, 1.0);
  // The same seed gives the same model; another seed another one.
  GPT2LMHeadModel same(c);
  EXPECT_EQ(same.transformer->wpe->weight.to_vector(),
            model.transformer->wpe->weight.to_vector());
  c.init_seed = 7;
  GPT2LMHeadModel other(c);
  EXPECT_NE(other.transformer->wpe->weight.to_vector(),
            model.transformer->wpe->weight.to_vector());
}

TEST(GPT2, LogitsAreCausalAndShaped) {
  GPT2LMHeadModel model(tinyConfig());
  std::vector<double> a = {1, 2, 3, 4, 5, 6};
  std::vector<double> b = {1, 2, 3, 4, 9, 9}; // differs from position 4 on
  Tensor la = model(Tensor::from_vector(a, {1, 6}, DType::i64));
  Tensor lb = model(Tensor::from_vector(b, {1, 6}, DType::i64));
  EXPECT_EQ(la.shape(), (Shape{1, 6, 50}));
  kiln::step();
  std::vector<double> va = la.to_vector(), vb = lb.to_vector();
  for (int64_t i = 0; i < 4 * 50; ++i)
    ASSERT_EQ(va[i], vb[i]) << "position " << i / 50 << " saw the future";
  bool later = false;
  for (int64_t i = 4 * 50; i < 6 * 50; ++i)
    later = later || va[i] != vb[i];
  EXPECT_TRUE(later);
}

TEST(GPT2, AcceptsI32AndI64Ids) {
  GPT2LMHeadModel model(tinyConfig());
  std::vector<double> ids = {3, 1, 4, 1, 5};
  Tensor a = model(Tensor::from_vector(ids, {1, 5}, DType::i64));
  Tensor b = model(Tensor::from_vector(ids, {1, 5}, DType::i32));
  kiln::step();
  EXPECT_EQ(a.to_vector(), b.to_vector());
}

TEST(GPT2, LossIsNearLogVocabAtInitAndShiftsLabels) {
  GPT2LMHeadModel model(tinyConfig());
  Tensor ids = randomIds(2, 8, 50, 1);
  Tensor loss = model.loss(ids, ids);
  kiln::step();
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item(), std::log(50.0), 0.2);
  // Ignored labels (-100) drop out of the mean: ignoring all but position
  // 1 of row 0 gives that single token's loss.
  Tensor logits = model(ids);
  std::vector<double> lab(16, -100.0);
  lab[1] = 7;
  Tensor one = GPT2LMHeadModel::loss_from_logits(
      logits, Tensor::from_vector(lab, {2, 8}, DType::i64));
  Tensor want = -logits.slice(1, 0, 1)
                     .log_softmax(-1)
                     .slice(2, 7, 8)
                     .slice(0, 0, 1)
                     .sum();
  kiln::step();
  EXPECT_NEAR(one.item(), want.item(), 1e-5);
}

// The Trainer's LabelSmoother (label_smoothing_factor 0.1) on the shifted
// rows: (1 - eps) · the mean nll + eps · the mean of -(1/V) Σ_j log p_j,
// over the labelled rows. The fused loss (which gathers the labels' head
// rows instead of forming the logits) and the one from logits must both
// give it, and the same gradients.
TEST(GPT2, LabelSmoothingIsTheTrainersLabelSmoother) {
  const double eps = 0.1;
  const int64_t v = 50, b = 2, t = 8;
  Tensor ids = randomIds(b, t, v, 3);
  std::vector<double> lab = ids.to_vector();
  lab[3] = lab[12] = -100; // ignored labels drop out of both means
  Tensor labels = Tensor::from_vector(lab, {b, t}, DType::i64);

  GPT2LMHeadModel fused(tinyConfig()), fromLogits(tinyConfig());
  {
    // Logits far from uniform, where smoothing matters (at init it moves
    // the loss by 4e-4).
    NoGradGuard noGrad;
    for (GPT2LMHeadModel *model : {&fused, &fromLogits}) {
      Tensor &wte = model->transformer->wte->weight;
      wte.assign_(wte * 30.0);
    }
    kiln::step();
  }
  fused.set_label_smoothing(eps);
  Tensor fusedLoss = fused.loss(ids, labels);
  Tensor logits = fromLogits(ids);
  Tensor logitsLoss = causal_lm_loss_from_logits(logits, labels, eps);
  fusedLoss.backward();
  logitsLoss.backward();
  kiln::step();

  std::vector<double> z = logits.to_vector();
  double nll = 0, uniform = 0;
  int rows = 0;
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i + 1 < t; ++i) {
      double label = lab[r * t + i + 1];
      if (label == -100)
        continue;
      const double *row = &z[(r * t + i) * v];
      double top = *std::max_element(row, row + v), sum = 0, mean = 0;
      for (int64_t j = 0; j < v; ++j)
        sum += std::exp(row[j] - top), mean += row[j] / double(v);
      double lse = top + std::log(sum);
      nll += lse - row[int64_t(label)];
      uniform += lse - mean;
      ++rows;
    }
  double want = (1 - eps) * nll / rows + eps * uniform / rows;
  EXPECT_NEAR(fusedLoss.item(), want, 1e-5);
  EXPECT_NEAR(logitsLoss.item(), want, 1e-5);
  EXPECT_GT(std::abs(want - nll / rows), 0.05); // smoothing changes it

  std::vector<double> g1 = fused.transformer->wte->weight.grad().to_vector();
  std::vector<double> g2 =
      fromLogits.transformer->wte->weight.grad().to_vector();
  ASSERT_EQ(g1.size(), g2.size());
  for (size_t i = 0; i < g1.size(); ++i)
    ASSERT_NEAR(g1[i], g2[i], 1e-5) << i;

  EXPECT_THROW(fused.set_label_smoothing(1.0), Error);
  EXPECT_THROW(fused.set_label_smoothing(-0.1), Error);
}

// NEFTune (the Trainer's neftune_noise_alpha 5): in training the token
// embeddings move by uniform noise within ±5 / sqrt(T · C); in evaluation
// they are the table's rows.
TEST(GPT2, NeftuneNoiseIsUniformWithinItsBoundAndOnlyInTraining) {
  GPT2LMHeadModel model(tinyConfig());
  Tensor ids = randomIds(2, 8, 50, 4);
  Embedding &wte = model.input_embeddings();
  model.train();
  Tensor clean = wte(ids);
  model.set_neftune_noise_alpha(5.0);
  Tensor noisy = wte(ids);
  model.eval();
  Tensor evaluated = wte(ids);
  kiln::step();
  const double bound = 5.0 / std::sqrt(8.0 * 16.0);
  std::vector<double> a = clean.to_vector(), b = noisy.to_vector();
  double largest = 0, sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double moved = std::abs(b[i] - a[i]);
    largest = std::max(largest, moved);
    sum += moved;
  }
  EXPECT_LE(largest, bound * (1 + 1e-5));
  EXPECT_GT(largest, 0.9 * bound); // 256 draws reach the edge
  // |U(-m, m)| averages m / 2.
  EXPECT_NEAR(sum / double(a.size()), bound / 2, 0.1 * bound);
  EXPECT_EQ(evaluated.to_vector(), a);
  EXPECT_THROW(model.set_neftune_noise_alpha(-1), Error);
}

TEST(GPT2, DropoutOnlyInTrainingMode) {
  GPT2Config c = tinyConfig();
  c.with_dropout(0.5);
  GPT2LMHeadModel model(c);
  Tensor ids = randomIds(1, 8, 50, 2);
  model.eval();
  EXPECT_FALSE(model.transformer->h[0]->attn->attn_dropout->is_training());
  Tensor e1 = model(ids), e2 = model(ids);
  model.train();
  Tensor t1 = model(ids), t2 = model(ids);
  kiln::step();
  EXPECT_EQ(e1.to_vector(), e2.to_vector());
  EXPECT_NE(t1.to_vector(), t2.to_vector());
  EXPECT_NE(t1.to_vector(), e1.to_vector());
}

TEST(GPT2, RejectsBadInputs) {
  GPT2LMHeadModel model(tinyConfig());
  EXPECT_THROW(model(Tensor::zeros({2, 3})), Error); // float ids
  EXPECT_THROW(model(Tensor::zeros({2, 13}, DType::i64)),
               Error); // > n_positions
  GPT2Config bad = tinyConfig();
  bad.n_head = 3;
  EXPECT_THROW(GPT2LMHeadModel{bad}, Error);
}

TEST(Linear, ComputesXWTransposedPlusBias) {
  InitContext init(0, DType::f64);
  Linear lin(2, 3, init);
  NoGradGuard noGrad;
  lin.weight.assign_(
      Tensor::from_vector({1, 2, 3, 4, 5, 6}, {3, 2}, DType::f64));
  lin.bias.assign_(Tensor::from_vector({0.5, 0, -1}, {3}, DType::f64));
  Tensor y = lin(Tensor::from_vector({1, 1, 2, 0}, {2, 2}, DType::f64));
  kiln::step();
  EXPECT_EQ(y.to_vector(), (std::vector<double>{3.5, 7, 10, 2.5, 6, 9}));
}

/// The model's state dict renamed as a Hugging Face GPT2Model file: no
/// "transformer." prefix, the old causal-mask buffers, and lm_head.weight.
std::vector<NamedTensor> hfStyle(const GPT2LMHeadModel &model) {
  std::vector<NamedTensor> out;
  for (const auto &[name, t] : model.state_dict())
    out.push_back(
        {name.substr(std::string("transformer.").size()), t.to_host()});
  out.push_back({"h.0.attn.bias", HostTensor(DType::f32, {1, 1, 12, 12})});
  out.push_back({"lm_head.weight", model.transformer->wte->weight.to_host()});
  return out;
}

TEST(GPT2, LoadsHuggingFaceFilesByName) {
  GPT2LMHeadModel source(tinyConfig());
  char dir[] = "/tmp/kiln-hf-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/model.safetensors";
  ASSERT_TRUE(saveSafetensors(path, hfStyle(source), {{"format", "pt"}}).ok());

  GPT2Config other = tinyConfig();
  other.init_seed = 99;
  GPT2LMHeadModel target(other);
  LoadResult r = load_hf_gpt2(target, path);
  EXPECT_TRUE(r.missingKeys.empty());
  EXPECT_TRUE(r.unexpectedKeys.empty());
  kiln::step();
  NamedTensors a = source.named_parameters(), b = target.named_parameters();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i].second.to_host().bitwiseEqual(b[i].second.to_host()))
        << a[i].first;

  // A file with a key missing and an unknown one: strict loading names
  // both; non-strict loading returns them.
  std::vector<NamedTensor> broken = hfStyle(source);
  broken.erase(broken.begin() + 3);
  broken.push_back({"h.9.mystery", HostTensor(DType::f32, {2})});
  ASSERT_TRUE(saveSafetensors(path, broken, {}).ok());
  try {
    load_hf_gpt2(target, path);
    ADD_FAILURE() << "strict load accepted a broken file";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("transformer.h.0.ln_1.bias"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("transformer.h.9.mystery"),
              std::string::npos)
        << e.what();
  }
  LoadResult loose = load_hf_gpt2(target, path, /*strict=*/false);
  EXPECT_EQ(loose.missingKeys,
            std::vector<std::string>{"transformer.h.0.ln_1.bias"});
  EXPECT_EQ(loose.unexpectedKeys,
            std::vector<std::string>{"transformer.h.9.mystery"});

  // A wrong shape is an error that names the key and both shapes.
  std::vector<NamedTensor> wrong = hfStyle(source);
  wrong[0].tensor = HostTensor(DType::f32, {50, 8});
  ASSERT_TRUE(saveSafetensors(path, wrong, {}).ok());
  try {
    load_hf_gpt2(target, path);
    ADD_FAILURE() << "loaded a wrong shape";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("'transformer.wte.weight' has shape "
                                         "[50, 8] in the state dict but "
                                         "[50, 16]"),
              std::string::npos)
        << e.what();
  }
  ::unlink(path.c_str());
  ::rmdir(dir);
}

TEST(GPT2, LoadsShardedFoldersByTheirIndex) {
  GPT2LMHeadModel source(tinyConfig());
  char dir[] = "/tmp/kiln-hf-shards-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string folder = dir;
  // Two shards, split in the middle, and the index that maps every name.
  std::vector<NamedTensor> all = hfStyle(source);
  size_t half = all.size() / 2;
  std::vector<NamedTensor> first(all.begin(), all.begin() + long(half)),
      second(all.begin() + long(half), all.end());
  ASSERT_TRUE(saveSafetensors(folder + "/model-00001-of-00002.safetensors",
                              first, {{"format", "pt"}})
                  .ok());
  ASSERT_TRUE(saveSafetensors(folder + "/model-00002-of-00002.safetensors",
                              second, {{"format", "pt"}})
                  .ok());
  auto writeIndex = [&](size_t entries, const std::string &secondShard) {
    std::ofstream index(folder + "/model.safetensors.index.json");
    index << "{\"metadata\": {}, \"weight_map\": {";
    for (size_t i = 0; i < entries; ++i)
      index << (i ? ", " : "") << '"' << all[i].name << "\": \""
            << (i < half ? "model-00001-of-00002.safetensors" : secondShard)
            << '"';
    index << "}}";
  };
  writeIndex(all.size(), "model-00002-of-00002.safetensors");
  GPT2Config other = tinyConfig();
  other.init_seed = 99;
  GPT2LMHeadModel target(other);
  load_hf_gpt2_folder(target, folder);
  kiln::step();
  NamedTensors a = source.named_parameters(), b = target.named_parameters();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i].second.to_host().bitwiseEqual(b[i].second.to_host()))
        << a[i].first;

  auto expectError = [&](const std::string &needle) {
    try {
      GPT2LMHeadModel fresh(tinyConfig());
      load_hf_gpt2_folder(fresh, folder);
      ADD_FAILURE() << "loaded, expected an error with: " << needle;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    }
  };
  // A shard the index names that is not there.
  writeIndex(all.size(), "model-00003-of-00003.safetensors");
  expectError("names the shard model-00003-of-00003.safetensors, which is "
              "not in");
  // An index that maps only the first shard: the second's parameters are
  // missing.
  writeIndex(half, "");
  expectError("no shard holds");
  // Not JSON, and no weights at all.
  { std::ofstream(folder + "/model.safetensors.index.json") << "{oops"; }
  expectError("model.safetensors.index.json: not JSON");
  ::unlink((folder + "/model.safetensors.index.json").c_str());
  expectError("has neither model.safetensors nor");
  for (const char *f : {"/model-00001-of-00002.safetensors",
                        "/model-00002-of-00002.safetensors"})
    ::unlink((folder + f).c_str());
  ::rmdir(dir);
}

TEST(GPT2, ExemptsBiasesAndLayerNormsFromWeightDecayAsHFDoes) {
  GPT2LMHeadModel model(tinyConfig());
  std::set<std::string> names = bias_and_norm_names(model);
  EXPECT_TRUE(names.count("transformer.h.0.ln_1.weight"));
  EXPECT_TRUE(names.count("transformer.h.1.attn.c_attn.bias"));
  EXPECT_TRUE(names.count("transformer.ln_f.weight"));
  EXPECT_TRUE(names.count("transformer.ln_f.bias"));
  EXPECT_FALSE(names.count("transformer.wte.weight"));
  EXPECT_FALSE(names.count("transformer.h.0.mlp.c_fc.weight"));
  // Two layer norms and 6 biases per block, plus ln_f's two tensors.
  EXPECT_EQ(names.size(), 2u * (2 * 2 + 4) + 2);
}

TEST(GPT2, ReadsHuggingFaceConfigJson) {
  char dir[] = "/tmp/kiln-hf-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/config.json";
  auto write = [&](const std::string &extra) {
    std::ofstream(path) << R"({"activation_function": "gelu_new",
      "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
      "embd_pdrop": 0.05, "initializer_range": 0.02,
      "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024,
      "n_embd": 768, "n_head": 12, "n_inner": null, "n_layer": 12,
      "n_positions": 1024, "resid_pdrop": 0.1, "vocab_size": 50257)"
                        << extra << "}";
  };
  write("");
  GPT2Config c = load_gpt2_config(path);
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.n_positions, 1024);
  EXPECT_EQ(c.n_embd, 768);
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_EQ(c.embd_pdrop, 0.05);
  EXPECT_EQ(c.layer_norm_epsilon, 1e-5);

  auto errorWith = [&](const std::string &extra) -> std::string {
    write(extra);
    try {
      load_gpt2_config(path);
    } catch (const Error &e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(errorWith(R"(, "activation_function": "relu")").find("relu"),
            std::string::npos);
  EXPECT_NE(errorWith(R"(, "n_inner": 1000)").find("n_inner"),
            std::string::npos);
  EXPECT_NE(errorWith(R"(, "tie_word_embeddings": false)").find("untied"),
            std::string::npos);
  EXPECT_NE(errorWith(R"(, "n_head": -2)").find("'n_head' must be an integer"),
            std::string::npos);
  EXPECT_NE(errorWith(R"(, "n_embd": 4611686018427387904)").find("'n_embd'"),
            std::string::npos);
  EXPECT_NE(errorWith(R"(, "attn_pdrop": 1.5)").find("'attn_pdrop'"),
            std::string::npos);
  EXPECT_NE(errorWith(R"(, "n_head": 5)").find("not divisible"),
            std::string::npos);
  EXPECT_NE(errorWith(", oops").find("not valid JSON"), std::string::npos);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

} // namespace
} // namespace kiln::nn
