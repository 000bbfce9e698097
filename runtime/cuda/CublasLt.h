// cuBLASLt, loaded at run time with dlopen like the driver (CudaDriver.h):
// kiln never links it, so a build without the CUDA libraries still runs on
// the CPU, and a program without GEMMs never needs cuBLASLt. Only the
// functions kiln's f32 GEMMs use are resolved.
#ifndef KILN_RUNTIME_CUDA_CUBLASLT_H
#define KILN_RUNTIME_CUDA_CUBLASLT_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cublasLt.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runtime::cuda {

/// X(member, symbol): the member has the type of &symbol (cublasLt.h).
#define KILN_CUBLASLT_ENTRY_POINTS(X)                                          \
  X(create, cublasLtCreate)                                                    \
  X(destroy, cublasLtDestroy)                                                  \
  X(matmulDescCreate, cublasLtMatmulDescCreate)                                \
  X(matmulDescDestroy, cublasLtMatmulDescDestroy)                              \
  X(matmulDescSetAttribute, cublasLtMatmulDescSetAttribute)                    \
  X(matrixLayoutCreate, cublasLtMatrixLayoutCreate)                            \
  X(matrixLayoutDestroy, cublasLtMatrixLayoutDestroy)                          \
  X(matrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute)                \
  X(matmulPreferenceCreate, cublasLtMatmulPreferenceCreate)                    \
  X(matmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy)                  \
  X(matmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute)        \
  X(matmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic)                    \
  X(matmul, cublasLtMatmul)                                                    \
  X(getStatusName, cublasLtGetStatusName)

/// A loaded cuBLASLt: its entry points. Loaded once per process for each
/// list of candidate paths, never unloaded.
class CublasLt {
public:
  /// The first candidate that loads with every entry point → the library;
  /// else FailedPrecondition naming each path tried and why it failed.
  static absl::StatusOr<std::shared_ptr<const CublasLt>>
  load(const std::vector<std::string> &candidates);

  /// "CUBLAS_STATUS_X" (or the number when the library has no name).
  std::string statusName(cublasStatus_t status) const;
  /// The path that was loaded.
  const std::string &libraryPath() const { return libraryPath_; }

#define KILN_CUBLASLT_DECLARE_ENTRY_POINT(member, symbol)                      \
  decltype(&::symbol) member = nullptr;
  KILN_CUBLASLT_ENTRY_POINTS(KILN_CUBLASLT_DECLARE_ENTRY_POINT)
#undef KILN_CUBLASLT_DECLARE_ENTRY_POINT

private:
  CublasLt() = default;
  std::string libraryPath_;
};

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_CUBLASLT_H
