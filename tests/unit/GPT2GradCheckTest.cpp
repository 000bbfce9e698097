// Whole-model gradient check: GPT-2 (2 layers, n_embd 32, 4 heads, vocab
// 64, sequence 16) in f64 without dropout: the gradients of 20 random
// parameter entries against finite differences (GradCheckSupport.h;
// measured: relative errors ~1e-9, at most 2e-8, absolute at most 2e-11).
// Key biases have an exact zero gradient (softmax ignores a constant added
// to every score).
#include "GradCheckSupport.h"
#include "frontends/nn/GPT2.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::nn {
namespace {

TEST(GPT2GradCheck, GradientsMatchFiniteDifferencesInF64) {
  GPT2Config c;
  c.vocab_size = 64;
  c.n_positions = 16;
  c.n_embd = 32;
  c.n_layer = 2;
  c.n_head = 4;
  c.with_dropout(0.0);
  c.dtype = DType::f64;
  c.init_seed = 3;
  // Larger weights than GPT-2's 0.02 make every part of the model matter to
  // the loss (attention patterns are far from uniform), so the check sees
  // the attention, layer-norm and MLP gradients at full strength.
  c.initializer_range = 0.2;
  GPT2LMHeadModel model(c);

  std::mt19937_64 rng(11);
  Tensor input = kiln::testing::randomIds(/*batch=*/2, /*seq=*/16,
                                          c.vocab_size, rng);
  kiln::testing::expectGradientsMatchFiniteDifferences(
      model, [&] { return model.loss(input, input); }, /*seed=*/rng());
}

} // namespace
} // namespace kiln::nn
