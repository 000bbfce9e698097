// The Llama family's other members from their Hub configs: Qwen2 and
// Qwen3, Phi-3 (and Phi-3.5's LongRoPE), Gemma and Gemma 3, Mistral; what
// each reads, what it refuses, and the modules it builds (their Hugging
// Face names, windows, norms and scales). Parity with transformers is
// LlamaTest's.
#include "LlamaConfigSupport.h"
#include "frontends/nn/Llama.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace kiln::nn {
namespace {

// Qwen2.5's and Qwen3's configs as the Hub has them: Qwen2 always has
// biases on q/k/v_proj (no key for it), Qwen3 per-head norms and a
// head_dim of 128 unless it says otherwise; their window counts only when
// use_sliding_window switches it on, and then only on the layers
// layer_types names (else those from max_window_layers on), as Qwen2Config
// reads them.
TEST(LlamaConfig, ReadsQwenConfigs) {
  LlamaConfig q2 = parseOk(R"({"model_type": "qwen2",
    "architectures": ["Qwen2ForCausalLM"], "vocab_size": 151936,
    "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2,
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0, "sliding_window": 32768,
    "use_sliding_window": false, "max_window_layers": 24,
    "tie_word_embeddings": true, "hidden_act": "silu"})");
  EXPECT_EQ(q2.model_type, "qwen2");
  EXPECT_TRUE(q2.qkv_bias);
  EXPECT_FALSE(q2.attention_bias || q2.qk_norm);
  EXPECT_EQ(q2.head_dim, 64);
  EXPECT_EQ(q2.sliding_window, 0); // use_sliding_window false
  EXPECT_EQ(q2.qwen_sliding_window, std::optional<int64_t>(32768));
  EXPECT_EQ(q2.max_window_layers, 24);
  EXPECT_EQ(parseOk(R"({"model_type": "qwen2", "sliding_window": 64,
                        "use_sliding_window": true})")
                .sliding_window,
            64);
  EXPECT_EQ(q2.layer_window(23), 0);
  LlamaConfig byCount = parseOk(R"({"model_type": "qwen2", "sliding_window": 64,
    "use_sliding_window": true, "num_hidden_layers": 3,
    "max_window_layers": 1})");
  EXPECT_EQ(byCount.sliding_window, 64);
  EXPECT_EQ(byCount.layer_window(0), 0);
  EXPECT_EQ(byCount.layer_window(1), 64);
  EXPECT_EQ(byCount.layer_window(2), 64);
  LlamaConfig byType = parseOk(R"({"model_type": "qwen2", "sliding_window": 64,
    "use_sliding_window": true, "num_hidden_layers": 2,
    "layer_types": ["sliding_attention", "full_attention"]})");
  EXPECT_EQ(byType.layer_window(0), 64);
  EXPECT_EQ(byType.layer_window(1), 0);
  // layer_types without use_sliding_window: no window (Qwen2Config drops
  // it).
  EXPECT_EQ(parseOk(R"({"model_type": "qwen2", "sliding_window": 64,
                        "num_hidden_layers": 2,
                        "layer_types": ["full_attention",
                                        "sliding_attention"]})")
                .layer_window(1),
            0);
  expectRefused(R"({"model_type": "qwen2", "num_hidden_layers": 2,
                    "layer_types": ["full_attention"]})",
                "layer_types lists 1 layers for num_hidden_layers 2");
  expectRefused(R"({"model_type": "qwen3", "num_hidden_layers": 1,
                    "layer_types": ["chunked_attention"]})",
                "layer_types must list");
  expectRefused(R"({"model_type": "qwen2", "attention_bias": true})",
                "attention_bias is not a Qwen2 setting");

  LlamaConfig q3 = parseOk(R"({"model_type": "qwen3", "hidden_size": 1024,
    "num_attention_heads": 16, "num_key_value_heads": 8,
    "attention_bias": false, "sliding_window": null})");
  EXPECT_TRUE(q3.qk_norm);
  EXPECT_FALSE(q3.qkv_bias || q3.attention_bias);
  EXPECT_EQ(q3.head_dim, 128); // Qwen3Config's default, not 1024 / 16
  EXPECT_EQ(q3.qwen_sliding_window, std::nullopt);
  EXPECT_EQ(parseOk(R"({"model_type": "qwen3", "head_dim": 64})").head_dim, 64);

  set_options(options_from_env());
  LlamaConfig tiny = parseOk(R"({"model_type": "qwen3", "vocab_size": 16,
    "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
    "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4})");
  // Parameter name → shape, and the attention's as "q_norm.weight" etc.
  auto attention = [](const LlamaConfig &config) {
    LlamaForCausalLM model(config);
    std::map<std::string, Shape> shapes;
    const std::string prefix = "model.layers.0.self_attn.";
    for (const auto &[name, param] : model.named_parameters())
      if (name.rfind(prefix, 0) == 0)
        shapes[name.substr(prefix.size())] = param.shape();
    return shapes;
  };
  std::map<std::string, Shape> shapes = attention(tiny);
  EXPECT_EQ(shapes["q_norm.weight"], (Shape{4}));
  EXPECT_EQ(shapes["k_norm.weight"], (Shape{4}));
  EXPECT_EQ(shapes.count("q_proj.bias"), 0u);
  tiny.model_type = "qwen2", tiny.qk_norm = false, tiny.qkv_bias = true;
  shapes = attention(tiny);
  EXPECT_EQ(shapes["q_proj.bias"], (Shape{8}));
  EXPECT_EQ(shapes["v_proj.bias"], (Shape{4}));
  EXPECT_EQ(shapes.count("o_proj.bias"), 0u);
  EXPECT_EQ(shapes.count("q_norm.weight"), 0u);
}

