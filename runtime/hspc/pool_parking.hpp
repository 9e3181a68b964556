#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>

#include "hspc/limits.hpp"
#include "hspc/wait.hpp"

namespace hspc {

namespace detail {

// ParkingLot: where a pool's idle consumers sleep, each on a waiter of the tuned primitive, and
// how work wakes one of them. The waiters assume one waiter each, so every consumer has its own
// seat (a waiter and a wake token); a 64-bit word says which seats are parked.
//
// Protocol (promela/pool.pml checks it):
// - Consumer k parks: sets bit k (seq_cst), full fence, then looks for work once more (`work()`);
//   finding some, it clears its bit and returns; otherwise it waits on its waiter for its token.
// - Whoever makes work available (a producer's hand-off, a consumer leaving a lane with work in
//   it, stop): its release store, full fence, then reads the word; only if a bit is set does it
//   clear one bit (fetch_and: one waker owns each wake) and set that seat's token through the
//   seat's waiter. A producer with nobody parked pays a fence and a load per buffer, no more.
// No lost wake-up: the two fences are ordered in S. If the waker's is first, the consumer's look
// sees the store; if the consumer's is first, the waker sees bit k (or a later bit) and wakes a
// parked consumer, whose next look comes after the token's acquire, so after the store.
// A consumer that clears its own bit finds whether a waker got there first; if one did, the token
// comes later and its next park returns at once: a spurious wake-up, never a lost one.
template <class Waiter>
class ParkingLot {
 public:
  ParkingLot(std::size_t seats, std::int64_t spin_ns) : seats_(allocate(seats)), count_(seats) {
    for (std::size_t k = 0; k < seats; ++k) ::new (static_cast<void*>(seats_ + k)) Seat(spin_ns);
  }
  ~ParkingLot() {
    for (std::size_t k = count_; k > 0; --k) seats_[k - 1].~Seat();
    ::operator delete (seats_, std::align_val_t{alignof(Seat)});
  }
  ParkingLot(const ParkingLot&) = delete;
  ParkingLot& operator=(const ParkingLot&) = delete;

  // After a release store that made work available: wakes one parked consumer, if any.
  void notify_one() noexcept {
    seq_cst_fence();
    std::uint64_t parked = parked_.load(std::memory_order_relaxed);
    while (parked != 0) {
      const std::uint64_t bit = parked & (~parked + 1);  // the lowest
      const std::uint64_t before = parked_.fetch_and(~bit, std::memory_order_relaxed);
      if ((before & bit) != 0) return give_token(bit);
      parked = before & ~bit;  // someone else took it: try the next
    }
  }

  // After a store that concerns consumer k only (its retirement): wakes k if it is parked.
  void notify(std::size_t k) noexcept {
    seq_cst_fence();
    const std::uint64_t bit = std::uint64_t{1} << k;
    if ((parked_.fetch_and(~bit, std::memory_order_relaxed) & bit) != 0) give_token(bit);
  }

  // After a store that concerns every consumer (stop): wakes them all.
  void notify_all() noexcept {
    seq_cst_fence();
    std::uint64_t parked = parked_.exchange(0, std::memory_order_relaxed);
    for (; parked != 0; parked &= parked - 1) give_token(parked & (~parked + 1));
  }

  // Consumer k: parks unless work() finds something after announcing it. `since` holds the
  // park's start while parked (0 otherwise), for a controller to count idle time as it passes.
  // Returns the nanoseconds parked (0 if it did not sleep).
  template <class Work>
  std::int64_t park(std::size_t k, Work&& work, std::atomic<std::int64_t>& since) {
    const std::uint64_t bit = std::uint64_t{1} << k;
    parked_.fetch_or(bit, std::memory_order_seq_cst);
    seq_cst_fence();
    if (work()) {
      parked_.fetch_and(~bit, std::memory_order_relaxed);
      return 0;
    }
    Seat& seat = seats_[k];
    const std::int64_t start = steady_now();
    since.store(start, std::memory_order_relaxed);
    seat.waiter.wait([&] { return seat.token.load(std::memory_order_acquire) != 0; });
    // Our bit is still set if the token was a late one (see above): clear it, so that wakers pass
    // to consumers really parked. A waker that took it meanwhile owes a token: the next park then
    // returns at once, and the look before that park sees its work (the fences, as above).
    seat.token.store(0, std::memory_order_relaxed);
    parked_.fetch_and(~bit, std::memory_order_relaxed);
    since.store(0, std::memory_order_relaxed);
    return steady_now() - start;
  }

  // How many consumers are parked now (a snapshot).
  std::size_t parked() const noexcept {
    return static_cast<std::size_t>(__builtin_popcountll(parked_.load(std::memory_order_relaxed)));
  }

 private:
  // One seat per line: a seat's waiter and token are written by its consumer and its wakers only.
  struct alignas(kCacheLineBytes) Seat {
    explicit Seat(std::int64_t spin_ns) noexcept : waiter(spin_ns) {}
    Waiter waiter;
    std::atomic<std::uint32_t> token{0};
  };

  static Seat* allocate(std::size_t seats) {
    return static_cast<Seat*>(
        ::operator new (seats * sizeof(Seat), std::align_val_t{alignof(Seat)}));
  }

  static std::int64_t steady_now() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  void give_token(std::uint64_t bit) noexcept {
    Seat& seat = seats_[static_cast<std::size_t>(__builtin_ctzll(bit))];
    seat.waiter.publish([&] { seat.token.store(1, std::memory_order_release); });
  }

  Seat* const seats_;
  const std::size_t count_;
  // Written by every consumer as it parks and by every waker: on a line of its own.
  alignas(kCacheLineBytes) std::atomic<std::uint64_t> parked_{0};
};

}  // namespace detail

}  // namespace hspc
