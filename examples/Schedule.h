// kiln-train's learning-rate schedule: --lr_scheduler_type with its
// --lr_scheduler_kwargs, checked as transformers' get_scheduler checks
// them, and built into the nn::LambdaLR multiplier the Trainer steps.
#ifndef KILN_EXAMPLES_SCHEDULE_H
#define KILN_EXAMPLES_SCHEDULE_H

#include "examples/TrainArgs.h"

#include "frontends/nn/Optimizer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

namespace kiln::train {

/// How the Trainer splits each epoch of `batches` batches into optimizer
/// steps of `accumulation` micro-batches (transformers 5.25 trainer.py,
/// _get_training_lengths and _run_epoch): ceil(batches / accumulation)
/// steps, the last taking the batches left (batches % accumulation, or a
/// whole accumulation); a step never spans two epochs.
struct EpochSteps {
  int64_t batches = 1;      ///< batches (micro-batches) an epoch
  int64_t accumulation = 1; ///< at most `batches`

  /// Optimizer steps an epoch: ceil(batches / accumulation), at least 1.
  int64_t perEpoch() const {
    return std::max<int64_t>((batches + accumulation - 1) / accumulation, 1);
  }
  /// The micro-batches of the step after `stepsDone` steps.
  int64_t microBatches(int64_t stepsDone) const {
    int64_t within = stepsDone % perEpoch();
    return within + 1 < perEpoch() ? accumulation
                                   : batches - within * accumulation;
  }
  /// The micro-batches drawn by `stepsDone` steps (the loader's position).
  int64_t microBatchesBefore(int64_t stepsDone) const {
    return stepsDone / perEpoch() * batches +
           stepsDone % perEpoch() * accumulation;
  }
  /// Epochs after `stepsDone` steps, fractional (the Trainer's state.epoch:
  /// the epoch's batches drawn over its batches).
  double epoch(int64_t stepsDone) const {
    return double(stepsDone / perEpoch()) +
           double(stepsDone % perEpoch() * accumulation) / double(batches);
  }
};

/// --lr_scheduler_kwargs' JSON object → `out` (name → number); the problem,
/// or "".
std::string parseScheduleKwargs(const std::string &json,
                                std::map<std::string, double> &out);

/// The first problem with the schedule's type, its kwargs or the learning
/// rate they need, or "".
std::string checkSchedule(const TrainArgs &a);

/// The schedule of a checked TrainArgs over `totalSteps` optimizer steps
/// (--deepspeed's scheduler when its config has one; a Failure, exit 2,
/// when that config's step counts differ from the run's).
nn::LRLambda makeSchedule(const TrainArgs &a, int64_t totalSteps);

} // namespace kiln::train

#endif // KILN_EXAMPLES_SCHEDULE_H
