// The peer queues as harness contenders (see contender.hpp for the interface), each used the way
// its documentation recommends for one producer and one consumer, for any event type E and a
// capacity of Capacity events (hspc-gen bench gives them the tuned channel's memory).
//
// A peer whose headers the host lacks is left out: HSPC_PEER_<NAME> is 1 where it is available
// (TBB also needs its library: the build defines HSPC_HAVE_TBB when it links it).
//
// Peers that end a stream by count, not by close(): the consumer stops after begin()'s count.
// Where a peer has no blocking call, a full or empty queue is retried with the CPU's spin hint and,
// after a while, sched_yield() (wait_until_true), as a careful user would write it; atomic_queue's
// own push()/pop() spin as the library does.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "harness/worker.hpp"

#if __has_include(<boost/lockfree/spsc_queue.hpp>)
#include <boost/lockfree/spsc_queue.hpp>
#define HSPC_PEER_BOOST 1
#else
#define HSPC_PEER_BOOST 0
#endif
#if __has_include(<readerwriterqueue/readerwriterqueue.h>)
#include <readerwriterqueue/readerwriterqueue.h>
#define HSPC_PEER_RWQ 1
#else
#define HSPC_PEER_RWQ 0
#endif
#if __has_include(<concurrentqueue/concurrentqueue.h>)
#include <concurrentqueue/concurrentqueue.h>
#define HSPC_PEER_CQ 1
#else
#define HSPC_PEER_CQ 0
#endif
#if __has_include(<atomic_queue/atomic_queue.h>)
#include <atomic_queue/atomic_queue.h>
#define HSPC_PEER_ATOMIC_QUEUE 1
#else
#define HSPC_PEER_ATOMIC_QUEUE 0
#endif
#if defined(HSPC_HAVE_TBB) && __has_include(<tbb/concurrent_queue.h>)
#include <tbb/concurrent_queue.h>
#define HSPC_PEER_TBB 1
#else
#define HSPC_PEER_TBB 0
#endif

namespace hspc_peers {

using hspc_harness::wait_until_true;

// Each side's private batch of a bulk peer, on its own lines, away from the other side's; zeroed,
// so pre-faulted before the clock starts.
template <class E, std::size_t N>
struct alignas(128) Batch {
  E events[N]{};
};

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
  // One event by `take()` (a try-pop, retried until it succeeds); false once all have come.
  template <class Take>
  bool pop_counted(Take take) {
    if (remaining_ == 0) return false;
    wait_until_true(take);
    --remaining_;
    return true;
  }

  std::uint64_t remaining_ = 0;  // consumer-owned after begin()
};

// A bulk peer: the producer batches kBatch events privately and hands them over in one call; the
// consumer takes up to kBatch in one call. Queue supplies put(ptr, n) -> how many it took (all or
// some) and take(ptr, most) -> how many it gave (0: empty).
template <class E, std::size_t Capacity, class Queue>
class BatchedPeer : public CountedEnd {
 public:
  using Event = E;
  static constexpr bool kBulk = true;
  static constexpr std::size_t kCapacityBytes = Capacity * sizeof(Event);
  static constexpr std::size_t kBatch =
      std::max<std::size_t>(1, std::min<std::size_t>(512, Capacity / 2));

  BatchedPeer() = default;
  BatchedPeer(const BatchedPeer&) = delete;  // own_ holds a reference to this very object
  BatchedPeer& operator=(const BatchedPeer&) = delete;

  // The producer's side for one sample (hspc_harness::producer_of): the batch's cursor is its
  // own, on the producer's stack, as the harness's RunsOf keeps it (which says why).
  class Producer {
   public:
    explicit Producer(BatchedPeer& q) noexcept : q_(q), run_(q.batch_->events), next_(run_) {}
    void push(const Event& ev) {
      *next_++ = ev;
      if (next_ == run_ + kBatch) flush();
    }
    void flush() {
      q_.put_all(run_, static_cast<std::size_t>(next_ - run_));
      next_ = run_;
    }
    void close() { flush(); }

   private:
    BatchedPeer& q_;
    Event* run_;
    Event* next_;
  };

  void push(const Event& ev) { own_.push(ev); }
  void flush() { own_.flush(); }
  void close() { own_.close(); }

  template <class F>
  std::size_t consume(F&& f) {
    if (remaining_ == 0) return 0;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, remaining_));
    std::size_t n = 0;
    wait_until_true([&] { return (n = q_.take(out_->events, want)) != 0; });
    remaining_ -= n;
    f(static_cast<const Event*>(out_->events), n);
    return n;
  }
  bool pop(Event& ev) {
    return pop_counted([&] { return q_.take(&ev, 1) == 1; });
  }

 private:
  // Hands over n events, as the queue takes them (all at once, or some at a time while full).
  void put_all(const Event* next, std::size_t left) {
    wait_until_true([&] {
      const std::size_t put = q_.put(next, left);
      next += put;
      left -= put;
      return left == 0;
    });
  }

  Queue q_;
  std::unique_ptr<Batch<E, kBatch>> batch_ = std::make_unique<Batch<E, kBatch>>();
  std::unique_ptr<Batch<E, kBatch>> out_ = std::make_unique<Batch<E, kBatch>>();
  alignas(128) Producer own_{*this};  // push, flush, close on the peer itself: its own lines
};

