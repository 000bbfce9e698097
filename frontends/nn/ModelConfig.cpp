// Hugging Face config.json parsers; see ModelConfig.h.
#include "frontends/nn/ModelConfig.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace kiln::nn {
namespace {

/// Sizes above this are refused: no real model comes near, and products
/// of two sizes then stay far from int64 overflow.
constexpr int64_t kMaxSize = int64_t{1} << 30;

} // namespace

absl::StatusOr<GPT2Config> parseGPT2ConfigJson(std::string_view text,
                                               std::string_view fileName) {
  auto fail = [&](const std::string &message) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(fileName), "': ", message));
  };
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!json)
    return fail("not valid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *obj = json->getAsObject();
  if (!obj)
    return fail("not a JSON object");

  GPT2Config c;
  std::string problem;
  auto readInt = [&](const char *key, int64_t &field) {
    if (const llvm::json::Value *v = obj->get(key); v && problem.empty()) {
      std::optional<int64_t> i = v->getAsInteger();
      if (!i || *i <= 0 || *i > kMaxSize)
        problem = absl::StrCat("'", key, "' must be an integer in [1, ",
                               kMaxSize, "]");
      else
        field = *i;
    }
  };
  auto readDouble = [&](const char *key, double &field, double limit) {
    if (const llvm::json::Value *v = obj->get(key); v && problem.empty()) {
      std::optional<double> d = v->getAsNumber();
      if (!d || !(*d >= 0 && *d < limit))
        problem = absl::StrCat("'", key, "' must be a number in [0, ", limit,
                               ")");
      else
        field = *d;
    }
  };
  readInt("n_ctx", c.n_positions);
  readInt("n_positions", c.n_positions);
  readInt("vocab_size", c.vocab_size);
  readInt("n_embd", c.n_embd);
  readInt("n_layer", c.n_layer);
  readInt("n_head", c.n_head);
  readDouble("resid_pdrop", c.resid_pdrop, 1);
  readDouble("embd_pdrop", c.embd_pdrop, 1);
  readDouble("attn_pdrop", c.attn_pdrop, 1);
  readDouble("layer_norm_epsilon", c.layer_norm_epsilon, 1);
  readDouble("initializer_range", c.initializer_range, 1e3);
  if (!problem.empty())
    return fail(problem);

  // Options that change the architecture: refuse what is not implemented
  // rather than load weights into a different model.
  if (std::optional<llvm::StringRef> act =
          obj->getString("activation_function");
      act && *act != "gelu_new")
    return fail("activation_function '" + act->str() +
                "' is not supported (only gelu_new)");
  if (const llvm::json::Value *inner = obj->get("n_inner");
      inner && inner->kind() != llvm::json::Value::Null &&
      inner->getAsInteger() != std::optional<int64_t>(4 * c.n_embd))
    return fail("n_inner other than 4 * n_embd is not supported");
  if (obj->getBoolean("tie_word_embeddings") == std::optional<bool>(false))
    return fail("untied word embeddings are not supported");
  if (obj->getBoolean("scale_attn_by_inverse_layer_idx") ==
      std::optional<bool>(true))
    return fail("scale_attn_by_inverse_layer_idx is not supported");
  if (c.n_embd % c.n_head != 0)
    return fail(absl::StrCat("n_embd ", c.n_embd,
                             " is not divisible by n_head ", c.n_head));
  return c;
}

} // namespace kiln::nn
