// A deadline on the processes' collectives, as PyTorch's process groups
// have one (the Trainer's --ddp_timeout, 1800 s by default). An MPI sum
// has no timeout of its own and cannot be cancelled: a process that stops
// or takes another path (a data file that differs between machines, a
// stopped debugger, a bug) leaves the others waiting in it for good. Under
// the deadline, a collective that outlasts it ends its process with a
// message saying what waited; the launcher (mpirun) then ends the others.
#ifndef KILN_SUPPORT_COLLECTIVETIMEOUT_H
#define KILN_SUPPORT_COLLECTIVETIMEOUT_H

#include "support/Collectives.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include <memory>
#include <string>

namespace kiln {

/// The deadline of each collective and what set it, for the message
/// ("--ddp_timeout 30", "KILN_COLLECTIVE_TIMEOUT=30").
struct CollectiveTimeout {
  absl::Duration limit = absl::Seconds(1800);
  std::string source = "the default";
};

/// Sets the deadline of every collective that starts from now on.
void setCollectiveTimeout(CollectiveTimeout timeout);
CollectiveTimeout collectiveTimeout();

/// A timeout in whole seconds as users write one (`30`): a positive
/// integer; anything else is InvalidArgument naming `name`, the flag or
/// variable that gave it.
absl::StatusOr<absl::Duration> parseTimeoutSeconds(std::string_view text,
                                                   std::string_view name);

/// `inner` with each sum and barrier under the deadline: a watchdog thread
/// (one per process, started by the first collective) prints what waited
/// to stderr and ends the process with exit status 1 when one outlasts it.
/// `inner` must outlive the result.
std::unique_ptr<Communicator> withCollectiveTimeout(Communicator &inner);

} // namespace kiln

#endif // KILN_SUPPORT_COLLECTIVETIMEOUT_H
