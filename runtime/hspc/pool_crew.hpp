#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "hspc/limits.hpp"
#include "hspc/pool_control.hpp"

namespace hspc {

namespace detail {

// A pool's handler and the first exception it threw, kept for wait() to rethrow once. After a
// throw the handler is not called again (its events still count as consumed: the pool drains).
// Either form: handler(event), or handler(place, event) with the place of the producer that
// pushed it (BasicConsumerPool says what a place is), for state kept per producer.
template <class T>
class PoolHandler {
 public:
  explicit PoolHandler(std::function<void(const T&)> handler) : handler_(std::move(handler)) {}
  explicit PoolHandler(std::function<void(std::size_t, const T&)> handler)
      : by_place_(std::move(handler)) {}
  PoolHandler(std::function<void(const T&)> handler,
              std::function<void(std::size_t, const T&)> by_place)
      : handler_(std::move(handler)), by_place_(std::move(by_place)) {}

  // A relaxed load per event (of a word written once): no call begins once a throw is kept. Each
  // event counts in `handled` (the calling consumer's own counter) as its call returns, so the
  // controller's throughput is not lumped by runs (a run of a slow handler can outlast an
  // interval); events dropped after a throw count at once. The form is chosen once per run.
  void run(std::size_t place, const T* events, std::size_t n,
           std::atomic<std::uint64_t>& handled) noexcept {
    if (by_place_) {
      run_each(events, n, handled, [&](const T& e) { by_place_(place, e); });
    } else {
      run_each(events, n, handled, handler_);
    }
  }

  void rethrow() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  template <class Call>
  void run_each(const T* events, std::size_t n, std::atomic<std::uint64_t>& handled,
                const Call& call) noexcept {
    std::size_t i = 0;
    try {
      for (; i < n && !failed_.load(std::memory_order_relaxed); ++i) {
        call(events[i]);
        handled.store(handled.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
    }
    handled.store(handled.load(std::memory_order_relaxed) + (n - i), std::memory_order_relaxed);
  }

  const std::function<void(const T&)> handler_;
  const std::function<void(std::size_t, const T&)> by_place_;
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::exception_ptr error_;
};

// PoolCrew: a BasicConsumerPool's consumer threads, started and retired by one thread at a time
// (the pool's constructor, then its controller), and the counters each consumer keeps for the
// controller. Consumers run at indices 0 .. running() - 1: growth starts index running(), and
// retirement takes the last one, so the parking lot's bits stay those of the running consumers.
class PoolCrew {
 public:
  // One consumer's flag and counters: each counter written by its consumer only (a plain load and
  // store, no read-modify-write), read by the controller. A line of its own.
  struct alignas(kCacheLineBytes) Worker {
    std::thread thread;
    std::atomic<bool> retire{false};
    std::atomic<std::uint64_t> waited_ns{0}, waits{0}, idle_ns{0}, handled{0};
    std::atomic<std::int64_t> parked_since{0};  // while parked: when it began; 0 otherwise

    static void add(std::atomic<std::uint64_t>& counter, std::uint64_t n) noexcept {
      counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    bool retiring() const noexcept { return retire.load(std::memory_order_acquire); }
    // A turn began on a lane whose oldest buffer was handed over waited_ns ago.
    void waited(std::int64_t ns) noexcept {
      add(waited_ns, ns > 0 ? static_cast<std::uint64_t>(ns) : 0);
      add(waits, 1);
    }
  };

  explicit PoolCrew(std::size_t seats) : workers_(new Worker[seats]), seats_(seats) {}

  Worker& worker(std::size_t k) noexcept { return workers_[k]; }

  // Consumer threads that exist now (a retiring one counts until it leaves its loop).
  std::size_t live() const noexcept { return live_.load(std::memory_order_acquire); }
  // Consumers started and not retired (the starting thread's view; not for others to read).
  std::size_t running() const noexcept { return running_; }
  // The most consumer threads that have existed at once (a retiring one is joined before the
  // next starts, so it is running()'s highest value). Any thread.
  std::size_t peak() const noexcept { return peak_.load(std::memory_order_relaxed); }
  // The consumer's last act: it is no longer running.
  void left() noexcept { live_.fetch_sub(1, std::memory_order_acq_rel); }

  // Starts consumer running() with body(k); false if no thread could be created.
  template <class Body>
  bool grow(Body body) noexcept {
    const std::size_t k = running_;
    workers_[k].retire.store(false, std::memory_order_relaxed);
    live_.fetch_add(1, std::memory_order_acq_rel);
    try {
      workers_[k].thread = std::thread([body, k] { body(k); });
    } catch (...) {
      live_.fetch_sub(1, std::memory_order_acq_rel);
      return false;
    }
    if (++running_ > peak()) peak_.store(running_, std::memory_order_relaxed);
    return true;
  }

  // Retires the last consumer: flags it, wake(k) wakes it if parked, then joins it (it leaves
  // after its current turn).
  template <class Wake>
  void shrink(Wake wake) {
    Worker& w = workers_[--running_];
    w.retire.store(true, std::memory_order_seq_cst);
    wake(running_);
    w.thread.join();
  }

  // Joins every consumer (the caller has told them to stop and woken them).
  void join_all() noexcept {
    while (running_ != 0) workers_[--running_].thread.join();
  }

  // Adds every worker's counters at `now` (parks still going included) to t.
  void add_to(PoolTotals& t, std::int64_t now) const noexcept {
    for (std::size_t k = 0; k < seats_; ++k) {
      const Worker& w = workers_[k];
      t.waited_ns += static_cast<double>(w.waited_ns.load(std::memory_order_relaxed));
      t.waits += static_cast<double>(w.waits.load(std::memory_order_relaxed));
      t.idle_ns += static_cast<double>(w.idle_ns.load(std::memory_order_relaxed));
      t.events += static_cast<double>(w.handled.load(std::memory_order_relaxed));
      const std::int64_t parked = w.parked_since.load(std::memory_order_relaxed);
      if (parked != 0 && now > parked) t.idle_ns += static_cast<double>(now - parked);
    }
  }

 private:
  const std::unique_ptr<Worker[]> workers_;
  const std::size_t seats_;
  std::atomic<std::size_t> live_{0};
  std::size_t running_ = 0;
  std::atomic<std::size_t> peak_{0};
};

}  // namespace detail

}  // namespace hspc
