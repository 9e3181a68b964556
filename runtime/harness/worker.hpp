// The persistent consumer thread and the start gate of a sample.
//
// The consumer of every sample runs on one long-lived worker thread, created before any timing:
// a freshly created thread would start cold (its stack, its scheduler placement) and its creation
// would be timed. The producer runs in the benchmark thread itself.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace hspc_harness {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins briefly, then yields: when both threads of a sample share one CPU (the hand-off test) the
// other side can only make progress if this one gives the CPU up.
template <class Pred>
void wait_until_true(Pred ready) noexcept {
  for (int i = 0; i < 2048; ++i) {
    if (ready()) return;
    cpu_relax();
  }
  while (!ready()) sched_yield();
}

// Start barrier between the producer (benchmark thread) and the consumer (worker). The producer
// reads the start time once the consumer is at the gate, then opens it: the clock runs from the
// moment both threads are ready, and includes nothing of either side's set-up.
class StartGate {
 public:
  void consumer_arrive_and_wait() noexcept {
    consumer_ready_.store(true, std::memory_order_release);
    wait_until_true([this] { return open_.load(std::memory_order_acquire); });
  }

  std::chrono::steady_clock::time_point producer_open() noexcept {
    wait_until_true([this] { return consumer_ready_.load(std::memory_order_acquire); });
    const auto t0 = std::chrono::steady_clock::now();
    open_.store(true, std::memory_order_release);
    return t0;
  }

 private:
  alignas(64) std::atomic<bool> consumer_ready_{false};  // own line: written by the consumer
  alignas(64) std::atomic<bool> open_{false};            // own line: written by the producer
};

// One persistent thread running posted jobs one at a time. Posting and waiting block on a
// condition variable (outside the timed region), so an idle worker costs no CPU.
class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts `job` on the worker. Precondition: the previous job was waited for.
  void post(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = std::move(job);
      done_ = false;
    }
    cv_.notify_all();
  }

  // Blocks until the posted job has returned; its writes are visible afterwards.
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return done_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || job_ != nullptr; });
      if (job_ == nullptr) return;  // stopping with nothing left to run
      auto job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      job();
      lock.lock();
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool done_ = true;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace hspc_harness
