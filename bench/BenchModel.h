// The model a kiln-bench run trains, built one way by the driver (which
// writes the shared initial weights) and by the kiln worker (which trains
// it): kiln-bench's GPT-2 or a Llama of the flags' shape, LoRA branches on
// the targets when --lora_r is given (the rest frozen), and the frozen
// base stored in bf16 when --torch_dtype bfloat16 asks.
#ifndef KILN_BENCH_BENCHMODEL_H
#define KILN_BENCH_BENCHMODEL_H

#include "bench/BenchSupport.h"

#include "frontends/nn/CausalLM.h"

#include <memory>

namespace kiln::bench {

struct BenchModel {
  std::unique_ptr<nn::CausalLM> model;
  /// What the optimizer updates: every parameter, or LoRA's.
  nn::NamedTensors trainable;
};

/// `config`'s model. `draw`: random initial weights drawn on the host
/// (the driver's, which it writes); otherwise left zero, for the worker to
/// load or randomize_on_device. `storeBase`: the frozen base in the
/// storage --torch_dtype names (the worker's); otherwise f32.
BenchModel build_bench_model(const BenchConfig &config, bool draw,
                             bool storeBase);

/// --init own: every weight matrix random on the device, drawn by the
/// model's generator in its stored type (uniform with the initializer's
/// standard deviation: a model too large to draw on the host or write to
/// a file); norms stay one, biases and LoRA's B zero.
void randomize_on_device(BenchModel &model);

} // namespace kiln::bench

#endif // KILN_BENCH_BENCHMODEL_H
