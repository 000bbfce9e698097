// Internal hooks between the tensor handles and step(): the forced sync that
// to_host()/item() run on a pending tensor, and the metrics counters that
// step() updates.
#ifndef KILN_FRONTENDS_LAZY_STEP_H
#define KILN_FRONTENDS_LAZY_STEP_H

#include "frontends/lazy/Tensor.h"

namespace kiln::lazy {

/// Runs step() on behalf of a host transfer and counts it as a forced sync.
void forcedSync();

/// The counters behind kiln::metrics, for step() to update.
metrics::Counters &mutableCounters();

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_STEP_H
