#pragma once

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdint>
#include <utility>

#include "hspc/wait.hpp"

namespace hspc {

namespace detail {

// Backoff steps of the three spinlock flavours; each returns the spin iterations it spent.
struct NoBackoff {
  std::uint32_t pause() noexcept { return 1; }
};

// The paper's "local spinlock": exponential backoff spinning on a local variable, off the bus.
class LocalBackoff {
 public:
  static constexpr std::uint32_t kMaxSpins = 128;
  std::uint32_t pause() noexcept {
    const std::uint32_t spins = spins_;
    // The counter lives in memory (the asm claims to read and write it there), so each step is a
    // store and a reload of a local, as the paper's volatile counter was, without C++20's
    // deprecated volatile increment; the empty asm also keeps the loop from being optimised away.
    for (std::uint32_t i = 0; i < spins; ++i) {
      __asm__ __volatile__("" : "+m"(i));
    }
    spins_ = spins < kMaxSpins ? spins * 2 : kMaxSpins;
    return spins;
  }

 private:
  std::uint32_t spins_ = 1;
};

// The paper's "hyperthread-aware spinlock": the same backoff executing the CPU's spin hint.
class PauseBackoff {
 public:
  static constexpr std::uint32_t kMaxSpins = 128;
  std::uint32_t pause() noexcept {
    const std::uint32_t spins = spins_;
    for (std::uint32_t i = 0; i < spins; ++i) cpu_relax();
    spins_ = spins < kMaxSpins ? spins * 2 : kMaxSpins;
    return spins;
  }

 private:
  std::uint32_t spins_ = 1;
};

}  // namespace detail

// spinlock, backoff_spin, pause_spin: the shared state changes under a pthread spinlock; the
// waiter polls ready() under it, with Backoff's step between failed polls or failed trylocks, for
// at most spin_ns, then yields between polls. Locking is trylock-based everywhere so that a lock
// holder preempted on the waiter's CPU cannot make the other side spin away its time slice.
template <class Backoff>
class SpinWaiter {
 public:
  explicit SpinWaiter(std::int64_t spin_ns) noexcept : spin_ns_(spin_ns) {
    (void)::pthread_spin_init(&lock_, PTHREAD_PROCESS_PRIVATE);
  }
  ~SpinWaiter() { (void)::pthread_spin_destroy(&lock_); }
  SpinWaiter(const SpinWaiter&) = delete;
  SpinWaiter& operator=(const SpinWaiter&) = delete;

  template <class Store>
  void publish(Store&& store) {
    lock();
    std::forward<Store>(store)();
    (void)::pthread_spin_unlock(&lock_);
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
  bool poll(Pred& ready) noexcept {
    if (::pthread_spin_trylock(&lock_) != 0) return false;
    const bool result = ready();
    (void)::pthread_spin_unlock(&lock_);
    return result;
  }

  template <class Pred>
  bool wait_steady(Pred& ready, detail::SteadyTime deadline) {
    if (poll(ready)) return true;
    detail::SpinPhase phase(spin_ns_, deadline);
    Backoff backoff;
    while (phase.spin(backoff.pause())) {
      if (poll(ready)) return true;
    }
    return detail::yield_until([&] { return poll(ready); }, deadline);
  }

  void lock() noexcept {
    if (::pthread_spin_trylock(&lock_) == 0) return;
    detail::SpinPhase phase(spin_ns_, detail::kForever);
    Backoff backoff;
    while (::pthread_spin_trylock(&lock_) != 0) {
      if (!phase.spin(backoff.pause())) ::sched_yield();
    }
  }

  pthread_spinlock_t lock_;
  std::int64_t spin_ns_;
};

using SpinlockWaiter = SpinWaiter<detail::NoBackoff>;
using BackoffSpinWaiter = SpinWaiter<detail::LocalBackoff>;
using PauseSpinWaiter = SpinWaiter<detail::PauseBackoff>;

}  // namespace hspc
