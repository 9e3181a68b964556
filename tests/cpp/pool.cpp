// BasicConsumerPool for one primitive (HSPC_POOL_PRIMITIVE, set per executable by meson):
// - rule: the controller's decision rule on made-up samples (growth on backlog with room, none
//   while the CPUs are busy or at a limit, shrinking only after its run of idle intervals, the
//   runs reset by a move) and its random interval lengths;
// - evidence, trials: moves judged on made-up throughput with a margin, undone when they did not
//   pay, held off after (longer each time) until the load changes;
// - options: what the constructor refuses;
// - mixed: several producers with a seeded mix of push/emplace/try_push and flushes, over a table
//   of buffers x buffer_bytes x event size (one variant with a latency bound); every event must be
//   handled exactly once, intact, each producer's in push order and never two of one producer's
//   at once (the handler writes per-producer state without a lock: ThreadSanitizer sees any
//   overlap), with consumers() within its limits throughout;
// - late: producers added while the pool runs, some with no events at all (a finished one's place
//   may be reused: pool_deal.cpp tests that, and the unordered mode);
// - places: a handler told each event's producer place keeps per-place state with no lock, over
//   waves of producers reusing the places, read by the adding thread once finished();
// - adapt: growth forced (a tiny interval, a handler that sleeps), then shrinking (a light
//   handler, producers that pause), then wait();
// - teardown: wait() and the destructor (without wait, producers unclosed) while it grows;
// - throws: a handler that throws: wait() rethrows once, the handler is not called again, and no
//   producer blocks.
// Not a timing test: the waits for growth and shrinking are bounded only by the watchdog.
#include "hspc/pool.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pool_support.hpp"
#include "test_support.hpp"