// Phi-3-mini-4k's config as the Hub has it: fused projections, a window
// (every layer's), resid_pdrop; Phi-3.5's LongRoPE read. In eval mode
// resid_pdrop changes nothing; in training it drops out.
TEST(LlamaConfig, ReadsPhi3AndFusesItsProjections) {
  LlamaConfig c = parseOk(R"({"architectures": ["Phi3ForCausalLM"],
    "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 1,
    "embd_pdrop": 0.0, "eos_token_id": 32000, "hidden_act": "silu",
    "hidden_size": 3072, "initializer_range": 0.02,
    "intermediate_size": 8192, "max_position_embeddings": 4096,
    "model_type": "phi3", "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
    "pad_token_id": 32000, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05,
    "rope_scaling": null, "rope_theta": 10000.0, "sliding_window": 2047,
    "tie_word_embeddings": false, "vocab_size": 32064})");
  EXPECT_EQ(c.model_type, "phi3");
  EXPECT_TRUE(c.fused_projections);
  EXPECT_EQ(c.sliding_window, 2047);
  EXPECT_EQ(c.original_max_position_embeddings, 4096);
  // Kept to be written back: transformers' Phi3Config would otherwise fill
  // in 32000, past a smaller vocabulary.
  EXPECT_EQ(c.pad_token_id, std::optional<int64_t>(32000));
  expectRefused(R"({"model_type": "phi3", "pad_token_id": -1})",
                "pad_token_id must be an id or null");
  // Phi-3.5's LongRoPE: short factors up to the pretraining length, long
  // ones past it, cos and sin scaled by sqrt(1 + ln(256 / 16) / ln 16).
  LlamaConfig lr = parseOk(R"({"model_type": "phi3", "hidden_size": 8,
    "num_attention_heads": 2, "max_position_embeddings": 256,
    "original_max_position_embeddings": 16, "rope_scaling": {"type":
    "longrope", "short_factor": [1.0, 2.0], "long_factor": [4.0, 8.0]}})");
  EXPECT_EQ(lr.rope_scaling.kind, RopeScaling::Kind::longrope);
  EXPECT_DOUBLE_EQ(lr.rope_scaling.attention_factor, std::sqrt(2.0));
  EXPECT_EQ(rope_inverse_frequencies(lr, 16),
            (std::vector<float>{1.0f, 1.0f / (2.0f * 100.0f)}));
  EXPECT_EQ(rope_inverse_frequencies(lr, 17),
            (std::vector<float>{1.0f / 4.0f, 1.0f / (8.0f * 100.0f)}));
  expectRefused(R"({"model_type": "phi3", "hidden_size": 8,
    "num_attention_heads": 2, "rope_scaling": {"type": "longrope",
    "short_factor": [1.0, 2.0, 3.0], "long_factor": [4.0, 8.0]}})",
                "longrope 'short_factor' has 3 factors; rotary dimensions "
                "4 (head_dim 4) need 2");
  // Phi-3's early configs call it "su" (as Phi3Config reads them); a
  // Llama's config may not.
  EXPECT_EQ(parseOk(R"({"model_type": "phi3", "hidden_size": 8,
    "num_attention_heads": 2, "rope_scaling": {"type": "su",
    "short_factor": [1.0, 1.0], "long_factor": [1.0, 1.0]}})")
                .rope_scaling.kind,
            RopeScaling::Kind::longrope);
  expectRefused(R"({"model_type": "llama", "rope_scaling": {"type":
    "su", "short_factor": [1.0], "long_factor": [1.0]}})",
                "rope type 'su' is not supported");
  expectRefused(R"({"model_type": "phi3", "mlp_bias": true})",
                "not Phi-3 settings");

  set_options(options_from_env());
  LlamaConfig tiny = parseOk(R"({"model_type": "phi3", "vocab_size": 16,
    "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
    "num_attention_heads": 2, "num_key_value_heads": 1,
    "resid_pdrop": 0.5})");
  LlamaForCausalLM model(tiny);
  std::map<std::string, Shape> shapes;
  for (const auto &[name, param] : model.named_parameters())
    shapes[name] = param.shape();
  EXPECT_EQ(shapes.size(), 3 + 6u); // embed, norm, head + 6 a layer
  EXPECT_EQ(shapes["model.layers.0.self_attn.qkv_proj.weight"],
            (Shape{(2 + 2 * 1) * 4, 8}));
  EXPECT_EQ(shapes["model.layers.0.mlp.gate_up_proj.weight"], (Shape{24, 8}));
  Tensor ids = Tensor::from_vector({1, 2, 3, 4}, {1, 4}, DType::i64);
  NoGradGuard noGrad;
  model.eval();
  std::vector<double> first = model.forward(ids).to_vector();
  EXPECT_EQ(model.forward(ids).to_vector(), first);
  model.train();
  EXPECT_NE(model.forward(ids).to_vector(), first);
}

