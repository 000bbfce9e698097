// oneDNN and OpenBLAS behind gemm(). Both take row-major operands directly
// (dnnl_sgemm is row-major, a matmul primitive takes strides; cblas gets
// CblasRowMajor), so transposes are flags or strides and no copy is made.
#include "runtime/Gemm.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#include "support/HostTensor.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <cstring>
#include <limits>
#include <vector>

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

namespace {

absl::Status onednnSgemm(bool transA, bool transB, int64_t m, int64_t n,
                         int64_t k, const float *a, int64_t lda,
                         const float *b, int64_t ldb, float beta, float *c,
                         int64_t ldc) {
  dnnl_status_t status = dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m,
                                    n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    return absl::InternalError(absl::StrCat("dnnl_sgemm failed with status ",
                                            status, " for ", m, "x", n, "x",
                                            k));
  return absl::OkStatus();
}

/// An f32 GEMM of one library (the signature of dnnl_sgemm's wrapper):
/// C = op(A) op(B) + beta C, beta 0 or 1.
using F32Gemm = absl::Status (*)(bool transA, bool transB, int64_t m,
                                 int64_t n, int64_t k, const float *a,
                                 int64_t lda, const float *b, int64_t ldb,
                                 float beta, float *c, int64_t ldc);

absl::Status openblasSgemm(bool transA, bool transB, int64_t m, int64_t n,
                           int64_t k, const float *a, int64_t lda,
                           const float *b, int64_t ldb, float beta, float *c,
                           int64_t ldc) {
  constexpr int64_t kMax = std::numeric_limits<blasint>::max();
  if (m > kMax || n > kMax || k > kMax || lda > kMax || ldb > kMax ||
      ldc > kMax)
    return absl::InvalidArgumentError("GEMM too large for OpenBLAS's ints");
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b,
              ldb, beta, c, ldc);
  return absl::OkStatus();
}

/// Every f16 value as an f32 (exact), by its bits.
const std::vector<float> &f16Values() {
  static const std::vector<float> table = [] {
    std::vector<float> values(1 << 16);
    for (uint32_t b = 0; b < values.size(); ++b)
      values[b] = static_cast<float>(halfToDouble(static_cast<uint16_t>(b)));
    return values;
  }();
  return table;
}

/// A bf16 or f16 operand widened to f32 (exact: bf16 is the top half of an
/// f32, f16 by table), rows×cols with row stride ld, packed.
std::vector<float> widen(GemmType type, const void *data, int64_t rows,
                         int64_t cols, int64_t ld) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const auto *bits = static_cast<const uint16_t *>(data);
  if (type == GemmType::f16) {
    const std::vector<float> &values = f16Values();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        out[i * cols + j] = values[bits[i * ld + j]];
    return out;
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      uint32_t word = uint32_t(bits[i * ld + j]) << 16;
      std::memcpy(&out[i * cols + j], &word, sizeof(float));
    }
  return out;
}

/// 16-bit operands through an f32 GEMM: widened first (the same exact
/// products and f32 sums, at f32 speed), a 16-bit result rounded once from
/// the f32 sums. For a library or a CPU without a 16-bit GEMM (Debian's
/// OpenBLAS declares cblas_sbgemm but is built without it; oneDNN has bf16
/// only from AVX-512 on, and f16 only on CPUs with AVX-512 FP16).
absl::Status widenedHalfGemm(F32Gemm f32Gemm, GemmType input, GemmType output,
                             bool transA, bool transB, int64_t m, int64_t n,
                             int64_t k, const void *a, int64_t lda,
                             const void *b, int64_t ldb, void *c, int64_t ldc,
                             bool accumulate) {
  std::vector<float> wideA =
      widen(input, a, transA ? k : m, transA ? m : k, lda);
  std::vector<float> wideB =
      widen(input, b, transB ? n : k, transB ? k : n, ldb);
  std::vector<float> wideC;
  float *sums = static_cast<float *>(c);
  int64_t ldSums = ldc;
  if (output != GemmType::f32) {
    wideC.resize(static_cast<size_t>(m * n));
    sums = wideC.data(), ldSums = n;
  }
  if (absl::Status s = f32Gemm(transA, transB, m, n, k, wideA.data(),
                               transA ? m : k, wideB.data(), transB ? k : n,
                               accumulate ? 1.0f : 0.0f, sums, ldSums);
      !s.ok())
    return s;
  if (output != GemmType::f32) {
    auto *out = static_cast<uint16_t *>(c);
    uint16_t (*round)(double) =
        output == GemmType::bf16 ? doubleToBFloat16 : doubleToHalf;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[i * ldc + j] = round(wideC[i * n + j]);
  }
  return absl::OkStatus();
}

