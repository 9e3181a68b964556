#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "hspc/channel.hpp"
#include "hspc/latency_timer.hpp"
#include "hspc/limits.hpp"
#include "hspc/pool_control.hpp"
#include "hspc/pool_parking.hpp"
#include "hspc/wait.hpp"

namespace hspc {

namespace detail {

// PoolLane: one producer's part of a BasicConsumerPool (see there): its tuned channel, the claim
// word that lets one consumer at a time take from it, the time its oldest untaken buffer was
// handed over, and the producer's handle.
//
// Layout: the channel object (read only after construction), the consumers' words (claim, wait
// stamp, finished: written per turn and per hand-off) and the producer's cursor (written per
// event) each start a line of their own, so no consumer reads a line the producer writes per
// event.
template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs, std::size_t MaxLatencyNs,
          std::size_t PrefetchBytes, bool HugePages>
struct PoolLane {
  // Every parameter of the tuned channel but the latency bound, which the producer keeps itself
  // (as BasicFanOut does) so that every hand-off goes through it.
  using Channel =
      BasicChannel<T, P, Buffers, BufferBytes, PaddingBytes, SpinNs, 0, PrefetchBytes, HugePages>;
  using Lot = ParkingLot<WaiterFor<P>>;
  static constexpr std::size_t kEventsPerBuffer = Channel::kEventsPerBuffer;

  // A producer's calls: those of its channel, plus what the pool needs at each hand-off (a wait
  // stamp if none is pending, and a parked consumer woken if there is one).
  class Producer {
   public:
    Producer(PoolLane& lane, Lot& lot) noexcept : lane_(lane), lot_(lot) {}
    Producer(const Producer&) = delete;
    Producer& operator=(const Producer&) = delete;

    // Appends one event; a full buffer goes to the pool. Blocks while every buffer is in use.
    void push(const T& event) { emplace(event); }

    // push, constructing the event in place (T(args...), or T{args...} for aggregates).
    template <class... Args>
    void emplace(Args&&... args) {
      Channel& ours = lane_.channel;
      if constexpr (MaxLatencyNs != 0) {
        if (cursor_.fill == 0) {
          first_of_buffer([&] {
            ours.emplace(std::forward<Args>(args)...);
            return true;
          });
          return;
        }
      }
      ours.emplace(std::forward<Args>(args)...);
      pushed_one();
    }

    // push, but false instead of blocking when every buffer is in use.
    [[nodiscard]] bool try_push(const T& event) {
      Channel& ours = lane_.channel;
      if constexpr (MaxLatencyNs != 0) {
        if (cursor_.fill == 0) return first_of_buffer([&] { return ours.try_push(event); });
      }
      if (!ours.try_push(event)) return false;
      pushed_one();
      return true;
    }

    // Hands a partly filled buffer to the pool now (nothing happens if it is empty).
    void flush() {
      if (cursor_.fill == 0) return;
      lane_.channel.flush();
      handed_over();
    }

    // flush(), then end of stream: once its events are handled the producer counts as finished.
    void close() {
      lane_.channel.close();
      handed_over();
    }

    // How often push/emplace found every buffer in use and had to wait (read by this producer's
    // thread, or by any once it has been joined).
    std::uint64_t waits() const noexcept { return lane_.channel.producer_waits(); }

   private:
    // The channel hands a buffer over exactly when kEventsPerBuffer events were pushed since the
    // last hand-off, so counting here tells when one went (BasicFanOut relies on the same).
    void pushed_one() {
      if (++cursor_.fill == kEventsPerBuffer) handed_over();
      if constexpr (MaxLatencyNs != 0) {
        if (cursor_.tick(1)) flush();
      }
    }

    // With a bound: a buffer's first event, as BasicFanOut::first_of_buffer.
    template <class Push>
    bool first_of_buffer(Push push) {
      const std::uint64_t waits = lane_.channel.producer_waits();
      if (!push()) return false;
      if (lane_.channel.producer_waits() != waits) cursor_.restart();
      cursor_.start();
      pushed_one();
      return true;
    }

    // The clock is read only when no earlier buffer of this lane is waiting (its stamp stands).
    void handed_over() noexcept {
      cursor_.fill = 0;
      if (lane_.since_ns.load(std::memory_order_relaxed) == 0) {
        std::int64_t none = 0;
        (void)lane_.since_ns.compare_exchange_strong(none, steady_now_ns(),
                                                     std::memory_order_relaxed);
      }
      lot_.notify_one();
    }

    struct Cursor : LatencyTimer<MaxLatencyNs> {
      std::size_t fill = 0;  // events pushed since the last hand-off
    };

    PoolLane& lane_;
    Lot& lot_;
    Cursor cursor_;
  };

  explicit PoolLane(Lot& lot) : producer(*this, lot) {}

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
  // (model/pool.pml): if it saw the lane claimed, this sees it parked. A buffer still waiting
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
  std::atomic<bool> finished{false};      // closed and drained, counted by the pool once
  alignas(kCacheLineBytes) Producer producer;
};

}  // namespace detail

}  // namespace hspc