// Phi-4-mini's config as the Hub has it: Phi-3's architecture with a tied
// head, and RoPE on 96 of each head's 128 dimensions (partial_rotary_factor
// 0.75 at the top level; transformers 5 also writes it into
// rope_parameters), so LongRoPE has 48 factors of each kind. Other families
// and factors that leave an odd or empty rotary part are refused.
TEST(LlamaConfig, ReadsPhi4MiniPartialRotary) {
  std::string factors = "[1.0";
  for (int i = 1; i < 48; ++i)
    factors += ", " + std::to_string(1.0 + 0.1 * i);
  factors += "]";
  LlamaConfig c = parseOk(R"({"architectures": ["Phi3ForCausalLM"],
    "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 199999, "embd_pdrop": 0.0, "eos_token_id": 199999,
    "full_attn_mod": 1, "hidden_act": "silu", "hidden_size": 3072,
    "initializer_range": 0.02, "intermediate_size": 8192,
    "interpolate_factor": 1, "lm_head_bias": false,
    "max_position_embeddings": 131072, "mlp_bias": false,
    "model_type": "phi3", "num_attention_heads": 24,
    "num_hidden_layers": 32, "num_key_value_heads": 8,
    "original_max_position_embeddings": 4096, "pad_token_id": 199999,
    "partial_rotary_factor": 0.75, "resid_pdrop": 0.0,
    "rms_norm_eps": 1e-05, "rope_scaling": {"long_factor": )" +
                          factors + R"(, "short_factor": )" + factors +
                          R"(, "type": "longrope"}, "rope_theta": 10000.0,
    "sliding_window": 262144, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "vocab_size": 200064})");
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.partial_rotary_factor, 0.75);
  EXPECT_EQ(c.rotary_dim(), 96);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.rope_scaling.kind, RopeScaling::Kind::longrope);
  EXPECT_EQ(c.rope_scaling.long_factor.size(), 48u);
  // 1 / theta^(2i / 96), divided by the short factors at 4096 tokens.
  std::vector<float> inv = rope_inverse_frequencies(c, 4096);
  ASSERT_EQ(inv.size(), 48u);
  EXPECT_EQ(inv[0], 1.0f);
  EXPECT_EQ(inv[1], 1.0f / (float(1.1) * std::pow(10000.0f, 2.0f / 96.0f)));

  // transformers 5's spelling: the factor inside rope_parameters.
  EXPECT_EQ(parseOk(R"({"model_type": "phi3", "hidden_size": 16,
    "num_attention_heads": 2, "rope_parameters": {"rope_type": "default",
    "rope_theta": 10000.0, "partial_rotary_factor": 0.5}})")
                .rotary_dim(),
            4);
  expectRefused(R"({"model_type": "llama", "partial_rotary_factor": 0.5})",
                "partial_rotary_factor other than 1 is not supported for "
                "model_type 'llama'");
  expectRefused(R"({"model_type": "phi3", "partial_rotary_factor": 0})",
                "partial_rotary_factor must be a number in (0, 1]");
  expectRefused(R"({"model_type": "phi3", "hidden_size": 8,
    "num_attention_heads": 2, "partial_rotary_factor": 0.75})",
                "partial_rotary_factor 0.75 of head_dim 4 turns 3 dimensions");
  expectRefused(R"({"model_type": "phi3", "hidden_size": 16,
    "num_attention_heads": 2, "partial_rotary_factor": 0.5,
    "rope_scaling": {"type": "longrope", "short_factor": [1.0, 2.0, 3.0, 4.0],
    "long_factor": [1.0, 2.0, 3.0, 4.0]}})",
                "rotary dimensions 4 (head_dim 8) need 2");
}

