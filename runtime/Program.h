// A compiled graph ready to run: the runtime's view of what the compiler
// produced, whatever the backend. No MLIR or LLVM types appear here, so a
// training job that only runs programs never needs the compiler's headers.
#ifndef KILN_RUNTIME_PROGRAM_H
#define KILN_RUNTIME_PROGRAM_H

#include "support/HostTensor.h"

#include "absl/status/statusor.h"

#include <string_view>
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

/// inputs (by value: donated ones are consumed) → outputs.
class Program {
public:
  virtual ~Program() = default;

  virtual const ProgramSignature &signature() const = 0;
  virtual std::string_view backendName() const = 0;

  /// Runs the program. Fails (never aborts) when the inputs do not match the
  /// signature.
  virtual absl::StatusOr<std::vector<HostTensor>>
  run(std::vector<HostTensor> inputs) = 0;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_PROGRAM_H