namespace {

using hspc::PoolOptions;
using hspc::Primitive;
using hspc_test::Event;
using hspc_test::produce;
using hspc_test::restless;
using hspc_test::Rng;
using Micros = std::chrono::microseconds;

constexpr Primitive kPrimitive = Primitive::HSPC_POOL_PRIMITIVE;
constexpr std::uint32_t kMixedEvents = 20000 / hspc_test::kSlowdown;

// What a test's handler does per producer: the next sequence number it expects and a flag that is
// set while one of its events is being handled.
struct Track {
  std::uint32_t next = 0;
  std::atomic<int> inside{0};
};

template <class Ev>
struct Checker {
  explicit Checker(std::size_t producers) : tracks(producers) {}
  // Events carry their producer in the top byte of seq.
  void handle(const Ev& ev) {
    HSPC_CHECK(ev.intact(), "event %08x corrupted", ev.seq);
    Track& t = tracks[ev.seq >> 24];
    HSPC_CHECK(t.inside.exchange(1) == 0, "two consumers in producer %u's lane", ev.seq >> 24);
    HSPC_CHECK((ev.seq & 0xffffff) == t.next, "producer %u: event %u after %u", ev.seq >> 24,
               ev.seq & 0xffffff, t.next);
    ++t.next;
    t.inside.store(0);
  }
  void expect(std::size_t producer, std::uint32_t events) const {
    HSPC_CHECK(tracks[producer].next == events, "producer %zu: %u of %u events handled", producer,
               tracks[producer].next, events);
  }
  std::vector<Track> tracks;
};

// ---- the rule ----

void check_rule() {
  PoolOptions o;
  o.trial_intervals = 0;  // the proposals alone: every move stands (check_trials has the rest)
  o.grow_wait_ns = 1000;
  o.grow_intervals = 2;
  o.shrink_intervals = 3;
  o.cpu_busy_max = 0.9;
  hspc::detail::PoolController rule(o, 1, 4);
  // interval, wait accrued, waits, idle, consumers, open lanes, cpu busy, events
  const hspc::detail::PoolSample backlog{1e6, 1e6, 10, 0, 2, 8, 0.5, 0};
  HSPC_CHECK(rule.decide(backlog) == 0, "grew after one interval of backlog");
  HSPC_CHECK(rule.decide(backlog) == 1, "did not grow after two");
  HSPC_CHECK(rule.decide(backlog) == 0, "the run did not reset after a move");
  hspc::detail::PoolSample busy = backlog;
  busy.cpu_busy = 0.95;
  HSPC_CHECK(rule.decide(busy) == 0 && rule.decide(busy) == 0, "grew with the CPUs busy");
  hspc::detail::PoolSample at_max = backlog;
  at_max.consumers = 4;
  HSPC_CHECK(rule.decide(at_max) == 0 && rule.decide(at_max) == 0, "grew past max");
  hspc::detail::PoolSample lanes = backlog;
  lanes.open_lanes = 2;
  HSPC_CHECK(rule.decide(lanes) == 0 && rule.decide(lanes) == 0, "grew past the open lanes");
  hspc::detail::PoolSample woken = backlog;
  woken.idle_ns = 0.6e6;  // a parked consumer's wake-up is no backlog
  HSPC_CHECK(rule.decide(woken) == 0 && rule.decide(woken) == 0, "grew with consumers idle");
  const hspc::detail::PoolSample idle{1e6, 0, 0, 1.5e6, 3, 8, 0.1, 0};
  HSPC_CHECK(rule.decide(idle) == 0 && rule.decide(idle) == 0, "shrank too soon");
  HSPC_CHECK(rule.decide(idle) == -1, "did not shrink after three idle intervals");
  HSPC_CHECK(rule.decide(idle) == 0, "the idle run did not reset after a move");
  (void)rule.decide(idle);
  HSPC_CHECK(rule.decide(backlog) == 0, "a backlog did not break the idle run");
  HSPC_CHECK(rule.decide(idle) == 0, "the idle run went on through a backlog");
  hspc::detail::PoolSample at_min = idle;
  at_min.consumers = 1;
  for (int i = 0; i < 10; ++i) HSPC_CHECK(rule.decide(at_min) == 0, "shrank below min");
  o.interval_ns = 1000000;
  hspc::detail::PoolController lengths(o, 1, 4);
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t ns = lengths.next_interval_ns();
    HSPC_CHECK(ns >= 500000 && ns <= 1500000, "interval %llu ns", (unsigned long long)ns);
    lo = ns < lo ? ns : lo;
    hi = ns > hi ? ns : hi;
  }
  HSPC_CHECK(lo < 600000 && hi > 1400000, "intervals do not spread over [0.5, 1.5]");
}

