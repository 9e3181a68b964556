// The threads of many-thread samples (pairs.hpp): the extra persistent workers, the start gate
// of many threads, and the skeleton that runs one body per thread behind it and sums what each
// thread reports.
//
// Threads: producer 0 is the benchmark thread, consumer 0 the Context's persistent worker, every
// other thread one of the extra persistent workers (created once per process, kept for the next
// sample). Each pins itself to its CPU from Workload::cpus (producers first) and unpins after.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "harness/sides.hpp"
#include "harness/thread_stats.hpp"
#include "harness/worker.hpp"

namespace hspc_harness {

// The largest sample a plan may ask for, in threads.
inline constexpr std::size_t kMaxSampleThreads = 256;

// The extra persistent threads of many-thread samples (see Worker for why persistent). Only the
// benchmark thread uses them, one sample at a time.
class WorkerPool {
 public:
  // Starts workers until there are n.
  void ensure(std::size_t n) {
    while (workers_.size() < n) workers_.push_back(std::make_unique<Worker>());
  }
  // The i-th extra worker, started now if it was not yet.
  Worker& at(std::size_t i) {
    ensure(i + 1);
    return *workers_[i];
  }
  std::size_t size() const noexcept { return workers_.size(); }

 private:
  std::vector<std::unique_ptr<Worker>> workers_;
};

// The process's one pool: register_plan sizes it before any sample runs.
inline WorkerPool& extra_workers() {
  static WorkerPool pool;
  return pool;
}

// Threads a pairs or fanout sample runs (1 for other kinds: no extra workers needed).
inline std::size_t sample_threads(bool pairs, bool fanout, const Workload& w) noexcept {
  if (pairs) return 2 * w.pairs;
  return fanout ? w.producers + w.consumers : 1;
}

namespace detail {

inline std::int64_t elapsed_ns(Clock::time_point a, Clock::time_point b) noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// The start barrier of many threads: `arrivals` threads arrive and wait; the opener reads the
// start time once all have arrived, then opens.
class ManyGate {
 public:
  explicit ManyGate(std::size_t arrivals) noexcept : arrivals_(arrivals) {}

  void arrive_and_wait() noexcept {
    arrived_.fetch_add(1, std::memory_order_acq_rel);
    wait_until_true([this] { return open_.load(std::memory_order_acquire); });
  }
  Clock::time_point open() noexcept {
    wait_until_true([this] { return arrived_.load(std::memory_order_acquire) == arrivals_; });
    const auto t0 = Clock::now();
    open_.store(true, std::memory_order_release);
    return t0;
  }

 private:
  const std::size_t arrivals_;
  alignas(64) std::atomic<std::size_t> arrived_{0};  // own line: written by every arriving thread
  alignas(64) std::atomic<bool> open_{false};        // own line: polled by every waiting thread
};

// What one thread of a sample reports back.
struct ThreadEnd {
  Clock::time_point end{};   // when it finished (a consumer: when it took its last event)
  std::int64_t wait_ns = 0;  // time it spent waiting in the channel
  bool verified = true;      // a consumer: exactly its events, in order and intact
};

struct ThreadOutcome {
  ThreadEnd end;
  ThreadStats stats;
};

inline int cpu_of(const Workload& w, std::size_t thread) noexcept {
  return thread < w.cpus.size() ? w.cpus[thread] : -1;
}

inline void add_stats(ThreadStats& sum, const ThreadStats& t) noexcept {
  sum.cpu_ns += t.cpu_ns;
  sum.nvcsw += t.nvcsw;
  sum.nivcsw += t.nivcsw;
  sum.migrations = (sum.migrations < 0 || t.migrations < 0) ? -1 : sum.migrations + t.migrations;
  sum.delay_ns = (sum.delay_ns < 0 || t.delay_ns < 0) ? -1 : sum.delay_ns + t.delay_ns;
}

// The sample's record from every thread's outcome: threads [0, producers) are the producers.
inline Sample sum_outcomes(const std::vector<ThreadOutcome>& out, std::size_t producers,
                           Clock::time_point t0) {
  Sample s;
  s.verified = true;
  s.wait_ns = 0;
  Clock::time_point last = t0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    add_stats(i < producers ? s.producer : s.consumer, out[i].stats);
    s.wait_ns += out[i].end.wait_ns;
    s.verified = s.verified && out[i].end.verified;
    last = std::max(last, out[i].end.end);
  }
  s.wall_ns = ns_between(t0, last);
  return s;
}

// Runs body(i) on `producers + consumers` threads behind one gate; thread i < producers is a
// producer (run through Launch, as in two_sided), the rest consumers.
template <class Launch, class Body>
Sample many_sided(const Workload& w, Context& ctx, std::size_t producers, std::size_t consumers,
                  Body body) {
  const std::size_t threads = producers + consumers;
  std::vector<ThreadOutcome> out(threads);
  ManyGate gate(threads - 1);
  auto job = [&](std::size_t i) {
    auto run = [&] {
      ScopedPin pin(cpu_of(w, i));
      ThreadProbe probe;
      probe.start();
      gate.arrive_and_wait();
      out[i].end = body(i);
      probe.stop_cheap();
      out[i].stats = probe.finish();
    };
    if (i < producers) {
      Launch::run(run);
    } else {
      run();
    }
  };
  std::vector<Worker*> workers{&ctx.worker};
  for (std::size_t i = 2; i < threads; ++i) workers.push_back(&extra_workers().at(i - 2));
  workers[0]->post([&] { job(producers); });  // consumer 0 on the usual worker
  for (std::size_t i = 1, next = 1; i < threads; ++i) {
    if (i != producers) workers[next++]->post([&job, i] { job(i); });
  }
  Clock::time_point t0{};
  Launch::run([&] {
    ScopedPin pin(cpu_of(w, 0));
    ThreadProbe probe;
    probe.start();
    t0 = gate.open();
    out[0].end = body(0);
    probe.stop_cheap();
    for (Worker* worker : workers) worker->wait();
    out[0].stats = probe.finish();
  });
  return sum_outcomes(out, producers, t0);
}

}  // namespace detail

}  // namespace hspc_harness
