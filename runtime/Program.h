// A compiled graph ready to run: the runtime's view of what the compiler
// produced, whatever the backend. No MLIR or LLVM types appear here, so a
// training job that only runs programs never needs the compiler's headers.
#ifndef KILN_RUNTIME_PROGRAM_H
#define KILN_RUNTIME_PROGRAM_H

#include "runtime/Profile.h"
#include "support/HostTensor.h"

#include "absl/status/statusor.h"

#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::runtime {

/// One input or output of a program: its type and, for an input, whether its
/// buffer is donated (an output may reuse it; the caller gives it up).
struct ProgramValue {
  DType dtype;
  std::vector<int64_t> shape;
  bool donated = false;
};

struct ProgramSignature {
  std::vector<ProgramValue> inputs;
  std::vector<ProgramValue> outputs;
};

/// One input of a run: a tensor the caller keeps, lent for the run
/// (borrowed: read only, never copied, never returned as an output), or one
/// the caller gives up (donated: where the signature marks the position
/// donated, an output may be returned in its buffer; elsewhere it is
/// released when the run ends). A donated tensor must not share storage
/// with any other input.
class ProgramInput {
public:
  /// `tensor` must stay alive and unchanged until run() returns.
  static ProgramInput borrow(const HostTensor &tensor) {
    ProgramInput input;
    input.borrowed_ = &tensor;
    return input;
  }
  static ProgramInput donate(HostTensor tensor) {
    ProgramInput input;
    input.owned_ = std::move(tensor);
    return input;
  }

  /// Move-only: a copy of a donated input would copy its buffer (and a
  /// braced list of inputs copies its elements: build the vector with
  /// inputList() or push_back instead).
  ProgramInput(ProgramInput &&) noexcept = default;
  ProgramInput &operator=(ProgramInput &&) noexcept = default;
  ProgramInput(const ProgramInput &) = delete;
  ProgramInput &operator=(const ProgramInput &) = delete;

  const HostTensor &tensor() const { return borrowed_ ? *borrowed_ : owned_; }
  bool isDonated() const { return borrowed_ == nullptr; }
  /// The donated tensor, moved out (a program returning its buffer).
  HostTensor take() { return std::move(owned_); }

private:
  ProgramInput() = default;
  const HostTensor *borrowed_ = nullptr;
  HostTensor owned_;
};

/// The inputs, moved into a vector in order:
/// `run(inputList(ProgramInput::borrow(a), ProgramInput::donate(std::move(b))))`.
template <typename... Inputs>
std::vector<ProgramInput> inputList(Inputs... inputs) {
  static_assert((std::is_same_v<Inputs, ProgramInput> && ...),
                "inputList takes ProgramInput values");
  std::vector<ProgramInput> list;
  list.reserve(sizeof...(inputs));
  (list.push_back(std::move(inputs)), ...);
  return list;
}

/// Every tensor of `tensors` borrowed, in order (the vector must outlive
/// the run).
inline std::vector<ProgramInput>
borrowAll(const std::vector<HostTensor> &tensors) {
  std::vector<ProgramInput> inputs;
  inputs.reserve(tensors.size());
  for (const HostTensor &t : tensors)
    inputs.push_back(ProgramInput::borrow(t));
  return inputs;
}

/// Buffers a program's runs allocated (not its load-time arena), counted
/// since it was loaded. In steady state a CPU program allocates none:
/// outputs reuse donated buffers or storage recycled from earlier outputs.
struct AllocationStats {
  int64_t buffers = 0;
  int64_t bytes = 0;
};

/// inputs (borrowed or donated) → outputs.
class Program {
public:
  virtual ~Program() = default;

  virtual const ProgramSignature &signature() const = 0;
  virtual std::string_view backendName() const = 0;

  /// Runs the program. Fails (never aborts) when the inputs do not match the
  /// signature; a donated input is then released, as after a run.
  absl::StatusOr<std::vector<HostTensor>>
  run(std::vector<ProgramInput> inputs) {
    return execute(std::move(inputs));
  }
  /// The convenience for callers holding tensors: every one is donated
  /// (pass borrowAll(tensors) to keep them instead).
  absl::StatusOr<std::vector<HostTensor>>
  run(std::vector<HostTensor> inputs) {
    std::vector<ProgramInput> donated;
    donated.reserve(inputs.size());
    for (HostTensor &t : inputs)
      donated.push_back(ProgramInput::donate(std::move(t)));
    return execute(std::move(donated));
  }

  virtual AllocationStats allocationStats() const = 0;

  /// Profiling on: each run records its thunks' times (a program that
  /// cannot time its thunks ignores this).
  virtual void setProfiling(bool on) { (void)on; }
  /// The last run's profile, once (nullopt when profiling is off or the
  /// program does not profile). May wait for the device to finish the run.
  virtual std::optional<RunProfile> takeProfile() { return std::nullopt; }

protected:
  virtual absl::StatusOr<std::vector<HostTensor>>
  execute(std::vector<ProgramInput> inputs) = 0;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_PROGRAM_H
