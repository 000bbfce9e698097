// The small GPT-2 the training tests share (2 layers, n_embd 64, 4 heads,
// vocabulary 256, 32 positions, dropout 0.1, fixed seeds): big enough to
// have every part of the real model, small enough to train 100 steps in a
// test.
#ifndef KILN_TESTS_UNIT_TINYGPT2_H
#define KILN_TESTS_UNIT_TINYGPT2_H

#include "frontends/nn/GPT2.h"

namespace kiln::testing {

inline nn::GPT2Config tinyGPT2Config() {
  nn::GPT2Config c;
  c.vocab_size = 256;
  c.n_positions = 32;
  c.n_embd = 64;
  c.n_layer = 2;
  c.n_head = 4;
  c.with_dropout(0.1);
  c.init_seed = 1;
  c.dropout_seed = 2;
  return c;
}

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_TINYGPT2_H
