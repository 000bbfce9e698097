// kiln's GEMM thunks (f32 into f32, bf16 into f32 or bf16) on cuBLASLt: one plan per thunk, made once at
// load (descriptors, layouts, the algorithm from the heuristic), because
// every device pointer of a program is fixed; a run only enqueues
// cublasLtMatmul with the plan.
#ifndef KILN_RUNTIME_CUDA_CUDAGEMM_H
#define KILN_RUNTIME_CUDA_CUDAGEMM_H

#include "runtime/Executable.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/CudaDriver.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace kiln::runtime::cuda {

/// A cuBLASLt handle, one per program; outlives the program's GEMM plans.
class CublasLtHandle {
public:
  static absl::StatusOr<std::unique_ptr<CublasLtHandle>>
  create(std::shared_ptr<const CublasLt> library);
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle &) = delete;
  CublasLtHandle &operator=(const CublasLtHandle &) = delete;

  cublasLtHandle_t get() const { return handle_; }
  const CublasLt &library() const { return *library_; }
  const std::shared_ptr<const CublasLt> &sharedLibrary() const {
    return library_;
  }

private:
  CublasLtHandle() = default;
  std::shared_ptr<const CublasLt> library_;
  cublasLtHandle_t handle_ = nullptr;
};

/// The largest GEMM workspace any plan may ask for.
inline constexpr uint64_t kMaxGemmWorkspaceBytes = uint64_t{32} << 20;

/// One GEMM thunk, planned: C[b] = op(A[b]) · op(B[b]) (+ ACC[b]) (row-major,
/// C of the thunk's result type, see GemmThunk) on fixed device pointers.
class CudaGemm {
public:
  struct Operands {
    CUdeviceptr a = 0, b = 0, c = 0;
    /// The thunk's accumulator, 0 when it has none: cuBLASLt's C with
    /// beta = 1, read as D (kiln's C) is written; it may be D itself.
    CUdeviceptr accumulator = 0;
  };

  /// thunk + its device pointers → a plan with the algorithm chosen, or an
  /// error naming the thunk index, m/n/k/batch and the cuBLASLt status.
  /// Exact f32 (CUBLAS_COMPUTE_32F) unless `allowTf32` (f32 inputs only).
  static absl::StatusOr<std::unique_ptr<CudaGemm>>
  create(const CublasLtHandle &handle, const GemmThunk &thunk,
         size_t thunkIndex, bool allowTf32, Operands operands);
  ~CudaGemm();
  CudaGemm(const CudaGemm &) = delete;
  CudaGemm &operator=(const CudaGemm &) = delete;

  /// Workspace bytes the chosen algorithm needs (at most
  /// kMaxGemmWorkspaceBytes).
  uint64_t workspaceBytes() const { return workspaceBytes_; }

  /// Enqueues the GEMM on `stream` (when k is 0: a memset of C, or a copy
  /// of the accumulator; nothing when C is empty).
  absl::Status enqueue(const CudaDriver &driver, CUstream stream,
                       CUdeviceptr workspace, uint64_t workspaceBytes) const;

  /// "GEMM thunk 3 (m=64, n=32, k=16, batch=2, transA)".
  std::string describe() const;

private:
  enum class Mode { nothing, zeroFill, copyAccumulator, matmul };

  CudaGemm(const CublasLtHandle &handle, const GemmThunk &thunk,
           size_t thunkIndex, Operands operands)
      : library_(handle.sharedLibrary()), handle_(handle.get()), thunk_(thunk),
        thunkIndex_(thunkIndex), operands_(operands) {}
  absl::Status plan(bool allowTf32);
  absl::Status chooseAlgorithm();
  absl::Status failure(const char *call, cublasStatus_t status) const;

  std::shared_ptr<const CublasLt> library_;
  cublasLtHandle_t handle_;
  GemmThunk thunk_;
  size_t thunkIndex_;
  Operands operands_;
  Mode mode_ = Mode::nothing;
  cublasLtMatmulDesc_t desc_ = nullptr;
  /// cuBLAS's A, B and C/D: kiln's B, A and C (see plan()).
  cublasLtMatrixLayout_t layoutA_ = nullptr, layoutB_ = nullptr,
                         layoutC_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  uint64_t workspaceBytes_ = 0;
  /// Host scalars (CUBLASLT_POINTER_MODE_HOST): read when enqueued.
  float alpha_ = 1.0f, beta_ = 0.0f;
};

} // namespace kiln::runtime::cuda

#endif // KILN_RUNTIME_CUDA_CUDAGEMM_H
