// The small Llama the LoRA and storage tests share: grouped-query heads
// (4 query, 2 key/value), an untied head, vocabulary 64, 16 positions.
#ifndef KILN_TESTS_UNIT_TINYLLAMA_H
#define KILN_TESTS_UNIT_TINYLLAMA_H

#include "frontends/nn/Llama.h"

namespace kiln::testing {

inline nn::LlamaConfig tinyLlama() {
  nn::LlamaConfig c;
  c.vocab_size = 64;
  c.hidden_size = 32;
  c.intermediate_size = 48;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  c.max_position_embeddings = 16;
  c.rms_norm_eps = 1e-5;
  c.init_seed = 4;
  c.initializer_range = 0.2;
  return c; // tie_word_embeddings false: lm_head is its own tensor
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_TINYLLAMA_H
