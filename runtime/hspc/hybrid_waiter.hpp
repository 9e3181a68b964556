#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

#include "hspc/futex_waiter.hpp"
#include "hspc/wait.hpp"

namespace hspc {

// hybrid: spins with the CPU's spin hint on ready() for at most spin_ns, then sleeps on the futex.
// The publisher's side is the futex's: nearly free while the waiter is still spinning.
class HybridWaiter {
 public:
  explicit HybridWaiter(std::int64_t spin_ns) noexcept : futex_(0), spin_ns_(spin_ns) {}
  HybridWaiter(const HybridWaiter&) = delete;
  HybridWaiter& operator=(const HybridWaiter&) = delete;

  template <class Store>
  void publish(Store&& store) {
    futex_.publish(std::forward<Store>(store));
  }

  void notify() noexcept { futex_.notify(); }

  template <class Pred>
  void wait(Pred&& ready) {
    (void)wait_until(ready, detail::kForever);
  }

  template <class Pred, class Clock, class Dur>
  bool wait_until(Pred&& ready, const std::chrono::time_point<Clock, Dur>& deadline) {
    if (ready()) return true;
    const detail::SteadyTime until = detail::to_steady(deadline);
    detail::SpinPhase phase(spin_ns_, until);
    while (phase.spin(1)) {
      cpu_relax();
      if (ready()) return true;
    }
    return futex_.wait_until(ready, until);
  }

 private:
  FutexWaiter futex_;
  std::int64_t spin_ns_;
};

}  // namespace hspc