// PoolEvidence on made-up throughput: the baseline, the skipped interval, the margin both ways,
// a noisy baseline asking for more, and a load change restarting the baseline.
void check_evidence() {
  using E = hspc::detail::PoolEvidence;
  E e(3);
  HSPC_CHECK(!e.baseline(100) && !e.ready() && !e.baseline(102) && !e.ready(), "ready too soon");
  (void)e.baseline(98);
  HSPC_CHECK(e.ready() && !e.on_trial(), "not ready after three samples");
  e.start(1);
  HSPC_CHECK(e.on_trial() && e.step() == 1, "no trial after start");
  HSPC_CHECK(e.judge(500, 0.05) == E::kPending, "the move's own interval was judged");
  HSPC_CHECK(e.judge(104, 0.05) == E::kPending && e.judge(104, 0.05) == E::kPending, "too soon");
  HSPC_CHECK(e.judge(104, 0.05) == E::kPending, "an undecided growth was not measured longer");
  HSPC_CHECK(e.judge(103, 0.05) == E::kPending && e.judge(104, 0.05) == E::kPending, "too soon");
  HSPC_CHECK(e.judge(105, 0.05) == E::kGrowFailed, "a 4%% gain beat a 5%% margin");
  HSPC_CHECK(!e.ready(), "a failed trial's samples kept as the baseline");
  for (double r : {100.0, 100.0, 100.0}) (void)e.baseline(r);
  e.start(1);
  for (double r : {0.0, 110.0, 112.0}) HSPC_CHECK(e.judge(r, 0.05) == E::kPending, "early");
  HSPC_CHECK(e.judge(90, 0.05) == E::kGrowKept, "a 10%% gain (median) did not pass");
  HSPC_CHECK(e.ready(), "a kept trial's samples are not the next baseline");
  e.start(-2);
  for (double r : {0.0, 106.0, 107.0}) HSPC_CHECK(e.judge(r, 0.05) == E::kPending, "early");
  HSPC_CHECK(e.judge(108, 0.05) == E::kShrinkKept, "a 3%% loss failed a 5%% margin");
  e.start(-1);
  for (double r : {0.0, 90.0, 91.0}) HSPC_CHECK(e.judge(r, 0.05) == E::kPending, "early");
  HSPC_CHECK(e.judge(92, 0.05) == E::kShrinkFailed, "a 15%% loss passed");
  E noisy(3);
  for (double r : {80.0, 100.0, 120.0}) (void)noisy.baseline(r);  // noise 2 x 20 / 100 = 40%
  HSPC_CHECK(E::noise(std::vector<double>{80, 100, 120}.data(), 3) > 0.39, "noise");
  noisy.start(1);
  for (double r : {0.0, 130.0, 130.0, 130.0, 130.0, 130.0}) (void)noisy.judge(r, 0.05);
  HSPC_CHECK(noisy.judge(130, 0.05) == E::kGrowFailed, "a 30%% gain beat 40%% noise");
  E lost(3);
  for (double r : {100.0, 100.0, 100.0}) (void)lost.baseline(r);
  lost.start(1);
  for (double r : {0.0, 80.0, 80.0}) (void)lost.judge(r, 0.05);
  HSPC_CHECK(lost.judge(80, 0.05) == E::kGrowFailed, "a growth that lost 20%% measured longer");
  E load(3);
  for (double r : {100.0, 100.0, 100.0}) HSPC_CHECK(!load.baseline(r), "a steady load changed");
  HSPC_CHECK(load.baseline(300) && !load.ready(), "a tripled rate is no load change");
  HSPC_CHECK(!load.baseline(290) && !load.baseline(310) && load.ready(), "no new baseline");
  HSPC_CHECK(E::median(std::vector<double>{4, 1, 3, 2}.data(), 4) == 2.5, "median of four");
  E none(0);
  HSPC_CHECK(none.ready() && !none.baseline(1), "no trials: always ready");
  none.start(1);
  HSPC_CHECK(!none.on_trial(), "no trials, yet a trial began");
}

