// The compiler driver: verifies the module, then hands it to the backend.
#include "compiler/Compiler.h"

#include "compiler/cpu/CpuCompiler.h"
#include "compiler/reference/ReferenceProgram.h"
#ifdef KILN_WITH_CUDA_RUNTIME
#include "runtime/cuda/CudaExecutor.h"
#endif

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <string>

namespace kiln::compiler {

absl::StatusOr<Backend> parseBackend(std::string_view name) {
  if (name == "reference")
    return Backend::reference;
  if (name == "cpu")
    return Backend::cpu;
  if (name == "cuda")
    return Backend::cuda;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", std::string(name),
                   "'; expected reference, cpu or cuda"));
}

std::string_view backendName(Backend backend) {
  switch (backend) {
  case Backend::reference: return "reference";
  case Backend::cpu: return "cpu";
  case Backend::cuda: return "cuda";
  }
  return "?";
}

absl::Status backendAvailable(Backend backend) {
  if (backend != Backend::cuda)
    return absl::OkStatus();
#ifdef KILN_WITH_CUDA_RUNTIME
  return runtime::cudaDeviceAvailable();
#else
  return absl::UnimplementedError(
      "this build of kiln has no CUDA runtime (the CUDA toolkit's headers "
      "were missing when it was built)");
#endif
}

absl::StatusOr<uint64_t> memoryAvailable(Backend backend) {
  if (backend == Backend::cuda) {
#ifdef KILN_WITH_CUDA_RUNTIME
    return runtime::cudaMemoryAvailable();
#else
    return backendAvailable(backend);
#endif
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return kib * 1024;
  return absl::UnavailableError(
      "the host's available memory is unknown (no MemAvailable in "
      "/proc/meminfo)");
}

absl::Status verifyModule(mlir::ModuleOp module) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::ScopedDiagnosticHandler handler(
      module.getContext(), [&](mlir::Diagnostic &diagnostic) {
        os << diagnostic << "\n";
        return mlir::success();
      });
  if (mlir::failed(mlir::verify(module)))
    return absl::InvalidArgumentError(
        absl::StrCat("the module does not verify:\n", diagnostics));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<runtime::Program>>
compile(mlir::ModuleOp module, const CompileOptions &options) {
  if (absl::Status verified = verifyModule(module); !verified.ok())
    return verified;
  switch (options.backend) {
  case Backend::reference:
    return createReferenceProgram(module, options.function);
  case Backend::cpu:
  case Backend::cuda:
    return cpu::createProgram(module, options.function,
                              cpu::pipelineOptionsFor(options),
                              cpu::kernelTargetFor(options));
  }
  return absl::InvalidArgumentError("unknown backend");
}

} // namespace kiln::compiler
