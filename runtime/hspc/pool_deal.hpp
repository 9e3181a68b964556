#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "hspc/channel.hpp"
#include "hspc/latency_timer.hpp"
#include "hspc/limits.hpp"
#include "hspc/pool_control.hpp"
#include "hspc/pool_lane.hpp"
#include "hspc/pool_parking.hpp"
#include "hspc/wait.hpp"

namespace hspc {

namespace detail {

// PoolDeal: one producer's part of a BasicConsumerPool (see there): its lanes, each a tuned
// channel that consumers claim for a turn, and the producer's handle, which deals whole buffers
// over them round robin as BasicFanOut deals them over its consumers. Ordered, a deal has one
// lane (one consumer at a time, push order); unordered, one per consumer the pool may run, so
// that every consumer can take one of this producer's buffers at once.
//
// A deal is finished once every lane's end was seen (each counted here once), and reusable once
// its producer has also left close(): add_producer() then reopens it for a new producer.
//
// Layout: the lanes are one allocation (PoolLane's layout); the deal's counters, written once per
// lane's end, and the producer's cursor, written per event, each on a line of their own.
template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs, std::size_t MaxLatencyNs,
          std::size_t PrefetchBytes, bool HugePages>
class PoolDeal {
 public:
  // Every parameter of the tuned channel but the latency bound, which the producer keeps itself
  // (as BasicFanOut does) so that every hand-off goes through it.
  using Channel =
      BasicChannel<T, P, Buffers, BufferBytes, PaddingBytes, SpinNs, 0, PrefetchBytes, HugePages>;
  using Lane = PoolLane<Channel>;
  using Lot = ParkingLot<WaiterFor<P>>;
  static constexpr std::size_t kEventsPerBuffer = Channel::kEventsPerBuffer;

  // A producer's calls: those of a channel, on the lane whose turn it is, plus what the pool
  // needs at each hand-off (the lane's wait stamp, a parked consumer woken if there is one).
  class Producer {
   public:
    Producer(PoolDeal& deal, Lot& lot) noexcept : deal_(deal), lot_(lot) {}
    Producer(const Producer&) = delete;
    Producer& operator=(const Producer&) = delete;

    // Appends one event; a full buffer goes to the pool. Blocks while every buffer of the lane
    // whose turn it is is in use.
    void push(const T& event) { emplace(event); }

    // push, constructing the event in place (T(args...), or T{args...} for aggregates).
    template <class... Args>
    void emplace(Args&&... args) {
      Channel& ours = *cursor_.current;
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

    // Appends n events in order, each buffer's share in one copy (the channel's bulk push); a
    // full buffer goes to the pool. Blocks as push() does.
    void push(const T* events, std::size_t n) {
      while (n != 0) {
        if constexpr (MaxLatencyNs != 0) {
          if (cursor_.fill == 0) {  // the bound's clock starts with a buffer's first event
            push(*events++);
            --n;
            continue;
          }
        }
        const std::size_t room = kEventsPerBuffer - cursor_.fill;
        const std::size_t part = n < room ? n : room;
        cursor_.current->push(events, part);  // the channel hands its slot over as ours fills
        events += part;
        n -= part;
        cursor_.fill += part;
        if (cursor_.fill == kEventsPerBuffer) handed_over();
        if constexpr (MaxLatencyNs != 0) {
          if (cursor_.tick(part)) flush();
        }
      }
    }

    // push, but false instead of blocking (the event then goes nowhere: the deal skips no lane).
    [[nodiscard]] bool try_push(const T& event) {
      Channel& ours = *cursor_.current;
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
      cursor_.current->flush();
      handed_over();
    }

    // flush(), then end of stream on every lane: once their events are handled the producer
    // counts as finished. Its last act marks the deal left (reusable once finished).
    void close() {
      for (std::size_t j = 0; j < deal_.count_; ++j) {
        deal_.lanes_[j].channel.close();
        deal_.lanes_[j].stamp();
      }
      cursor_.fill = 0;
      lot_.notify_one();  // one is enough: a consumer looks over every lane before it parks
      deal_.left_.store(true, std::memory_order_release);
    }

    // This producer's place: its index for producer(i), and the first argument of a handler
    // that takes one. add_producer() may give it to a later producer once this one finished.
    std::size_t place() const noexcept { return deal_.place_; }

    // Every event pushed before close() was handled (any thread; the acquire makes what the
    // handler calls did for them visible to the caller). False again once add_producer() has
    // given the place to another producer: ask before that (callers of both agree on an order).
    bool finished() const noexcept {
      return deal_.ended_.load(std::memory_order_acquire) == deal_.count_;
    }

    // How often push/emplace found every buffer in use and had to wait (read by this producer's
    // thread, or by any once it has been joined).
    std::uint64_t waits() const noexcept {
      std::uint64_t n = 0;
      for (std::size_t j = 0; j < deal_.count_; ++j) n += deal_.lanes_[j].channel.producer_waits();
      return n;
    }

   private:
    friend class PoolDeal;

    // The first lane's turn, as a new producer starts.
    void restart() noexcept {
      cursor_ = Cursor();
      cursor_.current = &deal_.lanes_[0].channel;
    }

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
      const std::uint64_t waits = cursor_.current->producer_waits();
      if (!push()) return false;
      if (cursor_.current->producer_waits() != waits) cursor_.restart();
      cursor_.start();
      pushed_one();
      return true;
    }

