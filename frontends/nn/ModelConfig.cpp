// Hugging Face config.json parsers; see ModelConfig.h.
#include "frontends/nn/ModelConfig.h"

#include "absl/strings/str_cat.h"
#include "support/JsonNesting.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <optional>
#include <string>

namespace kiln::nn {
namespace {

/// Sizes above this are refused: no real model comes near, and products
/// of two sizes then stay far from int64 overflow.
constexpr int64_t kMaxSize = int64_t{1} << 30;

/// Reads typed fields of one JSON object, keeping the first problem: the
/// parsers read every field, then report what went wrong once.
class FieldReader {
public:
  explicit FieldReader(const llvm::json::Object &obj) : obj_(obj) {}

  /// A positive integer up to `most`; absent keys keep `field`.
  void readSize(const char *key, int64_t &field, int64_t most = kMaxSize) {
    if (const llvm::json::Value *v = obj_.get(key); v && problem_.empty()) {
      std::optional<int64_t> i = v->getAsInteger();
      if (!i || *i <= 0 || *i > most)
        problem_ =
            absl::StrCat("'", key, "' must be an integer in [1, ", most, "]");
      else
        field = *i;
    }
  }
  /// A number in [0, limit); absent keys keep `field`.
  void readNumber(const char *key, double &field, double limit) {
    if (const llvm::json::Value *v = obj_.get(key); v && problem_.empty()) {
      std::optional<double> d = v->getAsNumber();
      if (!d || !(*d >= 0 && *d < limit))
        problem_ =
            absl::StrCat("'", key, "' must be a number in [0, ", limit, ")");
      else
        field = *d;
    }
  }
  void readBool(const char *key, bool &field) {
    if (const llvm::json::Value *v = obj_.get(key); v && problem_.empty()) {
      if (std::optional<bool> b = v->getAsBoolean())
        field = *b;
      else
        problem_ = absl::StrCat("'", key, "' must be true or false");
    }
  }
  /// Whether `key` is present and not null.
  bool has(const char *key) const {
    const llvm::json::Value *v = obj_.get(key);
    return v && v->kind() != llvm::json::Value::Null;
  }
  const std::string &problem() const { return problem_; }

private:
  const llvm::json::Object &obj_;
  std::string problem_;
};

/// The file's text → its top-level object, or an error naming the file.
absl::StatusOr<llvm::json::Value> parseObject(std::string_view text,
                                              std::string_view fileName) {
  if (std::optional<std::string> deep = jsonNestedTooDeeply(text))
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(fileName), "': not valid JSON: ", *deep));
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!json)
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(fileName),
                     "': not valid JSON: ", llvm::toString(json.takeError())));
  if (!json->getAsObject())
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(fileName), "': not a JSON object"));
  return std::move(*json);
}

/// LongRoPE's keys of `rope` (factor lists, the original length from the
/// dict or the config's top level, factor and attention_factor or their
/// defaults, as transformers' _compute_longrope_parameters) → `c`; an error
/// message, or "".
std::string readLongRope(const llvm::json::Object &obj,
                         const llvm::json::Object &rope, LlamaConfig &c) {
  RopeScaling &s = c.rope_scaling;
  s.kind = RopeScaling::Kind::longrope;
  for (auto [key, factors] : {std::pair{"short_factor", &s.short_factor},
                              std::pair{"long_factor", &s.long_factor}}) {
    const llvm::json::Array *list = rope.getArray(key);
    if (!list)
      return absl::StrCat("rope type 'longrope' needs '", key, "'");
    for (const llvm::json::Value &v : *list) {
      std::optional<double> f = v.getAsNumber();
      if (!f || !(*f > 0) || !std::isfinite(*f))
        return absl::StrCat("longrope '", key, "' must hold positive numbers");
      factors->push_back(*f);
    }
    if (int64_t(factors->size()) != c.rotary_dim() / 2)
      return absl::StrCat("longrope '", key, "' has ", factors->size(),
                          " factors; rotary dimensions ", c.rotary_dim(),
                          " (head_dim ", c.head_dim, ") need ",
                          c.rotary_dim() / 2);
  }
  s.original_max_position_embeddings = c.max_position_embeddings;
  for (const llvm::json::Object *where : {&obj, &rope})
    if (std::optional<int64_t> n =
            where->getInteger("original_max_position_embeddings")) {
      if (*n <= 0)
        return "original_max_position_embeddings must be positive";
      s.original_max_position_embeddings = *n;
    }
  const double original = double(s.original_max_position_embeddings);
  s.factor = rope.getNumber("factor").value_or(
      double(c.max_position_embeddings) / original);
  if (!(s.factor > 0) || !std::isfinite(s.factor))
    return "rope 'factor' must be positive";
  std::optional<double> attention = rope.getNumber("attention_factor");
  s.attention_factor =
      attention       ? *attention
      : s.factor <= 1 ? 1.0
                      : std::sqrt(1 + std::log(s.factor) / std::log(original));
  if (!(s.attention_factor > 0) || !std::isfinite(s.attention_factor))
    return "rope 'attention_factor' must be positive";
  return "";
}

