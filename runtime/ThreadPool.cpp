// ThreadPool: a generation counter wakes the workers for each parallelFor;
// work items are claimed under the mutex (items are large kernel ranges, so
// the lock is not contended) and the caller waits for the last to finish.
#include "runtime/ThreadPool.h"

namespace kiln::runtime {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (next_ < count_) {
    int64_t i = next_++;
    const auto *task = task_;
    lock.unlock();
    (*task)(i);
    lock.lock();
    if (++finished_ == count_)
      done_.notify_all();
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
    }
    drain();
  }
}

void ThreadPool::parallelFor(int64_t n,
                             const std::function<void(int64_t)> &task) {
  if (n <= 0)
    return;
  if (n == 1 || workers_.empty()) {
    for (int64_t i = 0; i < n; ++i)
      task(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    count_ = n;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return finished_ == count_; });
  task_ = nullptr;
}

} // namespace kiln::runtime