/// C[i] = op(A[i]) op(B[i]) (+ C[i] with `accumulate`, a sum post-op) for
/// i < batch as one oneDNN matmul primitive: the memory descriptors carry
/// the transposes, and the batch (its matrices `*Stride` elements apart),
/// as strides. Making the primitive per call is cheap after the first of a
/// shape: oneDNN keeps created primitives in its own cache. Throws
/// dnnl::error (dnnl_unimplemented where this CPU has no matmul of the
/// type).
void onednnMatmulWhole(GemmType input, GemmType output, bool transA,
                       bool transB, int64_t batch, int64_t m, int64_t n,
                       int64_t k, const void *a, int64_t lda, int64_t aStride,
                       const void *b, int64_t ldb, int64_t bStride, void *c,
                       int64_t ldc, int64_t cStride, bool accumulate) {
  using dnnl::memory;
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  auto rowMajor = [&](int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                      bool transposed, memory::data_type type) {
    // A transposed operand is stored cols×rows with row stride ld.
    memory::dims strides =
        transposed ? memory::dims{1, ld} : memory::dims{ld, 1};
    if (batch == 1)
      return memory::desc({rows, cols}, type, strides);
    return memory::desc({batch, rows, cols}, type,
                        {stride, strides[0], strides[1]});
  };
  auto dataType = [](GemmType type) {
    return type == GemmType::bf16  ? memory::data_type::bf16
           : type == GemmType::f16 ? memory::data_type::f16
                                   : memory::data_type::f32;
  };
  memory::desc aDesc = rowMajor(m, k, lda, aStride, transA, dataType(input));
  memory::desc bDesc = rowMajor(k, n, ldb, bStride, transB, dataType(input));
  memory::desc cDesc = rowMajor(m, n, ldc, cStride, false, dataType(output));
  dnnl::primitive_attr attributes;
  if (accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attributes.set_post_ops(sum);
  }
  dnnl::matmul::primitive_desc primitive(
      dnnl::matmul::desc(aDesc, bDesc, cDesc), attributes, engine);
  dnnl::stream stream(engine);
  dnnl::matmul(primitive).execute(
      stream, {{DNNL_ARG_SRC, memory(aDesc, engine, const_cast<void *>(a))},
               {DNNL_ARG_WEIGHTS, memory(bDesc, engine, const_cast<void *>(b))},
               {DNNL_ARG_DST, memory(cDesc, engine, c)}});
  stream.wait();
}

/// The rows of a 16-bit matmul's M that oneDNN's brgemm kernels (AMX,
/// AVX-512) take in whole blocks, and the M below which onednnMatmul
/// splits off the rows left.
constexpr int64_t kMatmulRowBlock = 16, kMostSplitRows = 1024;

