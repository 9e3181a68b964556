#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "hspc/channel_layout.hpp"
#include "hspc/wait.hpp"

namespace hspc {

namespace detail {

// Where the hand-off counters start (0 normally). Tests start them just below 2^32 so that a short
// run crosses the wrap-around.
struct CounterStart {
  std::uint32_t value;
};

constexpr std::size_t kPageBytes = 4096;  // the smallest page size: touching more is harmless

// Copies a run of n events (push(ptr, n), pop(ptr, n)) with the C library's memcpy, whose
// routine suits this CPU (chosen as the program loads). The byte count passes through an empty
// asm so that the compiler sees no bound on it: given one (pop(out, 256) inlined with its
// constant), GCC expands the copy in place as `rep movsq`, which cost runs of 256 8-byte events
// 10-20% of their speed on a Zen 4 host.
template <class T>
void copy_run(T* to, const T* from, std::size_t n) noexcept {
  std::size_t bytes = n * sizeof(T);
  __asm__("" : "+r"(bytes));
  std::memcpy(static_cast<void*>(to), from, bytes);
}

// SlotRing: a BasicChannel's one heap block and its per-buffer hand-off (BasicChannel documents
// the contract and the layout). It owns the Buffers slots, the shared counters, the cursors and
// the two waiters, and holds the producer's and the consumer's steps that take, hand over and
// release whole slots; BasicChannel builds the per-event calls on them. MaxLatencyNs != 0 puts
// the latency bound's clock (LatencyTimer) in the producer's cursor and starts it with each slot.
// The code-shape variants: PrefetchBytes of each slot prefetched as it is taken (for writing by
// the producer, for reading by the consumer), and HugePages (the block on transparent huge pages
// when it is at least kHugePageBytes).
template <class T, class Waiter, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t MaxLatencyNs = 0, std::size_t PrefetchBytes = 0,
          bool HugePages = false>
class SlotRing {
  static_assert(std::is_nothrow_constructible_v<Waiter, std::int64_t>,
                "the constructor relies on nothing throwing after the allocation");

 public:
  static constexpr std::size_t kEventsPerBuffer = BufferBytes / sizeof(T) > 0
                                                      ? BufferBytes / sizeof(T)
                                                      : 1;