/// partial_rotary_factor (in the RoPE dict, else at the top level, as
/// Phi3Config takes it) → `c`; an error message, or "". Of the families kiln
/// reads, transformers turns part of a head only in Phi-3's attention (Phi-4-
/// mini's 0.75); the others would turn the whole head with shorter tables.
std::string readPartialRotary(const llvm::json::Object &obj,
                              const llvm::json::Object *rope, LlamaConfig &c) {
  const llvm::json::Value *value =
      rope ? rope->get("partial_rotary_factor") : nullptr;
  if (!value || value->kind() == llvm::json::Value::Null)
    value = obj.get("partial_rotary_factor");
  if (!value || value->kind() == llvm::json::Value::Null)
    return "";
  std::optional<double> factor = value->getAsNumber();
  if (!factor || !(*factor > 0 && *factor <= 1))
    return "partial_rotary_factor must be a number in (0, 1]";
  if (*factor != 1 && c.model_type != "phi3")
    return absl::StrCat("partial_rotary_factor other than 1 is not supported "
                        "for model_type '",
                        c.model_type,
                        "' (transformers turns part of a head only in "
                        "Phi-3's attention: model_type phi3)");
  c.partial_rotary_factor = *factor;
  if (c.rotary_dim() < 2 || c.rotary_dim() % 2 != 0)
    return absl::StrCat("partial_rotary_factor ", *factor, " of head_dim ",
                        c.head_dim, " turns ", c.rotary_dim(),
                        " dimensions (RoPE turns pairs: an even number of "
                        "at least 2)");
  return "";
}

/// rope_parameters (or the older rope_scaling) → `c`'s RoPE settings; an
/// error message, or "" when they are fine.
std::string readRope(const llvm::json::Object &obj, LlamaConfig &c) {
  const llvm::json::Object *rope = obj.getObject("rope_parameters");
  if (!rope)
    rope = obj.getObject("rope_scaling");
  if (std::string problem = readPartialRotary(obj, rope, c); !problem.empty())
    return problem;
  if (!rope)
    return "";
  FieldReader fields(*rope);
  fields.readNumber("rope_theta", c.rope_theta, 1e12);
  std::optional<llvm::StringRef> type = rope->getString("rope_type");
  if (!type)
    type = rope->getString("type"); // the pre-4.40 spelling
  RopeScaling &s = c.rope_scaling;
  if (!type || *type == "default") {
    s.kind = RopeScaling::Kind::none;
  } else if (*type == "linear" || *type == "llama3") {
    s.kind = *type == "linear" ? RopeScaling::Kind::linear
                               : RopeScaling::Kind::llama3;
    if (!fields.has("factor"))
      return absl::StrCat("rope type '", type->str(), "' needs 'factor'");
    // transformers' rope validation asks the same keys of llama3 (filling
    // them in would save a config it refuses).
    if (s.kind == RopeScaling::Kind::llama3)
      for (const char *key : {"low_freq_factor", "high_freq_factor",
                              "original_max_position_embeddings"})
        if (!fields.has(key))
          return absl::StrCat("rope type 'llama3' needs '", key, "'");
    fields.readNumber("factor", s.factor, 1e6);
    fields.readNumber("low_freq_factor", s.low_freq_factor, 1e6);
    fields.readNumber("high_freq_factor", s.high_freq_factor, 1e6);
    s.original_max_position_embeddings = c.max_position_embeddings;
    fields.readSize("original_max_position_embeddings",
                    s.original_max_position_embeddings);
    if (fields.problem().empty() && !(s.factor > 0))
      return "rope 'factor' must be positive";
    if (fields.problem().empty() && s.kind == RopeScaling::Kind::llama3 &&
        !(s.high_freq_factor > s.low_freq_factor && s.low_freq_factor > 0))
      return "llama3 rope needs 0 < low_freq_factor < high_freq_factor";
  } else if (*type == "longrope" ||
             // Phi-3's configs before the name (as Phi3Config reads them).
             (c.model_type == "phi3" && (*type == "su" || *type == "yarn"))) {
    if (std::string problem = readLongRope(obj, *rope, c); !problem.empty())
      return problem;
  } else {
    return absl::StrCat(
        "rope type '", type->str(),
        "' is not supported (default, linear, llama3 and longrope are)");
  }
  return fields.problem().empty() ? "" : "rope: " + fields.problem();
}

