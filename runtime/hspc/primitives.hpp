#pragma once

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <type_traits>
#include <utility>

namespace hspc {

// Waiting policies: how one side of a channel waits for the other side's release store.
//
// Every policy has the same shape (the channel only uses these four members):
//   explicit Policy(std::int64_t spin_ns) noexcept;      spin budget per wait, 0 = never spin
//   template <class Store> void publish(Store&& store);   run store() (a release store of the
//                                                          shared state), then wake the other side
//   template <class Pred> void wait(Pred&& ready);        return once ready() is true
//   template <class Pred, class Clock, class Dur>
//   bool wait_until(Pred&& ready, time_point<Clock, Dur>) false if still not ready at the deadline
//   void notify() noexcept;                                wake a waiter (publish() calls it)
// One thread waits on a policy object and one other thread publishes through it.
//
// Collapse protection: a spinning policy never spins longer than spin_ns per wait and then yields
// the CPU between polls (hybrid: sleeps on the futex). Spinning only pays while the peer runs on
// another CPU; when both share one CPU every spin delays the peer (a pure pause-spin hand-off took
// ~8 ms instead of ~3 us on a 2-vCPU VM). The channel passes spin_ns = 0 when the process may run
// on only one CPU.
enum class Primitive { condvar, mutex, spinlock, backoff_spin, pause_spin, futex, hybrid };

// The same words as Primitive's enumerators, for names in benchmarks and reports.
constexpr const char* primitive_name(Primitive p) noexcept {
  switch (p) {
    case Primitive::condvar:
      return "condvar";
    case Primitive::mutex:
      return "mutex";
    case Primitive::spinlock:
      return "spinlock";
    case Primitive::backoff_spin:
      return "backoff_spin";
    case Primitive::pause_spin:
      return "pause_spin";
    case Primitive::futex:
      return "futex";
    case Primitive::hybrid:
      return "hybrid";
  }
  return "unknown";
}

// The CPU's spin-wait hint: frees the sibling hyperthread's execution units and avoids the
// memory-order machine clear when the awaited line changes.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "futex words are std::atomic<std::uint32_t> handed to the kernel as plain words");

// FUTEX_WAIT_PRIVATE: sleeps while word == expected; timeout is relative (nullptr = none).
inline long futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       const timespec* timeout) noexcept {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
                   timeout, static_cast<std::uint32_t*>(nullptr), 0);
}

// FUTEX_WAKE_PRIVATE: wakes up to count threads sleeping on word.
inline long futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count,
                   static_cast<const timespec*>(nullptr), static_cast<std::uint32_t*>(nullptr), 0);
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
    for (volatile std::uint32_t i = 0; i < spins; i = i + 1) {
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
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(left);
      timespec timeout{};
      timeout.tv_sec = static_cast<std::time_t>(secs.count());
      timeout.tv_nsec = static_cast<long>((left - secs).count());
      (void)futex_wait(epoch_, seen, &timeout);
    }
    waiting_.store(0, std::memory_order_relaxed);
    return ok;
  }

 private:
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<std::uint32_t> waiting_{0};
};

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

namespace detail {
template <Primitive P>
struct WaiterSelect;
template <>
struct WaiterSelect<Primitive::condvar> {
  using type = CondvarWaiter;
};
template <>
struct WaiterSelect<Primitive::mutex> {
  using type = MutexWaiter;
};
template <>
struct WaiterSelect<Primitive::spinlock> {
  using type = SpinlockWaiter;
};
template <>
struct WaiterSelect<Primitive::backoff_spin> {
  using type = BackoffSpinWaiter;
};
template <>
struct WaiterSelect<Primitive::pause_spin> {
  using type = PauseSpinWaiter;
};
template <>
struct WaiterSelect<Primitive::futex> {
  using type = FutexWaiter;
};
template <>
struct WaiterSelect<Primitive::hybrid> {
  using type = HybridWaiter;
};
}  // namespace detail

// The waiting policy of a primitive.
template <Primitive P>
using WaiterFor = typename detail::WaiterSelect<P>::type;

}  // namespace hspc
