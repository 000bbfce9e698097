// The small GPT-2 the training tests share (2 layers, n_embd 64, 4 heads,
// vocabulary 256, 32 positions, dropout 0.1, fixed seeds): big enough to
// have every part of the real model, small enough to train 100 steps in a
// test; and the training loop they share.
#ifndef KILN_TESTS_UNIT_TINYGPT2_H
#define KILN_TESTS_UNIT_TINYGPT2_H

#include "frontends/nn/GPT2.h"
#include "frontends/nn/Optimizer.h"
#include "frontends/nn/GradScaler.h"

#include <random>
#include <vector>

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

/// The tests' training loop: the tiny model on one fixed batch of 4
/// sequences of 32 ids, AdamW (lr 3e-3, weight decay 0.01), gradients
/// clipped at 1.0, 10 warmup steps then cosine decay over `totalSteps`.
struct TinyGPT2Training {
  explicit TinyGPT2Training(
      int64_t totalSteps = 100,
      nn::StateSharding sharding = nn::StateSharding::replicated)
      : model(tinyGPT2Config()), input(batch(model.config())),
        opt(model.named_parameters(), adamW(sharding)),
        sched(opt, nn::cosine_schedule_with_warmup(10, totalSteps)) {
    model.train();
  }

  /// One training step, ending with kiln::step(): its loss. With a
  /// scaler, f16's loss scaling (its updates skipped on an overflow).
  Tensor step(nn::GradScaler *scaler = nullptr) {
    Tensor loss = model.loss(input, input);
    nn::backward_and_step(loss, opt, /*max_grad_norm=*/1.0, scaler);
    sched.step();
    kiln::step();
    return loss;
  }

  nn::GPT2LMHeadModel model;
  Tensor input;
  nn::AdamW opt;
  nn::LambdaLR sched;

private:
  static Tensor batch(const nn::GPT2Config &c) {
    std::mt19937_64 rng(5);
    std::vector<double> ids(4 * 32);
    for (double &id : ids)
      id = static_cast<double>(rng() % c.vocab_size);
    return Tensor::from_vector(ids, {4, 32}, DType::i64);
  }
  static nn::AdamW::Options adamW(nn::StateSharding sharding) {
    nn::AdamW::Options o;
    o.lr = 3e-3;
    o.weight_decay = 0.01;
    o.sharding = sharding;
    return o;
  }
};

} // namespace kiln::testing

#endif // KILN_TESTS_UNIT_TINYGPT2_H
