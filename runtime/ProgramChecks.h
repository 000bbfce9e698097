// Checks every executor makes the same way, so a program behaves alike on
// every backend: the inputs of a run against the signature (same messages
// on cpu and cuda), and at load, that no thunk writes an input's buffer
// (borrowed inputs are the caller's, read only).
#ifndef KILN_RUNTIME_PROGRAMCHECKS_H
#define KILN_RUNTIME_PROGRAMCHECKS_H

#include "runtime/Executable.h"
#include "runtime/Program.h"

#include "absl/status/status.h"

#include <vector>

namespace kiln::runtime {

/// inputs of one run → OK, or InvalidArgument naming the first input whose
/// count, dtype or shape differs from `signature`, or that has no buffer.
absl::Status checkRunInputs(const ProgramSignature &signature,
                            const std::vector<ProgramInput> &inputs);

/// executable → OK, or DataLoss naming the first thunk that writes an input
/// slot.
absl::Status checkInputsAreReadOnly(const Executable &executable);

/// A value's size in bytes (elements × element width).
size_t valueBytes(const ProgramValue &value);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_PROGRAMCHECKS_H