/// onednnMatmulWhole, where a 16-bit M that is not a multiple of
/// kMatmulRowBlock runs as two matmuls: its whole blocks, then the rows
/// left. oneDNN 2.6's brgemm matmul ran such an M up to 3x slower than the
/// multiple below it (GPT-2's last loss chunk, 254 x 50257 x 768 in bf16:
/// 36-65 ms against 21-33 for 256 rows and 17-30 for 240 on an AMX Xeon;
/// 248 rows 165 ms), where the 14 rows left take 4.4 ms alone. Only below
/// kMostSplitRows: the lm_head's weight gradient (M = 50257, one row left)
/// ran 1.5x slower split.
void onednnMatmul(GemmType input, GemmType output, bool transA, bool transB,
                  int64_t batch, int64_t m, int64_t n, int64_t k, const void *a,
                  int64_t lda, int64_t aStride, const void *b, int64_t ldb,
                  int64_t bStride, void *c, int64_t ldc, int64_t cStride,
                  bool accumulate) {
  const int64_t tail = m % kMatmulRowBlock;
  if (input == GemmType::f32 || tail == 0 || m < kMatmulRowBlock ||
      m >= kMostSplitRows) {
    onednnMatmulWhole(input, output, transA, transB, batch, m, n, k, a, lda,
                      aStride, b, ldb, bStride, c, ldc, cStride, accumulate);
    return;
  }
  const int64_t whole = m - tail;
  onednnMatmulWhole(input, output, transA, transB, batch, whole, n, k, a, lda,
                    aStride, b, ldb, bStride, c, ldc, cStride, accumulate);
  // Row `whole` of A: a column of a transposed A (stored k x m).
  const auto *aTail = static_cast<const char *>(a) +
                      (transA ? whole : whole * lda) * gemmTypeBytes(input);
  auto *cTail = static_cast<char *>(c) + whole * ldc * gemmTypeBytes(output);
  onednnMatmulWhole(input, output, transA, transB, batch, tail, n, k, aTail,
                    lda, aStride, b, ldb, bStride, cTail, ldc, cStride,
                    accumulate);
}

/// Per input type (f32, bf16, f16): oneDNN's matmul was found missing on
/// this CPU, once and for good.
std::atomic<bool> &matmulUnimplemented(GemmType input) {
  static std::atomic<bool> unimplemented[3] = {false, false, false};
  return unimplemented[static_cast<size_t>(input)];
}

/// onednnMatmul, and whether it ran: false where this CPU has no matmul of
/// the input type (then known for good, and the caller takes another
/// path); any other oneDNN failure is an error.
absl::StatusOr<bool>
matmulIfImplemented(GemmType input, GemmType output, bool transA, bool transB,
                    int64_t batch, int64_t m, int64_t n, int64_t k,
                    const void *a, int64_t lda, int64_t aStride, const void *b,
                    int64_t ldb, int64_t bStride, void *c, int64_t ldc,
                    int64_t cStride, bool accumulate) {
  std::atomic<bool> &unimplemented = matmulUnimplemented(input);
  if (unimplemented.load(std::memory_order_relaxed))
    return false;
  try {
    onednnMatmul(input, output, transA, transB, batch, m, n, k, a, lda, aStride,
                 b, ldb, bStride, c, ldc, cStride, accumulate);
    return true;
  } catch (const dnnl::error &error) {
    if (error.status != dnnl_unimplemented)
      return absl::InternalError(absl::StrCat(
          "oneDNN ", std::string(gemmTypeName(input)),
          batch > 1 ? " batched" : "", " matmul failed (", error.what(),
          ") for ", batch > 1 ? absl::StrCat(batch, " x ") : "", m, "x", n, "x",
          k));
    unimplemented.store(true, std::memory_order_relaxed);
    return false;
  }
}

/// oneDNN has no 16-bit entry in its BLAS-like API, so bf16 and f16 go
/// through a matmul primitive; where oneDNN has none of the type for this
/// CPU, the widened path.
absl::Status onednnHalfGemm(GemmType input, GemmType output, bool transA,
                            bool transB, int64_t m, int64_t n, int64_t k,
                            const void *a, int64_t lda, const void *b,
                            int64_t ldb, void *c, int64_t ldc,
                            bool accumulate) {
  absl::StatusOr<bool> ran =
      matmulIfImplemented(input, output, transA, transB, 1, m, n, k, a, lda, 0,
                          b, ldb, 0, c, ldc, 0, accumulate);
  if (!ran.ok())
    return ran.status();
  if (*ran)
    return absl::OkStatus();
  return widenedHalfGemm(onednnSgemm, input, output, transA, transB, m, n, k, a,
                         lda, b, ldb, c, ldc, accumulate);
}

