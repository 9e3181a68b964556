#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "hspc/limits.hpp"

namespace hspc {

// Pins the calling thread to one CPU; cpu < 0 leaves it where it is. Pinning is a placement
// hint: a CPU outside the process's mask (or beyond CPU_SETSIZE) leaves the thread unpinned.
inline void pin_current_thread(int cpu) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<std::size_t>(cpu), &set);  // glibc's macro takes a size_t: no sign warning
  (void)::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
}

// How many CPUs the calling thread may run on (threads inherit their creator's mask, so called
// before any pinning this is the process's mask); -1 if the kernel will not say.
inline int allowed_cpu_count() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

// The spin budget a channel's waits may use: none when this process can run on one CPU only,
// where spinning can only delay the peer it waits for.
inline std::int64_t spin_budget_ns(std::int64_t wanted_ns) noexcept {
  return allowed_cpu_count() == 1 ? 0 : wanted_ns;
}

namespace detail {
// Out of line so that f's own frame, not just its callees', lies below the caller's shift array.
// f arrives by value: its captures are then this frame's own, which the compiler keeps in
// registers across the loop inside. Passed by reference, every capture would be reloaded from the
// caller's frame wherever the loop stores through a pointer that might alias it (measured: a
// push loop of 16-byte events ran 14% slower that way, g++ 12 -O2).
template <class F>
[[gnu::noinline]] void call_below(F f) {
  f();
}
}  // namespace detail

// Runs f with the stack pointer OffsetBytes lower than it would otherwise be: the paper's p4
// "adjust stack" step, which moves the producer's stack data out of the consumer's 4 KiB / 64 KiB
// aliasing window. The shift is a volatile array live across the call, so the compiler keeps it.
// f is copied (or moved) into the shifted frame and called there once: it must be copy- or
// move-constructible, and state it changes is seen by the caller only through what it captures by
// reference (a lambda's [&] captures do exactly that).
template <std::size_t OffsetBytes, class F>
[[gnu::noinline]] void run_with_stack_offset_bytes(F&& f) {
  static_assert(OffsetBytes <= kMaxStackOffsetBytes, "a stack offset above 64 KiB risks overflow");
  if constexpr (OffsetBytes == 0) {
    detail::call_below<std::decay_t<F>>(std::forward<F>(f));
  } else {
    volatile unsigned char shift[OffsetBytes];
    shift[0] = 0;
    shift[OffsetBytes - 1] = 0;
    detail::call_below<std::decay_t<F>>(std::forward<F>(f));
    (void)shift[0];
  }
}

}  // namespace hspc
