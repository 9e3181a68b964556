#pragma once

#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <utility>

#include "hspc/channel.hpp"
#include "hspc/limits.hpp"

namespace hspc {

// BasicFanOut: one producer thread handing whole buffers round robin to K consumer threads, for
// when one consumer cannot keep up with the producer. It is K BasicChannels (each consumer owns
// one) and a producer cursor: the producer fills the current channel's buffer; once that buffer is
// handed over (full, or at flush()), the next buffer goes to the next channel, (i + 1) % K.
//
// Preconditions
// - T is trivially copyable; 1 <= consumers <= kMaxConsumers (else the constructor throws
//   std::invalid_argument).
// - Exactly one producer thread calls push, emplace, try_push, flush and close. Consumer k (one
//   thread per k) calls pop(k, ...), try_pop(k, ...), pop_for(k, ...), consume(k, ...) and done(k)
//   with k < consumers(), and no other thread uses index k. producer_waits() may be read by the
//   producer, consumer_waits(k) by consumer k, and both by any thread once all have been joined.
// - Nothing is pushed after close() (asserted in debug builds).
// - The fan-out outlives every thread's use of it.
//
// Guarantees
// - Every event pushed before close() is delivered exactly once, to exactly one consumer.
// - Each consumer receives its events in push order.
// - A buffer (a run of up to kEventsPerBuffer consecutive events) goes to one consumer whole: with
//   no flush, consumer k receives buffers k, k + K, k + 2K, ... of the stream.
// - flush() (and the latency bound) hands the current partial buffer to its consumer (waking it)
//   and moves on; close() flushes, then ends every consumer's stream: once consumer k has taken all
//   its events, pop, try_pop and pop_for(k, ...) return false, consume(k, ...) returns 0 and
//   done(k) is true.
// - push/emplace block only while the current channel's Buffers slots all hold unconsumed events:
//   the hand-off order is fixed, so one slow consumer holds the producer up. try_push never blocks.
// - Everything BasicChannel guarantees per channel: per-buffer synchronisation, no allocation or
//   system call on the per-event path, every primitive wakes blocked consumers.
// - Latency bound (MaxLatencyNs != 0): the same guarantee, cost and limits as BasicChannel's (see
//   there), kept by the fan-out itself: its clock times the buffer being filled, whichever channel
//   it goes to, and a due buffer goes exactly as at flush() (to its consumer, and the producer
//   moves on). The channels carry no bound of their own: they hand a buffer over only when the
//   fan-out says so, which keeps the round robin exact. MaxLatencyNs = 0: no bound, no cost.
//
// Layout: each channel's block is its own allocation (see BasicChannel); the channel objects (read
// only after construction) sit one per cache line in one array, and the producer's cursor,
// written per event, on a line of its own, so no consumer reads a line the producer writes per
// event.
template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs = 5000, std::size_t MaxLatencyNs = 0,
          std::size_t PrefetchBytes = 0, bool HugePages = false>
class BasicFanOut {
 public:
  // Every parameter of the tuned channel but the latency bound, which the fan-out keeps itself.
  using Channel =
      BasicChannel<T, P, Buffers, BufferBytes, PaddingBytes, SpinNs, 0, PrefetchBytes, HugePages>;
  using value_type = T;

  static constexpr Primitive kPrimitive = P;
  static constexpr std::size_t kBuffers = Buffers;
  static constexpr std::size_t kBufferBytes = BufferBytes;
  static constexpr std::size_t kPaddingBytes = PaddingBytes;
  static constexpr std::size_t kSpinNs = SpinNs;
  static constexpr std::size_t kMaxLatencyNs = MaxLatencyNs;
  static constexpr std::size_t kPrefetchBytes = PrefetchBytes;
  static constexpr bool kHugePages = HugePages;
  static constexpr std::size_t kEventsPerBuffer = Channel::kEventsPerBuffer;
  static constexpr std::size_t kMaxConsumers = 64;

  explicit BasicFanOut(std::size_t consumers) : BasicFanOut(consumers, detail::CounterStart{0}) {}

  // `start`: where every channel's hand-off counters begin (tests cross the 2^32 wrap with it).
  BasicFanOut(std::size_t consumers, detail::CounterStart start)
      : lanes_(allocate(consumers)), consumers_(consumers) {
    std::size_t built = 0;
    try {
      for (; built < consumers; ++built) ::new (static_cast<void*>(lanes_ + built)) Lane(start);
    } catch (...) {
      destroy(built);
      throw;
    }
  }

  ~BasicFanOut() { destroy(consumers_); }

  BasicFanOut(const BasicFanOut&) = delete;
  BasicFanOut& operator=(const BasicFanOut&) = delete;
  BasicFanOut(BasicFanOut&&) = delete;
  BasicFanOut& operator=(BasicFanOut&&) = delete;

  std::size_t consumers() const noexcept { return consumers_; }

  // ---- producer ----

  // Appends one event to the current buffer; a full buffer goes to its consumer and the next
  // buffer to the next consumer. Blocks while the current channel has no free slot.
  void push(const T& event) { emplace(event); }

  // push, constructing the event in place (T(args...), or T{args...} for aggregates).
  template <class... Args>
  void emplace(Args&&... args) {
    assert(!cursor_.closed && "push after close()");
    Channel& channel = lane(cursor_.current);
    if constexpr (MaxLatencyNs != 0) {
      if (cursor_.fill == 0) {
        first_of_buffer(channel, [&] {
          channel.emplace(std::forward<Args>(args)...);
          return true;
        });
        return;
      }
    }
    channel.emplace(std::forward<Args>(args)...);
    pushed_one();
  }

