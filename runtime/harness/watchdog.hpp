// A hung sample (a lost wake-up, a livelock, the user's own code stuck) must not hang the benchmark
// process forever: the watchdog aborts the process with a message on stderr once a sample runs
// past its deadline, and the tuner records that as a status (timeout) instead of waiting. The
// message says whether a thread was in the user's code (fault.hpp), e.g.
//   hspc_harness: watchdog: sample 'r3/c1' exceeded the 10.000 s deadline; the consumer was in the
//   user's hspc_consume                                                        (on one line)
// Arming and disarming also tell fault.hpp which sample is running.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "harness/fault.hpp"

namespace hspc_harness {

class Watchdog {
 public:
  // deadline_s <= 0 disables the watchdog (no thread is started).
  explicit Watchdog(double deadline_s) : deadline_(to_ns(deadline_s)) {
    if (deadline_.count() > 0) thread_ = std::thread([this] { loop(); });
  }
  ~Watchdog() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Arming and disarming only store to atomics and never wake the watchdog thread: it wakes on
  // its own a few times per deadline, so it does not preempt a pinned thread on every sample.
  // `what` names the sample in the messages; fault::name_sample may rename it while armed.
  void arm(const std::string& what) noexcept {
    fault::begin_sample(what);
    armed_at_ns_.store(now_ns(), std::memory_order_release);
  }
  void disarm() noexcept {
    armed_at_ns_.store(0, std::memory_order_release);
    fault::end_sample();
  }

  double deadline_s() const noexcept { return static_cast<double>(deadline_.count()) * 1e-9; }

 private:
  static std::chrono::nanoseconds to_ns(double s) {
    return std::chrono::nanoseconds(static_cast<std::int64_t>(s > 0 ? s * 1e9 : 0));
  }
  static std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    // A sample is caught between 1 and 1.25 deadlines after it started.
    while (!cv_.wait_for(lock, deadline_ / 4, [this] { return stopping_; })) {
      const std::int64_t armed = armed_at_ns_.load(std::memory_order_acquire);
      if (armed != 0 && now_ns() - armed > deadline_.count()) {
        if (!fault::cause_reported()) {  // e.g. exit() in the sample, and teardown hangs
          std::fprintf(stderr, "%s: watchdog: sample '%s' exceeded the %.3f s deadline; %s\n",
                       fault::prefix(), fault::sample_name().c_str(), deadline_s(),
                       fault::threads_in_user_code().c_str());
          std::fflush(stderr);
        }
        fault::abort_quietly();
      }
    }
  }

  const std::chrono::nanoseconds deadline_;
  std::atomic<std::int64_t> armed_at_ns_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hspc_harness
