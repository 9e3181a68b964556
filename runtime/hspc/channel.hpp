#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "hspc/affinity.hpp"
#include "hspc/primitives.hpp"

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
//   it is full (kEventsPerBuffer events), at flush() or at close().
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
// block); with PaddingBytes >= 64 each region also starts on a 64-byte line, so no two regions
// share a line (at 128, no two share an adjacent-line prefetch pair). PaddingBytes = 0 packs them,
// keeping only natural alignment: the tuner's reference point.
template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs = 5000>
class BasicChannel;

namespace detail {

constexpr std::size_t align_up(std::size_t n, std::size_t align) noexcept {
  return (n + align - 1) / align * align;
}
constexpr std::size_t larger(std::size_t a, std::size_t b) noexcept { return a < b ? b : a; }
constexpr bool is_power_of_two(std::size_t n) noexcept { return n != 0 && (n & (n - 1)) == 0; }

// Where the next region starts after one ending at `end`: a gap of padding bytes, then the
// region's alignment (at least min(padding, 64) so padded regions start on a line of their own).
constexpr std::size_t place_after(std::size_t end, std::size_t align,
                                  std::size_t padding) noexcept {
  const std::size_t line_align = padding < 64 ? padding : 64;
  return align_up(end + padding, larger(align, larger(line_align, 1)));
}

struct ProducerShared {
  std::atomic<std::uint32_t> head{0};  // slots published so far
  std::atomic<bool> closed{false};     // set after the last publication
};

struct ConsumerShared {
  std::atomic<std::uint32_t> tail{0};  // slots released so far
};

template <class T>
struct ProducerCursor {
  T* events = nullptr;  // the slot being filled
  // head % Buffers, kept apart: 2^32 is no multiple of 3 buffers, so the modulo of a wrapping
  // counter would jump (slots 2, 0, 0 around the wrap) and refill a slot still being read.
  std::uint32_t slot = 0;
  std::uint32_t head = 0;        // == ProducerShared::head, without the atomic load
  std::uint32_t tail_cache = 0;  // last tail read; re-read only when it says "all slots full"
  std::uint32_t fill = 0;        // events in the slot being filled; 0 = no slot taken yet
  bool closed = false;
  std::uint64_t waits = 0;
};

template <class T>
struct ConsumerCursor {
  const T* events = nullptr;     // the slot being emptied
  std::uint32_t slot = 0;        // tail % Buffers, kept apart like ProducerCursor::slot
  std::uint32_t tail = 0;        // == ConsumerShared::tail, without the atomic load
  std::uint32_t head_cache = 0;  // last head read; re-read only when it says "nothing published"
  std::uint32_t read = 0;        // events taken from the slot being emptied
  std::uint32_t count = 0;       // events in it; read == count means no slot held
  std::uint64_t waits = 0;
};

// Byte offsets of every region of a channel's block (see BasicChannel's layout note).
template <class T, std::size_t Buffers, std::size_t EventsPerBuffer, std::size_t PaddingBytes,
          class Waiter>
struct ChannelLayout {
  static constexpr std::size_t kSlotAlign = larger(alignof(T), alignof(std::uint32_t));
  static constexpr std::size_t kSlotEvents = align_up(sizeof(std::uint32_t), alignof(T));
  static constexpr std::size_t kSlotBytes = kSlotEvents + EventsPerBuffer * sizeof(T);

  static constexpr std::size_t kProducerShared =
      place_after(0, alignof(ProducerShared), PaddingBytes);
  static constexpr std::size_t kConsumerShared =
      place_after(kProducerShared + sizeof(ProducerShared), alignof(ConsumerShared), PaddingBytes);
  static constexpr std::size_t kProducerCursor = place_after(
      kConsumerShared + sizeof(ConsumerShared), alignof(ProducerCursor<T>), PaddingBytes);
  static constexpr std::size_t kConsumerCursor = place_after(
      kProducerCursor + sizeof(ProducerCursor<T>), alignof(ConsumerCursor<T>), PaddingBytes);
  static constexpr std::size_t kDataReady =
      place_after(kConsumerCursor + sizeof(ConsumerCursor<T>), alignof(Waiter), PaddingBytes);
  static constexpr std::size_t kSpaceReady =
      place_after(kDataReady + sizeof(Waiter), alignof(Waiter), PaddingBytes);
  static constexpr std::size_t kFirstSlot =
      place_after(kSpaceReady + sizeof(Waiter), kSlotAlign, PaddingBytes);
  static constexpr std::size_t kSlotStride = place_after(kSlotBytes, kSlotAlign, PaddingBytes);

