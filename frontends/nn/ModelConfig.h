// Model configurations and their Hugging Face `config.json` parsers. A
// parser takes the file's text and returns a Status (naming the file) rather
// than throwing, so that it can be fuzzed (fuzz/ModelConfigFuzzer.cpp) and
// its errors reach users unchanged; nothing here builds a model.
#ifndef KILN_FRONTENDS_NN_MODELCONFIG_H
#define KILN_FRONTENDS_NN_MODELCONFIG_H

#include "support/HostTensor.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <string_view>

namespace kiln::nn {

/// The hyper-parameters of Hugging Face's GPT2Config that shape the model.
struct GPT2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  double resid_pdrop = 0.1;
  double embd_pdrop = 0.1;
  double attn_pdrop = 0.1;
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
  /// The parameters' dtype (f64 for gradient checks).
  DType dtype = DType::f32;
  /// Seeds the host generator of the initial weights.
  uint64_t init_seed = 0;
  /// Seeds the model's dropout generator.
  uint64_t dropout_seed = 0;

  /// Sets all three dropout probabilities.
  GPT2Config &with_dropout(double p) {
    resid_pdrop = embd_pdrop = attn_pdrop = p;
    return *this;
  }
};

/// A GPT-2 `config.json`'s text → the config (n_ctx is accepted for
/// n_positions); InvalidArgument naming `fileName` on bad JSON, a bad value
/// or an architecture kiln's GPT-2 does not implement (an activation other
/// than gelu_new, n_inner other than 4 n_embd, untied embeddings,
/// scale_attn_by_inverse_layer_idx).
absl::StatusOr<GPT2Config> parseGPT2ConfigJson(std::string_view text,
                                               std::string_view fileName);

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_MODELCONFIG_H
