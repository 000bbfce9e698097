// Process-wide accounting of live device bytes (internal to frontends/lazy),
// the same in both modes: every device buffer a node holds (parameters,
// optimizer state, inputs, step() results, eager results) is counted from
// the moment a node takes it until its last reference dies; metrics report
// the current and the peak total. Program-internal memory (a compiled
// graph's arena) and the input copies runtime::Program::run takes are not
// counted: the Program interface exposes neither.
#ifndef KILN_FRONTENDS_LAZY_DEVICEMEMORY_H
#define KILN_FRONTENDS_LAZY_DEVICEMEMORY_H

#include "support/HostTensor.h"

#include <memory>

namespace kiln::lazy {

/// A device buffer → the same buffer, counted in metrics' liveBytes (and
/// peakLiveBytes) until its last reference dies. A buffer already counted is
/// returned as is, so sharing one among nodes counts it once.
std::shared_ptr<HostTensor>
trackDeviceBuffer(std::shared_ptr<HostTensor> value);

} // namespace kiln::lazy

#endif // KILN_FRONTENDS_LAZY_DEVICEMEMORY_H