  using Layout = ChannelLayout<T, Buffers, kEventsPerBuffer, PaddingBytes, Waiter, MaxLatencyNs>;
  using Producer = typename Layout::Producer;
  // Whether the block goes on huge pages: asked for, and large enough to fill one.
  static constexpr bool kHuge = HugePages && Layout::kBytes >= kHugePageBytes;
  static constexpr std::size_t kBlockAlign = kHuge ? kHugePageBytes : Layout::kAlign;
  static constexpr std::size_t kBlockBytes =
      kHuge ? (Layout::kBytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes
            : Layout::kBytes;
  static constexpr std::size_t kSlotPrefetch =
      PrefetchBytes < kEventsPerBuffer * sizeof(T) ? PrefetchBytes : kEventsPerBuffer * sizeof(T);

  SlotRing(CounterStart start, std::int64_t spin_ns) : block_(allocate()) {
    // Relaxed: the threads that use the channel are started after construction, which orders it.
    ::new (block_ + Layout::kProducerShared) detail::ProducerShared();
    produced().head.store(start.value, std::memory_order_relaxed);
    ::new (block_ + Layout::kConsumerShared) detail::ConsumerShared();
    consumed().tail.store(start.value, std::memory_order_relaxed);
    ::new (block_ + Layout::kProducerCursor) Producer();
    producer().head = producer().tail_cache = start.value;
    ::new (block_ + Layout::kConsumerCursor) detail::ConsumerCursor<T>();
    consumer().tail = consumer().head_cache = start.value;
    ::new (block_ + Layout::kDataReady) Waiter(spin_ns);
    ::new (block_ + Layout::kSpaceReady) Waiter(spin_ns);
    for (std::size_t i = 0; i < Buffers; ++i) ::new (slot_at(i)) std::uint32_t(0);
    spin_ns_ = spin_ns;
  }

  ~SlotRing() {
    space_ready().~Waiter();
    data_ready().~Waiter();
    ::operator delete (block_,
                       std::align_val_t{kBlockAlign});  // unsized: clang 14 has no sized delete
  }

  SlotRing(const SlotRing&) = delete;
  SlotRing& operator=(const SlotRing&) = delete;

  // Any thread: a slot is published and not yet released. Tail is read first: it never passes
  // head, so the answer may be stale but never claims a slot that was not published.
  bool pending() const noexcept {
    const std::uint32_t tail = consumed().tail.load(std::memory_order_acquire);
    return produced().head.load(std::memory_order_acquire) != tail;
  }
  // Any thread: closed, and every published slot released (closed first: see done()).
  bool ended() const noexcept {
    return produced().closed.load(std::memory_order_acquire) && !pending();
  }
  // Once ended, with neither side in a call and the caller ordered after both: a new stream that
  // goes on from the counters (BasicConsumerPool reuses a finished producer's channel).
  void reopen() noexcept {
    producer().closed = false;
    produced().closed.store(false, std::memory_order_relaxed);
  }

 protected:
  static constexpr std::uint32_t kSlots = static_cast<std::uint32_t>(Buffers);

  static constexpr std::uint32_t following(std::uint32_t index) noexcept {
    return index + 1 == kSlots ? 0 : index + 1;
  }

  // An event made in place: T(args...), or T{args...} for C++17's aggregates.
  template <class... Args>
  static void construct(T* at, Args&&... args) {
    if constexpr (std::is_constructible_v<T, Args...>) {
      ::new (static_cast<void*>(at)) T(std::forward<Args>(args)...);
    } else {
      ::new (static_cast<void*>(at)) T{std::forward<Args>(args)...};
    }
  }

  static std::byte* allocate() {
    auto* block =
        static_cast<std::byte*>(::operator new (kBlockBytes, std::align_val_t{kBlockAlign}));
    // Advice only: a kernel without transparent huge pages refuses it, and small pages stay.
    if constexpr (kHuge) (void)::madvise(block, kBlockBytes, MADV_HUGEPAGE);
    // Fault every page in now so that no page fault lands inside a timed run.
    for (std::size_t at = 0; at < kBlockBytes; at += detail::kPageBytes) {
      *static_cast<volatile std::byte*>(block + at) = std::byte{0};
    }
    return block;
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
  Producer& producer() const noexcept { return region<Producer>(Layout::kProducerCursor); }
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
    Producer& p = producer();
    if (p.head - p.tail_cache < kSlots) return true;
    p.tail_cache = consumed().tail.load(std::memory_order_acquire);
    return p.head - p.tail_cache < kSlots;
  }

  void take_free_slot() {
    Producer& p = producer();
    if (!slot_free()) {
      ++p.waits;
      space_ready().wait(
          [&] { return p.head - consumed().tail.load(std::memory_order_acquire) < kSlots; });
      p.tail_cache = consumed().tail.load(std::memory_order_acquire);
      if constexpr (MaxLatencyNs != 0) p.restart();  // the wait is no event's age, nor the rate
    }
    p.events = slot_events(p.slot);
    if constexpr (kSlotPrefetch != 0) prefetch<1>(p.events);
    if constexpr (MaxLatencyNs != 0) p.start();  // a bound's clock starts with each slot
  }

  // The slot's first kSlotPrefetch bytes, a line at a time: the misses overlap instead of
  // arriving one by one as the loop reaches them. Write = 1 asks for the lines to own.
  template <int Write>
  static void prefetch(const T* events) noexcept {
    const auto* bytes = reinterpret_cast<const char*>(events);
    for (std::size_t at = 0; at < kSlotPrefetch; at += kCacheLineBytes) {
      __builtin_prefetch(bytes + at, Write, 3);
    }
  }

  // Producer: count first, then the release store of head that makes count and events visible.
  void publish() {
    Producer& p = producer();
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
    if constexpr (kSlotPrefetch != 0) prefetch<0>(c.events);
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

  void take(T& out) {
    detail::ConsumerCursor<T>& c = consumer();
    out = c.events[c.read];
    if (++c.read == c.count) release_slot();
  }

  // Releases the slot being read however the reading ends (a consume whose f throws included).
  struct ReleaseOnExit {
    SlotRing* ring;
    ~ReleaseOnExit() { ring->release_slot(); }
  };

  std::byte* const block_;  // the one allocation; every region lives in it
  std::int64_t spin_ns_ = 0;
};

}  // namespace detail

}  // namespace hspc
