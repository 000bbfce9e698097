// GPT-2 modules, forward pass, loss and Hugging Face weight loading; see
// GPT2.h.
#include "frontends/nn/GPT2.h"

#include "absl/strings/match.h"

#include <cmath>
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
  InitContext init(config.init_seed, config.dtype, config.draw_initial_values);
  transformer = register_module(
      "transformer",
      std::make_shared<GPT2Model>(config, init, generator_.get()));
  // The head reuses the token embedding (weight tying), so the state dict
  // holds it once and "lm_head.weight" is only an alias when loading.
  register_alias("lm_head.weight", "transformer.wte.weight");
}

Tensor GPT2LMHeadModel::forward(const Tensor &input_ids) const {
  Tensor hidden = transformer->forward(input_ids); // [B, T, C]
  // The tied head in the activations' type, as every layer computes.
  Tensor wte = as_type(transformer->wte->weight, hidden.dtype()); // [V, C]
  const int64_t b = hidden.size(0), t = hidden.size(1);
  return hidden.reshape({b * t, config_.n_embd})
      .matmul(wte.transpose(0, 1))
      .reshape({b, t, config_.vocab_size});
}

Tensor GPT2LMHeadModel::loss_from_logits(const Tensor &logits,
                                         const Tensor &labels) {
  return causal_lm_loss_from_logits(logits, labels);
}

Tensor GPT2LMHeadModel::loss(const Tensor &input_ids,
                             const Tensor &labels) const {
  // loss_from_logits(forward(input_ids), labels) without the [B, T, V]
  // logits: the head and the loss are one fused op over the shifted rows.
  return causal_lm_loss(transformer->forward(input_ids),
                        transformer->wte->weight, labels, label_smoothing());
}

std::string GPT2LMHeadModel::describe() const {
  return "gpt2 n_layer " + std::to_string(config_.n_layer) + ", n_embd " +
         std::to_string(config_.n_embd) + ", n_head " +
         std::to_string(config_.n_head) + ", vocab " +
         std::to_string(config_.vocab_size) + ", n_positions " +
         std::to_string(config_.n_positions);
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

namespace {

// GPT-2's checkpoint names → the model's: GPT2Model's files lack the
// "transformer." prefix, and old ones carry the causal mask as buffers,
// which HF ignores too.
std::optional<std::string> gpt2Name(const std::string &name) {
  if (absl::EndsWith(name, ".attn.bias") ||
      absl::EndsWith(name, ".attn.masked_bias"))
    return std::nullopt;
  if (absl::StartsWith(name, "transformer.") || name == "lm_head.weight")
    return name;
  return "transformer." + name;
}

} // namespace

LoadResult load_hf_gpt2(GPT2LMHeadModel &model, const std::string &path,
                        bool strict) {
  try {
    return load_hf_safetensors(model, path, strict, gpt2Name);
  } catch (const Error &e) {
    throw Error(std::string("load_hf_gpt2: ") + e.what());
  }
}

void load_hf_gpt2_folder(GPT2LMHeadModel &model, const std::string &dir) {
  try {
    load_hf_folder(model, dir, gpt2Name);
  } catch (const Error &e) {
    throw Error(std::string("load_hf_gpt2_folder: ") + e.what());
  }
}

} // namespace kiln::nn
