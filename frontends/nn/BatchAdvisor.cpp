// Tracing a training step for the planner; see BatchAdvisor.h.
#include "frontends/nn/BatchAdvisor.h"

#include "frontends/nn/GradScaler.h"

#include <cstring>

namespace kiln::nn {

TracedStep trace_training_step(CausalLM &model, const NamedTensors &params,
                               const TrainingStepShape &shape) {
  struct Probe {
    Probe(NamedTensors params, const AdamW::Options &options)
        : optimizer(std::move(params), options) {
      if (kiln::options().productType == DType::f16)
        scaler = std::make_unique<GradScaler>();
    }
    AdamW optimizer;
    std::unique_ptr<GradScaler> scaler;
    Tensor loss;
  };
  auto probe = std::make_shared<Probe>(params, shape.optimizer);
  // Inputs and labels are two inputs, as in the training step.
  HostTensor zeros(DType::i64, {shape.batch, shape.seq});
  std::memset(zeros.data(), 0, size_t(shape.batch * shape.seq) * 8);
  Tensor ids = Tensor::from_host(zeros);
  Tensor labels = Tensor::from_host(std::move(zeros));
  probe->loss = model.loss(ids, labels);
  backward_and_step(probe->loss, probe->optimizer, shape.max_grad_norm,
                    probe->scaler.get());
  return probe;
}

int64_t largest_trainable_batch(
    CausalLM &model, const NamedTensors &params, int64_t most,
    TrainingStepShape shape,
    const std::function<void(int64_t, std::optional<uint64_t>)> &report) {
  return largest_planned_batch(
      most,
      [&](int64_t batch) {
        shape.batch = batch;
        return trace_training_step(model, params, shape);
      },
      report);
}

} // namespace kiln::nn
