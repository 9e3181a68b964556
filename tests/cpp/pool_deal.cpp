// BasicConsumerPool's deals for one primitive (HSPC_POOL_DEAL_PRIMITIVE, set per executable by
// meson): the unordered mode and producers' places reused.
// - unordered: several producers with a seeded mix of push/emplace/try_push and flushes, over a
//   table of buffers x buffer_bytes x event size (one variant with a latency bound); every event
//   must be handled exactly once and intact (a flag per event, set by exchange: a second handling
//   is caught, and so is a lost one at the end), with consumers() within its limits throughout;
// - blocking: a handler that sleeps, a tiny interval, two producers: unordered, the pool grows
//   past the producers; ordered, under the same load, it never does;
// - reuse: thousands of producers that come and go (add_producer, a few events, close), four
//   threads at a time, faster than the pool drains them, ordered and unordered: every event
//   once, and never std::length_error, which the 257th place would throw without reuse;
// - alive: 256 producers alive at once; the 257th is refused while none has closed, and once
//   one has, add_producer() waits for its events to be handled and takes its place;
// - teardown: unordered, wait() and the destructor (producers unclosed) while it grows.
// Not a timing test: the waits for growth and reuse are bounded only by the watchdog.
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

#include "hspc/pool.hpp"
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

constexpr Primitive kPrimitive = Primitive::HSPC_POOL_DEAL_PRIMITIVE;
constexpr std::uint32_t kMixedEvents = 20000 / hspc_test::kSlowdown;

// A flag per event a producer may push (producer id in seq's top byte, index below): handling
// one twice fails at once, and expect() finds any not handled.
class Seen {
 public:
  Seen(std::size_t producers, std::uint32_t events)
      : events_(events), flags_(new std::atomic<std::uint8_t>[producers * events]()) {}

  template <class Ev>
  void handle(const Ev& ev) {
    HSPC_CHECK(ev.intact(), "event %08x corrupted", ev.seq);
    const std::uint32_t id = ev.seq >> 24;
    const std::uint32_t i = ev.seq & 0xffffff;
    HSPC_CHECK(i < events_, "producer %u: event %u out of range", id, i);
    HSPC_CHECK(flags_[id * std::size_t{events_} + i].exchange(1) == 0,
               "producer %u: event %u handled twice", id, i);
  }

  // Producer `id` pushed events 0 .. pushed - 1: each handled, none beyond.
  void expect(std::size_t id, std::uint32_t pushed) const {
    for (std::uint32_t i = 0; i < events_; ++i) {
      const bool handled = flags_[id * events_ + i].load() != 0;
      HSPC_CHECK(handled == (i < pushed), "producer %zu: event %u of %u %s", id, i, pushed,
                 handled ? "handled but never pushed" : "never handled");
    }
  }

 private:
  const std::uint32_t events_;
  const std::unique_ptr<std::atomic<std::uint8_t>[]> flags_;
};

using Ev16 = Event<16>;
using Pool8 = hspc::BasicConsumerPool<Ev16, kPrimitive, 4, 256, 64>;

// ---- unordered ----

template <class Pool>
void run_unordered(const std::string& name, std::size_t producers, PoolOptions options,
                   std::uint64_t seed) {
  using Ev = typename Pool::value_type;
  Seen seen(producers, kMixedEvents);
  Pool pool(
      producers, [&](const Ev& ev) { seen.handle(ev); }, options);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < producers; ++i) {
    threads.emplace_back([&, i] {
      produce<typename Pool::Producer, Ev>(pool.producer(i), static_cast<std::uint32_t>(i),
                                           kMixedEvents, Rng(seed * 131 + i));
    });
  }
  for (int i = 0; i < 50; ++i) {
    const std::size_t now = pool.consumers();
    HSPC_CHECK(now >= options.min_consumers && now <= options.max_consumers, "%s: %zu consumers",
               name.c_str(), now);
    std::this_thread::sleep_for(Micros(200));
  }
  for (auto& t : threads) t.join();
  pool.wait();
  for (std::size_t i = 0; i < producers; ++i) seen.expect(i, kMixedEvents);
  std::printf("ok unordered %s producers=%zu: grown %llu shrunk %llu\n", name.c_str(), producers,
              (unsigned long long)pool.adjustments().grown,
              (unsigned long long)pool.adjustments().shrunk);
}