  // push, but returns false instead of blocking when the current channel has no free slot (the
  // event then goes nowhere: round robin never skips a consumer).
  [[nodiscard]] bool try_push(const T& event) {
    assert(!cursor_.closed && "push after close()");
    Channel& channel = lane(cursor_.current);
    if constexpr (MaxLatencyNs != 0) {
      if (cursor_.fill == 0) {
        return first_of_buffer(channel, [&] { return channel.try_push(event); });
      }
    }
    if (!channel.try_push(event)) return false;
    pushed_one();
    return true;
  }

  // Hands the current partial buffer to its consumer now and moves on to the next consumer
  // (nothing happens if the buffer is empty).
  void flush() {
    if (cursor_.fill == 0) return;
    lane(cursor_.current).flush();
    next_lane();
  }

  // flush(), then ends every consumer's stream. Wakes waiting consumers.
  void close() {
    flush();
    cursor_.closed = true;
    for (std::size_t k = 0; k < consumers_; ++k) lane(k).close();
  }

  // ---- consumer k ----

  // Takes consumer k's next event, blocking until one is handed over. False once closed and all
  // of k's events were taken.
  [[nodiscard]] bool pop(std::size_t k, T& out) { return lane(k).pop(out); }

  // pop, but false instead of blocking when nothing is handed to k right now.
  [[nodiscard]] bool try_pop(std::size_t k, T& out) { return lane(k).try_pop(out); }

  // pop with a time limit: false on timeout or at the end of k's stream (see done(k)).
  template <class Rep, class Period>
  [[nodiscard]] bool pop_for(std::size_t k, T& out, std::chrono::duration<Rep, Period> timeout) {
    return lane(k).pop_for(out, timeout);
  }

  // Blocks for k's next run of events (the rest of one buffer), calls f(const T* data, size_t n)
  // once on it. Returns n; 0 once closed and all of k's events were taken.
  template <class F>
  std::size_t consume(std::size_t k, F&& f) {
    return lane(k).consume(std::forward<F>(f));
  }

  // True once the producer has closed and consumer k has taken every event handed to it.
  [[nodiscard]] bool done(std::size_t k) const noexcept { return lane(k).done(); }

  // ---- instrumentation (see the preconditions for who may read them when) ----

  // How often push/emplace found the current channel full and had to wait, over all channels.
  std::uint64_t producer_waits() const noexcept {
    std::uint64_t waits = 0;
    for (std::size_t k = 0; k < consumers_; ++k) waits += lane(k).producer_waits();
    return waits;
  }
  // How often consumer k found nothing handed over and had to wait.
  std::uint64_t consumer_waits(std::size_t k) const noexcept { return lane(k).consumer_waits(); }
  // The spin budget each wait uses (see BasicChannel::spin_budget).
  std::int64_t spin_budget() const noexcept { return lane(0).spin_budget(); }

 private:
  // kCacheLineBytes: one channel object per line, so constructing or reading one never touches
  // another's line.
  struct alignas(kCacheLineBytes) Lane {
    explicit Lane(detail::CounterStart start) : channel(start) {}
    Channel channel;
  };

  // With a bound, the LatencyTimer of the buffer being filled (an empty base without).
  struct Cursor : detail::LatencyTimer<MaxLatencyNs> {
    std::size_t current = 0;  // the channel whose buffer is being filled
    std::size_t fill = 0;     // events pushed into it since its last hand-off
    bool closed = false;
  };

  static Lane* allocate(std::size_t consumers) {
    if (consumers < 1 || consumers > kMaxConsumers) {
      throw std::invalid_argument("BasicFanOut: consumers must be in [1, 64]");
    }
    return static_cast<Lane*>(
        ::operator new (consumers * sizeof(Lane), std::align_val_t{alignof(Lane)}));
  }

  void destroy(std::size_t built) noexcept {
    for (std::size_t k = built; k > 0; --k) lanes_[k - 1].~Lane();
    ::operator delete (lanes_, std::align_val_t{alignof(Lane)});
  }

  Channel& lane(std::size_t k) const noexcept {
    assert(k < consumers_ && "no such consumer");
    return lanes_[k].channel;
  }

  // The channel hands its slot over exactly when kEventsPerBuffer events were pushed into it since
  // the last hand-off (BasicChannel's guarantee), so counting successful pushes here tells when
  // the buffer has gone and the next one belongs to the next consumer.
  void pushed_one() noexcept(MaxLatencyNs == 0) {
    if (++cursor_.fill == kEventsPerBuffer) next_lane();
    if constexpr (MaxLatencyNs != 0) {
      if (cursor_.tick(1)) flush();  // nothing if the buffer just went full
    }
  }

  // With a bound: a buffer's first event, pushed by push() (true if it was). The buffer's clock
  // starts, after a fresh reading if the channel had to wait for a free slot (as in BasicChannel:
  // the wait is neither an event's age nor the push rate).
  template <class Push>
  bool first_of_buffer(const Channel& channel, Push push) {
    const std::uint64_t waits = channel.producer_waits();
    if (!push()) return false;
    if (channel.producer_waits() != waits) cursor_.restart();
    cursor_.start();
    pushed_one();
    return true;
  }

  void next_lane() noexcept {
    cursor_.fill = 0;
    cursor_.current = cursor_.current + 1 == consumers_ ? 0 : cursor_.current + 1;
  }

  // Read by every thread, written only by the constructor and destructor.
  Lane* const lanes_;
  const std::size_t consumers_;
  // kCacheLineBytes: written per event by the producer; on its own line, away from what
  // consumers read.
  alignas(kCacheLineBytes) Cursor cursor_;
};

}  // namespace hspc