// The controller with trials: a growth that did not pay is undone and held off (longer after
// each failure in a row) until the load changes; one that paid stands; idleness after a blocking
// phase removes the idle consumers at once; shrinking that lost throughput is undone.
void check_trials() {
  PoolOptions o;
  o.grow_wait_ns = 1000;
  o.grow_intervals = 2;
  o.shrink_intervals = 2;
  o.trial_intervals = 3;
  o.hold_intervals = 10;
  o.cpu_busy_max = 0.9;
  hspc::detail::PoolController rule(o, 1, 8);
  // interval, wait accrued, waits, idle, consumers, open lanes, cpu busy, events
  hspc::detail::PoolSample backlog{1e9, 1e9, 10, 0, 2, 8, 0.5, 1000};
  const auto run = [&](hspc::detail::PoolSample s, int intervals) {
    int moved = 0;
    for (int i = 0; i < intervals; ++i) {
      const int m = rule.decide(s);
      moved += m;
      s.consumers = static_cast<std::size_t>(static_cast<int>(s.consumers) + m);
      backlog.consumers = s.consumers;
    }
    return moved;
  };
  HSPC_CHECK(run(backlog, 3) == 1, "no growth after a baseline and a backlog");
  HSPC_CHECK(run(backlog, 6) == 0, "an undecided growth was not measured longer");
  HSPC_CHECK(run(backlog, 1) == -1, "a growth that gained nothing was not undone");
  HSPC_CHECK(run(backlog, 9) == 0, "grew again during the hold");
  HSPC_CHECK(run(backlog, 3) == 1, "did not try again after the hold");
  HSPC_CHECK(run(backlog, 5) == -1, "the second failure was not undone");
  HSPC_CHECK(run(backlog, 19) == 0, "the second hold is not twice as long");
  hspc::detail::PoolSample paying = backlog;
  paying.events = 5000;  // a new load: the hold ends, and growth pays now
  HSPC_CHECK(run(paying, 1) == 0, "moved on a load change");
  HSPC_CHECK(run(paying, 2) == 1, "the load change did not end the hold");
  paying.events = 7500;
  paying.consumers = 3;
  HSPC_CHECK(run(paying, 4) == 0, "a growth that paid was undone");
  const hspc::detail::PoolSample idle{1e9, 0, 0, 6.5e9, 8, 8, 0.3, 7500};  // 1.5 busy
  hspc::detail::PoolController after(o, 1, 8);
  HSPC_CHECK(after.decide(idle) == 0 && after.decide(idle) == 0, "shrank before a baseline");
  HSPC_CHECK(after.decide(idle) == -6, "not down to the busy consumers at once");
  hspc::detail::PoolSample lost = idle;
  lost.consumers = 2;
  lost.idle_ns = 0;
  lost.events = 5000;
  HSPC_CHECK(after.decide(lost) == 0, "judged on the move's own interval");
  for (int i = 0; i < 2; ++i) HSPC_CHECK(after.decide(lost) == 0, "judged too soon");
  HSPC_CHECK(after.decide(lost) == 6, "a shrink that lost a third was not undone");
}

using Pool8 = hspc::BasicConsumerPool<Event<16>, kPrimitive, 4, 256, 64>;

void check_options() {
  const auto refused = [](PoolOptions o) {
    try {
      Pool8 pool(
          1, [](const Event<16>&) {}, o);
    } catch (const std::invalid_argument&) {
      return true;
    }
    return false;
  };
  HSPC_CHECK(refused(PoolOptions{0, 2, true}), "min 0 accepted");
  HSPC_CHECK(refused(PoolOptions{3, 2, true}), "min above max accepted");
  HSPC_CHECK(refused(PoolOptions{1, 65, true}), "max above 64 accepted");
  Pool8 none(0, [](const Event<16>&) {});
  none.wait();  // no producers: nothing to wait for
  HSPC_CHECK(none.consumers() == 0 && none.producers() == 0, "stopped pool still runs");
}

// ---- mixed ----

template <class Pool>
void run_mixed(const std::string& name, std::size_t producers, PoolOptions options,
               std::uint64_t seed) {
  using Ev = typename Pool::value_type;
  Checker<Ev> checker(producers);
  Pool pool(
      producers, [&](const Ev& ev) { checker.handle(ev); }, options);
  const std::size_t max = options.max_consumers;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < producers; ++i) {
    threads.emplace_back([&, i] {
      produce<typename Pool::Producer, Ev>(pool.producer(i), static_cast<std::uint32_t>(i),
                                           kMixedEvents, Rng(seed * 131 + i));
    });
  }
  for (int i = 0; i < 50; ++i) {
    const std::size_t now = pool.consumers();
    HSPC_CHECK(now >= options.min_consumers && now <= max, "%s: %zu consumers", name.c_str(), now);
    std::this_thread::sleep_for(Micros(200));
  }
  for (auto& t : threads) t.join();
  pool.wait();
  for (std::size_t i = 0; i < producers; ++i) checker.expect(i, kMixedEvents);
  std::printf("ok mixed %s producers=%zu: grown %llu shrunk %llu\n", name.c_str(), producers,
              (unsigned long long)pool.adjustments().grown,
              (unsigned long long)pool.adjustments().shrunk);
}

