#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "hspc/affinity.hpp"
#include "hspc/channel.hpp"
#include "hspc/pool_control.hpp"
#include "hspc/pool_crew.hpp"
#include "hspc/pool_deal.hpp"
#include "hspc/pool_parking.hpp"
#include "hspc/pool_roster.hpp"

namespace hspc {

// BasicConsumerPool: N producer threads, each writing tuned channels of its own, drained by a pool
// of consumer threads that calls handler(event) for every event; a controller grows and shrinks
// the pool at run time from what it measures (PoolController says how).
//
// A consumer claims a lane (one channel of a producer's: a CAS), takes what is published there
// (one turn: at most Buffers runs) and releases it; the claim's acquire and the release's store
// pass the channel's consumer cursor on, so a lane has one consumer at a time. Ordered (the
// default), a producer has one lane. Unordered, it has one per consumer the pool may run (max)
// and deals whole buffers over them round robin, as BasicFanOut does (PoolDeal), so that every
// consumer can take one of its buffers at once. Idle consumers park on the tuned primitive
// (ParkingLot); a producer wakes one per buffer hand-off, only if one is parked, and so does a
// consumer leaving a lane with work in it (as Go's last spinner does), so no published buffer
// waits for its producer's next hand-off (promela/pool.pml, promela/pool_unordered.pml).
//
// Preconditions
// - T is trivially copyable; 1 <= min_consumers <= max_consumers (after 0 becomes the usable
//   CPUs) <= 64 (else the constructor throws std::invalid_argument).
// - One thread per producer calls its push, emplace, try_push, flush and close; nothing is pushed
//   after close(), and a producer is not used once its close() has returned (add_producer may
//   hand its place to another). At most kMaxProducers producers alive at once; one whose close()
//   returned and whose events were all handled no longer counts. At the limit add_producer waits
//   for a closed one's events to be handled, and throws std::length_error if none has closed.
// - add_producer() is not called once wait() has been called; wait() from one thread.
// - Before destruction every producer thread has left its last call.
//
// Guarantees
// - Every event pushed before its producer's close() is handled exactly once by wait()'s return
//   (unless the handler threw, below). Ordered: one producer's events in push order, never two
//   of them at once. Unordered: no order at all, within a producer or across; each buffer's
//   events in push order by one consumer, and a producer's buffers by up to max at once.
// - wait() returns once every producer (those added included) has closed and every event was
//   handled; then the consumers and the controller have stopped. A producer that never closes:
//   wait() never returns.
// - A handler that throws: the first exception is kept and no call of the handler begins after
//   that (calls under way in other consumers finish); the pool goes on draining, dropping events,
//   so no producer blocks for ever; wait() rethrows that exception once, after the pool stops.
// - The destructor without wait(): stops the consumers after their current turn and the
//   controller, without waiting for producers to close; events not yet handled are dropped.
// - handler(place, event) (PlaceHandler): place is the pushing producer's Producer::place().
//   Ordered, a place's calls are sequenced, each one's effects visible to the next (a claim
//   acquires the last turn's release) and to whoever saw its finished(), which comes before
//   add_producer() reuses the place: per-producer state needs no lock.
// - consumers() is the number of consumer threads running at the moment of the call, and
//   peak_consumers() the most at once so far; adjustments() counts the controller's moves. The
//   count stays in [min, max] and, while it grows, below the lanes of producers not yet finished:
//   ordered, the producers (more cannot help); unordered, max per producer, so max bounds it.
// - Per event: a producer does what its channel does (no pool state); a consumer calls the
//   handler through std::function. The rest is per buffer: a fence and a load at each hand-off
//   (a clock reading when its lane had no buffer waiting), a CAS, a store and a fence per turn,
//   and a fetch_or, a fence and a look over the lanes per park. Unordered adds the next lane's
//   turn per hand-off, and costs max channels' memory per producer and max lanes per look.
// - add_producer() reuses the first place (lanes, channels, producer) that no longer counts, so
//   producers that come and go cost no memory past the most alive or draining at once.
// - Latency bound (MaxLatencyNs != 0): kept by each producer as BasicFanOut keeps it (its channel
//   has none of its own), so a due buffer is a hand-off the pool sees.
//
// Layout: each producer's lanes are one allocation, their parts on separate lines (pool_deal.hpp);
// consumers' counters (pool_crew.hpp) and the parked word (pool_parking.hpp) on lines of their own.
template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs = 5000, std::size_t MaxLatencyNs = 0,
          std::size_t PrefetchBytes = 0, bool HugePages = false>
class BasicConsumerPool {
  using Deal = detail::PoolDeal<T, P, Buffers, BufferBytes, PaddingBytes, SpinNs, MaxLatencyNs,
                                PrefetchBytes, HugePages>;
  using Lane = typename Deal::Lane;
  using Roster = detail::PoolRoster<Deal>;