/// A config file's text → `Config` by `read` (which returns the first
/// problem, or ""), the problem prefixed with the file's name.
template <typename Config>
absl::StatusOr<Config>
parseConfig(std::string_view text, std::string_view fileName,
            std::string (*read)(const llvm::json::Object &, Config &)) {
  absl::StatusOr<llvm::json::Value> json = parseObject(text, fileName);
  if (!json.ok())
    return json.status();
  Config config;
  if (std::string problem = read(*json->getAsObject(), config);
      !problem.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(fileName), "': ", problem));
  return config;
}

std::string readGPT2(const llvm::json::Object &obj, GPT2Config &c) {
  FieldReader fields(obj);
  fields.readSize("n_ctx", c.n_positions);
  fields.readSize("n_positions", c.n_positions);
  fields.readSize("vocab_size", c.vocab_size);
  fields.readSize("n_embd", c.n_embd);
  fields.readSize("n_layer", c.n_layer, kMaxLayers);
  fields.readSize("n_head", c.n_head);
  fields.readNumber("resid_pdrop", c.resid_pdrop, 1);
  fields.readNumber("embd_pdrop", c.embd_pdrop, 1);
  fields.readNumber("attn_pdrop", c.attn_pdrop, 1);
  fields.readNumber("layer_norm_epsilon", c.layer_norm_epsilon, 1);
  fields.readNumber("initializer_range", c.initializer_range, 1e3);
  if (!fields.problem().empty())
    return fields.problem();

  // Options that change the architecture: refuse what is not implemented
  // rather than load weights into a different model.
  if (std::optional<llvm::StringRef> act = obj.getString("activation_function");
      act && *act != "gelu_new")
    return "activation_function '" + act->str() +
           "' is not supported (only gelu_new)";
  if (const llvm::json::Value *inner = obj.get("n_inner");
      inner && inner->kind() != llvm::json::Value::Null &&
      inner->getAsInteger() != std::optional<int64_t>(4 * c.n_embd))
    return "n_inner other than 4 * n_embd is not supported";
  if (obj.getBoolean("tie_word_embeddings") == std::optional<bool>(false))
    return "untied word embeddings are not supported";
  if (obj.getBoolean("scale_attn_by_inverse_layer_idx") ==
      std::optional<bool>(true))
    return "scale_attn_by_inverse_layer_idx is not supported";
  if (c.n_embd % c.n_head != 0)
    return absl::StrCat("n_embd ", c.n_embd, " is not divisible by n_head ",
                        c.n_head);
  return "";
}

// layer_types (Qwen's, Gemma 3's) → c.sliding_layers; an error message, or
// "" when it is fine or absent.
std::string readLayerTypes(const llvm::json::Object &obj, LlamaConfig &c) {
  const llvm::json::Array *layers = obj.getArray("layer_types");
  if (!layers)
    return "";
  for (const llvm::json::Value &layer : *layers) {
    std::optional<llvm::StringRef> type = layer.getAsString();
    if (type != llvm::StringRef("sliding_attention") &&
        type != llvm::StringRef("full_attention"))
      return "layer_types must list \"full_attention\" or "
             "\"sliding_attention\" for each layer";
    c.sliding_layers.push_back(*type == "sliding_attention");
  }
  if (int64_t(c.sliding_layers.size()) != c.num_hidden_layers)
    return absl::StrCat("layer_types lists ", c.sliding_layers.size(),
                        " layers for num_hidden_layers ", c.num_hidden_layers);
  return "";
}

