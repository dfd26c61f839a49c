// A fixed set of worker threads that run one job at a time: job(worker) on every worker at
// once, while the calling thread waits and ticks (a progress line). The data scan hands its
// pieces out inside the job (an atomic counter), so a pool needs no queue.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ggufcheck::detail {

class WorkerPool {
 public:
  // threads == 0: one per core (at least 1). One thread means none is started: run() calls
  // the job on the calling thread (and never ticks: the job may tick itself, inline()).
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  [[nodiscard]] unsigned size() const {
    return workers_.empty() ? 1 : static_cast<unsigned>(workers_.size());
  }
  [[nodiscard]] bool inline_jobs() const { return workers_.empty(); }

  // Runs job(w) for every worker w in [0, size()) and returns when all have returned; calls
  // tick() on this thread every `period` meanwhile (when tick is set). An exception a job
  // throws is rethrown here, after every worker has finished.
  void run(const std::function<void(unsigned worker)>& job, const std::function<void()>& tick = {},
           std::chrono::milliseconds period = std::chrono::milliseconds(200));

  // How many threads "one per core" means here.
  [[nodiscard]] static unsigned default_threads();

 private:
  void loop(unsigned worker);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  std::size_t generation_ = 0;
  unsigned running_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace ggufcheck::detail
