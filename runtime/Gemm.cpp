// oneDNN and OpenBLAS behind sgemm(). Both take row-major operands directly
// (dnnl_sgemm is row-major; cblas gets CblasRowMajor), so transposes are
// flags and no copy is made.
#include "runtime/Gemm.h"

#include "absl/strings/str_cat.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstring>
#include <limits>

namespace kiln::runtime {

absl::StatusOr<GemmLibrary> parseGemmLibrary(std::string_view name) {
  if (name == "onednn")
    return GemmLibrary::onednn;
  if (name == "openblas")
    return GemmLibrary::openblas;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown GEMM library '", std::string(name),
                   "'; expected onednn or openblas"));
}

absl::Status sgemm(GemmLibrary library, bool transA, bool transB, int64_t m,
                   int64_t n, int64_t k, const float *a, int64_t lda,
                   const float *b, int64_t ldb, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return absl::OkStatus();
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      std::memset(c + i * ldc, 0, n * sizeof(float));
    return absl::OkStatus();
  }
  switch (library) {
  case GemmLibrary::onednn: {
    dnnl_status_t status = dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m,
                                      n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    if (status != dnnl_success)
      return absl::InternalError(absl::StrCat("dnnl_sgemm failed with status ",
                                              status, " for ", m, "x", n, "x",
                                              k));
    return absl::OkStatus();
  }
  case GemmLibrary::openblas: {
    constexpr int64_t kMax = std::numeric_limits<blasint>::max();
    if (m > kMax || n > kMax || k > kMax || lda > kMax || ldb > kMax ||
        ldc > kMax)
      return absl::InvalidArgumentError("GEMM too large for OpenBLAS's ints");
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b,
                ldb, 0.0f, c, ldc);
    return absl::OkStatus();
  }
  }
  return absl::InvalidArgumentError("unknown GEMM library");
}

} // namespace kiln::runtime
