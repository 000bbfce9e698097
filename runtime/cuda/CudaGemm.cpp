// GEMM plans on cuBLASLt (see CudaGemm.h).
//
// Layout: cuBLASLt is column-major by default, kiln's matrices row-major.
// A row-major m×n C is the column-major n×m matrix C^T, and
// C^T = op(B)^T · op(A)^T, so each plan computes that column-major product
// with the operands swapped: cuBLAS's A is kiln's B, cuBLAS's B is kiln's
// A, cuBLAS's (M, N, K) = (n, m, k), every layout CUBLASLT_ORDER_COL. A
// row-major buffer read column-major is its own transpose, so kiln's
// transA/transB map straight onto cuBLAS's TRANSB/TRANSA. This is the
// classic trick every cuBLAS row-major caller uses; CUBLASLT_ORDER_ROW
// would say the same thing but fewer algorithms support it for f32.
#include "runtime/cuda/CudaGemm.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace kiln::runtime::cuda {

namespace {

/// The alignment cuBLASLt may assume of a matrix: the largest power of two
/// (up to 256, the preference's default) dividing its address and, when
/// batched, the byte stride between batch entries.
uint32_t alignmentOf(CUdeviceptr pointer, int64_t batch, uint64_t strideBytes) {
  uint64_t bits = pointer;
  if (batch > 1)
    bits |= strideBytes;
  uint32_t alignment = 256;
  while (alignment > 1 && bits % alignment != 0)
    alignment /= 2;
  return alignment;
}

/// ", A at 8192 (batch stride 32768)" for an operand read in place.
std::string viewText(const char *name, const GemmOperandView &view) {
  if (view.packed())
    return "";
  return absl::StrCat(", ", name, " at ", view.offset, " (batch stride ",
                      view.batchStride, ")");
}

} // namespace

absl::StatusOr<std::unique_ptr<CublasLtHandle>>
CublasLtHandle::create(std::shared_ptr<const CublasLt> library) {
  std::unique_ptr<CublasLtHandle> handle(new CublasLtHandle());
  cublasStatus_t status = library->create(&handle->handle_);
  if (status != CUBLAS_STATUS_SUCCESS) {
    handle->handle_ = nullptr;
    return absl::InternalError(absl::StrCat(
        "CUDA backend: cublasLtCreate failed: ", library->statusName(status),
        " (", library->libraryPath(), ")"));
  }
  handle->library_ = std::move(library);
  return handle;
}

CublasLtHandle::~CublasLtHandle() {
  if (handle_)
    library_->destroy(handle_);
}

absl::StatusOr<std::unique_ptr<CudaGemm>>
CudaGemm::create(const CublasLtHandle &handle, const GemmThunk &thunk,
                 size_t thunkIndex, bool allowTf32, Operands operands) {
  std::unique_ptr<CudaGemm> gemm(
      new CudaGemm(handle, thunk, thunkIndex, operands));
  if (absl::Status s = gemm->plan(allowTf32); !s.ok())
    return s;
  return gemm;
}

CudaGemm::~CudaGemm() {
  if (layoutC_)
    library_->matrixLayoutDestroy(layoutC_);
  if (layoutB_)
    library_->matrixLayoutDestroy(layoutB_);
  if (layoutA_)
    library_->matrixLayoutDestroy(layoutA_);
  if (desc_)
    library_->matmulDescDestroy(desc_);
}

std::string CudaGemm::describe() const {
  return absl::StrCat("GEMM thunk ", thunkIndex_, " (m=", thunk_.m,
                      ", n=", thunk_.n, ", k=", thunk_.k,
                      ", batch=", thunk_.batch, thunk_.transA ? ", transA" : "",
                      thunk_.transB ? ", transB" : "",
                      thunk_.input == GemmType::f32
                          ? ""
                          : absl::StrCat(", ", std::string(gemmTypeName(thunk_.input)),
                                         " into ", std::string(gemmTypeName(thunk_.output))),
                      thunk_.accumulates() ? ", accumulating" : "",
                      viewText("A", thunk_.aView), viewText("B", thunk_.bView),
                      viewText("C", thunk_.cView), ")");
}

absl::Status CudaGemm::failure(const char *call, cublasStatus_t status) const {
  return absl::InternalError(absl::StrCat(
      describe(), ": ", call, " failed: ", library_->statusName(status)));
}