 public:
  using Channel = typename Deal::Channel;
  using Producer = typename Deal::Producer;
  using value_type = T;
  using Handler = std::function<void(const T&)>;
  using PlaceHandler = std::function<void(std::size_t, const T&)>;  // (its producer's place, event)

  static constexpr std::size_t kEventsPerBuffer = Channel::kEventsPerBuffer;
  static constexpr std::size_t kMaxLatencyNs = MaxLatencyNs;
  static constexpr std::size_t kMaxProducers = Roster::kMaxDeals;  // alive at once
  static constexpr std::size_t kMaxConsumers = detail::kMaxPoolConsumers;

  BasicConsumerPool(std::size_t producers, Handler handler, PoolOptions options = PoolOptions{})
      : BasicConsumerPool(producers, std::move(handler), nullptr, options) {}
  BasicConsumerPool(std::size_t producers, PlaceHandler handler, PoolOptions options = {})
      : BasicConsumerPool(producers, nullptr, std::move(handler), options) {}

  ~BasicConsumerPool() { stop(); }

  BasicConsumerPool(const BasicConsumerPool&) = delete;
  BasicConsumerPool& operator=(const BasicConsumerPool&) = delete;

  // Producer i (i < producers()): one thread's push, emplace, try_push, flush and close.
  Producer& producer(std::size_t i) {
    if (i >= producers()) throw std::out_of_range("BasicConsumerPool: no such producer");
    return roster_.deal(i)->producer;
  }

  // A producer that joins now: a finished one's place reused, or a new one that consumers see
  // from their next look.
  Producer& add_producer() {
    const std::lock_guard<std::mutex> lock(add_mutex_);  // not done_mutex_: add() may wait
    return roster_.add();
  }

  // The producers' places: those alive, and finished ones kept for reuse.
  std::size_t producers() const noexcept { return roster_.size(); }

  // Blocks until every producer has closed and every event was handled, stops the pool, and
  // rethrows the first exception a handler threw (once).
  void wait() {
    {
      std::unique_lock<std::mutex> lock(done_mutex_);
      done_cv_.wait(lock, [&] { return roster_.all_finished(); });
    }
    stop();
    handler_.rethrow();
  }

  // Consumer threads running now, and the most that ran at once so far.
  std::size_t consumers() const noexcept { return crew_.live(); }
  std::size_t peak_consumers() const noexcept { return crew_.peak(); }

  PoolAdjustments adjustments() const noexcept {
    return {grown_.load(std::memory_order_relaxed), shrunk_.load(std::memory_order_relaxed),
            intervals_.load(std::memory_order_relaxed)};
  }

 private:
  using Worker = detail::PoolCrew::Worker;
  using Totals = detail::PoolTotals;

  BasicConsumerPool(std::size_t producers, Handler one, PlaceHandler placed, PoolOptions options)
      : options_(detail::checked_pool_options(options, kMaxConsumers)),
        max_(detail::pool_max_consumers(options, kMaxConsumers)),
        handler_(std::move(one), std::move(placed)),
        lot_(max_, spin_budget_ns(static_cast<std::int64_t>(SpinNs))),
        crew_(max_),
        roster_(options_.ordered ? 1 : max_, lot_) {
    try {
      for (std::size_t i = 0; i < producers; ++i) add_producer();
      while (crew_.running() <
             std::min(std::max(options.start_consumers, options.min_consumers), max_)) {
        if (!grow()) throw std::runtime_error("BasicConsumerPool: cannot start a consumer");
      }
      controller_ = std::thread([this] { control(); });
    } catch (...) {
      stop_consumers();
      throw;
    }
  }

  // ---- consumers ----