    // The buffer's lane stamped, a parked consumer woken; unordered, the next lane's turn.
    void handed_over() noexcept {
      cursor_.fill = 0;
      deal_.lanes_[cursor_.at].stamp();
      lot_.notify_one();
      if (deal_.count_ > 1) {
        cursor_.at = cursor_.at + 1 == deal_.count_ ? 0 : cursor_.at + 1;
        cursor_.current = &deal_.lanes_[cursor_.at].channel;
      }
    }

    struct Cursor : LatencyTimer<MaxLatencyNs> {
      Channel* current = nullptr;  // the channel of the lane whose turn it is
      std::size_t at = 0;          // that lane's index
      std::size_t fill = 0;        // events pushed since the last hand-off
    };

    PoolDeal& deal_;
    Lot& lot_;
    Cursor cursor_;
  };

  PoolDeal(std::size_t lanes, Lot& lot, std::size_t place)
      : lanes_(allocate(lanes)), count_(lanes), place_(place), producer(*this, lot) {
    std::size_t built = 0;
    try {
      for (; built < lanes; ++built) ::new (static_cast<void*>(lanes_ + built)) Lane();
    } catch (...) {
      destroy(built);
      throw;
    }
    producer.restart();
  }
  ~PoolDeal() { destroy(count_); }
  PoolDeal(const PoolDeal&) = delete;
  PoolDeal& operator=(const PoolDeal&) = delete;

  std::size_t lanes() const noexcept { return count_; }
  std::size_t place() const noexcept { return place_; }
  Lane& lane(std::size_t j) const noexcept { return lanes_[j]; }

  // A lane that is wanted now (PoolLane::wanted), looking from lane `from` on; nullptr if none.
  Lane* wanted_lane(std::size_t from) const noexcept {
    if (count_ == 1) return lanes_[0].wanted() ? lanes_ : nullptr;
    for (std::size_t j = 0; j < count_; ++j) {
      Lane* at = lanes_ + (from + j) % count_;
      if (at->wanted()) return at;
    }
    return nullptr;
  }

  // The caller won a lane's finished flag: true once every lane's has been won (the producer is
  // finished, and the caller counts it).
  bool lane_finished() noexcept {
    return ended_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_;
  }

  // Finished, and its producer has left close(): the acquires order both before a reuse.
  bool reusable() const noexcept {
    return ended_.load(std::memory_order_acquire) == count_ &&
           left_.load(std::memory_order_acquire);
  }

  // Its producer has left close() (its events may still be waiting).
  bool left() const noexcept { return left_.load(std::memory_order_relaxed); }

  // For a new producer (one thread, reusable() seen true): every lane reopened, from lane 0.
  void reopen() noexcept {
    for (std::size_t j = 0; j < count_; ++j) lanes_[j].reopen();
    ended_.store(0, std::memory_order_relaxed);
    left_.store(false, std::memory_order_relaxed);
    producer.restart();
  }

  // Adds every lane's wait still going at `now` to t.
  void add_to(PoolTotals& t, std::int64_t now) const noexcept {
    for (std::size_t j = 0; j < count_; ++j) lanes_[j].add_to(t, now);
  }

 private:
  static Lane* allocate(std::size_t lanes) {
    return static_cast<Lane*>(
        ::operator new (lanes * sizeof(Lane), std::align_val_t{alignof(Lane)}));
  }
  void destroy(std::size_t built) noexcept {
    for (std::size_t j = built; j > 0; --j) lanes_[j - 1].~Lane();
    ::operator delete (lanes_, std::align_val_t{alignof(Lane)});
  }

  Lane* const lanes_;
  const std::size_t count_;
  const std::size_t place_;                                     // its index in the pool's roster
  alignas(kCacheLineBytes) std::atomic<std::size_t> ended_{0};  // lanes whose end was seen
  std::atomic<bool> left_{false};                               // the producer left close()

 public:
  alignas(kCacheLineBytes) Producer producer;
};

}  // namespace detail

}  // namespace hspc
