// A frozen base stored in 16 bits (Module::store_frozen_as, kiln-train's
// --torch_dtype bfloat16 under --use_lora). As a transformers model loaded
// with that torch_dtype, the model then computes in bf16: its activations,
// logits and their gradients are bf16 values, the norms take their
// statistics in f32, the loss widens the logits, and the f32 adapters read
// their input widened (PEFT's order). So the training losses differ from
// those of f32 weights holding the same bf16-rounded values only by bf16
// rounding of the activations, for GPT-2 (Conv1D, tied head through the
// fused loss, LayerNorm) and Llama (Linear, untied head, RMSNorm, gathers
// from a 16-bit table), with f32 and with bf16 products; and the planned
// step is smaller by at least the bytes the storage saves.
// tests/unit/LlamaTest.cpp holds the bf16 model to transformers' own.
#include "frontends/nn/BatchAdvisor.h"
#include "frontends/nn/GPT2.h"
#include "frontends/nn/Llama.h"
#include "frontends/nn/Lora.h"
#include "frontends/nn/Optimizer.h"

#include "tests/unit/GradCheckSupport.h"
#include "tests/unit/TinyGPT2.h"
#include "tests/unit/TinyLlama.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

namespace kiln::nn {
namespace {

/// Sets the options for one test and restores them after.
class ScopedOptions {
public:
  explicit ScopedOptions(DType productType) : saved_(options()) {
    Options o = options_from_env();
    o.backend = Backend::cpu;
    o.mode = Mode::graph;
    o.productType = productType;
    set_options(o);
  }
  ~ScopedOptions() { set_options(saved_); }

private:
  Options saved_;
};

/// The training tests' GPT-2, without dropout (each step's masks would be
/// the same for both models; without them nothing but the weights differs).
GPT2Config tinyGPT2() {
  GPT2Config c = kiln::testing::tinyGPT2Config();
  c.with_dropout(0.0);
  return c;
}

using kiln::testing::tinyLlama;

using kiln::testing::randomIds;

/// Every frozen parameter's values rounded to bf16 and stored back in f32:
/// the model the bf16 storage computes in bf16.
void roundFrozenInPlace(Module &model) {
  std::map<std::string, HostTensor> state;
  for (auto &[name, param] : model.named_parameters()) {
    if (param.requires_grad())
      continue;
    HostTensor value = param.to_host();
    for (int64_t i = 0; i < value.numElements(); ++i)
      value.setDouble(i, roundToDType(value.getDouble(i), DType::bf16));
    state.emplace(name, std::move(value));
  }
  model.load_state_dict(state, /*strict=*/false);
}

LoraConfig lora(std::vector<std::string> targets) {
  LoraConfig c;
  c.r = 4;
  c.alpha = 8;
  c.dropout = 0.0;
  c.target_modules = std::move(targets);
  return c;
}

/// Three AdamW steps of LoRA on `model` → the losses.
std::vector<double> train(CausalLM &model, int64_t vocab) {
  AdamW::Options adam;
  adam.lr = 1e-2;
  AdamW optimizer(trainable_parameters(model), adam);
  std::vector<double> losses;
  for (uint64_t s = 0; s < 3; ++s) {
    Tensor ids = randomIds(2, 8, vocab, 10 + s);
    Tensor loss = model.loss(ids, ids);
    loss.backward();
    optimizer.step();
    optimizer.zero_grad();
    kiln::step();
    losses.push_back(loss.item());
  }
  return losses;
}

/// bf16's unit roundoff, 2^-8: the three losses of the bf16 model are
/// within a few of its roundings (relative) of the f32 model's.
constexpr double kBf16Tolerance = 1.0 / 256;

template <typename Model, typename Config>
void expectStoredModelComputesInBf16(const Config &config,
                                     std::vector<std::string> targets,
                                     int64_t vocab) {
  for (DType product : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(std::string("products in ") +
                 std::string(dtypeName(product)));
    ScopedOptions scoped(product);
    Model reference(config), stored(config);
    apply_lora(reference, lora(targets), 7, &reference.generator());
    apply_lora(stored, lora(targets), 7, &stored.generator());
    roundFrozenInPlace(reference);
    int64_t saved = stored.store_frozen_as(DType::bf16);
    int64_t frozenElements = 0;
    for (auto &[name, param] : stored.named_parameters()) {
      EXPECT_EQ(param.dtype(), param.requires_grad() ? DType::f32 : DType::bf16)
          << name;
      if (!param.requires_grad())
        frozenElements += param.numel();
    }
    EXPECT_EQ(saved, 2 * frozenElements);
    kiln::step();
    {
      NoGradGuard noGrad;
      Tensor ids = randomIds(2, 8, vocab, 9);
      EXPECT_EQ(stored.forward(ids).dtype(), DType::bf16);
      EXPECT_EQ(reference.forward(ids).dtype(), DType::f32);
    }
    std::vector<double> want = train(reference, vocab);
    std::vector<double> got = train(stored, vocab);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], kBf16Tolerance * std::fabs(want[i]))
          << "step " << i;
    EXPECT_NE(got, want); // the activations were rounded: bf16, not f32
    EXPECT_LT(got.back(), got.front()); // the adapters learn
  }
}

