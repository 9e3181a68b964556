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
#include "hspc/pool_lane.hpp"
#include "hspc/pool_parking.hpp"

namespace hspc {

// BasicConsumerPool: N producer threads, each writing its own tuned channel, drained by a pool of
// consumer threads that calls handler(event) for every event; a controller grows and shrinks the
// pool at run time from what it measures (PoolController says how).
//
// Ordered mode (the only one so far): a consumer claims a producer's lane (a CAS), takes what is
// published there (one turn: at most Buffers runs) and releases it. The claim's acquire and the
// release's store pass the channel's consumer cursor on, so a lane has one consumer at a time.
// Idle consumers park on the tuned primitive (ParkingLot); a producer wakes one per buffer
// hand-off, only if one is parked, and so does a consumer leaving a lane with work in it (as Go's
// last spinner does), so no published buffer waits for its producer's next hand-off.
//
// Preconditions
// - T is trivially copyable; 1 <= min_consumers <= max_consumers (after 0 becomes the usable
//   CPUs) <= 64; options.ordered (else the constructor throws std::invalid_argument).
// - One thread per producer calls its push, emplace, try_push, flush and close; nothing is pushed
//   after close(). At most kMaxProducers producers in the pool's lifetime (add_producer throws
//   std::length_error past it; a closed producer's lane is not reused).
// - add_producer() is not called once wait() has been called; wait() from one thread.
// - Before destruction every producer thread has left its last call.
//
// Guarantees
// - Every event pushed before its producer's close() is handled exactly once by wait()'s return
//   (unless the handler threw, below); one producer's events in push order, never two of them at
//   once.
// - wait() returns once every producer (those added included) has closed and every event was
//   handled; then the consumers and the controller have stopped. A producer that never closes:
//   wait() never returns.
// - A handler that throws: the first exception is kept and no call of the handler begins after
//   that (calls under way in other consumers finish); the pool goes on draining, dropping events,
//   so no producer blocks for ever; wait() rethrows that exception once, after the pool stops.
// - The destructor without wait(): stops the consumers after their current turn and the
//   controller, without waiting for producers to close; events not yet handled are dropped.
// - consumers() is the number of consumer threads running at the moment of the call;
//   adjustments() counts the controller's moves. The count stays in [min, max] and, while it
//   grows, below the producers not yet finished (more cannot help in ordered mode).
// - Per event: a producer does what its channel does (no pool state); a consumer calls the
//   handler through std::function. The rest is per buffer: a fence and a load at each hand-off
//   (a clock reading when its lane had no buffer waiting), a CAS, a store and a fence per turn,
//   and a fetch_or, a fence and a look over the lanes per park.
// - Latency bound (MaxLatencyNs != 0): kept by each producer as BasicFanOut keeps it (its channel
//   has none of its own), so a due buffer is a hand-off the pool sees.
//
// Layout: each lane is its own allocation, its parts on separate lines (pool_lane.hpp); consumers'
// counters (pool_crew.hpp) and the parked word (pool_parking.hpp) on lines of their own.
template <class T, Primitive P, std::size_t Buffers, std::size_t BufferBytes,
          std::size_t PaddingBytes, std::size_t SpinNs = 5000, std::size_t MaxLatencyNs = 0,
          std::size_t PrefetchBytes = 0, bool HugePages = false>
class BasicConsumerPool {
  using Lane = detail::PoolLane<T, P, Buffers, BufferBytes, PaddingBytes, SpinNs, MaxLatencyNs,
                                PrefetchBytes, HugePages>;

 public:
  using Channel = typename Lane::Channel;
  using Producer = typename Lane::Producer;
  using value_type = T;
  using Handler = std::function<void(const T&)>;

  static constexpr std::size_t kEventsPerBuffer = Channel::kEventsPerBuffer;
  static constexpr std::size_t kMaxLatencyNs = MaxLatencyNs;
  static constexpr std::size_t kMaxProducers = 256;
  static constexpr std::size_t kMaxConsumers = detail::kMaxPoolConsumers;

  BasicConsumerPool(std::size_t producers, Handler handler, PoolOptions options = PoolOptions{})
      : options_(detail::checked_pool_options(options, kMaxConsumers)),
        max_(detail::pool_max_consumers(options, kMaxConsumers)),
        handler_(std::move(handler)),
        lot_(max_, spin_budget_ns(static_cast<std::int64_t>(SpinNs))),
        crew_(max_) {
    const std::size_t start =
        options.start_consumers == 0 ? options.min_consumers : options.start_consumers;
    try {
      for (std::size_t i = 0; i < producers; ++i) add_producer();
      while (crew_.running() < std::min(std::max(start, options.min_consumers), max_)) {
        if (!grow()) throw std::runtime_error("BasicConsumerPool: cannot start a consumer");
      }
      controller_ = std::thread([this] { control(); });
    } catch (...) {
      stop_consumers();
      delete_lanes();
      throw;
    }
  }