/// What gemm() refuses whatever the library: an output type the input
/// type does not make, accumulating into a 16-bit C.
absl::Status checkTypes(GemmType input, GemmType output, bool accumulate) {
  if (output != GemmType::f32 && output != input)
    return absl::InvalidArgumentError(absl::StrCat(
        "a GEMM of ", std::string(gemmTypeName(input)),
        " operands makes f32 or ", std::string(gemmTypeName(input)),
        " results, not ", std::string(gemmTypeName(output))));
  if (accumulate && output != GemmType::f32)
    return absl::InvalidArgumentError(absl::StrCat(
        "a GEMM accumulates into f32 results only, not ",
        std::string(gemmTypeName(output))));
  return absl::OkStatus();
}

} // namespace

absl::Status gemm(GemmLibrary library, GemmType input, GemmType output,
                  bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  const void *a, int64_t lda, const void *b, int64_t ldb,
                  void *c, int64_t ldc, bool accumulate) {
  if (absl::Status s = checkTypes(input, output, accumulate); !s.ok())
    return s;
  if (m == 0 || n == 0 || (k == 0 && accumulate))
    return absl::OkStatus();
  if (k == 0) {
    uint64_t bytes = gemmTypeBytes(output);
    for (int64_t i = 0; i < m; ++i)
      std::memset(static_cast<char *>(c) + i * ldc * bytes, 0, n * bytes);
    return absl::OkStatus();
  }
  const float beta = accumulate ? 1.0f : 0.0f;
  switch (library) {
  case GemmLibrary::onednn:
    if (input != GemmType::f32)
      return onednnHalfGemm(input, output, transA, transB, m, n, k, a, lda, b,
                            ldb, c, ldc, accumulate);
    return onednnSgemm(transA, transB, m, n, k, static_cast<const float *>(a),
                       lda, static_cast<const float *>(b), ldb, beta,
                       static_cast<float *>(c), ldc);
  case GemmLibrary::openblas:
    if (input != GemmType::f32)
      return widenedHalfGemm(openblasSgemm, input, output, transA, transB, m,
                             n, k, a, lda, b, ldb, c, ldc, accumulate);
    return openblasSgemm(transA, transB, m, n, k,
                         static_cast<const float *>(a), lda,
                         static_cast<const float *>(b), ldb, beta,
                         static_cast<float *>(c), ldc);
  }
  return absl::InvalidArgumentError("unknown GEMM library");
}

absl::Status batchedGemm(GemmLibrary library, GemmType input, GemmType output,
                         bool transA, bool transB, int64_t batch, int64_t m,
                         int64_t n, int64_t k, const void *a, int64_t lda,
                         int64_t aStride, const void *b, int64_t ldb,
                         int64_t bStride, void *c, int64_t ldc, int64_t cStride,
                         bool accumulate) {
  if (absl::Status s = checkTypes(input, output, accumulate); !s.ok())
    return s;
  const uint64_t in = gemmTypeBytes(input), out = gemmTypeBytes(output);
  if (library == GemmLibrary::onednn && batch > 1 && m > 0 && n > 0 && k > 0) {
    absl::StatusOr<bool> ran = matmulIfImplemented(
        input, output, transA, transB, batch, m, n, k, a, lda, aStride, b, ldb,
        bStride, c, ldc, cStride, accumulate);
    if (!ran.ok())
      return ran.status();
    if (*ran)
      return absl::OkStatus();
  }
  for (int64_t i = 0; i < batch; ++i)
    if (absl::Status s =
            gemm(library, input, output, transA, transB, m, n, k,
                 static_cast<const char *>(a) + i * aStride * in, lda,
                 static_cast<const char *>(b) + i * bStride * in, ldb,
                 static_cast<char *>(c) + i * cStride * out, ldc, accumulate);
        !s.ok())
      return s;
  return absl::OkStatus();
}

} // namespace kiln::runtime
