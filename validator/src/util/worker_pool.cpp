#include "util/worker_pool.hpp"

#include <sched.h>

#include <utility>

namespace ggufcheck::detail {

unsigned WorkerPool::default_threads() {
  // The CPUs this process may run on (a container's or taskset's limit), not the machine's.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

WorkerPool::WorkerPool(unsigned threads) {
  if (threads == 0) threads = default_threads();
  if (threads == 1) return;
  workers_.reserve(threads);
  for (unsigned w = 0; w < threads; ++w) workers_.emplace_back([this, w] { loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::loop(unsigned worker) {
  std::size_t seen = 0;
  for (;;) {
    const std::function<void(unsigned)>* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr error;
    try {
      (*job)(worker);
    } catch (...) {
      error = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      if (error && !error_) error_ = error;
      --running_;
    }
    done_.notify_all();
  }
}

void WorkerPool::run(const std::function<void(unsigned)>& job, const std::function<void()>& tick,
                     std::chrono::milliseconds period) {
  if (inline_jobs()) {
    job(0);
    return;
  }
  std::unique_lock lock(mutex_);
  job_ = &job;
  running_ = size();
  error_ = nullptr;
  ++generation_;
  start_.notify_all();
  while (running_ != 0) {
    if (tick) {
      if (!done_.wait_for(lock, period, [&] { return running_ == 0; })) {
        lock.unlock();
        tick();
        lock.lock();
      }
    } else {
      done_.wait(lock, [&] { return running_ == 0; });
    }
  }
  job_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace ggufcheck::detail