  // 64: the block starts on a line of its own, whatever T's alignment.
  static constexpr std::size_t kAlign = larger(larger(alignof(T), alignof(Waiter)), 64);
  static constexpr std::size_t kBytes =
      align_up(kFirstSlot + (Buffers - 1) * kSlotStride + kSlotBytes + PaddingBytes, kAlign);
};

// A deadline `d` from now. Computed in double so that pop_for(hours::max()) means "no deadline"
// instead of overflowing.
template <class Rep, class Period>
SteadyTime deadline_after(const std::chrono::duration<Rep, Period>& d) noexcept {
  using Seconds = std::chrono::duration<double>;
  const SteadyTime now = std::chrono::steady_clock::now();
  const Seconds wanted(d);
  if (wanted <= Seconds::zero()) return now;
  if (wanted >= Seconds(kForever - now) / 2) return kForever;
  return now + std::chrono::ceil<SteadyTime::duration>(wanted);
}

// Where the hand-off counters start (0 normally). Tests start them just below 2^32 so that a short
// run crosses the wrap-around.
struct CounterStart {
  std::uint32_t value;
};

constexpr std::size_t kMaxBufferBytes = std::size_t{16} << 20;
constexpr std::size_t kPageBytes = 4096;  // the smallest page size: touching more is harmless

}  // namespace detail

template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs>
class BasicChannel {
  static_assert(std::is_trivially_copyable_v<T>,
                "events are copied as bytes: T must be trivially copyable");
  static_assert(Buffers >= 2 && Buffers <= 64, "Buffers must be in [2, 64]");
  static_assert(BufferBytes >= 64 && BufferBytes <= detail::kMaxBufferBytes,
                "BufferBytes must be in [64, 16 MiB]");
  static_assert(PaddingBytes == 0 || (detail::is_power_of_two(PaddingBytes) && PaddingBytes <= 512),
                "PaddingBytes must be 0 or a power of two <= 512");
  static_assert(std::is_nothrow_constructible_v<WaiterFor<P>, std::int64_t>,
                "the constructor relies on nothing throwing after the allocation");

 public:
  using value_type = T;
  using Waiter = WaiterFor<P>;

  static constexpr Primitive kPrimitive = P;
  static constexpr std::size_t kBuffers = Buffers;
  static constexpr std::size_t kBufferBytes = BufferBytes;
  static constexpr std::size_t kPaddingBytes = PaddingBytes;
  static constexpr std::size_t kSpinNs = SpinNs;
  static constexpr std::size_t kEventsPerBuffer = BufferBytes / sizeof(T) > 0
                                                      ? BufferBytes / sizeof(T)
                                                      : 1;

  using Layout = detail::ChannelLayout<T, Buffers, kEventsPerBuffer, PaddingBytes, Waiter>;

  BasicChannel() : BasicChannel(detail::CounterStart{0}) {}

  explicit BasicChannel(detail::CounterStart start) : block_(allocate()) {
    const std::int64_t spin_ns = spin_budget_ns(static_cast<std::int64_t>(SpinNs));
    // Relaxed: the threads that use the channel are started after construction, which orders it.
    ::new (block_ + Layout::kProducerShared) detail::ProducerShared();
    produced().head.store(start.value, std::memory_order_relaxed);
    ::new (block_ + Layout::kConsumerShared) detail::ConsumerShared();
    consumed().tail.store(start.value, std::memory_order_relaxed);
    ::new (block_ + Layout::kProducerCursor) detail::ProducerCursor<T>();
    producer().head = producer().tail_cache = start.value;
    ::new (block_ + Layout::kConsumerCursor) detail::ConsumerCursor<T>();
    consumer().tail = consumer().head_cache = start.value;
    ::new (block_ + Layout::kDataReady) Waiter(spin_ns);
    ::new (block_ + Layout::kSpaceReady) Waiter(spin_ns);
    for (std::size_t i = 0; i < Buffers; ++i) ::new (slot_at(i)) std::uint32_t(0);
    spin_ns_ = spin_ns;
  }

