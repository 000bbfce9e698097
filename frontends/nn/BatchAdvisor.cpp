// Tracing a training step for the planner; see BatchAdvisor.h.
#include "frontends/nn/BatchAdvisor.h"

#include "frontends/nn/GradScaler.h"

#include <cstring>

namespace kiln::nn {
namespace {

/// Token ids of a step that is traced and planned, never run: nothing reads
/// their bytes, so none are allocated unless something does (a batch of
/// 10^5 blocks of 512 would take 400 MB, one of 10^11 more than any host).
class PlannedZeros final : public DeferredContents {
public:
  absl::Status fetch(std::byte *dst, size_t bytes) override {
    std::memset(dst, 0, bytes);
    return absl::OkStatus();
  }
};

Tensor plannedIds(const TrainingStepShape &shape) {
  return Tensor::from_host(HostTensor::deferred(
      DType::i64, {shape.batch, shape.seq}, std::make_shared<PlannedZeros>()));
}

} // namespace

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
  probe->loss = model.loss(plannedIds(shape), plannedIds(shape));
  backward_and_step(probe->loss, probe->optimizer, shape.max_grad_norm,
                    probe->scaler.get());
  return probe;
}

int64_t largest_trainable_batch(
    CausalLM &model, const NamedTensors &params, int64_t most, int64_t first,
    TrainingStepShape shape,
    const std::function<void(int64_t, std::optional<uint64_t>)> &report) {
  return largest_planned_batch(
      most, first,
      [&](int64_t batch) {
        shape.batch = batch;
        return trace_training_step(model, params, shape);
      },
      report);
}

} // namespace kiln::nn
