// The checks shared by the cpu and cuda executors (see ProgramChecks.h).
#include "runtime/ProgramChecks.h"
#include "runtime/BufferLiveness.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln::runtime {

absl::Status checkRunInputs(const ProgramSignature &signature,
                            const std::vector<ProgramInput> &inputs) {
  const auto &expected = signature.inputs;
  if (inputs.size() != expected.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "program takes ", expected.size(), " inputs, got ", inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor &t = inputs[i].tensor();
    if (t.dtype() != expected[i].dtype || t.shape() != expected[i].shape)
      return absl::InvalidArgumentError(absl::StrCat(
          inputs[i].isDonated() ? "donated " : "", "input ", i, ": expected ",
          std::string(dtypeName(expected[i].dtype)), "[",
          absl::StrJoin(expected[i].shape, "x"), "], got ", t.typeString()));
    if (t.numElements() > 0 && !t.hasContents())
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " has no buffer (moved from?)"));
  }
  return absl::OkStatus();
}

absl::Status checkInputsAreReadOnly(const Executable &executable) {
  for (size_t i = 0; i < executable.thunks.size(); ++i) {
    absl::Status status = absl::OkStatus();
    forEachSlotUse(executable.thunks[i], [&](uint32_t slot, bool isWrite) {
      const BufferSlot &s = executable.plan.slots[slot];
      if (isWrite && status.ok() && s.kind == BufferSlot::Kind::input)
        status = absl::DataLossError(absl::StrCat(
            "thunk ", i, " writes input ", s.input, "'s buffer in place"));
    });
    if (!status.ok())
      return status;
  }
  return absl::OkStatus();
}

size_t valueBytes(const ProgramValue &value) {
  size_t bytes = byteWidth(value.dtype);
  for (int64_t d : value.shape)
    bytes *= static_cast<size_t>(d);
  return bytes;
}

} // namespace kiln::runtime
