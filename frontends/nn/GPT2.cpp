// GPT-2 modules, forward pass, loss and Hugging Face weight loading; see
// GPT2.h.
#include "frontends/nn/GPT2.h"

#include "frontends/nn/Safetensors.h"


#include "llvm/Support/JSON.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

namespace kiln::nn {
namespace {

bool isInteger(DType dtype) {
  return dtype == DType::i32 || dtype == DType::i64;
}

} // namespace

CausalSelfAttention::CausalSelfAttention(const GPT2Config &config,
                                         InitContext &init,
                                         Generator *generator)
    : n_head(config.n_head) {
  const int64_t c = config.n_embd;
  if (c % config.n_head != 0)
    throw Error("GPT2: n_embd " + std::to_string(c) +
                " is not divisible by n_head " + std::to_string(config.n_head));
  // Residual projections are scaled by 1/sqrt(2 n_layer) (GPT-2 paper, HF).
  double residStd = config.initializer_range / std::sqrt(2.0 * config.n_layer);
  c_attn = register_module(
      "c_attn",
      std::make_shared<Conv1D>(c, 3 * c, init, config.initializer_range));
  c_proj =
      register_module("c_proj", std::make_shared<Conv1D>(c, c, init, residStd));
  attn_dropout = register_module(
      "attn_dropout", std::make_shared<Dropout>(config.attn_pdrop, generator));
  resid_dropout =
      register_module("resid_dropout",
                      std::make_shared<Dropout>(config.resid_pdrop, generator));
}

Tensor CausalSelfAttention::forward(const Tensor &x) const {
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2);
  const int64_t d = c / n_head;
  Tensor qkv = c_attn->forward(x); // [B, T, 3C]
  auto heads = [&](int64_t part) { // → [B, H, T, D]
    return qkv.slice(-1, part * c, (part + 1) * c)
        .reshape({b, t, n_head, d})
        .permute({0, 2, 1, 3});
  };
  Tensor q = heads(0), k = heads(1), v = heads(2);
  // One fused op: causal softmax(q kᵀ / sqrt(d)) with dropout, times v.
  // Backends never store the [T, T] probabilities; backward recomputes them.
  double p = attn_dropout->is_training() ? attn_dropout->p : 0.0;
  Tensor y = scaled_dot_product_attention(q, k, v, p, /*is_causal=*/true,
                                          std::nullopt,
                                          attn_dropout->generator)
                 .permute({0, 2, 1, 3})
                 .reshape({b, t, c});
  return resid_dropout->forward(c_proj->forward(y));
}

MLP::MLP(const GPT2Config &config, InitContext &init, Generator *generator) {
  const int64_t c = config.n_embd;
  double residStd = config.initializer_range / std::sqrt(2.0 * config.n_layer);
  c_fc = register_module("c_fc", std::make_shared<Conv1D>(
                                     c, 4 * c, init, config.initializer_range));
  c_proj = register_module("c_proj",
                           std::make_shared<Conv1D>(4 * c, c, init, residStd));
  dropout = register_module(
      "dropout", std::make_shared<Dropout>(config.resid_pdrop, generator));
}

Tensor MLP::forward(const Tensor &x) const {
  return dropout->forward(c_proj->forward(gelu(c_fc->forward(x))));
}

Block::Block(const GPT2Config &config, InitContext &init,
             Generator *generator) {
  const double eps = config.layer_norm_epsilon;
  ln_1 = register_module("ln_1",
                         std::make_shared<LayerNorm>(config.n_embd, init, eps));
  attn = register_module(
      "attn", std::make_shared<CausalSelfAttention>(config, init, generator));
  ln_2 = register_module("ln_2",
                         std::make_shared<LayerNorm>(config.n_embd, init, eps));
  mlp = register_module("mlp", std::make_shared<MLP>(config, init, generator));
}

Tensor Block::forward(const Tensor &x) const {
  Tensor h = x + attn->forward(ln_1->forward(x));
  return h + mlp->forward(ln_2->forward(h));
}

