// kiln-train's learning-rate schedule: --lr_scheduler_type with its
// --lr_scheduler_kwargs, checked as transformers' get_scheduler checks
// them, and built into the nn::LambdaLR multiplier the Trainer steps.
#ifndef KILN_EXAMPLES_SCHEDULE_H
#define KILN_EXAMPLES_SCHEDULE_H

#include "examples/TrainArgs.h"

#include "frontends/nn/Optimizer.h"

#include <map>
#include <string>

namespace kiln::train {

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
