// The whole-buffer transfer line of hspc-gen bench: the same events through a ring of whole
// buffers with nothing but a spinning hand-off, no wait primitive, no close check per event. It
// is the best a buffer-handing channel can do across these cores with this memory: a channel
// at this line loses nothing to its synchronization.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "harness/worker.hpp"

namespace hspc_harness {

template <class E, std::size_t Buffers, std::size_t BufferBytes>
class WholeBuffers {
 public:
  using Event = E;
  static constexpr bool kBulk = true;
  static constexpr std::size_t kPerBuffer = std::max<std::size_t>(1, BufferBytes / sizeof(E));
  static constexpr std::size_t kCapacityBytes = Buffers * kPerBuffer * sizeof(E);

  void begin(std::uint64_t /*events*/) noexcept {}  // ends by close()

  // The producer's loop at its tightest: a store and a compare per event.
  void push(const Event& ev) {
    if (next_ == end_) open_buffer();
    *next_++ = ev;
    if (next_ == end_) publish();
  }
  void flush() {
    if (next_ != begin_) publish();
  }
  void close() {
    flush();
    closed_.store(true, std::memory_order_release);
  }

  template <class F>
  std::size_t consume(F&& f) {
    if (!next()) return 0;
    const Slot& slot = slots_[read_ % Buffers];
    const std::size_t n = slot.count - cursor_;
    f(static_cast<const Event*>(slot.events + cursor_), n);
    release();
    return n;
  }
  bool pop(Event& ev) {
    if (cursor_ == 0 && !next()) return false;
    const Slot& slot = slots_[read_ % Buffers];
    ev = slot.events[cursor_];
    if (++cursor_ == slot.count) release();
    return true;
  }

 private:
  struct alignas(128) Slot {
    Event events[kPerBuffer];
    std::size_t count;
  };

  void open_buffer() {
    wait_until_true([this] { return head_ - released_.load(std::memory_order_acquire) < Buffers; });
    begin_ = next_ = slots_[head_ % Buffers].events;
    end_ = begin_ + kPerBuffer;
  }
  void publish() {
    slots_[head_ % Buffers].count = static_cast<std::size_t>(next_ - begin_);
    begin_ = next_ = end_ = nullptr;  // the next push opens the next buffer
    published_.store(++head_, std::memory_order_release);
  }
  // Waits for a published buffer; false once closed and every buffer taken.
  bool next() {
    bool end = false;
    wait_until_true([&] {
      if (published_.load(std::memory_order_acquire) != read_) return true;
      if (!closed_.load(std::memory_order_acquire)) return false;
      end = published_.load(std::memory_order_acquire) == read_;  // close() follows its publish
      return true;
    });
    return !end;
  }
  void release() {
    cursor_ = 0;
    released_.store(++read_, std::memory_order_release);
  }

  std::unique_ptr<Slot[]> slots_ = std::make_unique<Slot[]>(Buffers);  // zeroed: pre-faulted
  alignas(128) Event* next_ = nullptr;  // the producer's: where the next event goes
  Event* end_ = nullptr;
  Event* begin_ = nullptr;
  std::uint64_t head_ = 0;  // buffers published
  alignas(128) std::atomic<std::uint64_t> published_{0};
  std::atomic<bool> closed_{false};
  alignas(128) std::atomic<std::uint64_t> released_{0};
  alignas(128) std::uint64_t read_ = 0;  // the consumer's: buffers taken
  std::size_t cursor_ = 0;
};

}  // namespace hspc_harness
