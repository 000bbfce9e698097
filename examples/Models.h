// The model a kiln-train run trains, GPT-2 or Llama: its Hugging Face config
// (from a folder's config.json, or from the n_* flags), the model built from
// it, the folder's weights loaded into it, and the config.json written beside
// saved weights so that transformers loads the folder back.
#ifndef KILN_EXAMPLES_MODELS_H
#define KILN_EXAMPLES_MODELS_H

#include "examples/TrainArgs.h"

#include "frontends/data/Tokenizer.h"
#include "frontends/nn/CausalLM.h"
#include "frontends/nn/ModelConfig.h"

#include <memory>
#include <optional>
#include <string>

namespace kiln::train {

/// The family and its config (only the one of `type` is meaningful).
struct ModelSpec {
  std::string type = "gpt2"; // "gpt2" | "llama"
  nn::GPT2Config gpt2;
  nn::LlamaConfig llama;
  /// The Trainer's regularisers of the loss and the embeddings
  /// (--label_smoothing_factor, --neftune_noise_alpha), which buildModel
  /// sets on the model.
  double labelSmoothing = 0, neftuneNoiseAlpha = 0;
};

/// The configuration the arguments ask for, with `vocabSize` rows: a
/// folder's config (TrainArgs::llamaConfig, gpt2Config), else the n_* flags.
/// Seeds and dropout come from the arguments.
ModelSpec modelSpec(const TrainArgs &a, int64_t vocabSize);

/// spec → a freshly initialised model.
std::unique_ptr<nn::CausalLM> buildModel(const ModelSpec &spec);

/// A Hugging Face folder's weights → `model`, which buildModel(spec) built;
/// throws kiln::Error naming the file on a bad or missing file.
void loadPretrained(const ModelSpec &spec, nn::CausalLM &model,
                    const std::string &dir);

/// config.json with Hugging Face's keys for the spec's family. The
/// tokenizer's end-of-text (and beginning-of-text) ids become
/// eos_token_id / bos_token_id; none (the byte-level tokenizer) writes
/// null, as transformers wants an id inside the vocabulary.
std::string configJson(const ModelSpec &spec,
                       const data::Tokenizer &tokenizer);
/// The same with the special tokens' ids given (nullopt: null).
std::string configJson(const ModelSpec &spec, std::optional<int32_t> bos,
                       std::optional<int32_t> eos);

} // namespace kiln::train

#endif // KILN_EXAMPLES_MODELS_H
