// A data-parallel run's processes must run one command: each sums its
// gradients with the others' every step, so a process started with another
// seed, precision, batch or step count trains another model (silently, or
// until its sums stop matching theirs) or ends while the others wait for it
// forever. torch.distributed's DDP checks the model's shapes and
// broadcasts rank 0's weights; kiln compares the processes' command lines
// when they join, and the data they read, and refuses to start on any
// difference, naming it.
#ifndef KILN_EXAMPLES_PROCESSAGREEMENT_H
#define KILN_EXAMPLES_PROCESSAGREEMENT_H

#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::train {

/// What `commandLines` (each process's arguments, in rank order) differ in,
/// flag by flag ("--seed: 1 on process 0, 2 on process 1"), or nullopt when
/// every process has process 0's. A flag is a "-" or "--" argument with the
/// arguments up to the next flag as its value ("--key=value" split at '=');
/// flags named in `mayDiffer` (without dashes) are left out. Values are
/// compared as values: "0" and "0.0", a bare switch and "True", an absent
/// flag and "False" are the same; the flags' order does not matter.
std::optional<std::string> commandLineDifferences(
    const std::vector<std::vector<std::string>> &commandLines,
    const std::vector<std::string> &mayDiffer = {});

/// Every process's `arguments`, gathered in rank order through the world's
/// sums (support/Collectives.h); `arguments` alone in a world of one; the
/// sum's error when one fails.
absl::StatusOr<std::vector<std::vector<std::string>>>
gatherCommandLines(const std::vector<std::string> &arguments, int worldRank,
                   int worldSize);

/// Each process's `words` (the same count in every process), gathered in
/// rank order through one sum; `words` alone in a world of one.
absl::StatusOr<std::vector<std::vector<int64_t>>>
gatherWords(const std::vector<int64_t> &words, int worldRank, int worldSize);

struct TrainArgs;
struct PreparedData;

/// A data-parallel run's check that every process was started with the
/// main one's arguments and KILN_* variables (but those naming paths or
/// diagnostics: a cache, a dump, a trace, the numerics check)
/// (--per_device_train_batch_size may differ under
/// --auto_find_batch_size: each process's starting point, agreed on
/// later). On a difference the main process throws Failure naming it
/// (exit 2) and ends the run; the others wait in a barrier for that end,
/// so the message is said once. Nothing to do for one process.
void requireOneCommand(const TrainArgs &args);

/// A data-parallel run's check that every process read the main one's
/// data: each reads the whole data set and takes its share of every batch,
/// so a process whose files differ (a relative path read from another
/// working directory, a copy on another machine) trains on rows no other
/// process skips, and one with more steps waits for the others forever.
/// The training and evaluation blocks' counts and a hash of their tokens
/// and labels are compared; a difference is a Failure the main process
/// throws naming each process's count (exit 2), as requireOneCommand.
void requireOneDataSet(const TrainArgs &args, const PreparedData &data);

} // namespace kiln::train

#endif // KILN_EXAMPLES_PROCESSAGREEMENT_H