absl::Status CudaGemm::plan(bool allowTf32) {
  const GemmThunk &g = thunk_;
  // Empty products need no library call: cuBLASLt refuses zero sizes. A
  // viewed C still holds the accumulator's elements outside the product.
  if (g.batch == 0 || g.m == 0 || g.n == 0) {
    mode_ = g.cView.packed() || g.cElements() == 0 ? Mode::nothing
                                                   : Mode::copyAccumulator;
    return absl::OkStatus();
  }
  if (g.k == 0) {
    mode_ = operands_.accumulator ? Mode::copyAccumulator : Mode::zeroFill;
    return absl::OkStatus();
  }
  mode_ = Mode::matmul;
  // The accumulator is cuBLASLt's C, added with beta = 1 (C may be D).
  if (operands_.accumulator)
    beta_ = 1.0f;
  const CublasLt &lt = *library_;
  // bf16 and f16 inputs multiply exactly and accumulate in f32; TF32
  // applies to f32 inputs only.
  bool half = g.input != GemmType::f32;
  cublasComputeType_t compute = allowTf32 && !half
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  if (cublasStatus_t s = lt.matmulDescCreate(&desc_, compute, CUDA_R_32F);
      s != CUBLAS_STATUS_SUCCESS) {
    desc_ = nullptr;
    return failure("cublasLtMatmulDescCreate", s);
  }
  // Swapped operands (see the top of this file).
  int32_t opA = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int32_t opB = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (cublasStatus_t s = lt.matmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA));
      s != CUBLAS_STATUS_SUCCESS)
    return failure("cublasLtMatmulDescSetAttribute(TRANSA)", s);
  if (cublasStatus_t s = lt.matmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB));
      s != CUBLAS_STATUS_SUCCESS)
    return failure("cublasLtMatmulDescSetAttribute(TRANSB)", s);

  // Each layout describes the buffer as stored, before its op: kiln's
  // row-major r×c buffer is the column-major c×r matrix with ld c.
  auto makeLayout = [&](cublasLtMatrixLayout_t &layout, cudaDataType type,
                        uint64_t rows, uint64_t cols,
                        uint64_t batchStride) -> absl::Status {
    if (cublasStatus_t s = lt.matrixLayoutCreate(
            &layout, type, rows, cols, static_cast<int64_t>(rows));
        s != CUBLAS_STATUS_SUCCESS) {
      layout = nullptr;
      return failure("cublasLtMatrixLayoutCreate", s);
    }
    int32_t order = CUBLASLT_ORDER_COL;
    int32_t count = static_cast<int32_t>(g.batch);
    int64_t stride = static_cast<int64_t>(batchStride);
    if (cublasStatus_t s = lt.matrixLayoutSetAttribute(
            layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order));
        s != CUBLAS_STATUS_SUCCESS)
      return failure("cublasLtMatrixLayoutSetAttribute(ORDER)", s);
    if (g.batch == 1)
      return absl::OkStatus();
    if (cublasStatus_t s = lt.matrixLayoutSetAttribute(
            layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
        s != CUBLAS_STATUS_SUCCESS)
      return failure("cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", s);
    if (cublasStatus_t s = lt.matrixLayoutSetAttribute(
            layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
            sizeof(stride));
        s != CUBLAS_STATUS_SUCCESS)
      return failure("cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)",
                     s);
    return absl::OkStatus();
  };
  const uint64_t m = g.m, n = g.n, k = g.k;
  auto dataType = [](GemmType type) {
    return type == GemmType::bf16  ? CUDA_R_16BF
           : type == GemmType::f16 ? CUDA_R_16F
                                   : CUDA_R_32F;
  };
  cudaDataType input = dataType(g.input);
  // cuBLAS's A = kiln's B: stored k×n (n×k with transB) row-major.
  if (absl::Status s = makeLayout(layoutA_, input, g.transB ? k : n,
                                  g.transB ? n : k, g.bBatchStride());
      !s.ok())
    return s;
  // cuBLAS's B = kiln's A: stored m×k (k×m with transA) row-major.
  if (absl::Status s = makeLayout(layoutB_, input, g.transA ? m : k,
                                  g.transA ? k : m, g.aBatchStride());
      !s.ok())
    return s;
  // C and D = kiln's C: m×n row-major, f32 or the inputs' 16-bit type,
  // each a block of rows of a larger matrix when viewed.
  cudaDataType output = dataType(g.output);
  if (absl::Status s = makeLayout(layoutC_, output, n, m, g.cBatchStride());
      !s.ok())
    return s;
  return chooseAlgorithm();
}

