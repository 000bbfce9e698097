// Kernel ranges run on the OpenMP threads the GEMM library (oneDNN, built
// with GNU OpenMP) already keeps: one set of threads for the whole step, so
// kernels and GEMMs never oversubscribe the cores. With a pool of its own,
// OpenMP's workers kept spinning after each GEMM while this pool's threads
// waited for the same cores; sharing them made the GPT-2 124M step ~9%
// faster (docs/CPU-BACKEND.md).
#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <functional>

namespace kiln::runtime {

class ThreadPool {
public:
  /// `threads` workers in all, the caller included (at least 1).
  explicit ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {}

  int size() const { return threads_; }

  /// The threads the OpenMP runtime gives a parallel region here (as the
  /// GEMM library's do): OMP_NUM_THREADS, else one per core this process
  /// may run on.
  static int hostThreads();

  /// Runs task(i) for every i in [0, n), each once, on up to size()
  /// threads (the caller among them); returns when all have finished.
  void parallelFor(int64_t n, const std::function<void(int64_t)> &task);

private:
  int threads_;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_THREADPOOL_H
