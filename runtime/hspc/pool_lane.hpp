#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "hspc/channel.hpp"
#include "hspc/limits.hpp"
#include "hspc/pool_control.hpp"
#include "hspc/wait.hpp"

namespace hspc {

namespace detail {

// PoolLane: what a BasicConsumerPool's consumers claim for a turn (see there): one tuned channel
// of a producer's (PoolDeal deals its buffers over one lane, or over several when unordered), the
// claim word that lets one consumer at a time take from it, the time its oldest untaken buffer was
// handed over, and whether its end was seen.
//
// Layout: the channel object (read only after construction) and the consumers' words (claim, wait
// stamp, finished: written per turn and per hand-off) each start a line of their own; the
// producer's cursor, written per event, lives in PoolDeal, on a line of its own.
template <class Channel>
struct PoolLane {
  PoolLane() = default;
  PoolLane(const PoolLane&) = delete;
  PoolLane& operator=(const PoolLane&) = delete;

  // Unclaimed, and holding a published buffer or an end no consumer has seen yet. Any thread; a
  // snapshot (a consumer still has to win the claim).
  bool wanted() const noexcept {
    return claimed.load(std::memory_order_relaxed) == 0 &&
           !finished.load(std::memory_order_relaxed) && (channel.pending() || channel.ended());
  }

  // Acquire: the previous turn's use of the channel's consumer cursor happens before ours.
  bool try_claim() noexcept {
    std::uint32_t free = 0;
    return claimed.compare_exchange_strong(free, 1, std::memory_order_acquire,
                                           std::memory_order_relaxed);
  }

  // Ends a turn; true if the lane is wanted again (the caller then wakes a parked consumer). The
  // fence orders the release before that look, against a parking consumer's look at the claim
  // (promela/pool.pml): if it saw the lane claimed, this sees it parked. A buffer still waiting
  // keeps the stamp its producer gave it during the turn (the controller may have counted that
  // wait as going on already: restamping would take it back), else is stamped from now (its wait
  // before the turn was counted); a hand-off racing the stamp may go uncounted: the signal errs
  // low, never high.
  bool release() noexcept {
    if (!channel.pending()) {
      since_ns.store(0, std::memory_order_relaxed);
    } else if (since_ns.load(std::memory_order_relaxed) == 0) {
      since_ns.store(steady_now_ns(), std::memory_order_relaxed);
    }
    claimed.store(0, std::memory_order_release);
    seq_cst_fence();
    return wanted();
  }

  // The producer's hand-off: the clock is read only when no earlier buffer of this lane is
  // waiting (its stamp stands).
  void stamp() noexcept {
    if (since_ns.load(std::memory_order_relaxed) != 0) return;
    std::int64_t none = 0;
    (void)since_ns.compare_exchange_strong(none, steady_now_ns(), std::memory_order_relaxed);
  }

  // A new producer's stream on a finished lane whose producer has left: the caller (one thread)
  // holds the claim meanwhile, so no turn sees half of it, and the release that ends it orders it
  // before the next turn. The channel goes on from its counters.
  void reopen() noexcept {
    while (!try_claim()) std::this_thread::yield();  // a turn that found it finished, ending
    channel.reopen();
    finished.store(false, std::memory_order_relaxed);
    since_ns.store(0, std::memory_order_relaxed);
    claimed.store(0, std::memory_order_release);
  }

  // Adds this lane's wait still going at `now` (its time so far, and one wait) to t.
  void add_to(PoolTotals& t, std::int64_t now) const noexcept {
    const std::int64_t since = since_ns.load(std::memory_order_relaxed);
    if (since == 0 || now <= since) return;
    t.waited_ns += static_cast<double>(now - since);
    t.waiting += 1;
  }

  alignas(kCacheLineBytes) Channel channel;
  alignas(kCacheLineBytes) std::atomic<std::uint32_t> claimed{0};
  std::atomic<std::int64_t> since_ns{0};  // the oldest untaken hand-off's time; 0: none
  std::atomic<bool> finished{false};      // closed and drained, counted by its deal once
};

}  // namespace detail

}  // namespace hspc