absl::Status CudaGemm::chooseAlgorithm() {
  const CublasLt &lt = *library_;
  const GemmThunk &g = thunk_;
  cublasLtMatmulPreference_t preference = nullptr;
  if (cublasStatus_t s = lt.matmulPreferenceCreate(&preference);
      s != CUBLAS_STATUS_SUCCESS)
    return failure("cublasLtMatmulPreferenceCreate", s);
  // The pointers are fixed for the program's life, so the algorithm may
  // rely on exactly their alignment (the default preference assumes 256
  // bytes, which arena slots at 64-byte offsets do not all have).
  uint64_t maxWorkspace = kMaxGemmWorkspaceBytes;
  uint64_t in = gemmTypeBytes(g.input);
  uint32_t alignA = alignmentOf(operands_.b, g.batch, g.bBatchStride() * in);
  uint32_t alignB = alignmentOf(operands_.a, g.batch, g.aBatchStride() * in);
  uint64_t cBatchBytes = uint64_t(g.cBatchStride()) * gemmTypeBytes(g.output);
  uint32_t alignD =
      alignmentOf(operands_.c + g.cByteOffset(), g.batch, cBatchBytes);
  // A viewed C is D itself (enqueue copies the accumulator there first).
  uint32_t alignC =
      operands_.accumulator && g.cView.packed()
          ? alignmentOf(operands_.accumulator, g.batch, cBatchBytes)
          : alignD;
  struct Setting {
    cublasLtMatmulPreferenceAttributes_t attribute;
    const void *value;
    size_t bytes;
    const char *call;
  };
  const Setting settings[] = {
      {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
       sizeof(maxWorkspace),
       "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)"},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA, sizeof(alignA),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)"},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB, sizeof(alignB),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)"},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC, sizeof(alignC),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)"},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignD, sizeof(alignD),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)"},
  };
  absl::Status status = absl::OkStatus();
  for (const Setting &setting : settings) {
    cublasStatus_t s = lt.matmulPreferenceSetAttribute(
        preference, setting.attribute, setting.value, setting.bytes);
    if (s != CUBLAS_STATUS_SUCCESS) {
      status = failure(setting.call, s);
      break;
    }
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (status.ok()) {
    cublasStatus_t s =
        lt.matmulAlgoGetHeuristic(handle_, desc_, layoutA_, layoutB_, layoutC_,
                                  layoutC_, preference, 1, &result, &found);
    if (s != CUBLAS_STATUS_SUCCESS)
      status = failure("cublasLtMatmulAlgoGetHeuristic", s);
    else if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS)
      status = failure("cublasLtMatmulAlgoGetHeuristic (no algorithm)",
                       found < 1 ? CUBLAS_STATUS_NOT_SUPPORTED : result.state);
  }
  lt.matmulPreferenceDestroy(preference);
  if (!status.ok())
    return status;
  algo_ = result.algo;
  workspaceBytes_ = std::min<uint64_t>(result.workspaceSize, maxWorkspace);
  return absl::OkStatus();
}

absl::Status CudaGemm::enqueue(const CudaDriver &driver, CUstream stream,
                               CUdeviceptr workspace,
                               uint64_t workspaceBytes) const {
  const GemmThunk &g = thunk_;
  switch (mode_) {
  case Mode::nothing:
    return absl::OkStatus();
  case Mode::zeroFill:
  case Mode::copyAccumulator: {
    // k = 0: C is 0, or the accumulator (nothing to do when it is C).
    size_t bytes = size_t(g.cElements()) * gemmTypeBytes(g.output);
    bool fill = mode_ == Mode::zeroFill;
    if (!fill && operands_.accumulator == operands_.c)
      return absl::OkStatus();
    absl::Status s = driver.check(
        fill ? driver.memsetD8Async(operands_.c, 0, bytes, stream)
             : driver.memcpyDtoDAsync(operands_.c, operands_.accumulator,
                                      bytes, stream),
        fill ? "cuMemsetD8Async" : "cuMemcpyDtoDAsync");
    if (!s.ok())
      return absl::Status(s.code(),
                          absl::StrCat(describe(), ": ", s.message()));
    return absl::OkStatus();
  }
  case Mode::matmul:
    break;
  }
  CUdeviceptr c = operands_.accumulator ? operands_.accumulator : operands_.c;
  CUdeviceptr d = operands_.c;
  // A viewed C adds the product into blocks of D's rows; D's other
  // elements are the accumulator's, so D starts as its copy.
  if (!g.cView.packed()) {
    if (operands_.accumulator != operands_.c)
      if (absl::Status s = driver.check(
              driver.memcpyDtoDAsync(
                  operands_.c, operands_.accumulator,
                  size_t(g.cElements()) * gemmTypeBytes(g.output), stream),
              "cuMemcpyDtoDAsync");
          !s.ok())
        return absl::Status(s.code(),
                            absl::StrCat(describe(), ": ", s.message()));
    c = d = operands_.c + g.cByteOffset();
  }
  cublasStatus_t s = library_->matmul(
      handle_, desc_, &alpha_, reinterpret_cast<const void *>(operands_.b),
      layoutA_, reinterpret_cast<const void *>(operands_.a), layoutB_, &beta_,
      reinterpret_cast<const void *>(c), layoutC_,
      reinterpret_cast<void *>(d), layoutC_, &algo_,
      reinterpret_cast<void *>(workspace), workspaceBytes, stream);
  if (s != CUBLAS_STATUS_SUCCESS)
    return failure("cublasLtMatmul", s);
  return absl::OkStatus();
}

} // namespace kiln::runtime::cuda