// Qwen2's and Qwen3's differences from Llama. Their window applies only
// when use_sliding_window, and only on the layers layer_types names
// "sliding_attention" (by default those from max_window_layers on).
std::string readQwen(const llvm::json::Object &obj, FieldReader &fields,
                     LlamaConfig &c) {
  c.model_type = obj.getString("model_type")->str();
  if (c.model_type == "qwen2") {
    c.qkv_bias = true;
    if (fields.has("attention_bias") && c.attention_bias)
      return "attention_bias is not a Qwen2 setting (its q, k and v "
             "projections always have biases, o_proj never)";
  } else {
    c.qk_norm = true;
    if (!fields.has("head_dim"))
      c.head_dim = 128; // Qwen3Config's default, whatever the width
  }
  if (fields.has("max_window_layers"))
    fields.readSize("max_window_layers", c.max_window_layers, kMaxLayers);
  const llvm::json::Value *window = obj.get("sliding_window");
  if (window && window->kind() != llvm::json::Value::Null) {
    int64_t size = 0;
    fields.readSize("sliding_window", size);
    c.qwen_sliding_window = size;
  }
  if (std::string problem = readLayerTypes(obj, c); !problem.empty())
    return problem;
  // As Qwen2Config: no window unless use_sliding_window, whatever
  // layer_types says.
  if (obj.getBoolean("use_sliding_window").value_or(false) &&
      c.qwen_sliding_window)
    c.sliding_window = *c.qwen_sliding_window;
  return "";
}

// Phi-3's differences from Llama: fused projections without biases, and
// dropout on each block's outputs. Its window is every layer's, as
// Mistral's.
std::string readPhi3(FieldReader &fields, LlamaConfig &c) {
  c.model_type = "phi3";
  c.fused_projections = true;
  if (c.attention_bias || c.mlp_bias)
    return "attention_bias and mlp_bias are not Phi-3 settings (its "
           "projections have no biases)";
  fields.readNumber("resid_pdrop", c.resid_pdrop, 1);
  fields.readNumber("embd_pdrop", c.embd_pdrop, 1);
  c.original_max_position_embeddings = c.max_position_embeddings;
  fields.readSize("original_max_position_embeddings",
                  c.original_max_position_embeddings);
  return "";
}

// GemmaConfig's defaults for the keys a Gemma config.json leaves out (Gemma
// 7B's shape), and the differences that make it Gemma; Gemma2Config's and
// Gemma3TextConfig's for a Gemma 2 and a Gemma 3 (both Gemma 2 2B's shape).
void setGemmaDefaults(std::string_view type, LlamaConfig &c) {
  c.model_type = std::string(type);
  c.gemma_style = true;
  c.hidden_act = LlamaConfig::Activation::gelu_tanh;
  c.vocab_size = 256000;
  c.hidden_size = 3072;
  c.intermediate_size = 24576;
  c.num_hidden_layers = 28;
  c.num_attention_heads = 16;
  c.max_position_embeddings = 8192;
  c.tie_word_embeddings = true;
  if (type == "gemma")
    return;
  // Gemma 2 2B's shape, and the four norms a layer of Gemma 2 and 3.
  c.hidden_size = 2304;
  c.intermediate_size = 9216;
  c.num_hidden_layers = 26;
  c.num_attention_heads = 8;
  c.sandwich_norms = true;
  if (type == "gemma2") {
    c.attn_logit_softcapping = 50;
    c.final_logit_softcapping = 30;
    return;
  }
  c.vocab_size = 262208;
  c.max_position_embeddings = 131072;
  c.rope_theta = 1000000;
  c.qk_norm = true;
}

// Gemma 3's two RoPEs: transformers 5's rope_parameters with an entry per
// layer type, or transformers 4's rope_theta + rope_scaling (the full
// layers') and rope_local_base_freq (the sliding layers', unscaled).
std::string readGemma3Rope(const llvm::json::Object &obj, LlamaConfig &c) {
  LlamaConfig local = c;
  local.rope_theta = 10000;
  local.rope_scaling = RopeScaling();
  FieldReader fields(obj);
  fields.readNumber("rope_local_base_freq", local.rope_theta, 1e12);
  if (!fields.problem().empty())
    return fields.problem();
  const llvm::json::Object *params = obj.getObject("rope_parameters");
  const llvm::json::Object *full =
      params ? params->getObject("full_attention") : nullptr;
  const llvm::json::Object *sliding =
      params ? params->getObject("sliding_attention") : nullptr;
  if (!full && !sliding) {
    if (std::string problem = readRope(obj, c); !problem.empty())
      return problem;
  }
  for (auto [part, into, name] :
       {std::tuple{full, &c, "full_attention"},
        std::tuple{sliding, &local, "sliding_attention"}}) {
    if (!part)
      continue;
    llvm::json::Object wrapper = obj; // for original_max_position_embeddings
    wrapper["rope_parameters"] = llvm::json::Object(*part);
    if (std::string problem = readRope(wrapper, *into); !problem.empty())
      return absl::StrCat("rope_parameters.", name, ": ", problem);
  }
  c.local_rope_theta = local.rope_theta;
  c.local_rope_scaling = local.rope_scaling;
  return "";
}