// A partial rotary embedding turns the head's first dimensions as a whole
// rotary embedding of their width would, and leaves the rest as they are.
TEST(RotaryEmbedding, PartialFactorTurnsTheFirstDimensionsOnly) {
  set_options(options_from_env());
  LlamaConfig c = parseOk(R"({"model_type": "phi3", "hidden_size": 16,
    "num_attention_heads": 2, "partial_rotary_factor": 0.5})");
  ASSERT_EQ(c.rotary_dim(), 4);
  std::vector<double> values;
  for (int i = 0; i < 3 * 8; ++i)
    values.push_back(std::sin(1.7 * i) + 0.1 * i);
  Tensor x = Tensor::from_vector(values, {1, 3, 8});
  values = x.to_vector(); // as stored (f32)
  RotaryEmbedding partial(c);
  std::vector<double> turned =
      RotaryEmbedding::apply(x, partial.tables(3)).to_vector();
  LlamaConfig narrow = c;
  narrow.head_dim = 4, narrow.partial_rotary_factor = 1;
  RotaryEmbedding whole(narrow);
  std::vector<double> expected =
      RotaryEmbedding::apply(x.slice(-1, 0, 4), whole.tables(3)).to_vector();
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t d = 0; d < 8; ++d) {
      const size_t at = size_t(t * 8 + d);
      EXPECT_EQ(turned[at], d < 4 ? expected[size_t(t * 4 + d)] : values[at])
          << "position " << t << ", dimension " << d;
    }
  // Position 0 turns by nothing; later ones move the rotary part.
  EXPECT_NE(turned[8], values[8]);
}