template <std::size_t B, std::size_t BufferBytes, std::size_t EventBytes, std::size_t Bound = 0>
void unordered(const char* shape) {
  using Pool =
      hspc::BasicConsumerPool<Event<EventBytes>, kPrimitive, B, BufferBytes, 64, 5000, Bound>;
  const std::string name = std::string(hspc::primitive_name(kPrimitive)) + " " + shape;
  run_unordered<Pool>(name + " fixed", 3, PoolOptions{2, 2, false}, 1);
  run_unordered<Pool>(name + " restless", 2, restless(1, 3, false), 2);  // more than producers
  run_unordered<Pool>(name + " one", 4, PoolOptions{1, 1, false}, 3);
}

// ---- a blocking handler ----

// Two producers pushing until told to stop, into a pool whose handler sleeps. Returns the most
// consumers seen; `enough(most)` says when to stop looking.
template <class Enough>
std::size_t blocking_run(bool ordered, Enough enough) {
  constexpr std::size_t kProducers = 2;
  constexpr std::uint32_t kMost = 1U << 20;
  Seen seen(kProducers, kMost);
  std::atomic<bool> stop{false};
  std::uint32_t pushed[kProducers] = {};
  Pool8 pool(
      kProducers,
      [&](const Ev16& ev) {
        std::this_thread::sleep_for(Micros(50));
        seen.handle(ev);
      },
      restless(1, 5, ordered));
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < kProducers; ++i) {
    threads.emplace_back([&, i] {
      auto& in = pool.producer(i);
      std::uint32_t seq = 0;
      while (!stop.load(std::memory_order_relaxed) && seq < kMost) in.push(Ev16((i << 24) | seq++));
      pushed[i] = seq;
      in.close();
    });
  }
  std::size_t most = 0;
  while (!enough(most, pool.adjustments().intervals)) {
    const std::size_t now = pool.consumers();
    most = now > most ? now : most;
    std::this_thread::sleep_for(Micros(200));
  }
  stop.store(true);
  for (auto& t : threads) t.join();
  pool.wait();
  for (std::size_t i = 0; i < kProducers; ++i) seen.expect(i, pushed[i]);
  return most;
}

void blocking(hspc_test::Watchdog& watchdog) {
  watchdog.arm("blocking: unordered growth past the producers", std::chrono::seconds(120));
  const std::size_t grew =
      blocking_run(false, [](std::size_t most, std::uint64_t) { return most > 2; });
  watchdog.arm("blocking: ordered, 40 intervals", std::chrono::seconds(120));
  const std::size_t held =
      blocking_run(true, [](std::size_t, std::uint64_t intervals) { return intervals >= 40; });
  HSPC_CHECK(held <= 2, "ordered: %zu consumers for two producers", held);
  std::printf("ok blocking: unordered reached %zu consumers for 2 producers, ordered %zu\n", grew,
              held);
}

// ---- producers that come and go ----

void reuse(bool ordered) {
  constexpr std::uint32_t kThreads = 4;
  constexpr std::uint32_t kCycles = 1000 / hspc_test::kSlowdown;
  constexpr std::uint32_t kMost = kCycles * 64;
  Seen seen(kThreads, kMost);
  Pool8 pool(
      0, [&](const Ev16& ev) { seen.handle(ev); }, restless(1, 3, ordered));
  std::uint32_t pushed[kThreads] = {};
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Rng rng(t + 99);
      std::uint32_t seq = 0;
      for (std::uint32_t cycle = 0; cycle < kCycles; ++cycle) {
        auto& in = pool.add_producer();  // std::length_error past 256 places: a failure
        for (std::uint32_t n = rng.below(64); n > 0; --n) in.push(Ev16((t << 24) | seq++));
        if (rng.below(2) == 0) in.flush();
        in.close();
      }
      pushed[t] = seq;
    });
  }
  for (auto& t : threads) t.join();
  pool.wait();
  for (std::uint32_t t = 0; t < kThreads; ++t) seen.expect(t, pushed[t]);
  std::printf("ok reuse %s: %u producers came and went in %zu places\n",
              ordered ? "ordered" : "unordered", kThreads * kCycles, pool.producers());
}