// Gemma 2's and Gemma 3's differences from Gemma: the attention's scale,
// a window on the sliding layers (layer_types, else all but every
// sliding_window_pattern-th: Gemma 2's every other, Gemma 3's five of six),
// the scores' and the logits' soft caps, and, for Gemma 3, the sliding
// layers' own RoPE.
std::string readGemma2Or3(const llvm::json::Object &obj, FieldReader &fields,
                          LlamaConfig &c) {
  const bool gemma3 = c.model_type == "gemma3_text";
  c.query_pre_attn_scalar = 256;
  fields.readNumber("query_pre_attn_scalar", c.query_pre_attn_scalar, 1e9);
  if (fields.problem().empty() && !(c.query_pre_attn_scalar > 0))
    return "query_pre_attn_scalar must be positive";
  c.sliding_window = 4096;
  const llvm::json::Value *window = obj.get("sliding_window");
  if (window && window->kind() == llvm::json::Value::Null)
    c.sliding_window = 0;
  else
    fields.readSize("sliding_window", c.sliding_window);
  if (fields.has("sliding_window_pattern")) {
    int64_t pattern = 0;
    fields.readSize("sliding_window_pattern", pattern, kMaxLayers);
    c.sliding_window_pattern = pattern;
  }
  if (!fields.problem().empty())
    return fields.problem();
  if (std::string problem = readLayerTypes(obj, c); !problem.empty())
    return problem;
  if (c.sliding_layers.empty()) // as Gemma2Config and Gemma3TextConfig
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      c.sliding_layers.push_back(
          (i + 1) % c.sliding_window_pattern.value_or(gemma3 ? 6 : 2) != 0);
  for (auto [key, cap] :
       {std::pair{"attn_logit_softcapping", &c.attn_logit_softcapping},
        std::pair{"final_logit_softcapping", &c.final_logit_softcapping}}) {
    const llvm::json::Value *value = obj.get(key);
    if (!value)
      continue;
    if (value->kind() == llvm::json::Value::Null) {
      *cap = 0;
      continue;
    }
    std::optional<double> number = value->getAsNumber();
    if (!number || !(*number > 0) || !std::isfinite(*number))
      return absl::StrCat(key, " must be a positive number or null");
    *cap = *number;
  }
  return gemma3 ? readGemma3Rope(obj, c) : "";
}

// Gemma's activation must be the tanh-approximated GELU: Gemma's
// config.json says it as hidden_act and, in the files of transformers 4,
// hidden_activation too, and its "gelu" is read as the same (GemmaConfig
// turns it into gelu_pytorch_tanh); Gemma 2's and Gemma 3's MLPs
// (`gemma2or3`) read hidden_activation alone, where "gelu" would be the
// exact GELU. Then what kiln's Gemma does not implement.
std::string checkGemma(const llvm::json::Object &obj, bool gemma2or3) {
  for (const char *key : {"hidden_act", "hidden_activation"}) {
    const llvm::json::Value *act = obj.get(key);
    if (!act || act->kind() == llvm::json::Value::Null ||
        (gemma2or3 && std::string_view(key) == "hidden_act"))
      continue;
    std::optional<llvm::StringRef> name = act->getAsString();
    if (name != llvm::StringRef("gelu_pytorch_tanh") &&
        (gemma2or3 || name != llvm::StringRef("gelu")))
      return absl::StrCat(key, " must be \"gelu_pytorch_tanh\"",
                          gemma2or3 ? "" : " (or its older name \"gelu\")",
                          " in a Gemma config");
  }
  if (obj.getBoolean("use_bidirectional_attention").value_or(false))
    return "use_bidirectional_attention is not supported (kiln's Gemma is "
           "causal)";
  if (!gemma2or3)
    for (const char *key :
         {"attn_logit_softcapping", "final_logit_softcapping"})
      if (const llvm::json::Value *cap = obj.get(key);
          cap && cap->kind() != llvm::json::Value::Null)
        return absl::StrCat(key, " is not supported in a gemma config "
                                 "(transformers' Gemma ignores it; Gemma 2's "
                                 "model_type is gemma2)");
  return "";
}