// boost::lockfree::spsc_queue in bulk: push(ptr, n) / pop(ptr, n). The fair comparison for a
// channel that also hands over whole buffers.
#if HSPC_PEER_BOOST
template <class E, std::size_t Capacity>
class BoostBulkQueue {
 public:
  std::size_t put(const E* events, std::size_t n) { return q_->push(events, n); }
  std::size_t take(E* out, std::size_t most) { return q_->pop(out, most); }

 private:
  using Queue = boost::lockfree::spsc_queue<E, boost::lockfree::capacity<Capacity>>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>();
};

template <class E, std::size_t Capacity>
using BoostSpscBulk = BatchedPeer<E, Capacity, BoostBulkQueue<E, Capacity>>;

// boost::lockfree::spsc_queue one event at a time: push(t) / pop(t).
template <class E, std::size_t Capacity>
class BoostSpscSingle : public CountedEnd {
 public:
  using Event = E;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = Capacity * sizeof(Event);

  void push(const Event& ev) {
    wait_until_true([&] { return q_->push(ev); });
  }
  bool pop(Event& ev) {
    return pop_counted([&] { return q_->pop(ev); });
  }

 private:
  using Queue = boost::lockfree::spsc_queue<Event, boost::lockfree::capacity<Capacity>>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>();
};
#endif

#if HSPC_PEER_RWQ
// moodycamel::ReaderWriterQueue, pre-sized so try_enqueue never allocates.
template <class E, std::size_t Capacity>
class MoodycamelRwq : public CountedEnd {
 public:
  using Event = E;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = Capacity * sizeof(Event);

  void push(const Event& ev) {
    wait_until_true([&] { return q_->try_enqueue(ev); });
  }
  bool pop(Event& ev) {
    return pop_counted([&] { return q_->try_dequeue(ev); });
  }

 private:
  using Queue = moodycamel::ReaderWriterQueue<Event>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>(Capacity);
};

// moodycamel::BlockingReaderWriterQueue: the consumer blocks in wait_dequeue (a semaphore after
// the library's own spinning); the producer retries try_enqueue when full.
template <class E, std::size_t Capacity>
class MoodycamelBlockingRwq : public CountedEnd {
 public:
  using Event = E;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = Capacity * sizeof(Event);

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
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>(Capacity);
};
#endif

#if HSPC_PEER_CQ
// GCC 12 sees a "region of size 0" in the library's explicit-producer path inlined here (a false
// positive of -Wstringop-overflow on its block index); the library itself is fine.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
// moodycamel::ConcurrentQueue (MPMC) in bulk with a producer and a consumer token, the fast path
// its documentation recommends: the producer batches privately and hands over with
// try_enqueue_bulk (retried while the queue is full, so it never grows past its capacity), the
// consumer takes up to a batch with try_dequeue_bulk.
template <class E, std::size_t Capacity>
class CqBulkQueue {
 public:
  std::size_t put(const E* events, std::size_t n) {
    return q_->try_enqueue_bulk(*producer_, events, n) ? n : 0;
  }
  std::size_t take(E* out, std::size_t most) { return q_->try_dequeue_bulk(*consumer_, out, most); }

 private:
  using Queue = moodycamel::ConcurrentQueue<E>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>(Capacity);
  std::unique_ptr<moodycamel::ProducerToken> producer_ =
      std::make_unique<moodycamel::ProducerToken>(*q_);
  std::unique_ptr<moodycamel::ConsumerToken> consumer_ =
      std::make_unique<moodycamel::ConsumerToken>(*q_);
};

template <class E, std::size_t Capacity>
using MoodycamelCqBulk = BatchedPeer<E, Capacity, CqBulkQueue<E, Capacity>>;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

#if HSPC_PEER_ATOMIC_QUEUE
// atomic_queue's SPSC mode (AtomicQueue2: any T, per-slot state), busy-waiting push()/pop().
template <class E, std::size_t Capacity>
class AtomicQueueSpsc : public CountedEnd {
 public:
  using Event = E;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = Capacity * sizeof(Event);

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
  using Queue = atomic_queue::AtomicQueue2<Event, Capacity, true, true, false, true>;
  std::unique_ptr<Queue> q_ = std::make_unique<Queue>();
};
#endif

#if HSPC_PEER_TBB
// tbb::concurrent_bounded_queue (MPMC): push and pop block.
template <class E, std::size_t Capacity>
class TbbBoundedQueue : public CountedEnd {
 public:
  using Event = E;
  static constexpr bool kBulk = false;
  static constexpr std::size_t kCapacityBytes = Capacity * sizeof(Event);

  TbbBoundedQueue() { q_->set_capacity(static_cast<std::ptrdiff_t>(Capacity)); }
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
#endif

}  // namespace hspc_peers
