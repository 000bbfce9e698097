// kiln-bench's model: building it, LoRA, and --init own; see BenchModel.h.
#include "bench/BenchModel.h"

#include "frontends/nn/GPT2.h"
#include "frontends/nn/Llama.h"
#include "frontends/nn/Lora.h"
#include "frontends/nn/Optimizer.h"

#include <cmath>
#include <set>

namespace kiln::bench {
namespace {

/// The bench's standard deviation of initial weights (GPT-2's and Llama's
/// initializer_range).
constexpr double kInitStd = 0.02;

} // namespace

BenchModel build_bench_model(const BenchConfig &c, bool draw, bool storeBase) {
  // With LoRA the base is frozen, so it may be built in its storage type
  // directly; apply_lora's branches are f32 whatever the base's.
  DType base = storeBase && c.lora_r > 0 && c.torch_dtype == "bfloat16"
                   ? DType::bf16
                   : DType::f32;
  BenchModel out;
  if (c.model == "llama") {
    nn::LlamaConfig l;
    l.vocab_size = c.vocab;
    l.hidden_size = c.n_embd;
    l.intermediate_size = c.n_inner ? c.n_inner : 4 * c.n_embd;
    l.num_hidden_layers = c.n_layer;
    l.num_attention_heads = c.n_head;
    l.num_key_value_heads = c.n_kv_head ? c.n_kv_head : c.n_head;
    l.head_dim = c.n_embd / c.n_head;
    l.max_position_embeddings = c.seq;
    l.rms_norm_eps = 1e-5;
    l.rope_theta = 500000;
    l.attention_dropout = c.dropout;
    l.initializer_range = kInitStd;
    l.dtype = base;
    l.draw_initial_values = draw;
    l.init_seed = c.seed;
    l.dropout_seed = c.seed + 1;
    out.model = std::make_unique<nn::LlamaForCausalLM>(l);
  } else {
    nn::GPT2Config g;
    g.vocab_size = c.vocab;
    g.n_positions = c.seq;
    g.n_embd = c.n_embd;
    g.n_layer = c.n_layer;
    g.n_head = c.n_head;
    g.with_dropout(c.dropout);
    g.initializer_range = kInitStd;
    g.dtype = base;
    g.draw_initial_values = draw;
    g.init_seed = c.seed;
    g.dropout_seed = c.seed + 1;
    out.model = std::make_unique<nn::GPT2LMHeadModel>(g);
  }
  if (c.lora_r == 0) {
    out.trainable = out.model->named_parameters();
    return out;
  }
  nn::LoraConfig lora;
  lora.r = c.lora_r;
  lora.alpha = c.lora_alpha;
  lora.dropout = c.lora_dropout;
  lora.target_modules = nn::expand_lora_targets(
      *out.model, c.lora_targets.empty() ? nn::default_lora_targets(c.model)
                                         : splitList(c.lora_targets));
  nn::apply_lora(*out.model, lora, c.seed + 2, &out.model->generator());
  out.trainable = nn::trainable_parameters(*out.model);
  return out;
}

void randomize_on_device(BenchModel &m) {
  std::set<std::string> keep = nn::bias_and_norm_names(*m.model);
  NoGradGuard noGrad; // initial values, not a step to differentiate
  const double bound = kInitStd * std::sqrt(3.0); // uniform's std = bound/√3
  for (auto &[name, param] : m.model->named_parameters()) {
    if (keep.count(name) || name.find(".lora_B.") != std::string::npos)
      continue;
    Tensor value =
        ((m.model->generator().uniform(param.shape()) * 2.0 - 1.0) * bound)
            .to(param.dtype());
    if (param.requires_grad())
      param.assign_(value);
    else
      param.set_data_(value);
  }
}

} // namespace kiln::bench
