#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace hspc {

namespace detail {

// The longest latency bound a channel takes: an hour, far beyond any use, so that deadlines in
// steady_clock nanoseconds cannot overflow.
constexpr std::size_t kLongestLatencyBoundNs = std::size_t{3600} * 1000 * 1000 * 1000;

// The most pushes between two clock readings: a reading (~20 ns) then costs < 0.01 ns per event.
constexpr std::uint32_t kMaxCheckInterval = 4096;

inline std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// LatencyTimer: the producer's half of a latency bound (BasicChannel and BasicFanOut with
// MaxLatencyNs != 0). It says when the buffer being filled must be handed over because its oldest
// event may have waited MaxLatencyNs, without reading the clock per event. Producer-private state.
// - start(): the buffer's first event is being written. Its deadline is the last clock reading
//   plus MaxLatencyNs: the event comes after that reading, so the deadline is never late, only
//   early by the time since the reading (a buffer may go early, never late).
// - restart(): the producer has just waited for a free buffer. Reads the clock, so that the wait
//   counts neither towards the next buffer's deadline nor towards the push rate.
// - tick(n): n more events were written. Every `interval` events it reads the clock and returns
//   true if the buffer's deadline has passed; the caller then flushes (nothing happens to an
//   empty buffer, whose deadline is stale).
// The interval adapts to the push rate: the next one is the number of pushes that took a quarter
// of MaxLatencyNs at the rate just measured, within [1, kMaxCheckInterval] and at most twice the
// last (a slower rate is followed at once, a faster one in doublings, so bursts between pauses
// keep their checks frequent). At a steady rate the clock is read about 4 times per MaxLatencyNs,
// and a due buffer goes at most a quarter of MaxLatencyNs late.
template <std::size_t MaxLatencyNs>
class LatencyTimer {
  static_assert(MaxLatencyNs <= kLongestLatencyBoundNs, "MaxLatencyNs must be at most an hour");

 public:
  LatencyTimer() noexcept : mark_ns_(steady_now_ns()) {}

  void start() noexcept { deadline_ns_ = mark_ns_ + kBoundNs; }

  void restart() noexcept {
    mark_ns_ = steady_now_ns();
    countdown_ = interval_;
  }

  bool tick(std::size_t n) noexcept {
    if (n < countdown_) {
      countdown_ -= static_cast<std::uint32_t>(n);
      return false;
    }
    return check(interval_ - countdown_ + n);
  }

 private:
  static constexpr std::int64_t kBoundNs = static_cast<std::int64_t>(MaxLatencyNs);

  // Out of line: the per-event path stays a decrement and a branch.
  [[gnu::noinline]] bool check(std::size_t pushes) noexcept {
    const std::int64_t now = steady_now_ns();
    const std::int64_t elapsed = now - mark_ns_;
    double next = kMaxCheckInterval;
    if (elapsed > 0) {
      next = static_cast<double>(kBoundNs) / 4 * static_cast<double>(pushes) /
             static_cast<double>(elapsed);
    }
    const double most = 2.0 * interval_ < kMaxCheckInterval ? 2.0 * interval_ : kMaxCheckInterval;
    if (next > most) next = most;
    interval_ = next < 1.0 ? 1 : static_cast<std::uint32_t>(next);
    countdown_ = interval_;
    mark_ns_ = now;
    return now >= deadline_ns_;
  }

  std::int64_t mark_ns_;          // the last clock reading
  std::int64_t deadline_ns_ = 0;  // when the buffer being filled is due
  std::uint32_t interval_ = 1;    // pushes from mark_ns_ to the next reading
  std::uint32_t countdown_ = 1;   // pushes left until then
};

// No bound: no state, and no code on any path.
template <>
class LatencyTimer<0> {};

}  // namespace detail

}  // namespace hspc
