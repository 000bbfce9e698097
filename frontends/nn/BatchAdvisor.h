// The batch advisor: the largest batch whose training step fits a memory
// budget, from the compiler's memory plan alone (kiln::largest_planned_batch
// over traced steps), never running a step. The step traced is the one
// kiln-train runs: the loss, backward, global-norm clipping, AdamW, and
// loss scaling under f16. kiln-train's --auto_find_batch_size and
// `kilnc plan --max_batch` ask it.
#ifndef KILN_FRONTENDS_NN_BATCHADVISOR_H
#define KILN_FRONTENDS_NN_BATCHADVISOR_H

#include "frontends/nn/CausalLM.h"
#include "frontends/nn/Optimizer.h"

#include <functional>
#include <optional>

namespace kiln::nn {

/// What one training step of `model` needs traced, at batch × seq token ids:
/// `params` are what AdamW updates (all parameters, or LoRA's).
struct TrainingStepShape {
  int64_t batch = 1;
  int64_t seq = 1;
  AdamW::Options optimizer;
  /// Clipping (0: none), as the Trainer's max_grad_norm.
  double max_grad_norm = 1.0;
};

/// The step traced (not run): keep the result alive while it is planned.
TracedStep trace_training_step(CausalLM &model, const NamedTensors &params,
                               const TrainingStepShape &shape);

/// The largest batch in [1, most] whose step plans within
/// options().memoryBudgetBytes → 0 when batch 1 does not fit; `first` is
/// the first batch probed (largest_planned_batch).
/// `report(batch, peak)` sees each probe (nullopt: over the budget).
int64_t largest_trainable_batch(
    CausalLM &model, const NamedTensors &params, int64_t most, int64_t first,
    TrainingStepShape shape,
    const std::function<void(int64_t, std::optional<uint64_t>)> &report = {});

} // namespace kiln::nn

#endif // KILN_FRONTENDS_NN_BATCHADVISOR_H
