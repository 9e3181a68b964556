// The peer queues as harness contenders (see runtime/bench/contender.hpp for the interface), each
// used the way its documentation recommends for one producer and one consumer. They all hold
// kPeerCapacity events (64 KiB of 8-byte events, the same memory as the channel's 4 x 16 KiB).
//
// Peers that end a stream by count, not by close(): the consumer stops after begin()'s count.
// Where a peer has no blocking call, a full or empty queue is retried with the CPU's spin hint and,
// after a while, sched_yield() (wait_until_true), as a careful user would write it; atomic_queue's
// own push()/pop() spin as the library does.
#pragma once

#include <atomic_queue/atomic_queue.h>
#include <readerwriterqueue/readerwriterqueue.h>
#include <tbb/concurrent_queue.h>

#include <algorithm>
#include <boost/lockfree/spsc_queue.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "bench/event.hpp"
#include "bench/worker.hpp"

namespace hspc_peers {

using hspc_bench::wait_until_true;
using Event8 = hspc_bench::Event<8>;

inline constexpr std::size_t kPeerCapacity = 8192;

// Counts the consumer's events down to the end of the stream. The count is written by the consumer
// on every event, so it sits on its own 128-byte block (the adjacent-line prefetcher pairs 64-byte
// lines): the derived class's queue pointer, read by both threads, starts after it. Without this
// the adapter itself would add false sharing to every peer.
class alignas(128) CountedEnd {
 public:
  static constexpr bool kEndsByCount = true;  // a capped sample could not end it early
  void begin(std::uint64_t events) noexcept { remaining_ = events; }
  void flush() noexcept {}
  void close() noexcept {}

 protected:
  std::uint64_t remaining_ = 0;  // consumer-owned after begin()
};

// boost::lockfree::spsc_queue in bulk: the producer batches kBatch events privately and hands them
// over with push(ptr, n); the consumer takes up to kBatch with pop(ptr, n). The fair comparison for
// a channel that also hands over whole buffers.
class BoostSpscBulk : public CountedEnd {
 public:
  using Event = Event8;
  static constexpr bool kBulk = true;
  static constexpr std::size_t kCapacityBytes = kPeerCapacity * sizeof(Event);
  static constexpr std::size_t kBatch = 512;

  void push(const Event& ev) {
    batch_->events[batch_->fill++] = ev;
    if (batch_->fill == kBatch) flush();
  }
  void flush() {
    const Event* next = batch_->events;
    std::size_t left = batch_->fill;
    wait_until_true([&] {
      const std::size_t pushed = q_->push(next, left);
      next += pushed;
      left -= pushed;
      return left == 0;
    });
    batch_->fill = 0;
  }
  void close() { flush(); }

  template <class F>
  std::size_t consume(F&& f) {
    if (remaining_ == 0) return 0;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, remaining_));
    std::size_t n = 0;
    wait_until_true([&] { return (n = q_->pop(out_->events, want)) != 0; });
    remaining_ -= n;
    f(static_cast<const Event*>(out_->events), n);
    return n;
  }
  bool pop(Event& ev) {
    if (remaining_ == 0) return false;
    wait_until_true([&] { return q_->pop(ev); });
    --remaining_;
    return true;
  }

 private:
  // Each side's batch on its own lines, away from the other side's (no false sharing).
  struct alignas(128) Batch {
    Event events[kBatch];
    std::size_t fill = 0;
  };
  using Queue = boost::lockfree::spsc_queue<Event, boost::lockfree::capacity<kPeerCapacity>>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>();
  std::unique_ptr<Batch> batch_ = std::make_unique<Batch>();
  std::unique_ptr<Batch> out_ = std::make_unique<Batch>();
};

// boost::lockfree::spsc_queue one event at a time: push(t) / pop(t).
class BoostSpscSingle : public CountedEnd {
 public:
  using Event = Event8;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = kPeerCapacity * sizeof(Event);

  void push(const Event& ev) {
    wait_until_true([&] { return q_->push(ev); });
  }
  bool pop(Event& ev) {
    if (remaining_ == 0) return false;
    wait_until_true([&] { return q_->pop(ev); });
    --remaining_;
    return true;
  }

 private:
  using Queue = boost::lockfree::spsc_queue<Event, boost::lockfree::capacity<kPeerCapacity>>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>();
};

// moodycamel::ReaderWriterQueue, pre-sized so try_enqueue never allocates.
class MoodycamelRwq : public CountedEnd {
 public:
  using Event = Event8;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = kPeerCapacity * sizeof(Event);

  void push(const Event& ev) {
    wait_until_true([&] { return q_->try_enqueue(ev); });
  }
  bool pop(Event& ev) {
    if (remaining_ == 0) return false;
    wait_until_true([&] { return q_->try_dequeue(ev); });
    --remaining_;
    return true;
  }

 private:
  using Queue = moodycamel::ReaderWriterQueue<Event>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>(kPeerCapacity);
};

// moodycamel::BlockingReaderWriterQueue: the consumer blocks in wait_dequeue (a semaphore after
// the library's own spinning); the producer retries try_enqueue when full.
class MoodycamelBlockingRwq : public CountedEnd {
 public:
  using Event = Event8;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = kPeerCapacity * sizeof(Event);

  void push(const Event& ev) {
    wait_until_true([&] { return q_->try_enqueue(ev); });
  }
  bool pop(Event& ev) {
    if (remaining_ == 0) return false;
    q_->wait_dequeue(ev);
    --remaining_;
    return true;
  }

 private:
  using Queue = moodycamel::BlockingReaderWriterQueue<Event>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>(kPeerCapacity);
};

// atomic_queue's SPSC mode (AtomicQueue2: any T, per-slot state), busy-waiting push()/pop().
class AtomicQueueSpsc : public CountedEnd {
 public:
  using Event = Event8;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = kPeerCapacity * sizeof(Event);

  void push(const Event& ev) { q_->push(ev); }
  bool pop(Event& ev) {
    if (remaining_ == 0) return false;
    ev = q_->pop();
    --remaining_;
    return true;
  }

 private:
  //                                               MINIMIZE_CONTENTION, MAXIMIZE_THROUGHPUT,
  //                                               TOTAL_ORDER, SPSC
  using Queue = atomic_queue::AtomicQueue2<Event, kPeerCapacity, true, true, false, true>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>();
};

// tbb::concurrent_bounded_queue (MPMC): push and pop block.
class TbbBoundedQueue : public CountedEnd {
 public:
  using Event = Event8;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = kPeerCapacity * sizeof(Event);

  TbbBoundedQueue() { q_->set_capacity(static_cast<std::ptrdiff_t>(kPeerCapacity)); }
  void push(const Event& ev) { q_->push(ev); }
  bool pop(Event& ev) {
    if (remaining_ == 0) return false;
    q_->pop(ev);
    --remaining_;
    return true;
  }

 private:
  std::unique_ptr<tbb::concurrent_bounded_queue<Event>> q_ =
      std::make_unique<tbb::concurrent_bounded_queue<Event>>();
};

}  // namespace hspc_peers