// Gemma 2B's config as the Hub has it ("gelu", which transformers reads as
// the tanh GELU); a bare Gemma config takes GemmaConfig's defaults (head_dim
// 256 whatever the width, a tied head); Gemma 2's soft-capping, another
// activation and bidirectional attention are refused. The model has
// HF's names and no lm_head; its norms start at zero (scale 1 + 0), its
// embeddings are scaled by sqrt(hidden_size) and its head is the unscaled
// table.
TEST(LlamaConfig, ReadsGemmaAndItsDefaults) {
  LlamaConfig c = parseOk(R"({"architectures": ["GemmaForCausalLM"],
    "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 2,
    "eos_token_id": 1, "head_dim": 256, "hidden_act": "gelu",
    "hidden_size": 2048, "initializer_range": 0.02,
    "intermediate_size": 16384, "max_position_embeddings": 8192,
    "model_type": "gemma", "num_attention_heads": 8, "num_hidden_layers": 18,
    "num_key_value_heads": 1, "pad_token_id": 0, "rms_norm_eps": 1e-06,
    "rope_scaling": null, "rope_theta": 10000.0, "torch_dtype": "bfloat16",
    "vocab_size": 256000})");
  EXPECT_EQ(c.model_type, "gemma");
  EXPECT_TRUE(c.gemma_style);
  EXPECT_EQ(c.hidden_act, LlamaConfig::Activation::gelu_tanh);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.num_key_value_heads, 1);
  LlamaConfig bare = parseOk(R"({"model_type": "gemma", "hidden_size": 64,
    "num_attention_heads": 3})");
  EXPECT_EQ(bare.head_dim, 256);
  EXPECT_EQ(bare.vocab_size, 256000);
  EXPECT_TRUE(bare.tie_word_embeddings);
  EXPECT_EQ(parseOk(R"({"model_type": "gemma", "hidden_activation":
    "gelu_pytorch_tanh", "tie_word_embeddings": false})")
                .tie_word_embeddings,
            false);
  expectRefused(R"({"model_type": "gemma", "hidden_act": "silu"})",
                "hidden_act must be \"gelu_pytorch_tanh\"");
  expectRefused(R"({"model_type": "gemma", "hidden_activation": "relu"})",
                "hidden_activation must be");
  expectRefused(R"({"model_type": "gemma", "attn_logit_softcapping": 50.0})",
                "attn_logit_softcapping is not supported");
  expectRefused(R"({"model_type": "gemma",
    "use_bidirectional_attention": true})",
                "use_bidirectional_attention is not supported");
  // A Llama's config may not ask for Gemma's activation.
  expectRefused(R"({"hidden_act": "gelu_pytorch_tanh"})",
                "hidden_act 'gelu_pytorch_tanh' is not supported");

  set_options(options_from_env());
  LlamaConfig tiny = parseOk(R"({"model_type": "gemma", "vocab_size": 16,
    "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
    "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 6})");
  LlamaForCausalLM model(tiny);
  std::map<std::string, Tensor> params;
  for (const auto &[name, param] : model.named_parameters())
    params[name] = param;
  EXPECT_EQ(params.size(), 2 + 9u); // embed, norm + 9 a layer; no head
  EXPECT_FALSE(params.count("lm_head.weight"));
  EXPECT_EQ(params["model.layers.0.self_attn.q_proj.weight"].shape(),
            (Shape{12, 8}));
  EXPECT_EQ(params["model.norm.weight"].to_vector(),
            std::vector<double>(8, 0.0));
  NoGradGuard noGrad;
  model.eval();
  Tensor ids = Tensor::from_vector({3}, {1, 1}, DType::i64);
  std::vector<double> table = params["model.embed_tokens.weight"].to_vector();
  std::vector<double> row = model.model->embed_tokens->forward(ids).to_vector();
  ASSERT_EQ(row.size(), 8u);
  for (int64_t j = 0; j < 8; ++j)
    EXPECT_NEAR(row[j], std::sqrt(8.0) * table[3 * 8 + j], 1e-6) << j;
  // With the layer's output projections zeroed the hidden state is the
  // scaled row, normed (times 1 + 0), and the tied head is the unscaled
  // table: logits[v] = E[v] · x / sqrt(mean(x²) + eps), x = √8 E[3].
  for (const char *zeroed : {"model.layers.0.self_attn.o_proj.weight",
                             "model.layers.0.mlp.down_proj.weight"})
    params[zeroed].assign_(Tensor::zeros(params[zeroed].shape()));
  kiln::step();
  std::vector<double> logits = model.forward(ids).to_vector();
  double meanSquare = 0;
  for (double x : row)
    meanSquare += x * x / 8;
  const double rms = std::sqrt(meanSquare + 1e-6);
  for (int64_t v = 0; v < 16; ++v) {
    double expected = 0;
    for (int64_t j = 0; j < 8; ++j)
      expected += table[v * 8 + j] * row[j] / rms;
    EXPECT_NEAR(logits[v], expected, 1e-5 * (1 + std::fabs(expected))) << v;
  }
}