template <std::size_t B, std::size_t BufferBytes, std::size_t EventBytes, std::size_t Bound = 0>
void mixed(const char* shape) {
  using Pool =
      hspc::BasicConsumerPool<Event<EventBytes>, kPrimitive, B, BufferBytes, 64, 5000, Bound>;
  const std::string name = std::string(hspc::primitive_name(kPrimitive)) + " " + shape;
  run_mixed<Pool>(name + " fixed", 3, PoolOptions{2, 2, true}, 1);
  run_mixed<Pool>(name + " restless", 4, restless(1, 3), 2);
  run_mixed<Pool>(name + " one", 5, PoolOptions{1, 1, true}, 3);
}

// ---- late producers ----

void late() {
  using Ev = Event<16>;
  constexpr std::size_t kLate = 6;
  Checker<Ev> checker(1 + kLate);
  Pool8 pool(
      1, [&](const Ev& ev) { checker.handle(ev); }, restless(1, 2));
  std::vector<std::thread> threads;
  threads.emplace_back(
      [&] { produce<Pool8::Producer, Ev>(pool.producer(0), 0, kMixedEvents, Rng(7)); });
  for (std::uint32_t i = 1; i <= kLate; ++i) {
    std::this_thread::sleep_for(Micros(500));
    auto& in = pool.add_producer();
    bool listed = false;  // a new place, or a finished producer's
    for (std::size_t j = 0; j < pool.producers(); ++j) listed = listed || &in == &pool.producer(j);
    HSPC_CHECK(listed, "add_producer's producer %u is no producer(j)", i);
    const std::uint32_t events = i % 3 == 0 ? 0 : kMixedEvents / 4;  // some never push
    threads.emplace_back([&in, i, events] { produce<Pool8::Producer, Ev>(in, i, events, Rng(i)); });
  }
  for (auto& t : threads) t.join();
  pool.wait();
  checker.expect(0, kMixedEvents);
  for (std::uint32_t i = 1; i <= kLate; ++i) checker.expect(i, i % 3 == 0 ? 0 : kMixedEvents / 4);
  std::printf("ok late producers: %zu\n", pool.producers());
}

// ---- places ----

