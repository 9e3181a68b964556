#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>

#include "hspc/wait.hpp"

namespace hspc {

// condvar: sleeps on a condition variable. The publisher pays only a fence and a load unless the
// waiter flag is set.
//
// No lost wake-up (Dekker): the waiter does flag = 1; fence; check ready(). The publisher does
// release store; fence; read flag. The two fences are ordered in the single total order S: if the
// publisher's comes first, the waiter's check sees the store and it does not sleep; if the
// waiter's comes first, the publisher sees the flag and takes the mutex, which the waiter holds
// from setting the flag until it sleeps inside wait(), so notify_one() finds it asleep.
class CondvarWaiter {
 public:
  explicit CondvarWaiter(std::int64_t /*spin_ns: never spins*/) noexcept {}
  CondvarWaiter(const CondvarWaiter&) = delete;
  CondvarWaiter& operator=(const CondvarWaiter&) = delete;

  template <class Store>
  void publish(Store&& store) {
    std::forward<Store>(store)();
    notify();
  }

  void notify() noexcept {
    detail::seq_cst_fence();
    if (!waiting_.load(std::memory_order_relaxed)) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    cv_.notify_one();
  }

  template <class Pred>
  void wait(Pred&& ready) {
    (void)wait_steady(ready, detail::kForever);
  }

  template <class Pred, class Clock, class Dur>
  bool wait_until(Pred&& ready, const std::chrono::time_point<Clock, Dur>& deadline) {
    return wait_steady(ready, detail::to_steady(deadline));
  }

 private:
  template <class Pred>
  bool wait_steady(Pred& ready, detail::SteadyTime deadline) {
    if (ready()) return true;
    std::unique_lock<std::mutex> lock(mutex_);
    waiting_.store(true, std::memory_order_seq_cst);
    detail::seq_cst_fence();
    bool ok = true;
    while (!ready()) {
      if (deadline == detail::kForever) {
        cv_.wait(lock);
      } else if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
        ok = ready();
        break;
      }
    }
    waiting_.store(false, std::memory_order_relaxed);
    return ok;
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<bool> waiting_{false};
};

}  // namespace hspc
