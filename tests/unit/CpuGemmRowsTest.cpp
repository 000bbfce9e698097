// The cpu's 16-bit GEMMs whose M is not a multiple of oneDNN's row block
// (runtime/Gemm.cpp, onednnMatmul): they run as two matmuls, the whole
// blocks and the rows left, which must read the rows left at the right
// place of A (a row of A, or a column of a transposed A) and write them at
// the right place of C, in every matrix of a batch, accumulating or not.
// Each product is checked against a host product of the same bf16 inputs.
#include "runtime/Gemm.h"
#include "support/HostTensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

namespace kiln::testing {
namespace {

struct Case {
  bool transA, transB, f32Output, accumulate;
  int64_t batch, m;
};

void expectProduct(const Case &c) {
  SCOPED_TRACE(::testing::Message()
               << "transA " << c.transA << " transB " << c.transB << " f32 C "
               << c.f32Output << " accumulate " << c.accumulate << " batch "
               << c.batch << " m " << c.m);
  const int64_t m = c.m, n = 19, k = 23;
  std::mt19937 rng(40);
  std::uniform_real_distribution<float> uniform(-2, 2);
  // Stored as the GEMM reads them: A m x k (k x m transposed), B k x n
  // (n x k transposed), C m x n; each matrix of a batch packed after the
  // last.
  std::vector<uint16_t> a(c.batch * m * k), b(c.batch * k * n);
  for (uint16_t &x : a)
    x = doubleToBFloat16(uniform(rng));
  for (uint16_t &x : b)
    x = doubleToBFloat16(uniform(rng));
  std::vector<float> before(c.batch * m * n);
  for (float &x : before)
    x = c.accumulate ? uniform(rng) : 0;
  auto at = [&](const std::vector<uint16_t> &v, int64_t i, int64_t rows,
                int64_t cols, int64_t r, int64_t col, bool transposed) {
    int64_t base = i * rows * cols;
    return bfloat16ToDouble(transposed ? v[base + col * rows + r]
                                       : v[base + r * cols + col]);
  };
  std::vector<float> c32 = before;
  std::vector<uint16_t> c16(c.batch * m * n);
  void *out = c.f32Output ? static_cast<void *>(c32.data())
                          : static_cast<void *>(c16.data());
  absl::Status status = runtime::batchedGemm(
      runtime::GemmLibrary::onednn, runtime::GemmType::bf16,
      c.f32Output ? runtime::GemmType::f32 : runtime::GemmType::bf16, c.transA,
      c.transB, c.batch, m, n, k, a.data(), c.transA ? m : k, m * k, b.data(),
      c.transB ? k : n, k * n, out, n, m * n, c.accumulate);
  ASSERT_TRUE(status.ok()) << status.ToString();
  for (int64_t i = 0; i < c.batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double sum = before[(i * m + r) * n + col], magnitude = 0;
        for (int64_t j = 0; j < k; ++j) {
          double p = double(at(a, i, m, k, r, j, c.transA)) *
                     at(b, i, k, n, j, col, c.transB);
          sum += p;
          magnitude += std::abs(p);
        }
        double got = c.f32Output ? c32[(i * m + r) * n + col]
                                 : bfloat16ToDouble(c16[(i * m + r) * n + col]);
        // f32 sums of exact products, then (bf16 C) one rounding.
        double bound = 1e-5 * (magnitude + 1) +
                       (c.f32Output ? 0 : std::ldexp(std::abs(sum), -8));
        ASSERT_NEAR(got, sum, bound)
            << "matrix " << i << ", row " << r << ", column " << col;
      }
}

TEST(CpuGemm, SixteenBitRowsLeftOverABlockLandInPlace) {
  // 37 rows: two blocks of 16 and 5 left; 16 and 8 rows take one matmul.
  for (int64_t m : {37, 16, 8})
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (int64_t batch : {1, 3}) {
          expectProduct({transA, transB, /*f32Output=*/false,
                         /*accumulate=*/false, batch, m});
          expectProduct({transA, transB, /*f32Output=*/true,
                         /*accumulate=*/false, batch, m});
          expectProduct({transA, transB, /*f32Output=*/true,
                         /*accumulate=*/true, batch, m});
        }
}

} // namespace
} // namespace kiln::testing