// Gemma 3 1B's config as the Hub has it (transformers 4's spelling: a
// window on all but every sliding_window_pattern-th layer, rope_theta for
// the full layers, rope_local_base_freq for the sliding ones), Gemma 3
// 270M's layer_types, and transformers 5's rope_parameters per layer type.
// The model has Gemma 3's four norms a layer and per-head q/k norms.
TEST(LlamaConfig, ReadsGemma3sLayersAndTheirRope) {
  LlamaConfig c = parseOk(R"({"architectures": ["Gemma3ForCausalLM"],
    "attention_bias": false, "attention_dropout": 0.0,
    "attn_logit_softcapping": null, "bos_token_id": 2,
    "cache_implementation": "hybrid", "eos_token_id": 1,
    "final_logit_softcapping": null, "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152,
    "initializer_range": 0.02, "intermediate_size": 6912,
    "max_position_embeddings": 32768, "model_type": "gemma3_text",
    "num_attention_heads": 4, "num_hidden_layers": 26,
    "num_key_value_heads": 1, "pad_token_id": 0, "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000,
    "rope_scaling": null, "rope_theta": 1000000, "sliding_window": 512,
    "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
    "use_cache": true, "vocab_size": 262144})");
  EXPECT_EQ(c.model_type, "gemma3_text");
  EXPECT_TRUE(c.gemma_style && c.qk_norm && c.sandwich_norms);
  EXPECT_EQ(c.hidden_act, LlamaConfig::Activation::gelu_tanh);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.query_pre_attn_scalar, 256);
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.local_rope_theta, 1e4);
  ASSERT_EQ(c.sliding_layers.size(), 26u);
  for (int64_t layer : {0, 4, 6, 25}) {
    EXPECT_EQ(c.layer_window(layer), 512) << layer;
    EXPECT_TRUE(c.uses_local_rope(layer)) << layer;
  }
  for (int64_t layer : {5, 11, 23}) {
    EXPECT_EQ(c.layer_window(layer), 0) << layer;
    EXPECT_FALSE(c.uses_local_rope(layer)) << layer;
  }
  EXPECT_EQ(rope_inverse_frequencies(local_rope_config(c))[1],
            1.0f / std::pow(10000.0f, 2.0f / 256.0f));
  // Gemma3TextConfig's defaults; layer_types as 270M lists them; transformers
  // 5's rope_parameters, the full layers' scaled.
  LlamaConfig bare = parseOk(R"({"model_type": "gemma3_text",
    "num_hidden_layers": 3, "layer_types": ["full_attention",
    "sliding_attention", "sliding_attention"], "rope_parameters":
    {"full_attention": {"rope_type": "linear", "factor": 8.0,
    "rope_theta": 1000000.0}, "sliding_attention": {"rope_type": "default",
    "rope_theta": 10000.0}}})");
  EXPECT_EQ(bare.head_dim, 256);
  EXPECT_EQ(bare.num_key_value_heads, 4);
  EXPECT_EQ(bare.vocab_size, 262208);
  EXPECT_EQ(bare.sliding_window, 4096);
  EXPECT_EQ(bare.query_pre_attn_scalar, 256);
  EXPECT_EQ(bare.layer_window(0), 0);
  EXPECT_EQ(bare.layer_window(2), 4096);
  EXPECT_EQ(bare.rope_scaling.kind, RopeScaling::Kind::linear);
  EXPECT_EQ(bare.rope_scaling.factor, 8.0);
  EXPECT_EQ(bare.local_rope_scaling.kind, RopeScaling::Kind::none);
  EXPECT_EQ(bare.local_rope_theta, 1e4);
  expectRefused(R"({"model_type": "gemma3_text", "num_hidden_layers": 2,
    "layer_types": ["full_attention"]})",
                "layer_types lists 1 layers for num_hidden_layers 2");
  expectRefused(R"({"model_type": "gemma3_text", "sliding_window_pattern": 0})",
                "'sliding_window_pattern' must be an integer");
  expectRefused(R"({"model_type": "gemma3_text", "rope_parameters":
    {"sliding_attention": {"rope_type": "yarn", "factor": 2.0}}})",
                "rope_parameters.sliding_attention: rope type 'yarn'");
  expectRefused(R"({"model_type": "gemma3_text", "query_pre_attn_scalar": 0})",
                "query_pre_attn_scalar must be positive");
  // Gemma3TextConfig's soft caps, null by default, are applied when set.
  EXPECT_EQ(parseOk(R"({"model_type": "gemma3_text",
    "final_logit_softcapping": 30.0})")
                .final_logit_softcapping,
            30.0);
  expectRefused(R"({"model_type": "gemma3_text",
    "attn_logit_softcapping": -1})",
                "attn_logit_softcapping must be a positive number or null");
  // Gemma 3's MLP reads hidden_activation, where "gelu" is the exact GELU.
  expectRefused(R"({"model_type": "gemma3_text", "hidden_activation":
    "gelu"})",
                "hidden_activation must be \"gelu_pytorch_tanh\" in a Gemma");

  set_options(options_from_env());
  LlamaConfig tiny = parseOk(R"({"model_type": "gemma3_text",
    "vocab_size": 16, "hidden_size": 8, "intermediate_size": 12,
    "num_hidden_layers": 2, "num_attention_heads": 2,
    "num_key_value_heads": 1, "head_dim": 4, "sliding_window": 3,
    "sliding_window_pattern": 2})");
  LlamaForCausalLM model(tiny);
  std::set<std::string> names;
  for (const auto &[name, param] : model.named_parameters())
    names.insert(name);
  EXPECT_EQ(names.size(), 2 + 2 * 13u); // embed, norm + 13 a layer
  for (const char *name : {"model.layers.1.pre_feedforward_layernorm.weight",
                           "model.layers.1.post_feedforward_layernorm.weight",
                           "model.layers.0.self_attn.q_norm.weight"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_TRUE(model.model->layers[0]->local_rope);
  EXPECT_FALSE(model.model->layers[1]->local_rope);
  EXPECT_EQ(model.model->layers[0]->self_attn->window, 3);
  EXPECT_EQ(model.model->layers[0]->self_attn->scale,
            std::optional<double>(1 / 16.0));
}

// Gemma 2 2B's config as the Hub has it (transformers 4's spelling): Gemma
// 3's layout without the per-head norms or the local RoPE, every other
// layer sliding from the first, and soft caps on the scores and the
// logits; Gemma2Config's defaults for the absent keys.
TEST(LlamaConfig, ReadsGemma2sSoftCapsAndLayers) {
  LlamaConfig c = parseOk(R"({"architectures": ["Gemma2ForCausalLM"],
    "attention_bias": false, "attention_dropout": 0.0,
    "attn_logit_softcapping": 50.0, "bos_token_id": 2,
    "cache_implementation": "hybrid", "eos_token_id": [1, 107],
    "final_logit_softcapping": 30.0, "head_dim": 256,
    "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2304,
    "initializer_range": 0.02, "intermediate_size": 9216,
    "max_position_embeddings": 8192, "model_type": "gemma2",
    "num_attention_heads": 8, "num_hidden_layers": 26,
    "num_key_value_heads": 4, "pad_token_id": 0, "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096,
    "torch_dtype": "float32", "transformers_version": "4.42.4",
    "use_cache": true, "vocab_size": 256000})");
  EXPECT_EQ(c.model_type, "gemma2");
  EXPECT_TRUE(c.gemma_style && c.sandwich_norms);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_EQ(c.attn_logit_softcapping, 50.0);
  EXPECT_EQ(c.final_logit_softcapping, 30.0);
  EXPECT_EQ(c.query_pre_attn_scalar, 256);
  EXPECT_EQ(c.rope_theta, 1e4);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{1, 107}));
  for (int64_t layer : {0, 2, 24}) {
    EXPECT_EQ(c.layer_window(layer), 4096) << layer;
    EXPECT_FALSE(c.uses_local_rope(layer)) << layer;
  }
  for (int64_t layer : {1, 3, 25})
    EXPECT_EQ(c.layer_window(layer), 0) << layer;
  LlamaConfig bare = parseOk(R"({"model_type": "gemma2",
    "num_hidden_layers": 3, "attn_logit_softcapping": null})");
  EXPECT_EQ(bare.num_key_value_heads, 4);
  EXPECT_EQ(bare.head_dim, 256);
  EXPECT_EQ(bare.vocab_size, 256000);
  EXPECT_EQ(bare.attn_logit_softcapping, 0.0);
  EXPECT_EQ(bare.final_logit_softcapping, 30.0);
  EXPECT_EQ(bare.layer_window(2), 4096);
  EXPECT_EQ(bare.layer_window(1), 0);
  expectRefused(R"({"model_type": "gemma2", "final_logit_softcapping":
    "30"})",
                "final_logit_softcapping must be a positive number or null");
  expectRefused(R"({"model_type": "gemma2", "hidden_activation": "gelu"})",
                "hidden_activation must be \"gelu_pytorch_tanh\" in a Gemma");

  set_options(options_from_env());
  LlamaConfig tiny = parseOk(R"({"model_type": "gemma2", "vocab_size": 16,
    "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
    "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
    "sliding_window": 3, "query_pre_attn_scalar": 16})");
  LlamaForCausalLM model(tiny);
  EXPECT_EQ(model.named_parameters().size(), 2 + 2 * 11u); // no q/k norms
  EXPECT_EQ(model.model->layers[0]->self_attn->window, 3);
  EXPECT_EQ(model.model->layers[1]->self_attn->window, 0);
  EXPECT_EQ(model.model->layers[0]->self_attn->softcap, 50.0);
  // The fused head + loss with its cap inside gives the loss of the capped
  // logits written out; label smoothing, whose shortcut is linear in
  // uncapped logits, takes the logits' path and the Trainer's formula.
  {
    Tensor ids = Tensor::from_vector({3, 5, 7, 1, 2, 9}, {2, 3}, DType::i64);
    const double fused = model.loss(ids, ids).item();
    const double written =
        causal_lm_loss_from_logits(model.forward(ids), ids).item();
    EXPECT_NEAR(fused, written, 1e-6 * std::fabs(written));
    model.set_label_smoothing(0.1);
    const double smoothed = model.loss(ids, ids).item();
    EXPECT_NEAR(smoothed,
                causal_lm_loss_from_logits(model.forward(ids), ids, 0.1).item(),
                1e-6 * std::fabs(smoothed));
    EXPECT_NE(smoothed, fused);
    model.set_label_smoothing(0);
  }
  // The logits stay within the cap, whatever the weights.
  for (auto &[name, param] : model.named_parameters())
    param.assign_(Tensor::full(param.shape(), 40.0));
  kiln::step();
  NoGradGuard noGrad;
  model.eval();
  Tensor ids = Tensor::from_vector({3, 5}, {1, 2}, DType::i64);
  for (double logit : model.forward(ids).to_vector()) {
    EXPECT_LE(std::fabs(logit), 30.0);
    EXPECT_GT(std::fabs(logit), 29.0); // 40^k far past the cap
  }
}