GPT2Model::GPT2Model(const GPT2Config &config, InitContext &init,
                     Generator *generator)
    : n_positions(config.n_positions) {
  wte = register_module(
      "wte", std::make_shared<Embedding>(config.vocab_size, config.n_embd, init,
                                         config.initializer_range));
  wpe = register_module(
      "wpe", std::make_shared<Embedding>(config.n_positions, config.n_embd,
                                         init, config.initializer_range));
  drop = register_module(
      "drop", std::make_shared<Dropout>(config.embd_pdrop, generator));
  for (int64_t i = 0; i < config.n_layer; ++i)
    h.push_back(
        register_module("h." + std::to_string(i),
                        std::make_shared<Block>(config, init, generator)));
  ln_f = register_module(
      "ln_f", std::make_shared<LayerNorm>(config.n_embd, init,
                                          config.layer_norm_epsilon));
}

Tensor GPT2Model::forward(const Tensor &input_ids) const {
  if (input_ids.dim() != 2 || !isInteger(input_ids.dtype()))
    throw Error("GPT2: expected integer input_ids [B, T], got " +
                input_ids.str());
  const int64_t t = input_ids.size(1);
  if (t > n_positions)
    throw Error("GPT2: sequence length " + std::to_string(t) +
                " exceeds n_positions " + std::to_string(n_positions));
  // [B, T, C] + [T, C]: positions broadcast over the batch.
  Tensor x = wte->forward(input_ids) + wpe->forward(Tensor::arange(t));
  x = drop->forward(x);
  for (const auto &block : h)
    x = block->forward(x);
  return ln_f->forward(x);
}

GPT2LMHeadModel::~GPT2LMHeadModel() = default;

GPT2LMHeadModel::GPT2LMHeadModel(const GPT2Config &config)
    : config_(config),
      generator_(std::make_unique<Generator>(config.dropout_seed)) {
  if (config.vocab_size <= 0 || config.n_embd <= 0 || config.n_layer < 0 ||
      config.n_head <= 0 || config.n_positions <= 0)
    throw Error("GPT2: every size in the config must be positive");
  if (!isFloat(config.dtype))
    throw Error("GPT2: dtype must be a float type");
  InitContext init(config.init_seed, config.dtype);
  transformer = register_module(
      "transformer",
      std::make_shared<GPT2Model>(config, init, generator_.get()));
  // The head reuses the token embedding (weight tying), so the state dict
  // holds it once and "lm_head.weight" is only an alias when loading.
  register_alias("lm_head.weight", "transformer.wte.weight");
}

Tensor GPT2LMHeadModel::forward(const Tensor &input_ids) const {
  Tensor hidden = transformer->forward(input_ids); // [B, T, C]
  const Tensor &wte = transformer->wte->weight;    // [V, C]
  const int64_t b = hidden.size(0), t = hidden.size(1);
  return hidden.reshape({b * t, config_.n_embd})
      .matmul(wte.transpose(0, 1))
      .reshape({b, t, config_.vocab_size});
}

Tensor GPT2LMHeadModel::loss_from_logits(const Tensor &logits,
                                         const Tensor &labels) {
  if (logits.dim() != 3 || labels.dim() != 2 ||
      labels.size(0) != logits.size(0) || labels.size(1) != logits.size(1))
    throw Error("GPT2 loss: expected logits [B, T, V] and labels [B, T], "
                "got " +
                logits.str() + " and " + labels.str());
  const int64_t t = logits.size(1), v = logits.size(2);
  // Position i predicts token i + 1 (HF shifts the same way).
  Tensor shiftedLogits = logits.slice(1, 0, t - 1).reshape({-1, v});
  Tensor shiftedLabels = labels.slice(1, 1, t).reshape({-1});
  return cross_entropy(shiftedLogits, shiftedLabels, -100);
}

