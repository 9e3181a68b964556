// What a sample asks of each side, and the per-event code both sides run. The channel samples and
// the baselines share this code, so a difference between them is the channel, not the harness.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "harness/app.hpp"
#include "harness/event.hpp"
#include "harness/thread_stats.hpp"
#include "harness/work.hpp"
#include "harness/worker.hpp"

namespace hspc_harness {

// One benchmark's workload. Stage One: no work (zeros); Stage Two: e.g. producer_ns = 40,
// consumer_ns = 15 per event.
struct Workload {
  std::uint64_t events = 0;
  double producer_ns = 0.0;        // synthetic work per event before each push
  double consumer_ns = 0.0;        // synthetic work per event after each pop
  std::size_t consumer_bytes = 0;  // consumer working set touched once per event (0: none)
  double pace_ns = 0.0;            // latency, paced: extra producer work between single events
  std::size_t ring_bytes = 1024;   // private ring of the baselines (the paper's 1 KiB buffer)
  int producer_cpu = -1;           // -1: not pinned
  int consumer_cpu = -1;
  std::size_t pairs = 1;      // pairs kind: independent producer/consumer pairs
  std::size_t producers = 1;  // fanout kind: producers, each handing buffers to its consumers
  std::size_t consumers = 1;  // fanout kind: all consumers; consumer j is producer j % producers's
  std::vector<int> cpus;      // pairs, fanout: a CPU per thread, producers first (empty: unpinned)
};

// One timed run. Wall time runs from the start gate until the consumer has the last event (the
// producer for round trips, where the last event comes back to it).
struct Sample {
  std::uint64_t events = 0;
  std::int64_t wall_ns = 0;
  ThreadStats producer;
  ThreadStats consumer;
  bool verified = false;         // order, count and checksum all correct
  double latency_p50_ns = -1.0;  // latency, paced and round_trip kinds only
  double latency_p99_ns = -1.0;
  long consumer_tid = 0;  // the persistent worker's thread id (0: no consumer thread ran)
  // pairs and fanout kinds (else -1): waits in the channels and the time spent in them, summed
  // over all threads; producer, consumer and the ThreadStats above are sums over each role.
  std::int64_t waits = -1;
  std::int64_t wait_ns = -1;
};

// Everything samples share across a process: the work calibration, the persistent worker, and
// how long a throughput sample may run before its producer stops early (0: until every event).
struct Context {
  Calibration calibration;
  Worker worker;
  std::int64_t cap_ns = 0;
};

using Clock = std::chrono::steady_clock;

inline std::int64_t ns_between(Clock::time_point a, Clock::time_point b) noexcept {
  // At least 1 ns: a zero time would make rates infinite downstream.
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
  return ns > 0 ? static_cast<std::int64_t>(ns) : 1;
}

inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Keeps a computed value alive without storing it anywhere.
inline void sink(std::uint64_t x) noexcept { asm volatile("" : : "r"(x)); }

// Forces the write of one event to really happen, once per event, so no baseline is vectorised
// into something no channel could do. The asm reads that slot alone: a clobber of all memory made
// the compiler store and load again the loop's own state every event, a cost the loop that feeds
// a channel does not pay, and the channel then measured faster than its producer alone.
template <class E>
inline void escape(const E* slot) noexcept {
  asm volatile("" : : "r"(slot), "m"(*slot));
}

// The producer's per-event code: its work (and the app's, app.hpp), then the event stamped with
// its sequence number. Built on the thread that uses it.
template <class E>
class ProducerSide {
 public:
  ProducerSide(const Workload& w, const Calibration& c) : loops_(c.loops_for(w.producer_ns)) {
    prepare_app_thread();
  }

  void work() noexcept {
    if (loops_ != 0) x_ = burn(loops_, x_);
#ifdef HSPC_APP_PRODUCER
    app_produce(app_seq_++, app_event_, sizeof(E));
#endif
  }
  const E& next(std::uint64_t i) noexcept {
    work();
    stamp(ev_, i);
    return ev_;
  }
  ~ProducerSide() { sink(x_); }

 private:
  std::uint64_t loops_;
  std::uint64_t x_ = 1;
  E ev_{};
#ifdef HSPC_APP_PRODUCER
  std::uint64_t app_seq_ = 0;
  alignas(E) unsigned char app_event_[sizeof(E)] = {};
#endif
};

// The consumer's per-event code: check the event, then its work (and the app's, app.hpp, unless
// RunsApp is false: the round trip's echo check) and working-set touch. Built on the thread that
// uses it.
template <class E, bool RunsApp = true>
class ConsumerSide {
 public:
  ConsumerSide(const Workload& w, const Calibration& c)
      : loops_(c.loops_for(w.consumer_ns)), working_set_(w.consumer_bytes) {
    if constexpr (RunsApp) prepare_app_thread();
  }

  void on_event(const E& ev) noexcept {
    verifier_.check(ev);
    if (loops_ != 0) x_ = burn(loops_, x_);
#ifdef HSPC_APP_CONSUMER
    if constexpr (RunsApp) app_consume(&ev, sizeof(E));
#endif
    if (!working_set_.empty()) working_set_.touch(ev.seq);
  }
  // The state is copied into locals for the loop: the events' bytes may alias the members as far
  // as the compiler knows, which would force a store and reload per event.
  void on_span(const E* events, std::size_t n) noexcept {
    Verifier<E> verifier = verifier_;
    std::uint64_t x = x_;
    for (std::size_t i = 0; i < n; ++i) {
      verifier.check(events[i]);
      if (loops_ != 0) x = burn(loops_, x);
#ifdef HSPC_APP_CONSUMER
      if constexpr (RunsApp) app_consume(&events[i], sizeof(E));
#endif
      if (!working_set_.empty()) working_set_.touch(events[i].seq);
    }
    verifier_ = verifier;
    x_ = x;
  }

  Verifier<E>& verifier() noexcept { return verifier_; }
  // Exactly `events` events numbered 0..events-1 arrived, in order and intact.
  bool verified(std::uint64_t events) const noexcept {
    return verifier_.in_order() && verifier_.next() == events &&
           verifier_.checksum() == expected_checksum<E>(events);
  }
  ~ConsumerSide() { sink(x_ ^ working_set_.digest()); }

 private:
  std::uint64_t loops_;
  std::uint64_t x_ = 1;
  WorkingSet working_set_;
  Verifier<E> verifier_;
};

// Runs the producer's body directly; variant tables may substitute a launcher that shifts the
// producer's stack first (the paper's p4).
struct DirectLaunch {
  template <class F>
  static void run(F&& f) {
    f();
  }
};

}  // namespace hspc_harness
