// ThreadPool over OpenMP: a parallel loop with one item per thread slice;
// items are large kernel ranges, so a static schedule balances them.
#include "runtime/ThreadPool.h"

#include <omp.h>

#include <algorithm>

namespace kiln::runtime {

int ThreadPool::hostThreads() { return std::max(1, omp_get_max_threads()); }

void ThreadPool::parallelFor(int64_t n,
                             const std::function<void(int64_t)> &task) {
  if (n <= 0)
    return;
  if (n == 1 || threads_ == 1) {
    for (int64_t i = 0; i < n; ++i)
      task(i);
    return;
  }
  int threads = n < threads_ ? static_cast<int>(n) : threads_;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int64_t i = 0; i < n; ++i)
    task(i);
}

} // namespace kiln::runtime
