// The one GEMM interface the runtime calls: row-major C = op(A) * op(B)
// for f32, bf16 or f16 A and B into f32 or that type's C, backed by oneDNN
// (default; measured faster on GPT-2 shapes here) or OpenBLAS, chosen when
// a program is loaded.
#ifndef KILN_RUNTIME_GEMM_H
#define KILN_RUNTIME_GEMM_H

#include "runtime/Executable.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <string_view>

namespace kiln::runtime {

enum class GemmLibrary { onednn, openblas };

/// "onednn" / "openblas" → GemmLibrary.
absl::StatusOr<GemmLibrary> parseGemmLibrary(std::string_view name);

/// Row-major C[m×n] = op(A) op(B), op(A) m×k and op(B) k×n with elements
/// of type `input`, C of type `output` (f32 → f32, bf16 → f32 or bf16,
/// f16 → f32 or f16: 16-bit products are exact, accumulate in f32 and are
/// rounded once); lda,
/// ldb, ldc are row strides in elements. With `accumulate` (f32 C only) the
/// product is added to what C holds (beta = 1). Handles k == 0 (C = 0, or
/// C unchanged when accumulating) and empty m or n.
absl::Status gemm(GemmLibrary library, GemmType input, GemmType output,
                  bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  const void *a, int64_t lda, const void *b, int64_t ldb,
                  void *c, int64_t ldc, bool accumulate = false);

/// `batch` products C[i] = op(A[i]) op(B[i]) as gemm() computes each, the
/// matrices of A, B and C `aStride`, `bStride` and `cStride` elements
/// apart. oneDNN runs them as one batched matmul primitive, which spreads
/// the batch over its threads (attention's per-head products are many
/// small GEMMs, slow one call at a time); OpenBLAS, and a type oneDNN's
/// matmul lacks on this CPU, loop over gemm(). A batch of one is gemm().
absl::Status batchedGemm(GemmLibrary library, GemmType input, GemmType output,
                         bool transA, bool transB, int64_t batch, int64_t m,
                         int64_t n, int64_t k, const void *a, int64_t lda,
                         int64_t aStride, const void *b, int64_t ldb,
                         int64_t bStride, void *c, int64_t ldc, int64_t cStride,
                         bool accumulate = false);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_GEMM_H
