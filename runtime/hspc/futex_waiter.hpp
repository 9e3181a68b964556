#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <ratio>
#include <utility>

#include "hspc/futex.hpp"
#include "hspc/wait.hpp"

namespace hspc {

// futex: a 32-bit epoch word and a waiter flag. The publisher pays only a fence and a load unless
// the flag is set.
//
// No lost wake-up: the waiter does flag = 1; seen = epoch (acquire); fence; check ready(); then
// FUTEX_WAIT(epoch, seen). The publisher does release store; fence; read flag; if set,
// epoch += 1 (release) and FUTEX_WAKE. If the publisher's fence is first in S, the waiter's check
// sees the store. If the waiter's is first, the publisher sees the flag and bumps the epoch after
// the waiter read it (reading the bumped value would synchronize-with the bump and put the
// publisher's fence first), so the kernel, which compares and enqueues atomically, either refuses
// to sleep (epoch != seen) or is woken by the FUTEX_WAKE that follows the bump.
class FutexWaiter {
 public:
  explicit FutexWaiter(std::int64_t /*spin_ns: never spins*/) noexcept {}
  FutexWaiter(const FutexWaiter&) = delete;
  FutexWaiter& operator=(const FutexWaiter&) = delete;

  template <class Store>
  void publish(Store&& store) {
    std::forward<Store>(store)();
    notify();
  }

  void notify() noexcept {
    detail::seq_cst_fence();
    if (waiting_.load(std::memory_order_relaxed) == 0) return;
    epoch_.fetch_add(1, std::memory_order_release);
    (void)futex_wake(epoch_, 1);
  }

  template <class Pred>
  void wait(Pred&& ready) {
    (void)wait_until(ready, detail::kForever);
  }

  template <class Pred, class Clock, class Dur>
  bool wait_until(Pred&& ready, const std::chrono::time_point<Clock, Dur>& deadline) {
    if (ready()) return true;
    const detail::SteadyTime until = detail::to_steady(deadline);
    waiting_.store(1, std::memory_order_seq_cst);
    bool ok = true;
    for (;;) {
      const std::uint32_t seen = epoch_.load(std::memory_order_acquire);
      detail::seq_cst_fence();
      if (ready()) break;
      if (until == detail::kForever) {
        (void)futex_wait(epoch_, seen, nullptr);
        continue;
      }
      const auto left = until - std::chrono::steady_clock::now();
      if (left <= left.zero()) {
        ok = ready();
        break;
      }
      // In timespec's own field types, so no cast: one would be useless where they are the
      // chrono counts' types (-Wuseless-cast) and a narrowing conversion elsewhere.
      using Seconds = std::chrono::duration<decltype(timespec::tv_sec)>;
      using Nanoseconds = std::chrono::duration<decltype(timespec::tv_nsec), std::nano>;
      const auto secs = std::chrono::duration_cast<Seconds>(left);
      timespec timeout{};
      timeout.tv_sec = secs.count();
      timeout.tv_nsec = std::chrono::duration_cast<Nanoseconds>(left - secs).count();
      (void)futex_wait(epoch_, seen, &timeout);
    }
    waiting_.store(0, std::memory_order_relaxed);
    return ok;
  }

 private:
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<std::uint32_t> waiting_{0};
};

}  // namespace hspc