  ~BasicConsumerPool() {
    stop();
    delete_lanes();
  }

  BasicConsumerPool(const BasicConsumerPool&) = delete;
  BasicConsumerPool& operator=(const BasicConsumerPool&) = delete;

  // Producer i (i < producers()): one thread's push, emplace, try_push, flush and close.
  Producer& producer(std::size_t i) {
    if (i >= producers()) throw std::out_of_range("BasicConsumerPool: no such producer");
    return lane(i)->producer;
  }

  // A producer that joins now; consumers see its lane from their next look.
  Producer& add_producer() {
    const std::lock_guard<std::mutex> lock(done_mutex_);
    const std::size_t i = lane_count_.load(std::memory_order_relaxed);
    if (i == kMaxProducers) throw std::length_error("BasicConsumerPool: too many producers");
    Lane* added = new Lane(lot_);
    lanes_[i].store(added, std::memory_order_release);
    lane_count_.store(i + 1, std::memory_order_release);
    return added->producer;
  }

  std::size_t producers() const noexcept { return lane_count_.load(std::memory_order_acquire); }

  // Blocks until every producer has closed and every event was handled, stops the pool, and
  // rethrows the first exception a handler threw (once).
  void wait() {
    {
      std::unique_lock<std::mutex> lock(done_mutex_);
      done_cv_.wait(lock, [&] {
        return finished_.load(std::memory_order_acquire) ==
               lane_count_.load(std::memory_order_relaxed);
      });
    }
    stop();
    handler_.rethrow();
  }

  // Consumer threads running now.
  std::size_t consumers() const noexcept { return crew_.live(); }

  PoolAdjustments adjustments() const noexcept {
    return {grown_.load(std::memory_order_relaxed), shrunk_.load(std::memory_order_relaxed),
            intervals_.load(std::memory_order_relaxed)};
  }

 private:
  using Worker = detail::PoolCrew::Worker;
  using Totals = detail::PoolTotals;

  void delete_lanes() noexcept {
    for (std::size_t i = producers(); i > 0; --i) delete lane(i - 1);
  }
  Lane* lane(std::size_t i) const noexcept { return lanes_[i].load(std::memory_order_acquire); }

  // ---- consumers ----

  void run_consumer(std::size_t k) {
    Worker& w = crew_.worker(k);
    std::size_t next = k;  // where its round robin over the lanes starts
    const auto work = [&] {
      return w.retiring() || stop_.load(std::memory_order_acquire) || find_lane(next) != nullptr;
    };
    while (!w.retiring() && !stop_.load(std::memory_order_acquire)) {
      if (Lane* found = find_lane(next)) {
        if (found->try_claim()) serve(w, *found);
        continue;
      }
      Worker::add(w.idle_ns, static_cast<std::uint64_t>(lot_.park(k, work, w.parked_since)));
    }
    crew_.left();
  }

  // The next lane from `next` on (round robin) that is unclaimed with work or an unseen end.
  Lane* find_lane(std::size_t& next) const noexcept {
    const std::size_t n = producers();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = (next + i) % n;
      if (lane(at)->wanted()) {
        next = at + 1;
        return lane(at);
      }
    }
    return nullptr;
  }

  // One turn on a claimed lane: its buffer's wait counted, up to Buffers runs handled (so other
  // lanes get their turns), its end noted, then released, waking a parked consumer if work stays.
  void serve(Worker& w, Lane& turn) {
    if (const std::int64_t since = turn.since_ns.exchange(0, std::memory_order_relaxed)) {
      w.waited(detail::steady_now_ns() - since);
    }
    const auto handle = [&](const T* events, std::size_t n) { handler_.run(events, n, w.handled); };
    for (std::size_t runs = 0; runs < Buffers && turn.channel.try_consume(handle) != 0;) ++runs;
    if (turn.channel.ended() && !turn.finished.exchange(true, std::memory_order_acq_rel)) {
      finished_one();
    }
    if (turn.release()) lot_.notify_one();
  }

  void finished_one() {
    const std::size_t done = finished_.fetch_add(1, std::memory_order_acq_rel) + 1;
    const std::lock_guard<std::mutex> lock(done_mutex_);
    if (done == lane_count_.load(std::memory_order_relaxed)) done_cv_.notify_all();
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
      const std::size_t open = producers() - finished_.load(std::memory_order_acquire);
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
    for (std::size_t i = producers(); i > 0; --i) lane(i - 1)->add_to(t, now);
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
  std::atomic<Lane*> lanes_[kMaxProducers] = {};
  std::atomic<std::size_t> lane_count_{0};
  std::atomic<std::size_t> finished_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> grown_{0}, shrunk_{0}, intervals_{0};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  std::mutex control_mutex_;
  std::condition_variable control_cv_;
  bool stopped_ = false;  // under control_mutex_
  std::thread controller_;
};

}  // namespace hspc