// Mistral 7B v0.1's config as the Hub has it: Llama's fields with a sliding
// window on every layer; v0.2's null window is none. Past the window a
// query no longer sees the oldest keys: with one layer, the logits from
// position 4 on do not depend on token 0 under a window of 4, and do
// without one.
TEST(LlamaConfig, ReadsMistralsWindowAndAttendsWithinIt) {
  LlamaConfig c = parseOk(R"({"model_type": "mistral",
    "architectures": ["MistralForCausalLM"], "vocab_size": 32000,
    "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8,
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0, "sliding_window": 4096, "hidden_act": "silu",
    "tie_word_embeddings": false})");
  EXPECT_EQ(c.model_type, "mistral");
  EXPECT_EQ(c.sliding_window, 4096);
  EXPECT_EQ(c.layer_window(31), 4096);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(parseOk(R"({"model_type": "mistral", "sliding_window": null})")
                .sliding_window,
            0);
  // A Llama's config has no window, whatever else it says.
  EXPECT_EQ(
      parseOk(R"({"model_type": "llama", "sliding_window": 8})").sliding_window,
      0);
  expectRefused(R"({"model_type": "mistral", "sliding_window": 0})",
                "'sliding_window' must be an integer");

  set_options(options_from_env());
  LlamaConfig tiny;
  tiny.model_type = "mistral";
  tiny.sliding_window = 4;
  tiny.vocab_size = 16, tiny.hidden_size = 8, tiny.intermediate_size = 16;
  tiny.num_hidden_layers = 1, tiny.num_attention_heads = 2;
  tiny.num_key_value_heads = 2, tiny.head_dim = 4;
  // Which of the 8 positions' logits change when token 0 does.
  auto moved = [](const LlamaConfig &config) {
    LlamaForCausalLM model(config);
    model.eval();
    NoGradGuard noGrad;
    auto logits = [&](double first) {
      return model
          .forward(Tensor::from_vector({first, 2, 3, 4, 5, 6, 7, 8}, {1, 8},
                                       DType::i64))
          .to_vector();
    };
    std::vector<double> a = logits(1), b = logits(9);
    std::vector<bool> changed(8);
    for (size_t i = 0; i < a.size(); ++i)
      changed[i / 16] = changed[i / 16] || a[i] != b[i];
    return changed;
  };
  EXPECT_EQ(LlamaForCausalLM(tiny).model_type(), "mistral");
  EXPECT_EQ(moved(tiny), std::vector<bool>({true, true, true, true, false,
                                            false, false, false}));
  LlamaConfig full = tiny;
  full.sliding_window = 0;
  EXPECT_EQ(moved(full), std::vector<bool>(8, true));
}

} // namespace
} // namespace kiln::nn