  ~BasicChannel() {
    space_ready().~Waiter();
    data_ready().~Waiter();
    ::operator delete (
        block_,
        std::align_val_t{Layout::kAlign});  // unsized: clang 14 has no sized delete by default
  }

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
    detail::ProducerCursor<T>& p = producer();
    assert(!p.closed && "push after close()");
    if (p.fill == 0) take_free_slot();
    construct(p.events + p.fill, std::forward<Args>(args)...);
    if (++p.fill == kEventsPerBuffer) publish();
  }

  // push, but returns false instead of blocking when every slot is in use.
  [[nodiscard]] bool try_push(const T& event) {
    detail::ProducerCursor<T>& p = producer();
    assert(!p.closed && "push after close()");
    if (p.fill == 0) {
      if (!slot_free()) return false;
      p.events = slot_events(p.slot);
    }
    construct(p.events + p.fill, event);
    if (++p.fill == kEventsPerBuffer) publish();
    return true;
  }

  // Appends n events at once, copied as bytes slot by slot (the fair peer of a ring's bulk
  // push); hands each slot over as it fills. Blocks while every slot is in use.
  void push(const T* events, std::size_t n) {
    detail::ProducerCursor<T>& p = producer();
    assert(!p.closed && "push after close()");
    while (n != 0) {
      if (p.fill == 0) take_free_slot();
      const std::size_t room = kEventsPerBuffer - p.fill;
      const std::size_t take = n < room ? n : room;
      std::memcpy(static_cast<void*>(p.events + p.fill), events, take * sizeof(T));
      p.fill += static_cast<std::uint32_t>(take);
      events += take;
      n -= take;
      if (p.fill == kEventsPerBuffer) publish();
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
    std::memcpy(static_cast<void*>(out), c.events + c.read, n * sizeof(T));
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
    const ReleaseOnExit release{this};
    std::forward<F>(f)(c.events + c.read, n);
    return n;
  }

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
  static constexpr std::uint32_t kSlots = static_cast<std::uint32_t>(Buffers);

  static constexpr std::uint32_t following(std::uint32_t index) noexcept {
    return index + 1 == kSlots ? 0 : index + 1;
  }

  struct ReleaseOnExit {
    BasicChannel* channel;
    ~ReleaseOnExit() { channel->release_slot(); }
  };

  static std::byte* allocate() {
    auto* block =
        static_cast<std::byte*>(::operator new (Layout::kBytes, std::align_val_t{Layout::kAlign}));
    // Fault every page in now so that no page fault lands inside a timed run.
    for (std::size_t at = 0; at < Layout::kBytes; at += detail::kPageBytes) {
      *static_cast<volatile std::byte*>(block + at) = std::byte{0};
    }
    return block;
  }

  template <class... Args>
  static void construct(T* at, Args&&... args) {
    if constexpr (std::is_constructible_v<T, Args...>) {
      ::new (static_cast<void*>(at)) T(std::forward<Args>(args)...);
    } else {
      ::new (static_cast<void*>(at)) T{std::forward<Args>(args)...};  // C++17 aggregates
    }
  }

  template <class R>
  R& region(std::size_t offset) const noexcept {
    return *std::launder(reinterpret_cast<R*>(block_ + offset));
  }
  detail::ProducerShared& produced() const noexcept {
    return region<detail::ProducerShared>(Layout::kProducerShared);
  }
  detail::ConsumerShared& consumed() const noexcept {
    return region<detail::ConsumerShared>(Layout::kConsumerShared);
  }
  detail::ProducerCursor<T>& producer() const noexcept {
    return region<detail::ProducerCursor<T>>(Layout::kProducerCursor);
  }
  detail::ConsumerCursor<T>& consumer() const noexcept {
    return region<detail::ConsumerCursor<T>>(Layout::kConsumerCursor);
  }
  Waiter& data_ready() const noexcept { return region<Waiter>(Layout::kDataReady); }
  Waiter& space_ready() const noexcept { return region<Waiter>(Layout::kSpaceReady); }

  std::byte* slot_at(std::size_t index) const noexcept {
    return block_ + Layout::kFirstSlot + index * Layout::kSlotStride;
  }
  std::uint32_t& slot_count(std::size_t index) const noexcept {
    return *std::launder(reinterpret_cast<std::uint32_t*>(slot_at(index)));
  }
  // Raw storage: the producer creates the events there; the consumer launders after acquiring.
  T* slot_events(std::size_t index) const noexcept {
    return reinterpret_cast<T*>(slot_at(index) + Layout::kSlotEvents);
  }

  // Producer: is slot `head` free? Re-reads tail only when the cached value says it is not.
  bool slot_free() noexcept {
    detail::ProducerCursor<T>& p = producer();
    if (p.head - p.tail_cache < kSlots) return true;
    p.tail_cache = consumed().tail.load(std::memory_order_acquire);
    return p.head - p.tail_cache < kSlots;
  }

  void take_free_slot() {
    detail::ProducerCursor<T>& p = producer();
    if (!slot_free()) {
      ++p.waits;
      space_ready().wait(
          [&] { return p.head - consumed().tail.load(std::memory_order_acquire) < kSlots; });
      p.tail_cache = consumed().tail.load(std::memory_order_acquire);
    }
    p.events = slot_events(p.slot);
  }

  // Producer: count first, then the release store of head that makes count and events visible.
  void publish() {
    detail::ProducerCursor<T>& p = producer();
    slot_count(p.slot) = p.fill;
    p.slot = following(p.slot);
    p.fill = 0;
    const std::uint32_t head = ++p.head;
    data_ready().publish([&] { produced().head.store(head, std::memory_order_release); });
  }

  bool holding_slot() const noexcept {
    const detail::ConsumerCursor<T>& c = consumer();
    return c.read != c.count;
  }

  // Consumer: is slot `tail` published? Re-reads head only when the cached value says it is not.
  bool slot_published() noexcept {
    detail::ConsumerCursor<T>& c = consumer();
    if (c.head_cache != c.tail) return true;
    c.head_cache = produced().head.load(std::memory_order_acquire);
    return c.head_cache != c.tail;
  }

  void enter_slot() noexcept {
    detail::ConsumerCursor<T>& c = consumer();
    c.count = slot_count(c.slot);
    c.read = 0;
    c.events = std::launder(slot_events(c.slot));
  }

  // Consumer: waits until a slot is published (true) or the stream ended or deadline passed.
  bool next_slot(detail::SteadyTime deadline) {
    detail::ConsumerCursor<T>& c = consumer();
    if (!slot_published()) {
      if (!produced().closed.load(std::memory_order_acquire)) {
        ++c.waits;
        const auto ready = [&] {
          return produced().closed.load(std::memory_order_acquire) ||
                 produced().head.load(std::memory_order_acquire) != c.tail;
        };
        if (deadline == detail::kForever) {
          data_ready().wait(ready);
        } else if (!data_ready().wait_until(ready, deadline)) {
          return false;
        }
      }
      // Either head moved or closed was seen; closed's acquire makes the final head visible.
      if (!slot_published()) return false;
    }
    enter_slot();
    return true;
  }

  void take(T& out) {
    detail::ConsumerCursor<T>& c = consumer();
    out = c.events[c.read];
    if (++c.read == c.count) release_slot();
  }

  // Consumer: the release store of tail orders every read of the slot before the producer reuses
  // it.
  void release_slot() {
    detail::ConsumerCursor<T>& c = consumer();
    c.read = 0;
    c.count = 0;
    c.slot = following(c.slot);
    const std::uint32_t tail = ++c.tail;
    space_ready().publish([&] { consumed().tail.store(tail, std::memory_order_release); });
  }

  std::byte* const block_;  // the one allocation; every region lives in it
  std::int64_t spin_ns_ = 0;
};

}  // namespace hspc
