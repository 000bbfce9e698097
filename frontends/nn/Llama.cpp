// Llama modules, rotary embeddings, forward pass and Hugging Face weight
// loading; see Llama.h.
#include "frontends/nn/Llama.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace kiln::nn {
namespace {

bool isInteger(DType dtype) {
  return dtype == DType::i32 || dtype == DType::i64;
}

// HF's _init_weights: every Linear normal(0, initializer_range), no bias
// unless the config asks for one (then zero).
std::shared_ptr<Linear> projection(int64_t in, int64_t out, bool bias,
                                   const LlamaConfig &config,
                                   InitContext &init) {
  return std::make_shared<Linear>(in, out, init, bias,
                                  config.initializer_range);
}

// An RMSNorm of `dim` as the family has it (Gemma's scales by 1 + weight).
std::shared_ptr<RMSNorm> rmsNorm(int64_t dim, const LlamaConfig &config,
                                 InitContext &init) {
  return std::make_shared<RMSNorm>(dim, init, config.rms_norm_eps,
                                   config.gemma_style);
}

} // namespace

LlamaConfig load_llama_config(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw Error("load_llama_config: '" + path + "': cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<LlamaConfig> config = parseLlamaConfigJson(text.str(), path);
  if (!config.ok())
    throw Error("load_llama_config: " +
                std::string(config.status().message()));
  return *config;
}

std::vector<float> rope_inverse_frequencies(const LlamaConfig &config,
                                            int64_t seqLen) {
  // f32 throughout, in transformers' order of operations, so the angles
  // (and hence cos/sin) are the ones a transformers model uses. A partial
  // rotary factor turns fewer dimensions, at frequencies spread over them.
  const int64_t dim = config.rotary_dim();
  std::vector<float> invFreq(size_t(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i) {
    float exponent = float(2 * i) / float(dim);
    invFreq[i] = 1.0f / std::pow(float(config.rope_theta), exponent);
  }
  const RopeScaling &s = config.rope_scaling;
  if (s.kind == RopeScaling::Kind::longrope) {
    const bool longer = seqLen > s.original_max_position_embeddings;
    const std::vector<double> &ext = longer ? s.long_factor : s.short_factor;
    for (size_t i = 0; i < invFreq.size(); ++i) {
      float exponent = float(2 * i) / float(dim);
      invFreq[i] =
          1.0f / (float(ext[i]) * std::pow(float(config.rope_theta), exponent));
    }
  } else if (s.kind == RopeScaling::Kind::linear) {
    for (float &f : invFreq)
      f /= float(s.factor);
  } else if (s.kind == RopeScaling::Kind::llama3) {
    const float oldContext = float(s.original_max_position_embeddings);
    const double lowFreqWavelen =
        double(s.original_max_position_embeddings) / s.low_freq_factor;
    const double highFreqWavelen =
        double(s.original_max_position_embeddings) / s.high_freq_factor;
    for (float &f : invFreq) {
      float wavelen = float(2 * M_PI) / f;
      float scaled = wavelen > float(lowFreqWavelen) ? f / float(s.factor) : f;
      bool medium = !(wavelen < float(highFreqWavelen)) &&
                    !(wavelen > float(lowFreqWavelen));
      if (medium) {
        float smooth = (oldContext / wavelen - float(s.low_freq_factor)) /
                       float(s.high_freq_factor - s.low_freq_factor);
        scaled = (1 - smooth) * scaled / float(s.factor) + smooth * scaled;
      }
      f = scaled;
    }
  }
  return invFreq;
}

LlamaConfig local_rope_config(const LlamaConfig &config) {
  LlamaConfig local = config;
  local.rope_theta = config.local_rope_theta;
  local.rope_scaling = config.local_rope_scaling;
  return local;
}

RotaryEmbedding::RotaryEmbedding(const LlamaConfig &config)
    : config_(config), dtype_(compute_type(config.dtype)) {}

const std::pair<Tensor, Tensor> &RotaryEmbedding::tables(int64_t t) const {
  auto it = tables_.find(t);
  if (it != tables_.end())
    return it->second;
  const std::vector<float> invFreq = rope_inverse_frequencies(config_, t);
  // LongRoPE's scaling of cos and sin (1 for every other kind), in f32.
  const float scale = config_.rope_scaling.kind == RopeScaling::Kind::longrope
                          ? float(config_.rope_scaling.attention_factor)
                          : 1.0f;
  const int64_t half = int64_t(invFreq.size()), dim = 2 * half;
  HostTensor cos(dtype_, {t, dim}), sin(dtype_, {t, dim});
  for (int64_t pos = 0; pos < t; ++pos)
    for (int64_t i = 0; i < half; ++i) {
      // The angle in f32 (transformers' inv_freq @ positions), both halves
      // the same (its cat((freqs, freqs), -1)).
      double angle = double(invFreq[i] * float(pos));
      for (int64_t j : {i, i + half}) {
        cos.setDouble(pos * dim + j, double(float(std::cos(angle)) * scale));
        sin.setDouble(pos * dim + j, double(float(std::sin(angle)) * scale));
      }
    }
  return tables_
      .emplace(t, std::pair{Tensor::from_host(std::move(cos)),
                            Tensor::from_host(std::move(sin))})
      .first->second;
}

Tensor RotaryEmbedding::apply(const Tensor &x,
                              const std::pair<Tensor, Tensor> &table) {
  const int64_t headDim = x.size(-1), dim = table.first.size(-1);
  // Phi-4-mini's partial rotary factor: the tables are narrower than the
  // head, whose first `dim` dimensions turn and the rest pass through.
  if (dim < headDim)
    return cat({apply(x.slice(-1, 0, dim), table), x.slice(-1, dim, headDim)},
               -1);
  const int64_t half = dim / 2;
  Tensor rotated = cat({-x.slice(-1, half, dim), x.slice(-1, 0, half)}, -1);
  // The tables rounded to x's type, as transformers casts cos and sin.
  return x * as_type(table.first, x.dtype()) +
         rotated * as_type(table.second, x.dtype());
}

LlamaAttention::LlamaAttention(const LlamaConfig &config, int64_t layer,
                               InitContext &init, Generator *generator)
    : num_heads(config.num_attention_heads),
      num_key_value_heads(config.num_key_value_heads),
      head_dim(config.head_dim), window(config.layer_window(layer)),
      softcap(config.attn_logit_softcapping), dropout(config.attention_dropout),
      generator(generator) {
  if (config.query_pre_attn_scalar > 0)
    scale = 1 / std::sqrt(config.query_pre_attn_scalar);
  const int64_t c = config.hidden_size;
  const bool bias = config.attention_bias;
  const bool qkvBias = bias || config.qkv_bias;
  if (config.fused_projections) {
    qkv_proj = register_module(
        "qkv_proj",
        projection(c, (num_heads + 2 * num_key_value_heads) * head_dim, qkvBias,
                   config, init));
  } else {
    q_proj = register_module(
        "q_proj", projection(c, num_heads * head_dim, qkvBias, config, init));
    k_proj =
        register_module("k_proj", projection(c, num_key_value_heads * head_dim,
                                             qkvBias, config, init));
    v_proj =
        register_module("v_proj", projection(c, num_key_value_heads * head_dim,
                                             qkvBias, config, init));
  }
  o_proj = register_module(
      "o_proj", projection(num_heads * head_dim, c, bias, config, init));
  if (config.qk_norm) {
    q_norm = register_module("q_norm", rmsNorm(head_dim, config, init));
    k_norm = register_module("k_norm", rmsNorm(head_dim, config, init));
  }
}

Tensor LlamaAttention::forward(const Tensor &x,
                               const std::pair<Tensor, Tensor> &rope) const {
  const int64_t b = x.size(0), t = x.size(1);
  auto heads = [&](const Tensor &projected, int64_t n) { // → [B, n, T, D]
    return projected.reshape({b, t, n, head_dim}).permute({0, 2, 1, 3});
  };
  // Qwen3's per-head norms, over D, before RoPE.
  auto norm = [](const std::shared_ptr<RMSNorm> &n, const Tensor &h) {
    return n ? n->forward(h) : h;
  };
  Tensor qx, kx, vx;
  if (qkv_proj) { // Phi-3: the query, key and value rows of one weight
    const int64_t kv = num_key_value_heads * head_dim;
    std::vector<Tensor> parts =
        qkv_proj->forward_split(x, {num_heads * head_dim, kv, kv});
    qx = parts[0], kx = parts[1], vx = parts[2];
  } else {
    qx = q_proj->forward(x), kx = k_proj->forward(x), vx = v_proj->forward(x);
  }
  Tensor q = RotaryEmbedding::apply(norm(q_norm, heads(qx, num_heads)), rope);
  Tensor k = RotaryEmbedding::apply(
      norm(k_norm, heads(kx, num_key_value_heads)), rope);
  Tensor v = heads(vx, num_key_value_heads);
  // One fused op, grouped-query heads as they are (no repeated k/v).
  double p = is_training() ? dropout : 0.0;
  Tensor attended =
      softcap > 0
          ? softcapped_attention(q, k, v, softcap, window, p, scale, generator)
      : window > 0
          ? sliding_window_attention(q, k, v, window, p, scale, generator)
          : scaled_dot_product_attention(q, k, v, p, /*is_causal=*/true, scale,
                                         generator);
  Tensor y =
      attended.permute({0, 2, 1, 3}).reshape({b, t, num_heads * head_dim});
  return o_proj->forward(y);
}

LlamaMLP::LlamaMLP(const LlamaConfig &config, InitContext &init)
    : activation(config.hidden_act) {
  const int64_t c = config.hidden_size, inner = config.intermediate_size;
  const bool bias = config.mlp_bias;
  if (config.fused_projections) {
    gate_up_proj = register_module(
        "gate_up_proj", projection(c, 2 * inner, bias, config, init));
  } else {
    gate_proj =
        register_module("gate_proj", projection(c, inner, bias, config, init));
    up_proj =
        register_module("up_proj", projection(c, inner, bias, config, init));
  }
  down_proj =
      register_module("down_proj", projection(inner, c, bias, config, init));
}

Tensor LlamaMLP::forward(const Tensor &x) const {
  Tensor gate, up;
  if (gate_up_proj) { // Phi-3: gate rows, then up rows
    const int64_t inner = down_proj->in_features();
    std::vector<Tensor> parts = gate_up_proj->forward_split(x, {inner, inner});
    gate = parts[0], up = parts[1];
  } else {
    gate = gate_proj->forward(x), up = up_proj->forward(x);
  }
  Tensor activated = activation == LlamaConfig::Activation::gelu_tanh
                         ? gelu(gate)
                         : gate * gate.sigmoid();
  return down_proj->forward(activated * up);
}

LlamaDecoderLayer::LlamaDecoderLayer(const LlamaConfig &config, int64_t layer,
                                     InitContext &init, Generator *generator) {
  self_attn = register_module("self_attn", std::make_shared<LlamaAttention>(
                                               config, layer, init, generator));
  mlp = register_module("mlp", std::make_shared<LlamaMLP>(config, init));
  input_layernorm = register_module("input_layernorm",
                                    rmsNorm(config.hidden_size, config, init));
  post_attention_layernorm = register_module(
      "post_attention_layernorm", rmsNorm(config.hidden_size, config, init));
  if (config.sandwich_norms) {
    pre_feedforward_layernorm = register_module(
        "pre_feedforward_layernorm", rmsNorm(config.hidden_size, config, init));
    post_feedforward_layernorm =
        register_module("post_feedforward_layernorm",
                        rmsNorm(config.hidden_size, config, init));
  }
  local_rope = config.uses_local_rope(layer);
  if (config.resid_pdrop > 0) {
    resid_attn_dropout = register_module(
        "resid_attn_dropout",
        std::make_shared<Dropout>(config.resid_pdrop, generator));
    resid_mlp_dropout = register_module(
        "resid_mlp_dropout",
        std::make_shared<Dropout>(config.resid_pdrop, generator));
  }
}

Tensor LlamaDecoderLayer::forward(const Tensor &x,
                                  const std::pair<Tensor, Tensor> &rope) const {
  auto drop = [](const std::shared_ptr<Dropout> &d, const Tensor &t) {
    return d ? d->forward(t) : t;
  };
  if (pre_feedforward_layernorm) { // Gemma 2's and 3's sandwich
    Tensor h = x + post_attention_layernorm->forward(
                       self_attn->forward(input_layernorm->forward(x), rope));
    return h + post_feedforward_layernorm->forward(
                   mlp->forward(pre_feedforward_layernorm->forward(h)));
  }
  Tensor h = x + drop(resid_attn_dropout,
                      self_attn->forward(input_layernorm->forward(x), rope));
  return h + drop(resid_mlp_dropout,
                  mlp->forward(post_attention_layernorm->forward(h)));
}

LlamaModel::LlamaModel(const LlamaConfig &config, InitContext &init,
                       Generator *generator)
    : rotary_emb(config) {
  if (config.local_rope_theta > 0)
    local_rotary_emb.emplace(local_rope_config(config));
  embed_tokens = register_module(
      "embed_tokens",
      std::make_shared<Embedding>(config.vocab_size, config.hidden_size, init,
                                  config.initializer_range));
  if (config.gemma_style)
    embed_tokens->scale = std::sqrt(double(config.hidden_size));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i)
    layers.push_back(register_module(
        "layers." + std::to_string(i),
        std::make_shared<LlamaDecoderLayer>(config, i, init, generator)));
  norm = register_module("norm", rmsNorm(config.hidden_size, config, init));
}

Tensor LlamaModel::forward(const Tensor &input_ids) const {
  if (input_ids.dim() != 2 || !isInteger(input_ids.dtype()))
    throw Error("Llama: expected integer input_ids [B, T], got " +
                input_ids.str());
  const int64_t t = input_ids.size(1);
  const std::pair<Tensor, Tensor> &rope = rotary_emb.tables(t);
  // Gemma 3's sliding layers' table, looked up once a step.
  const std::pair<Tensor, Tensor> &localRope =
      local_rotary_emb ? local_rotary_emb->tables(t) : rope;
  Tensor x = embed_tokens->forward(input_ids);
  for (const auto &layer : layers)
    x = layer->forward(x, layer->local_rope ? localRope : rope);
  return norm->forward(x);
}

LlamaForCausalLM::~LlamaForCausalLM() = default;

LlamaForCausalLM::LlamaForCausalLM(const LlamaConfig &config)
    : config_(config),
      generator_(std::make_unique<Generator>(config.dropout_seed)) {
  if (config.vocab_size <= 0 || config.hidden_size <= 0 ||
      config.intermediate_size <= 0 || config.num_hidden_layers < 0 ||
      config.num_attention_heads <= 0 || config.num_key_value_heads <= 0 ||
      config.head_dim <= 0 || config.head_dim % 2 != 0 ||
      config.rotary_dim() < 2 || config.rotary_dim() % 2 != 0 ||
      config.rotary_dim() > config.head_dim ||
      config.num_attention_heads % config.num_key_value_heads != 0)
    throw Error("Llama: every size must be positive, head_dim and its "
                "rotary dimensions even and num_attention_heads a multiple "
                "of num_key_value_heads");
  if (!isFloat(config.dtype))
    throw Error("Llama: dtype must be a float type");
  InitContext init(config.init_seed, config.dtype, config.draw_initial_values);
  model = register_module(
      "model", std::make_shared<LlamaModel>(config, init, generator_.get()));
  if (config.tie_word_embeddings)
    register_alias("lm_head.weight", "model.embed_tokens.weight");
  else
    lm_head = register_module(
        "lm_head", projection(config.hidden_size, config.vocab_size, false,
                              config, init));
}

const Tensor &LlamaForCausalLM::head_weight() const {
  return lm_head ? lm_head->weight : model->embed_tokens->weight;
}

Tensor LlamaForCausalLM::forward(const Tensor &input_ids) const {
  Tensor hidden = model->forward(input_ids); // [B, T, C]
  Tensor logits;
  if (lm_head) {
    logits = lm_head->forward(hidden);
  } else {
    const int64_t b = hidden.size(0), t = hidden.size(1);
    logits = hidden.reshape({b * t, config_.hidden_size})
                 .matmul(as_type(head_weight(), hidden.dtype()).transpose(0, 1))
                 .reshape({b, t, config_.vocab_size});
  }
  // Gemma 2's cap, in the logits' type, as transformers applies it.
  if (const double cap = config_.final_logit_softcapping; cap > 0)
    logits = (logits / cap).tanh() * cap;
  return logits;
}

Tensor LlamaForCausalLM::loss(const Tensor &input_ids,
                              const Tensor &labels) const {
  // Gemma 2's cap is inside the fused head + loss, but label smoothing's
  // shortcut (linear in the logits) is not valid past it: that loss reads
  // the capped logits, as a LoRA head's does.
  const double cap = config_.final_logit_softcapping;
  if ((lm_head && lm_head->has_lora()) || (cap > 0 && label_smoothing() != 0))
    return causal_lm_loss_from_logits(forward(input_ids), labels,
                                      label_smoothing());
  return causal_lm_loss(model->forward(input_ids), head_weight(), labels,
                        label_smoothing(), cap);
}

std::string LlamaForCausalLM::describe() const {
  const LlamaConfig &c = config_;
  std::string text = c.model_type + " num_hidden_layers " +
                     std::to_string(c.num_hidden_layers) + ", hidden_size " +
                     std::to_string(c.hidden_size) + ", num_attention_heads " +
                     std::to_string(c.num_attention_heads) + " (" +
                     std::to_string(c.num_key_value_heads) +
                     " key/value), intermediate_size " +
                     std::to_string(c.intermediate_size) + ", vocab " +
                     std::to_string(c.vocab_size);
  // The window, so that a run shows whether its layers attend within one.
  int64_t sliding = 0;
  for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer)
    sliding += c.layer_window(layer) > 0;
  if (sliding > 0) {
    text += ", sliding_window " + std::to_string(c.sliding_window);
    if (sliding < c.num_hidden_layers)
      text += " on " + std::to_string(sliding) + " of " +
              std::to_string(c.num_hidden_layers) + " layers";
  }
  if (c.rotary_dim() < c.head_dim)
    absl::StrAppend(&text, ", RoPE on ", c.rotary_dim(), " of ", c.head_dim,
                    " head dimensions");
  // Gemma 2's soft caps.
  if (c.attn_logit_softcapping > 0)
    absl::StrAppend(&text, ", attention scores capped at ",
                    c.attn_logit_softcapping);
  if (c.final_logit_softcapping > 0)
    absl::StrAppend(&text, ", logits capped at ", c.final_logit_softcapping);
  return text;
}

void load_hf_llama_folder(LlamaForCausalLM &model, const std::string &dir) {
  // LlamaModel's files lack the "model." prefix; rotary inv_freq buffers
  // that old checkpoints saved are recomputed, as transformers does.
  auto rename = [](const std::string &name) -> std::optional<std::string> {
    if (absl::EndsWith(name, ".rotary_emb.inv_freq"))
      return std::nullopt;
    if (absl::StartsWith(name, "model.") || name == "lm_head.weight")
      return name;
    return "model." + name;
  };
  try {
    load_hf_folder(model, dir, rename);
  } catch (const Error &e) {
    throw Error(std::string("load_hf_llama_folder: ") + e.what());
  }
}

} // namespace kiln::nn
