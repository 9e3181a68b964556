#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <utility>

#include "hspc/wait.hpp"

namespace hspc {

// mutex: the shared state changes under a mutex; the waiter polls ready() under the same mutex and
// yields the CPU between polls (the paper's mutex variant: no condition variable).
class MutexWaiter {
 public:
  explicit MutexWaiter(std::int64_t /*spin_ns: never spins*/) noexcept {}
  MutexWaiter(const MutexWaiter&) = delete;
  MutexWaiter& operator=(const MutexWaiter&) = delete;

  template <class Store>
  void publish(Store&& store) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::forward<Store>(store)();
  }

  // Nothing to wake: waiters poll.
  void notify() noexcept {}

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
    return detail::yield_until(
        [&] {
          const std::lock_guard<std::mutex> lock(mutex_);
          return static_cast<bool>(ready());
        },
        deadline);
  }

  std::mutex mutex_;
};

}  // namespace hspc
