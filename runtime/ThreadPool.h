// A small fixed thread pool for kernel ranges: the calling thread works too,
// so a pool of size N starts N-1 threads. Kept small (2 on these machines)
// and idle during GEMMs, which bring their own OpenMP threads.
#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::runtime {

class ThreadPool {
public:
  /// `threads` workers in all, the caller included (at least 1).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs task(i) for every i in [0, n), each once, on the pool and the
  /// calling thread; returns when all have finished. Not reentrant.
  void parallelFor(int64_t n, const std::function<void(int64_t)> &task);

private:
  void workerLoop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)> *task_ = nullptr;
  int64_t count_ = 0, next_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_THREADPOOL_H