// 256 alive: the next is refused; once one has closed, the next waits for its end to be seen and
// has its place.
void alive(bool ordered) {
  Pool8 pool(
      Pool8::kMaxProducers, [](const Ev16&) {}, PoolOptions{1, 2, ordered});
  bool refused = false;
  try {
    (void)pool.add_producer();
  } catch (const std::length_error&) {
    refused = true;
  }
  HSPC_CHECK(refused, "a 257th producer alive was accepted");
  pool.producer(17).push(Ev16(17U << 24));
  pool.producer(17).close();
  Pool8::Producer& added = pool.add_producer();  // waits for a consumer to see 17's end
  HSPC_CHECK(&added == &pool.producer(17), "the new producer did not take the closed one's place");
  HSPC_CHECK(pool.producers() == Pool8::kMaxProducers, "%zu places", pool.producers());
  for (std::size_t i = 0; i < Pool8::kMaxProducers; ++i) pool.producer(i).close();
  pool.wait();
  std::printf("ok alive %s: 256 at once, the 257th after one left\n",
              ordered ? "ordered" : "unordered");
}

// ---- teardown while growing ----

void teardown(bool call_wait) {
  std::atomic<std::uint64_t> handled{0};
  std::atomic<std::uint32_t> pushed{0};
  {
    Pool8 pool(
        2,
        [&](const Ev16&) {
          std::this_thread::sleep_for(Micros(10));
          handled.fetch_add(1, std::memory_order_relaxed);
        },
        restless(1, 4, false));
    std::vector<std::thread> threads;
    for (std::uint32_t i = 0; i < 2; ++i) {
      threads.emplace_back([&, i] {
        auto& in = pool.producer(i);
        for (std::uint32_t seq = 0; seq < 2000 / hspc_test::kSlowdown; ++seq) {
          in.push(Ev16((i << 24) | seq));
          pushed.fetch_add(1);
        }
        if (call_wait) in.close();
      });
    }
    for (auto& t : threads) t.join();
    if (call_wait) {
      pool.wait();
      HSPC_CHECK(handled.load() == pushed.load(), "wait() returned with events unhandled");
    }
  }  // the destructor, while the controller may be adding a consumer
  HSPC_CHECK(handled.load() <= pushed.load(), "handled more than pushed");
  std::printf("ok unordered teardown %s: %llu of %u handled\n", call_wait ? "wait" : "destructor",
              (unsigned long long)handled.load(), pushed.load());
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each stage as it passes (a hang shows where)
  hspc_test::Watchdog watchdog;
  watchdog.arm("unordered", std::chrono::seconds(300));
  unordered<4, 256, 16>("buffers=4 buffer_bytes=256 event=16");
  unordered<2, 64, 64>("buffers=2 buffer_bytes=64 event=64");
  unordered<8, 4096, 8>("buffers=8 buffer_bytes=4096 event=8");
  unordered<4, 1024, 16, 200000>("buffers=4 buffer_bytes=1024 event=16 bound_ns=200000");
  blocking(watchdog);
  watchdog.arm("reuse", std::chrono::seconds(300));
  reuse(true);
  reuse(false);
  watchdog.arm("alive", std::chrono::seconds(120));
  alive(true);
  alive(false);
  watchdog.arm("teardown", std::chrono::seconds(120));
  teardown(true);
  teardown(false);
  std::printf("pool_deal %s: all passed\n", hspc::primitive_name(kPrimitive));
  return 0;
}
