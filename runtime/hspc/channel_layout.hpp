#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hspc/latency_timer.hpp"
#include "hspc/limits.hpp"

namespace hspc {

// Where a BasicChannel's regions lie in its one heap block (see the layout note in channel.hpp),
// and the shared state and private cursors those regions hold.

namespace detail {

constexpr std::size_t align_up(std::size_t n, std::size_t align) noexcept {
  return (n + align - 1) / align * align;
}
constexpr std::size_t larger(std::size_t a, std::size_t b) noexcept { return a < b ? b : a; }
constexpr bool is_power_of_two(std::size_t n) noexcept { return n != 0 && (n & (n - 1)) == 0; }

// Where the next region starts after one ending at `end`: a gap of padding bytes, then the
// region's alignment (at least min(padding, kCacheLineBytes) so padded regions start on a line of
// their own).
constexpr std::size_t place_after(std::size_t end, std::size_t align,
                                  std::size_t padding) noexcept {
  const std::size_t line_align = padding < kCacheLineBytes ? padding : kCacheLineBytes;
  return align_up(end + padding, larger(align, larger(line_align, 1)));
}

struct ProducerShared {
  std::atomic<std::uint32_t> head{0};  // slots published so far
  std::atomic<bool> closed{false};     // set after the last publication
};

struct ConsumerShared {
  std::atomic<std::uint32_t> tail{0};  // slots released so far
};

// MaxLatencyNs != 0: the latency bound's clock rides along (an empty base otherwise, so the layout
// without a bound is exactly the unbounded one).
template <class T, std::size_t MaxLatencyNs = 0>
struct ProducerCursor : LatencyTimer<MaxLatencyNs> {
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
          class Waiter, std::size_t MaxLatencyNs = 0>
struct ChannelLayout {
  using Producer = ProducerCursor<T, MaxLatencyNs>;
  static constexpr std::size_t kSlotAlign = larger(alignof(T), alignof(std::uint32_t));
  static constexpr std::size_t kSlotEvents = align_up(sizeof(std::uint32_t), alignof(T));
  static constexpr std::size_t kSlotBytes = kSlotEvents + EventsPerBuffer * sizeof(T);

  static constexpr std::size_t kProducerShared =
      place_after(0, alignof(ProducerShared), PaddingBytes);
  static constexpr std::size_t kConsumerShared =
      place_after(kProducerShared + sizeof(ProducerShared), alignof(ConsumerShared), PaddingBytes);
  static constexpr std::size_t kProducerCursor =
      place_after(kConsumerShared + sizeof(ConsumerShared), alignof(Producer), PaddingBytes);
  static constexpr std::size_t kConsumerCursor =
      place_after(kProducerCursor + sizeof(Producer), alignof(ConsumerCursor<T>), PaddingBytes);
  static constexpr std::size_t kDataReady =
      place_after(kConsumerCursor + sizeof(ConsumerCursor<T>), alignof(Waiter), PaddingBytes);
  static constexpr std::size_t kSpaceReady =
      place_after(kDataReady + sizeof(Waiter), alignof(Waiter), PaddingBytes);
  static constexpr std::size_t kFirstSlot =
      place_after(kSpaceReady + sizeof(Waiter), kSlotAlign, PaddingBytes);
  static constexpr std::size_t kSlotStride = place_after(kSlotBytes, kSlotAlign, PaddingBytes);

  // kCacheLineBytes: the block starts on a line of its own, whatever T's alignment.
  static constexpr std::size_t kAlign =
      larger(larger(alignof(T), alignof(Waiter)), kCacheLineBytes);
  static constexpr std::size_t kBytes =
      align_up(kFirstSlot + (Buffers - 1) * kSlotStride + kSlotBytes + PaddingBytes, kAlign);
};

}  // namespace detail

}  // namespace hspc
