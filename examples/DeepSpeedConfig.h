// The Trainer's --deepspeed FILE: a DeepSpeed config, of which kiln-train
// reads the ZeRO stage. Stage 0 is plain data parallelism; stage 1 shards
// the optimizer's state over the processes (nn::StateSharding::
// by_parameter). Everything else a config can say is the Trainer's flags'
// to say: as in the Trainer's example configs, those entries must be
// "auto", and any other value is refused by name rather than ignored.
#ifndef KILN_EXAMPLES_DEEPSPEEDCONFIG_H
#define KILN_EXAMPLES_DEEPSPEEDCONFIG_H

#include "absl/status/statusor.h"

#include <string>

namespace kiln::train {

/// The config at `path` → its zero_optimization.stage (0 when absent), or
/// an error naming the file and the entry kiln-train does not take: a
/// stage other than 0 or 1, or a value other than "auto" anywhere else.
absl::StatusOr<int> readZeroStage(const std::string &path);

} // namespace kiln::train

#endif // KILN_EXAMPLES_DEEPSPEEDCONFIG_H