std::string readLlama(const llvm::json::Object &obj, LlamaConfig &c) {
  FieldReader fields(obj);
  std::optional<llvm::StringRef> type = obj.getString("model_type");
  // Gemma 2 reads as Gemma 3 does where they agree (their hidden_activation,
  // query_pre_attn_scalar, sliding layers and soft caps).
  const bool gemma3 = type == llvm::StringRef("gemma3_text");
  const bool gemma2 = type == llvm::StringRef("gemma2");
  const bool gemma = gemma3 || gemma2 || type == llvm::StringRef("gemma");
  if (gemma)
    setGemmaDefaults(*type, c);
  fields.readSize("vocab_size", c.vocab_size);
  fields.readSize("hidden_size", c.hidden_size);
  fields.readSize("intermediate_size", c.intermediate_size);
  fields.readSize("num_hidden_layers", c.num_hidden_layers, kMaxLayers);
  fields.readSize("num_attention_heads", c.num_attention_heads);
  // HF's default (Gemma2Config's and Gemma3TextConfig's is 4).
  c.num_key_value_heads = gemma3 || gemma2 ? 4 : c.num_attention_heads;
  if (fields.has("num_key_value_heads"))
    fields.readSize("num_key_value_heads", c.num_key_value_heads);
  c.head_dim = c.hidden_size / c.num_attention_heads;
  if (fields.has("head_dim"))
    fields.readSize("head_dim", c.head_dim);
  fields.readSize("max_position_embeddings", c.max_position_embeddings);
  fields.readNumber("rms_norm_eps", c.rms_norm_eps, 1);
  fields.readNumber("rope_theta", c.rope_theta, 1e12);
  fields.readNumber("attention_dropout", c.attention_dropout, 1);
  fields.readNumber("initializer_range", c.initializer_range, 1e3);
  fields.readBool("attention_bias", c.attention_bias);
  fields.readBool("mlp_bias", c.mlp_bias);
  fields.readBool("tie_word_embeddings", c.tie_word_embeddings);
  const llvm::json::Value *window = obj.get("sliding_window");
  const bool hasWindow = window && window->kind() != llvm::json::Value::Null;
  if (gemma && !fields.has("head_dim"))
    c.head_dim = 256; // GemmaConfig's default, whatever the width
  if (type == llvm::StringRef("mistral")) {
    c.model_type = "mistral";
    if (hasWindow)
      fields.readSize("sliding_window", c.sliding_window);
  } else if (type == llvm::StringRef("qwen2") ||
             type == llvm::StringRef("qwen3")) {
    if (std::string qwen = readQwen(obj, fields, c); !qwen.empty())
      return qwen;
  } else if (type == llvm::StringRef("phi3")) {
    if (std::string phi = readPhi3(fields, c); !phi.empty())
      return phi;
    if (hasWindow)
      fields.readSize("sliding_window", c.sliding_window);
  } else if (gemma3 || gemma2) {
    if (std::string problem = readGemma2Or3(obj, fields, c); !problem.empty())
      return problem;
  }
  if (!fields.problem().empty())
    return fields.problem();
  if (!gemma3)
    if (std::string rope = readRope(obj, c); !rope.empty())
      return rope;
  if (const llvm::json::Value *pad = obj.get("pad_token_id");
      pad && pad->kind() != llvm::json::Value::Null) {
    std::optional<int64_t> id = pad->getAsInteger();
    if (!id || *id < 0)
      return "pad_token_id must be an id or null";
    c.pad_token_id = *id;
  }
  if (const llvm::json::Array *eos = obj.getArray("eos_token_id"))
    for (const llvm::json::Value &id : *eos) {
      std::optional<int64_t> value = id.getAsInteger();
      if (!value || *value < 0)
        return "eos_token_id must be an id or a list of ids";
      c.eos_token_ids.push_back(*value);
    }

  if (gemma) {
    if (std::string problem = checkGemma(obj, gemma3 || gemma2);
        !problem.empty())
      return problem;
  } else if (std::optional<llvm::StringRef> act = obj.getString("hidden_act");
             act && *act != "silu") {
    return "hidden_act '" + act->str() +
           "' is not supported (only silu; Gemma's gelu_pytorch_tanh in a "
           "Gemma config)";
  }
  if (std::optional<int64_t> tp = obj.getInteger("pretraining_tp");
      tp && *tp != 1)
    return "pretraining_tp other than 1 is not supported";
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    return absl::StrCat("num_attention_heads ", c.num_attention_heads,
                        " is not a multiple of num_key_value_heads ",
                        c.num_key_value_heads);
  if (!fields.has("head_dim") && c.model_type != "qwen3" && !gemma &&
      c.hidden_size % c.num_attention_heads != 0)
    return absl::StrCat("hidden_size ", c.hidden_size,
                        " is not divisible by num_attention_heads ",
                        c.num_attention_heads);
  if (c.head_dim % 2 != 0)
    return absl::StrCat("head_dim ", c.head_dim,
                        " is odd (rotary embeddings rotate pairs)");
  return "";
}

} // namespace