Tensor GPT2LMHeadModel::loss(const Tensor &input_ids,
                             const Tensor &labels) const {
  if (input_ids.dim() != 2 || labels.dim() != 2 ||
      labels.size(0) != input_ids.size(0) || labels.size(1) != input_ids.size(1))
    throw Error("GPT2 loss: expected input_ids and labels [B, T], got " +
                input_ids.str() + " and " + labels.str());
  // loss_from_logits(forward(input_ids), labels) without the [B, T, V]
  // logits: the head and the loss are one fused op over the shifted rows.
  Tensor hidden = transformer->forward(input_ids); // [B, T, C]
  const int64_t t = hidden.size(1);
  Tensor rows = hidden.slice(1, 0, t - 1).reshape({-1, config_.n_embd});
  Tensor shiftedLabels = labels.slice(1, 1, t).reshape({-1});
  return linear_cross_entropy(rows, transformer->wte->weight, shiftedLabels,
                              -100);
}

GPT2Config load_gpt2_config(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw Error("load_gpt2_config: '" + path + "': cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<GPT2Config> config = parseGPT2ConfigJson(text.str(), path);
  if (!config.ok())
    throw Error("load_gpt2_config: " + std::string(config.status().message()));
  return *config;
}

LoadResult load_hf_gpt2(GPT2LMHeadModel &model, const std::string &path,
                        bool strict) {
  absl::StatusOr<SafetensorsData> file = loadSafetensors(path);
  if (!file.ok())
    throw Error("load_hf_gpt2: " + std::string(file.status().message()));
  auto endsWith = [](const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  std::map<std::string, HostTensor> state;
  for (NamedTensor &t : file->tensors) {
    // Old HF checkpoints carry the causal mask as buffers; HF ignores them.
    if (endsWith(t.name, ".attn.bias") || endsWith(t.name, ".attn.masked_bias"))
      continue;
    std::string name = t.name;
    if (name.rfind("transformer.", 0) != 0 && name != "lm_head.weight")
      name = "transformer." + name; // saved from GPT2Model
    state.emplace(std::move(name), std::move(t.tensor));
  }
  return model.load_state_dict(state, strict);
}

void load_hf_gpt2_folder(GPT2LMHeadModel &model, const std::string &dir) {
  namespace fs = std::filesystem;
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::is_regular_file(single, ec)) {
    load_hf_gpt2(model, single.string(), /*strict=*/true);
    return;
  }
  std::ifstream in(index, std::ios::binary);
  if (!in)
    throw Error("load_hf_gpt2_folder: " + dir +
                " has neither model.safetensors nor "
                "model.safetensors.index.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    throw Error(index.string() + ": not JSON: " +
                llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Object *map = root ? root->getObject("weight_map") : nullptr;
  if (!map)
    throw Error(index.string() + ": no \"weight_map\" object");
  std::set<std::string> shards;
  for (const auto &[name, file] : *map) {
    std::optional<llvm::StringRef> shard = file.getAsString();
    if (!shard || shard->contains('/') || *shard == "..")
      throw Error(index.string() + ": the file of " + name.str() +
                  " is not a file name in the folder");
    shards.insert(shard->str());
  }
  // A parameter is loaded when some shard holds it: the keys every shard
  // lacks are the missing ones.
  std::set<std::string> missing;
  for (const auto &[name, tensor] : model.named_parameters())
    missing.insert(name);
  for (const std::string &shard : shards) {
    fs::path path = fs::path(dir) / shard;
    if (!fs::is_regular_file(path, ec))
      throw Error(index.string() + " names the shard " + shard +
                  ", which is not in " + dir);
    LoadResult loaded = load_hf_gpt2(model, path.string(), /*strict=*/false);
    if (!loaded.unexpectedKeys.empty())
      throw Error(path.string() + ": " + loaded.unexpectedKeys[0] +
                  " is not a parameter of the model");
    std::set<std::string> lacks(loaded.missingKeys.begin(),
                                loaded.missingKeys.end());
    for (auto it = missing.begin(); it != missing.end();)
      it = lacks.count(*it) ? std::next(it) : missing.erase(it);
  }
  if (!missing.empty())
    throw Error(index.string() + ": no shard holds " + *missing.begin() +
                (missing.size() > 1
                     ? " (and " + std::to_string(missing.size() - 1) +
                           " more parameters)"
                     : std::string()));
}

} // namespace kiln::nn
