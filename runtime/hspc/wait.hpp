#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <type_traits>

namespace hspc {

// What the waiting policies share: the CPU's spin hint, deadlines, the bounded spin phase and the
// yield phase that follows it.

// The CPU's spin-wait hint: frees the sibling hyperthread's execution units and avoids the
// memory-order machine clear when the awaited line changes.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

namespace detail {

using SteadyTime = std::chrono::steady_clock::time_point;
constexpr SteadyTime kForever = SteadyTime::max();

// A full fence. GCC's ThreadSanitizer rejects std::atomic_thread_fence with -Werror=tsan; TSan
// ignores fences either way and nothing the channel hands over relies on one (the data goes
// through release/acquire pairs TSan sees), so the fence stays and only the warning goes.
inline void seq_cst_fence() noexcept {
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#pragma GCC diagnostic pop
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// Any clock's deadline as a steady_clock one. Computed in double so that time_point::max()
// ("forever") cannot overflow; such far deadlines become kForever.
template <class Clock, class Dur>
SteadyTime to_steady(const std::chrono::time_point<Clock, Dur>& deadline) noexcept {
  if constexpr (std::is_same_v<Clock, std::chrono::steady_clock> &&
                std::is_same_v<Dur, SteadyTime::duration>) {
    return deadline;
  } else {
    using Seconds = std::chrono::duration<double>;
    const SteadyTime now = std::chrono::steady_clock::now();
    const Seconds left =
        Seconds(deadline.time_since_epoch()) - Seconds(Clock::now().time_since_epoch());
    if (left <= Seconds::zero()) return now;
    if (left >= Seconds(kForever - now) / 2) return kForever;
    return now + std::chrono::ceil<SteadyTime::duration>(left);
  }
}

// A deadline `d` from now. Computed in double so that pop_for(hours::max()) means "no deadline"
// instead of overflowing.
template <class Rep, class Period>
SteadyTime deadline_after(const std::chrono::duration<Rep, Period>& d) noexcept {
  using Seconds = std::chrono::duration<double>;
  const SteadyTime now = std::chrono::steady_clock::now();
  const Seconds wanted(d);
  if (wanted <= Seconds::zero()) return now;
  if (wanted >= Seconds(kForever - now) / 2) return kForever;
  return now + std::chrono::ceil<SteadyTime::duration>(wanted);
}

// Bounds the busy phase of one wait in wall time. Reading the clock costs about as much as a few
// dozen spins, so it is read once per kSpinsPerClockRead units of spinning.
class SpinPhase {
 public:
  static constexpr std::uint32_t kSpinsPerClockRead = 64;

  SpinPhase(std::int64_t spin_ns, SteadyTime deadline) noexcept : active_(spin_ns > 0) {
    if (!active_) return;
    const SteadyTime now = std::chrono::steady_clock::now();
    const std::chrono::nanoseconds budget(spin_ns);
    end_ = deadline - now > budget ? now + budget : deadline;
  }

  // True while the caller may keep spinning; work = spin iterations since the previous call.
  bool spin(std::uint32_t work) noexcept {
    if (!active_) return false;
    pending_ += work;
    if (pending_ < kSpinsPerClockRead) return true;
    pending_ = 0;
    active_ = std::chrono::steady_clock::now() < end_;
    return active_;
  }

 private:
  bool active_;
  std::uint32_t pending_ = 0;
  SteadyTime end_{};
};

// The phase after spinning: poll, give the CPU away, poll again, until ready or the deadline.
template <class Poll>
bool yield_until(Poll&& poll, SteadyTime deadline) {
  for (;;) {
    if (poll()) return true;
    if (deadline != kForever && std::chrono::steady_clock::now() >= deadline) return false;
    ::sched_yield();
  }
}

}  // namespace detail

}  // namespace hspc
