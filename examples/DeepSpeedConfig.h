// The Trainer's --deepspeed FILE: a DeepSpeed config, of which kiln-train
// reads the ZeRO stage. Stage 0 is plain data parallelism; stage 1 shards
// the optimizer's state over the processes (nn::StateSharding::
// by_parameter), stage 2 the averaged gradients too
// (by_parameter_with_gradients). Everything else a config can say is the
// Trainer's flags' to say: as in the Trainer's example configs, those entries
// must be "auto", and any other value is refused by name rather than ignored.
// The Trainer's --fsdp asks for the same sharding in FSDP's words.
#ifndef KILN_EXAMPLES_DEEPSPEEDCONFIG_H
#define KILN_EXAMPLES_DEEPSPEEDCONFIG_H

#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::train {

/// The config at `path` → its zero_optimization.stage (0 when absent), or
/// an error naming the file and the entry kiln-train does not take: stage
/// 3, or a value other than "auto" anywhere else.
absl::StatusOr<int> readZeroStage(const std::string &path);

/// readZeroStage on a config's text; `what` names it in errors.
absl::StatusOr<int> parseZeroStage(std::string_view text,
                                   std::string_view what);

/// The Trainer's --fsdp options (space- or comma-separated, as the Trainer
/// splits them) → the ZeRO stage they amount to: "shard_grad_op" (the
/// optimizer's state and the gradients sharded, the parameters not) is
/// stage 2, "no_shard" stage 0; nothing for "", "False" or "false". Adds a
/// line to `notes` for "auto_wrap" (kiln shards whole parameters: there
/// is nothing to wrap). An error names what is not built: full_shard and
/// hybrid_shard (sharded parameters), offload, an unknown option, two
/// strategies.
absl::StatusOr<std::optional<int>>
fsdpZeroStage(const std::string &options, std::vector<std::string> &notes);

} // namespace kiln::train

#endif // KILN_EXAMPLES_DEEPSPEEDCONFIG_H
