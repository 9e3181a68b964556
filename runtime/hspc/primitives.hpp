#pragma once

#include "hspc/condvar_waiter.hpp"
#include "hspc/futex_waiter.hpp"
#include "hspc/hybrid_waiter.hpp"
#include "hspc/mutex_waiter.hpp"
#include "hspc/spin_waiter.hpp"

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