  void run_consumer(std::size_t k) {
    Worker& w = crew_.worker(k);
    std::size_t next = k;  // where its round robin over the producers starts
    const auto work = [&] {
      return w.retiring() || stop_.load(std::memory_order_acquire) ||
             roster_.find(next, k).lane != nullptr;
    };
    while (!w.retiring() && !stop_.load(std::memory_order_acquire)) {
      const typename Roster::Found found = roster_.find(next, k);
      if (found.lane != nullptr) {
        if (found.lane->try_claim()) serve(w, *found.deal, *found.lane);
        continue;
      }
      Worker::add(w.idle_ns, static_cast<std::uint64_t>(lot_.park(k, work, w.parked_since)));
    }
    crew_.left();
  }

  // One turn on a claimed lane: its buffer's wait counted, up to Buffers runs handled (so other
  // lanes get their turns), its end noted, then released, waking a parked consumer if work stays.
  void serve(Worker& w, Deal& deal, Lane& turn) {
    if (const std::int64_t since = turn.since_ns.exchange(0, std::memory_order_relaxed)) {
      w.waited(detail::steady_now_ns() - since);
    }
    const auto handle = [&](const T* events, std::size_t n) {
      handler_.run(deal.place(), events, n, w.handled);
    };
    for (std::size_t runs = 0; runs < Buffers && turn.channel.try_consume(handle) != 0;) ++runs;
    const bool finished = turn.channel.ended() &&
                          !turn.finished.exchange(true, std::memory_order_acq_rel) &&
                          deal.lane_finished();
    if (turn.release()) lot_.notify_one();
    if (finished) finished_one();  // after the release: add_producer may wait for the claim
  }

  void finished_one() {
    const bool all = roster_.finished_one();
    const std::lock_guard<std::mutex> lock(done_mutex_);
    if (all) done_cv_.notify_all();
  }

  // ---- the controller ----

  bool grow() noexcept {
    return crew_.grow([this](std::size_t k) { run_consumer(k); });
  }

  // Per interval (PoolController's random length, cut short by stop()): a sample, the rule's
  // move, the next interval. Stops the consumers as it leaves.
  void control() {
    detail::PoolController rule(options_, options_.min_consumers, max_);
    detail::HostCpuMeter cpu;
    (void)cpu.sample();
    std::int64_t last_ns = detail::steady_now_ns();
    Totals last = totals(last_ns);
    std::unique_lock<std::mutex> lock(control_mutex_);
    const auto stopping = [&] { return stop_.load(std::memory_order_relaxed); };
    while (
        !control_cv_.wait_for(lock, std::chrono::nanoseconds(rule.next_interval_ns()), stopping)) {
      lock.unlock();
      const std::int64_t now = detail::steady_now_ns();
      const Totals t = totals(now);
      const std::size_t open = roster_.open_lanes();
      const detail::PoolSample sample = detail::PoolSample::between(
          last, t, static_cast<double>(now - last_ns), crew_.running(), open, cpu.sample());
      last = t;
      last_ns = now;
      intervals_.fetch_add(1, std::memory_order_relaxed);
      const int move = options_.adaptive ? rule.decide(sample) : 0;
      for (int m = move; m > 0 && crew_.running() < max_ && grow(); --m) grown_.fetch_add(1);
      for (int m = move; m < 0 && crew_.running() > options_.min_consumers; ++m) {
        crew_.shrink([this](std::size_t k) { lot_.notify(k); });
        shrunk_.fetch_add(1, std::memory_order_relaxed);
      }
      lock.lock();
    }
    lock.unlock();
    stop_consumers();
  }

  // The crew's sums, plus the lanes' waits still going.
  Totals totals(std::int64_t now) const noexcept {
    Totals t;
    crew_.add_to(t, now);
    roster_.add_to(t, now);
    return t;
  }

  void stop_consumers() noexcept {
    stop_.store(true, std::memory_order_seq_cst);
    lot_.notify_all();
    crew_.join_all();
  }

  void stop() {
    {
      const std::lock_guard<std::mutex> lock(control_mutex_);
      if (stopped_) return;
      stopped_ = true;
      stop_.store(true, std::memory_order_seq_cst);
    }
    control_cv_.notify_all();
    controller_.join();  // the controller stops the consumers as it leaves
  }

  const PoolOptions options_;
  const std::size_t max_;
  detail::PoolHandler<T> handler_;
  detail::ParkingLot<WaiterFor<P>> lot_;
  detail::PoolCrew crew_;
  Roster roster_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> grown_{0}, shrunk_{0}, intervals_{0};
  std::mutex add_mutex_;
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  std::mutex control_mutex_;
  std::condition_variable control_cv_;
  bool stopped_ = false;  // under control_mutex_
  std::thread controller_;
};

}  // namespace hspc