// A handler told each event's place keeps per-place state without a lock or an atomic, as
// hspcprof keeps a thread's call stack: producers come in waves, each wave on the places the last
// one left once those were finished(), after which the adding thread reads their state.
void places() {
  using Ev = Event<16>;
  constexpr std::uint32_t kWaves = 3, kPerWave = 4, kEvents = kMixedEvents / 4;
  struct Place {
    std::uint32_t id = ~0U;  // the producer now there
    std::uint32_t next = 0;
  };
  std::vector<Place> state(Pool8::kMaxProducers);
  const auto handle = [&](std::size_t place, const Ev& ev) {
    HSPC_CHECK(ev.intact(), "event %08x corrupted", ev.seq);
    Place& at = state[place];
    HSPC_CHECK(ev.seq >> 24 == at.id, "place %zu: producer %u's event, not %u's", place,
               ev.seq >> 24, at.id);
    HSPC_CHECK((ev.seq & 0xffffff) == at.next, "place %zu: event %u after %u", place,
               ev.seq & 0xffffff, at.next);
    ++at.next;
  };
  Pool8 pool(0, handle, restless(1, 3));
  for (std::uint32_t wave = 0; wave < kWaves; ++wave) {
    std::vector<Pool8::Producer*> ins;
    std::vector<std::thread> threads;
    for (std::uint32_t i = 0; i < kPerWave; ++i) {
      const std::uint32_t id = wave * kPerWave + i;
      Pool8::Producer& in = pool.add_producer();
      HSPC_CHECK(&in == &pool.producer(in.place()), "producer %u: place() is not its index", id);
      state[in.place()] = Place{id, 0};  // before its first push, which publishes it
      ins.push_back(&in);
    }
    // Started once the wave is added: a producer that finished at once would lend its place to
    // the next add_producer() (as a Python thread's session may: hspcprof checks for that).
    for (std::uint32_t i = 0; i < kPerWave; ++i) {
      const std::uint32_t id = wave * kPerWave + i;
      Pool8::Producer& in = *ins[i];
      threads.emplace_back([&in, id] { produce<Pool8::Producer, Ev>(in, id, kEvents, Rng(id)); });
    }
    for (auto& t : threads) t.join();
    for (std::uint32_t i = 0; i < kPerWave; ++i) {
      while (!ins[i]->finished()) std::this_thread::sleep_for(Micros(100));
      const Place& at = state[ins[i]->place()];
      HSPC_CHECK(at.id == wave * kPerWave + i && at.next == kEvents, "producer %u: %u of %u",
                 wave * kPerWave + i, at.next, kEvents);
    }
  }
  HSPC_CHECK(pool.producers() == kPerWave, "%zu places for %u at once", pool.producers(), kPerWave);
  pool.wait();
  HSPC_CHECK(pool.peak_consumers() >= 1 && pool.peak_consumers() <= 3, "peak of %zu consumers",
             pool.peak_consumers());
  std::printf("ok places: %u waves of %u, peak %zu consumers\n", kWaves, kPerWave,
              pool.peak_consumers());
}

// ---- adapt ----

void adapt(hspc_test::Watchdog& watchdog) {
  using Ev = Event<16>;
  std::atomic<bool> heavy{true};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> handled{0};
  constexpr std::size_t kProducers = 4;
  Pool8 pool(
      kProducers,
      [&](const Ev&) {
        if (heavy.load(std::memory_order_relaxed)) std::this_thread::sleep_for(Micros(20));
        handled.fetch_add(1, std::memory_order_relaxed);
      },
      restless(1, 3));
  HSPC_CHECK(pool.consumers() == 1, "started with %zu consumers, not min", pool.consumers());
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> pushed{0};
  for (std::size_t i = 0; i < kProducers; ++i) {
    threads.emplace_back([&, i] {
      auto& in = pool.producer(i);
      std::uint32_t seq = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        in.push(Ev(static_cast<std::uint32_t>(i << 24) | seq++));
        if (!heavy.load(std::memory_order_relaxed) && seq % 16 == 0) {
          in.flush();
          std::this_thread::sleep_for(Micros(500));  // a light load: the consumers idle
        }
      }
      pushed.fetch_add(seq);
      in.close();
    });
  }
  watchdog.arm("adapt: growth", std::chrono::seconds(120));
  while (pool.adjustments().grown == 0) std::this_thread::sleep_for(Micros(200));
  HSPC_CHECK(pool.consumers() >= 2 && pool.consumers() <= 3, "grown to %zu", pool.consumers());
  heavy.store(false);
  watchdog.arm("adapt: shrinking", std::chrono::seconds(120));
  while (pool.adjustments().shrunk == 0 || pool.consumers() != 1) {
    std::this_thread::sleep_for(Micros(200));
  }
  stop.store(true);
  for (auto& t : threads) t.join();
  pool.wait();
  HSPC_CHECK(handled.load() == pushed.load(), "%llu of %llu handled",
             (unsigned long long)handled.load(), (unsigned long long)pushed.load());
  const auto a = pool.adjustments();
  std::printf("ok adapt: grown %llu shrunk %llu over %llu intervals\n", (unsigned long long)a.grown,
              (unsigned long long)a.shrunk, (unsigned long long)a.intervals);
}

// ---- teardown while growing ----