TEST(FrozenStorage, GPT2WithABf16BaseComputesInBf16) {
  expectStoredModelComputesInBf16<GPT2LMHeadModel>(
      tinyGPT2(), {"c_attn", "c_fc"}, tinyGPT2().vocab_size);
}

TEST(FrozenStorage, LlamaWithABf16BaseComputesInBf16) {
  expectStoredModelComputesInBf16<LlamaForCausalLM>(
      tinyLlama(), {"q_proj", "v_proj", "lm_head"}, 64);
}

TEST(FrozenStorage, TheStepPlansLessByAtLeastWhatTheStorageSaves) {
  ScopedOptions scoped(DType::bf16);
  auto planned = [](bool bf16Base, int64_t &saved) {
    LlamaConfig c = tinyLlama();
    c.hidden_size = 128;
    c.intermediate_size = 256;
    c.head_dim = 32;
    c.vocab_size = 512;
    auto model = std::make_shared<LlamaForCausalLM>(c);
    apply_lora(*model, lora({"q_proj", "v_proj"}), 7, &model->generator());
    saved = bf16Base ? model->store_frozen_as(DType::bf16) : 0;
    kiln::step();
    TrainingStepShape shape; // kiln-train's step: AdamW, clipping at 1.0
    shape.batch = 2;
    shape.seq = 16;
    std::optional<uint64_t> peak = plan_traced([&] {
      return trace_training_step(*model, trainable_parameters(*model), shape);
    });
    return int64_t(peak.value_or(0));
  };
  int64_t none = 0, saved = 0;
  int64_t f32Base = planned(false, none), bf16Base = planned(true, saved);
  ASSERT_GT(f32Base, 0);
  ASSERT_GT(saved, 0);
  // The weights are inputs held through the step; under autocast the f32
  // base also needs its bf16 copies, which the bf16 base reads in place.
  EXPECT_LE(bf16Base, f32Base - saved) << bf16Base << " vs " << f32Base;
}

TEST(FrozenStorage, MergingWidensTheBaseAndSetDataGuardsItsUse) {
  ScopedOptions scoped(DType::f32);
  LlamaForCausalLM model(tinyLlama());
  apply_lora(model, lora({"q_proj"}), 7, &model.generator());
  model.store_frozen_as(DType::bf16);
  for (auto &[name, tensor] : merged_state_dict(model))
    EXPECT_EQ(tensor.dtype(), DType::f32) << name;
  // An optimizer's parameter keeps its dtype; a shape is never changed.
  Tensor trainable = trainable_parameters(model).front().second;
  EXPECT_THROW(trainable.set_data_(trainable.to(DType::bf16).detach()),
               Error);
  Tensor frozen = model.named_parameters().front().second;
  EXPECT_THROW(frozen.set_data_(Tensor::zeros({3}, DType::bf16)), Error);
  EXPECT_THROW(model.store_frozen_as(DType::i64), Error);
}

} // namespace
} // namespace kiln::nn