absl::StatusOr<GPT2Config> parseGPT2ConfigJson(std::string_view text,
                                               std::string_view fileName) {
  return parseConfig<GPT2Config>(text, fileName, readGPT2);
}

absl::StatusOr<LlamaConfig> parseLlamaConfigJson(std::string_view text,
                                                 std::string_view fileName) {
  return parseConfig<LlamaConfig>(text, fileName, readLlama);
}

int64_t LlamaConfig::rotary_dim() const {
  // transformers' int(head_dim * partial_rotary_factor).
  return int64_t(double(head_dim) * partial_rotary_factor);
}

bool LlamaConfig::listed_sliding(int64_t layer) const {
  return layer >= 0 && layer < int64_t(sliding_layers.size()) &&
         sliding_layers[size_t(layer)];
}

int64_t LlamaConfig::layer_window(int64_t layer) const {
  // A layer list (Qwen's layer_types; Gemma 2's and 3's, read or made)
  // names the sliding layers; without one Qwen's slide from
  // max_window_layers on, and every other family's all do.
  if (!sliding_layers.empty())
    return listed_sliding(layer) ? sliding_window : 0;
  if (model_type == "qwen2" || model_type == "qwen3")
    return layer >= max_window_layers ? sliding_window : 0;
  return sliding_window;
}

bool LlamaConfig::uses_local_rope(int64_t layer) const {
  return local_rope_theta > 0 && listed_sliding(layer);
}

bool isLlamaFamily(std::string_view modelType) {
  return modelType == "llama" || modelType == "mistral" ||
         modelType == "qwen2" || modelType == "qwen3" || modelType == "phi3" ||
         modelType == "gemma" || modelType == "gemma2" ||
         modelType == "gemma3_text";
}

std::string_view implementedModelTypes() {
  return "gemma, gemma2, gemma3_text, gpt2, llama, mistral, phi3, qwen2, "
         "qwen3";
}

std::string unimplementedModelType(std::string_view modelType) {
  std::string message = absl::StrCat("model_type '", std::string(modelType),
                                     "' is not one kiln implements (",
                                     std::string(implementedModelTypes()), ")");
  if (modelType == "gemma3")
    message += "; of Gemma 3 kiln reads the text-only models (model_type "
               "gemma3_text: 270M and 1B), not the image-text folders";
  return message;
}

absl::StatusOr<std::string> readModelType(std::string_view text,
                                          std::string_view fileName) {
  absl::StatusOr<llvm::json::Value> json = parseObject(text, fileName);
  if (!json.ok())
    return json.status();
  std::optional<llvm::StringRef> type =
      json->getAsObject()->getString("model_type");
  return type ? type->str() : std::string();
}

std::optional<DType> parse_torch_dtype(std::string_view word) {
  if (word == "auto" || word == "float32")
    return DType::f32;
  if (word == "bfloat16")
    return DType::bf16;
  if (word == "float16")
    return DType::f16;
  return std::nullopt;
}

std::string_view torch_dtype_name(DType dtype) {
  return dtype == DType::bf16  ? "bfloat16"
         : dtype == DType::f16 ? "float16"
                               : "float32";
}

} // namespace kiln::nn