void teardown(bool call_wait) {
  using Ev = Event<16>;
  std::atomic<std::uint64_t> handled{0};
  std::atomic<std::uint32_t> pushed{0};
  std::uint64_t grown = 0;
  {
    Pool8 pool(
        3,
        [&](const Ev&) {
          std::this_thread::sleep_for(Micros(10));
          handled.fetch_add(1, std::memory_order_relaxed);
        },
        restless(1, 3));
    std::vector<std::thread> threads;
    for (std::uint32_t i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        auto& in = pool.producer(i);
        for (std::uint32_t seq = 0; seq < 2000 / hspc_test::kSlowdown; ++seq) {
          in.push(Ev((i << 24) | seq));
          pushed.fetch_add(1);
        }
        if (call_wait) in.close();
      });
    }
    for (auto& t : threads) t.join();
    grown = pool.adjustments().grown;
    if (call_wait) {
      pool.wait();
      HSPC_CHECK(handled.load() == pushed.load(), "wait() returned with events unhandled");
    }
  }  // the destructor, while the controller may be adding a consumer
  HSPC_CHECK(handled.load() <= pushed.load(), "handled more than pushed");
  std::printf("ok teardown %s: %llu of %u handled, grown %llu\n", call_wait ? "wait" : "destructor",
              (unsigned long long)handled.load(), pushed.load(), (unsigned long long)grown);
}

// ---- a handler that throws ----

void throws() {
  using Ev = Event<16>;
  std::atomic<std::uint64_t> calls{0};
  std::atomic<bool> thrown{false};
  std::atomic<std::uint64_t> after{0};
  Pool8 pool(
      3,
      [&](const Ev& ev) {
        if (thrown.load()) after.fetch_add(1);
        calls.fetch_add(1);
        if (ev.seq == ((1U << 24) | 100)) {
          thrown.store(true);
          throw std::runtime_error("handler failed on purpose");
        }
      },
      PoolOptions{1, 1, true});  // one consumer: no call can be under way as it throws
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      auto& in = pool.producer(i);
      // Blocks only until the pool, draining without the handler, frees a buffer.
      for (std::uint32_t seq = 0; seq < 5000; ++seq) in.push(Ev((i << 24) | seq));
      in.close();
    });
  }
  for (auto& t : threads) t.join();
  bool rethrown = false;
  try {
    pool.wait();
  } catch (const std::runtime_error& e) {
    rethrown = std::string(e.what()) == "handler failed on purpose";
  }
  HSPC_CHECK(rethrown, "wait() did not rethrow the handler's exception");
  HSPC_CHECK(after.load() == 0, "the handler was called %llu times after it threw",
             (unsigned long long)after.load());
  pool.wait();  // once: the second wait() returns quietly
  std::printf("ok throws: %llu calls before the throw\n", (unsigned long long)calls.load());
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each stage as it passes (a hang shows where)
  hspc_test::Watchdog watchdog;
  watchdog.arm("rule", std::chrono::seconds(60));
  check_rule();
  check_evidence();
  check_trials();
  check_options();
  watchdog.arm("mixed", std::chrono::seconds(300));
  mixed<4, 256, 16>("buffers=4 buffer_bytes=256 event=16");
  mixed<2, 64, 64>("buffers=2 buffer_bytes=64 event=64");
  mixed<8, 4096, 8>("buffers=8 buffer_bytes=4096 event=8");
  mixed<4, 1024, 16, 200000>("buffers=4 buffer_bytes=1024 event=16 bound_ns=200000");
  watchdog.arm("late", std::chrono::seconds(120));
  late();
  watchdog.arm("places", std::chrono::seconds(120));
  places();
  adapt(watchdog);
  watchdog.arm("teardown", std::chrono::seconds(120));
  teardown(true);
  teardown(false);
  watchdog.arm("throws", std::chrono::seconds(120));
  throws();
  std::printf("pool %s: all passed\n", hspc::primitive_name(kPrimitive));
  return 0;
}
