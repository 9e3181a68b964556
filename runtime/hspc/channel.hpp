#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "hspc/affinity.hpp"
#include "hspc/channel_layout.hpp"
#include "hspc/limits.hpp"
#include "hspc/primitives.hpp"
#include "hspc/slot_ring.hpp"
#include "hspc/wait.hpp"

namespace hspc {

// BasicChannel: a single-producer single-consumer channel that synchronizes per buffer, never per
// event (Saunders, Jeffery and Jones, "A portable framework for high-speed producer/consumer
// communication"). Buffers slots form a ring; the producer fills one slot privately, then hands
// it over whole; the consumer empties it privately, then hands it back.
//
// Preconditions
// - T is trivially copyable.
// - Exactly one producer thread calls push, emplace, try_push, flush and close; exactly one
//   consumer thread calls pop, try_pop, pop_for, consume and done. (One thread may play both roles
//   if it only uses the non-blocking calls.) producer_waits()/consumer_waits() may be read by any
//   thread once both have been joined.
// - Nothing is pushed after close() (asserted in debug builds).
// - The channel outlives both threads' use of it.
//
// Guarantees
// - Every event pushed before close() is delivered exactly once and in push order, whatever mix
//   of pop, try_pop, pop_for and consume the consumer uses.
// - Events pushed but not yet flushed are not visible to the consumer: a slot is handed over when
//   it is full (kEventsPerBuffer events), at flush() or at close(), or by the latency bound.
// - Latency bound (MaxLatencyNs != 0): while the producer keeps pushing, no event waits in an
//   unpublished slot longer than MaxLatencyNs plus one check interval. The producer reads
//   steady_clock once per check interval of K pushes, never per event, and hands the slot over,
//   exactly as flush() does, at the first reading past its oldest event's deadline. K (1 to 4096)
//   follows the measured push rate so that K pushes take about MaxLatencyNs / 4: about 1.25 x
//   MaxLatencyNs in all at a steady rate; after a sudden slow-down, one interval is K pushes at
//   the slower rate. The deadline counts from the reading before the oldest event, so a slot may
//   go early, never late. The bound acts only inside push, emplace, try_push and push(ptr, n): a
//   producer that stops pushing must call flush() (or close()). It bounds the wait before
//   publication, not the wait behind a slow consumer. MaxLatencyNs = 0 (the default): no bound,
//   and not one instruction or byte of it.
// - flush() and close() wake a consumer blocked in pop, pop_for or consume, with every primitive.
// - After close(), once every event has been taken, pop/try_pop/pop_for return false, consume
//   returns 0 and done() is true. pop_for returns false at its deadline, and the channel stays
//   usable.
// - push/emplace block only while all Buffers slots hold unconsumed events; try_push never blocks.
// - All memory is one allocation, pre-faulted in the constructor: no allocation, page fault or
//   system call on the per-event path. System calls happen per buffer at most: in a wait, in
//   waking a waiter, or on a contended mutex.
// - If consume's f throws, the run it was given counts as consumed.
// - The 32-bit hand-off counters may wrap around (unsigned differences; slot indices are kept
//   apart from them, since 2^32 is no multiple of a non-power-of-two Buffers).
//
// Layout: one aligned heap block holds, in this order, the producer-written shared state (head,
// closed), the consumer-written shared state (tail), the producer's private cursor, the
// consumer's private cursor, the data-ready waiter, the space-ready waiter and the Buffers slots
// (each an event count then the events). PaddingBytes of gap precede every region (and end the
// block); with PaddingBytes >= kCacheLineBytes (64) each region also starts on a line of its own,
// so no two regions share a line (at 128, no two share an adjacent-line prefetch pair).
// PaddingBytes = 0 packs them, keeping only natural alignment: the tuner's reference point.
// Code shape (detail::SlotRing): PrefetchBytes of each slot prefetched as it is taken, HugePages
// for a block of 2 MiB or more; neither changes what is delivered.
template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs = 5000, std::size_t MaxLatencyNs = 0,
          std::size_t PrefetchBytes = 0, bool HugePages = false>
class BasicChannel : private detail::SlotRing<T, WaiterFor<P>, Buffers, BufferBytes, PaddingBytes,
                                              MaxLatencyNs, PrefetchBytes, HugePages> {
  using Ring = detail::SlotRing<T, WaiterFor<P>, Buffers, BufferBytes, PaddingBytes, MaxLatencyNs,
                                PrefetchBytes, HugePages>;
  using Producer = typename Ring::Producer;

  static_assert(std::is_trivially_copyable_v<T>,
                "events are copied as bytes: T must be trivially copyable");
  static_assert(Buffers >= kMinBuffers && Buffers <= kMaxBuffers, "Buffers must be in [2, 64]");
  static_assert(BufferBytes >= kMinBufferBytes && BufferBytes <= kMaxBufferBytes,
                "BufferBytes must be in [64, 16 MiB]");
  static_assert(PaddingBytes == 0 ||
                    (detail::is_power_of_two(PaddingBytes) && PaddingBytes <= kMaxPaddingBytes),
                "PaddingBytes must be 0 or a power of two <= 512");
  static_assert(SpinNs <= kMaxSpinNs, "SpinNs must be at most 1 ms (1000000)");
  static_assert(PrefetchBytes == 0 ||
                    (detail::is_power_of_two(PrefetchBytes) && PrefetchBytes <= kMaxPrefetchBytes),
                "PrefetchBytes must be 0 or a power of two <= 64 KiB");

 public:
  using value_type = T;
  using Waiter = WaiterFor<P>;

  static constexpr Primitive kPrimitive = P;
  static constexpr std::size_t kBuffers = Buffers;
  static constexpr std::size_t kBufferBytes = BufferBytes;
  static constexpr std::size_t kPaddingBytes = PaddingBytes;
  static constexpr std::size_t kSpinNs = SpinNs;
  static constexpr std::size_t kMaxLatencyNs = MaxLatencyNs;
  static constexpr std::size_t kPrefetchBytes = PrefetchBytes;
  static constexpr bool kHugePages = HugePages;
  static constexpr std::size_t kEventsPerBuffer = Ring::kEventsPerBuffer;

  using Layout = typename Ring::Layout;

  BasicChannel() : BasicChannel(detail::CounterStart{0}) {}

  explicit BasicChannel(detail::CounterStart start)
      : Ring(start, spin_budget_ns(static_cast<std::int64_t>(SpinNs))) {}

  BasicChannel(const BasicChannel&) = delete;
  BasicChannel& operator=(const BasicChannel&) = delete;
  BasicChannel(BasicChannel&&) = delete;
  BasicChannel& operator=(BasicChannel&&) = delete;

  // ---- producer ----

  // Appends one event; hands the slot over when it is full. Blocks while every slot is in use.
  void push(const T& event) { emplace(event); }

  // push, constructing the event in place (T(args...), or T{args...} for aggregates).
  template <class... Args>
  void emplace(Args&&... args) {
    Producer& p = producer();
    if (p.fill == 0) take_slot_after_check();
    construct(p.events + p.fill, std::forward<Args>(args)...);
    if (++p.fill == kEventsPerBuffer) publish();
    if constexpr (MaxLatencyNs != 0) due_check(1);
  }

  // push, but returns false instead of blocking when every slot is in use.
  [[nodiscard]] bool try_push(const T& event) {
    Producer& p = producer();
    if (p.fill == 0) {
      assert_open();
      if (!slot_free()) return false;
      p.events = slot_events(p.slot);
      if constexpr (MaxLatencyNs != 0) p.start();
    }
    construct(p.events + p.fill, event);
    if (++p.fill == kEventsPerBuffer) publish();
    if constexpr (MaxLatencyNs != 0) due_check(1);
    return true;
  }

  // Appends n events at once, each slot's share in one memcpy (the fair peer of a ring's bulk
  // push); hands each slot over as it fills. Blocks while every slot is in use.
  void push(const T* events, std::size_t n) {
    Producer& p = producer();
    while (n != 0) {
      if (p.fill == 0) take_slot_after_check();
      const std::size_t room = kEventsPerBuffer - p.fill;
      const std::size_t part = n < room ? n : room;
      detail::copy_run(p.events + p.fill, events, part);
      p.fill += static_cast<std::uint32_t>(part);
      events += part;
      n -= part;
      if (p.fill == kEventsPerBuffer) publish();
      if constexpr (MaxLatencyNs != 0) due_check(part);
    }
  }

  // Hands a partly filled slot to the consumer now (nothing happens if it is empty).
  void flush() {
    if (producer().fill != 0) publish();
  }

  // flush(), then end of stream. Wakes a waiting consumer.
  void close() {
    flush();
    producer().closed = true;
    data_ready().publish([this] { produced().closed.store(true, std::memory_order_release); });
  }

  // ---- consumer ----

  // Takes the next event, blocking until one is published. False once closed and all delivered.
  [[nodiscard]] bool pop(T& out) {
    if (!holding_slot() && !next_slot(detail::kForever)) return false;
    take(out);
    return true;
  }

  // pop, but false instead of blocking when no event is published right now.
  [[nodiscard]] bool try_pop(T& out) {
    if (!holding_slot()) {
      if (!slot_published()) return false;
      enter_slot();
    }
    take(out);
    return true;
  }

  // pop with a time limit: false on timeout or at the end of the stream (see done()).
  template <class Rep, class Period>
  [[nodiscard]] bool pop_for(T& out, std::chrono::duration<Rep, Period> timeout) {
    if (!holding_slot() && !next_slot(detail::deadline_after(timeout))) return false;
    take(out);
    return true;
  }

  // Blocks for the next run of events and copies up to max_events of it into out. Returns how
  // many; 0 once closed and all delivered (or when max_events is 0).
  std::size_t pop(T* out, std::size_t max_events) {
    if (max_events == 0 || (!holding_slot() && !next_slot(detail::kForever))) return 0;
    detail::ConsumerCursor<T>& c = consumer();
    const std::size_t left = c.count - c.read;
    const std::size_t n = left < max_events ? left : max_events;
    detail::copy_run(out, c.events + c.read, n);
    c.read += static_cast<std::uint32_t>(n);
    if (c.read == c.count) release_slot();
    return n;
  }

  // Blocks for the next run of events (the rest of one slot), calls f(const T* data, size_t n)
  // once on it, then releases the slot. Returns n; 0 once closed and all delivered.
  template <class F>
  std::size_t consume(F&& f) {
    if (!holding_slot() && !next_slot(detail::kForever)) return 0;
    detail::ConsumerCursor<T>& c = consumer();
    const std::size_t n = c.count - c.read;
    const typename Ring::ReleaseOnExit release{this};
    std::forward<F>(f)(c.events + c.read, n);
    return n;
  }

  // consume, but 0 at once when nothing is published. Consumers may take turns with it (see
  // BasicConsumerPool): a turn ends between runs, and what passes it on must order the cursor.
  template <class F>
  std::size_t try_consume(F&& f) {
    if (!holding_slot()) {
      if (!slot_published()) return 0;
      enter_slot();
    }
    return consume(std::forward<F>(f));
  }
  // From any thread: a published slot awaits the consumer; closed and every slot released.
  // reopen(): once ended, a new stream (BasicConsumerPool's lane reuse; SlotRing says when).
  using Ring::ended;
  using Ring::pending;
  using Ring::reopen;

  // True once the producer has closed the channel and every event has been taken.
  [[nodiscard]] bool done() const noexcept {
    const detail::ConsumerCursor<T>& c = consumer();
    if (c.read != c.count) return false;
    // closed first: its acquire makes every publication before close() visible to the head load.
    if (!produced().closed.load(std::memory_order_acquire)) return false;
    return produced().head.load(std::memory_order_acquire) == c.tail;
  }

  // ---- instrumentation (read after joining both threads) ----

  // How often push/emplace found every slot in use and had to wait.
  std::uint64_t producer_waits() const noexcept { return producer().waits; }
  // How often pop/pop_for/consume found nothing published and had to wait.
  std::uint64_t consumer_waits() const noexcept { return consumer().waits; }
  // The spin budget each wait uses: SpinNs, or 0 if the creating thread could use only one CPU.
  std::int64_t spin_budget() const noexcept { return spin_ns_; }

 private:
  using Ring::consumer;
  using Ring::data_ready;
  using Ring::enter_slot;
  using Ring::holding_slot;
  using Ring::next_slot;
  using Ring::produced;
  using Ring::producer;
  using Ring::publish;
  using Ring::release_slot;
  using Ring::slot_events;
  using Ring::slot_free;
  using Ring::slot_published;
  using Ring::spin_ns_;
  using Ring::take;
  using Ring::take_free_slot;

  // A push after close() is caught as it takes a slot (close() hands the last over), not per event.
  void assert_open() const noexcept { assert(!producer().closed && "push after close()"); }
  void take_slot_after_check() {
    assert_open();
    take_free_slot();
  }

  using Ring::construct;

  // With a bound, after n events were pushed: the clock may say the slot is due (flush() skips an
  // empty one, e.g. a slot just handed over full).
  void due_check(std::size_t n) {
    if (producer().tick(n)) flush();
  }
};

}  // namespace hspc
