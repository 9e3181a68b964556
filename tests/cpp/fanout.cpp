// Threaded stress of BasicFanOut for one primitive (HSPC_FANOUT_PRIMITIVE, set per executable by
// meson) over a table of buffers x buffer_bytes x event size x padding (x latency bound), each with
// 1, 2, 3 and 5 consumers. Each variant runs:
// - mixed: a producer with a random (seeded) mix of push/emplace/try_push and random flushes,
//   consumers with random mixes of pop/try_pop/pop_for/consume. The producer notes which consumer
//   each event must reach (the spec: buffers go round robin, a buffer ends when full or flushed);
//   every consumer must receive exactly its events, intact and in push order, and every run that
//   consume hands over must be consecutive events (one buffer's worth, never two buffers mixed).
//   With a latency bound buffers also end where the producer's clock says, which the producer
//   cannot predict: the round robin is then checked from what the consumers received
//   (check_round_robin);
// - wakeups: pop_for timeouts on empty channels, flushes waking the consumer blocked in
//   pop/pop_for/consume whose turn it is, then close waking every blocked consumer.
// Built against the runtime by meson, or against a header hspc-gen wrote, like stress.cpp:
// -DHSPC_GENERATED_HEADER="path" -DHSPC_GENERATED_NAMESPACE=name.
#ifdef HSPC_GENERATED_HEADER
#include HSPC_GENERATED_HEADER
namespace hspc = HSPC_GENERATED_NAMESPACE;
#else
#include "hspc/fanout.hpp"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using hspc::Primitive;
using hspc_test::Event;
using hspc_test::Rng;

constexpr Primitive kPrimitive = Primitive::HSPC_FANOUT_PRIMITIVE;
constexpr std::uint32_t kMixedEvents = 40000 / hspc_test::kSlowdown;
constexpr std::uint32_t kWakeRounds = 11;
constexpr std::uint32_t kBelowWrap = 0xffffffffU;
constexpr std::size_t kConsumerCounts[] = {1, 2, 3, 5};

template <std::size_t B, std::size_t BufferBytes, std::size_t EventBytes, std::size_t Padding,
          std::size_t MaxLatencyNs = 0>
struct Config {
  using Ev = Event<EventBytes, EventBytes == 64 ? 64 : 4>;
  using FanOut = hspc::BasicFanOut<Ev, kPrimitive, B, BufferBytes, Padding, 5000, MaxLatencyNs>;

  static std::string name(std::size_t consumers) {
    return std::string(hspc::primitive_name(kPrimitive)) +
           " consumers=" + std::to_string(consumers) + " buffers=" + std::to_string(B) +
           " buffer_bytes=" + std::to_string(BufferBytes) + " event=" + std::to_string(EventBytes) +
           " padding=" + std::to_string(Padding) +
           (MaxLatencyNs != 0 ? " bound_ns=" + std::to_string(MaxLatencyNs) : "");
  }
};

// What one consumer received, in order.
template <class Ev>
struct Received {
  std::vector<std::uint32_t> seqs;
  void take(const Ev& ev) {
    HSPC_CHECK(ev.intact(), "event %u corrupted", ev.seq);
    seqs.push_back(ev.seq);
  }
};

// consume's callback: a run is the rest of one buffer, so its events are consecutive.
template <class Ev, std::size_t MaxRun>
struct TakeRun {
  Received<Ev>* received;
  void operator()(const Ev* data, std::size_t n) const {
    HSPC_CHECK(n >= 1 && n <= MaxRun, "run of %zu events", n);
    for (std::size_t i = 0; i < n; ++i) {
      HSPC_CHECK(i == 0 || data[i].seq == data[i - 1].seq + 1, "run mixes buffers: %u after %u",
                 data[i].seq, data[i - 1].seq);
      received->take(data[i]);
    }
  }
};

// The spec's assignment of events to consumers, kept by the producer as it pushes.
struct RoundRobin {
  std::size_t consumers;
  std::size_t per_buffer;
  std::size_t current = 0;
  std::size_t fill = 0;
  std::vector<std::uint32_t> owner;  // owner[seq]: the consumer event seq must reach

  void pushed(std::uint32_t seq) {
    owner[seq] = static_cast<std::uint32_t>(current);
    if (++fill == per_buffer) next();
  }
  void flushed() {
    if (fill != 0) next();
  }
  void next() {
    fill = 0;
    current = (current + 1) % consumers;
  }
};

template <class FanOut>
RoundRobin produce_mixed(FanOut& fan, Rng rng, std::uint32_t events, std::uint32_t flush_period) {
  using Ev = typename FanOut::value_type;
  RoundRobin model{fan.consumers(), FanOut::kEventsPerBuffer, 0, 0, {}};
  model.owner.resize(events);
  for (std::uint32_t seq = 0; seq < events; ++seq) {
    const Ev ev(seq);
    switch (rng.below(4)) {
      case 0:
        fan.emplace(seq);
        break;
      case 1:
        while (!fan.try_push(ev)) std::this_thread::yield();
        break;
      case 2:
        if (!fan.try_push(ev)) fan.push(ev);
        break;
      default:
        fan.push(ev);
    }
    model.pushed(seq);
    if (flush_period != 0 && rng.below(flush_period) == 0) {
      fan.flush();
      model.flushed();
    }
    if (rng.below(2048) == 0) std::this_thread::yield();
  }
  fan.close();
  return model;
}

using Micros = std::chrono::microseconds;

template <class FanOut, class Ev = typename FanOut::value_type>
void check_ended(FanOut& fan, std::size_t k, Received<Ev>& received) {
  const std::size_t delivered = received.seqs.size();
  Ev ev;
  HSPC_CHECK(fan.done(k), "done(%zu) false after the end of stream", k);
  HSPC_CHECK(!fan.pop(k, ev), "pop after the end");
  HSPC_CHECK(!fan.try_pop(k, ev), "try_pop after the end");
  HSPC_CHECK(!fan.pop_for(k, ev, Micros(500)), "pop_for after the end");
  HSPC_CHECK(fan.consume(k, TakeRun<Ev, FanOut::kEventsPerBuffer>{&received}) == 0,
             "consume after the end");
  HSPC_CHECK(received.seqs.size() == delivered, "events after the end");
}

template <class FanOut, class Ev = typename FanOut::value_type>
void consume_mixed(FanOut& fan, std::size_t k, Rng rng, Received<Ev>& received) {
  Ev ev;
  for (;;) {
    const std::uint32_t op = rng.below(16);
    if (op < 5) {
      if (!fan.pop(k, ev)) break;
      received.take(ev);
    } else if (op < 8) {
      if (fan.try_pop(k, ev)) received.take(ev);
    } else if (op < 10) {
      if (fan.pop_for(k, ev, Micros(rng.below(200)))) {
        received.take(ev);
      } else if (fan.done(k)) {
        break;
      }
    } else if (fan.consume(k, TakeRun<Ev, FanOut::kEventsPerBuffer>{&received}) == 0) {
      break;
    }
  }
  check_ended(fan, k, received);
}

// Every consumer got exactly the events the spec assigns it, in push order: together they hold
// every event exactly once, and a buffer never straddles two consumers.
template <class Ev>
void check_assignment(const RoundRobin& model, const std::vector<Received<Ev>>& received,
                      const std::string& name) {
  std::vector<std::size_t> at(received.size(), 0);
  for (std::uint32_t seq = 0; seq < model.owner.size(); ++seq) {
    const std::uint32_t k = model.owner[seq];
    const std::vector<std::uint32_t>& got = received[k].seqs;
    HSPC_CHECK(at[k] < got.size(), "%s: consumer %u lacks event %u", name.c_str(), k, seq);
    HSPC_CHECK(got[at[k]] == seq, "%s: consumer %u got %u where %u was due", name.c_str(), k,
               got[at[k]], seq);
    ++at[k];
  }
  for (std::size_t k = 0; k < received.size(); ++k) {
    HSPC_CHECK(at[k] == received[k].seqs.size(), "%s: consumer %zu got %zu extra events",
               name.c_str(), k, received[k].seqs.size() - at[k]);
  }
}

// The round robin judged from the consumers' side alone (for buffers the producer cannot predict).
// With two or more consumers a consumer's successive buffers are apart (another consumer's
// non-empty buffer lies between), so its maximal runs of consecutive events are its buffers. In
// stream order those buffers must tile the stream, each at most per_buffer events, and go to
// consumers 0, 1, ..., K - 1, 0, 1, ... One consumer simply gets the whole stream in order.
template <class Ev>
void check_round_robin(std::size_t per_buffer, std::uint32_t events,
                       const std::vector<Received<Ev>>& received, const std::string& name) {
  struct Buffer {
    std::uint32_t first, size;
    std::size_t consumer;
  };
  std::vector<Buffer> buffers;
  for (std::size_t k = 0; k < received.size(); ++k) {
    const std::vector<std::uint32_t>& got = received[k].seqs;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (received.size() > 1 && i > 0 && got[i] == got[i - 1] + 1) {
        ++buffers.back().size;
      } else {
        buffers.push_back({got[i], 1, received.size() > 1 ? k : 0});
      }
    }
  }
  std::sort(buffers.begin(), buffers.end(),
            [](const Buffer& a, const Buffer& b) { return a.first < b.first; });
  std::uint32_t next = 0;
  for (std::size_t j = 0; j < buffers.size(); ++j) {
    const Buffer& b = buffers[j];
    HSPC_CHECK(b.first == next, "%s: event %u missing or doubled", name.c_str(), next);
    HSPC_CHECK(received.size() == 1 || b.size <= per_buffer, "%s: a buffer of %u events",
               name.c_str(), b.size);
    HSPC_CHECK(b.consumer == j % received.size(), "%s: buffer %zu (from %u) went to consumer %zu",
               name.c_str(), j, b.first, b.consumer);
    next += b.size;
  }
  HSPC_CHECK(next == events, "%s: %u of %u events", name.c_str(), next, events);
}

template <class Cfg>
void mixed(std::size_t consumers, std::uint64_t seed, std::uint32_t flush_period,
           std::uint32_t start) {
  using Ev = typename Cfg::Ev;
  typename Cfg::FanOut fan(consumers, hspc::detail::CounterStart{start});
  std::vector<Received<Ev>> received(consumers);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < consumers; ++k) {
    received[k].seqs.reserve(kMixedEvents);
    threads.emplace_back([&, k] { consume_mixed(fan, k, Rng(seed * 31 + 7 + k), received[k]); });
  }
  const RoundRobin model = produce_mixed(fan, Rng(seed), kMixedEvents, flush_period);
  for (std::thread& t : threads) t.join();
  // Without a bound both checks apply (the second is then checked against the first).
  if constexpr (Cfg::FanOut::kMaxLatencyNs == 0) {
    check_assignment(model, received, Cfg::name(consumers));
  }
  check_round_robin(Cfg::FanOut::kEventsPerBuffer, kMixedEvents, received, Cfg::name(consumers));
}

void await_stage(const std::atomic<std::uint32_t>& stage, std::uint32_t value) {
  while (stage.load(std::memory_order_acquire) != value) std::this_thread::yield();
}

// One blocking receive by consumer k of the single flushed event, chosen by `how`; false at the
// end of stream.
template <class FanOut, class Ev = typename FanOut::value_type>
bool receive(FanOut& fan, std::size_t k, Received<Ev>& received, std::uint32_t how) {
  Ev ev;
  bool got = false;
  switch (how % 4) {
    case 0:
      got = fan.pop(k, ev);
      break;
    case 1:
      got = fan.pop_for(k, ev, std::chrono::hours::max());
      break;
    case 2:
      got = fan.pop_for(k, ev, Micros(std::chrono::minutes(10)));
      break;
    default:
      return fan.consume(k, TakeRun<Ev, 1>{&received}) == 1;
  }
  if (got) received.take(ev);
  return got;
}

// Round r's single event goes to consumer r % K (each flush moves the producer on), and close
// must wake every consumer, whichever call it is blocked in.
template <class Cfg>
void wakeups(std::size_t consumers, std::uint64_t seed, std::uint32_t start) {
  using Ev = typename Cfg::Ev;
  typename Cfg::FanOut fan(consumers, hspc::detail::CounterStart{start});
  constexpr std::uint32_t kClosing = kWakeRounds + 1;
  std::vector<std::atomic<std::uint32_t>> stage(consumers);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < consumers; ++k) {
    threads.emplace_back([&, k] {
      Ev ev;
      HSPC_CHECK(!fan.pop_for(k, ev, Micros(200)), "pop_for on an empty fan-out");
      HSPC_CHECK(!fan.try_pop(k, ev) && !fan.done(k), "empty, open fan-out");
      Received<Ev> received;
      std::uint32_t rounds = 0;
      for (std::uint32_t r = static_cast<std::uint32_t>(k); r < kWakeRounds;
           r += static_cast<std::uint32_t>(consumers), ++rounds) {
        stage[k].store(r + 1, std::memory_order_release);
        HSPC_CHECK(receive(fan, k, received, r + static_cast<std::uint32_t>(seed)),
                   "consumer %zu, round %u: nothing received", k, r);
        HSPC_CHECK(received.seqs.back() == r, "consumer %zu got %u in round %u", k,
                   received.seqs.back(), r);
      }
      stage[k].store(kClosing, std::memory_order_release);
      HSPC_CHECK(!receive(fan, k, received, static_cast<std::uint32_t>(seed + k)),
                 "close must end consumer %zu's stream", k);
      HSPC_CHECK(received.seqs.size() == rounds, "consumer %zu: %zu of %u", k, received.seqs.size(),
                 rounds);
      check_ended(fan, k, received);
    });
  }
  Rng rng(seed);
  // The sleeps make it likely, not certain, that the consumer is already blocked; both orders
  // must work, so nothing here depends on how long anything took.
  for (std::uint32_t r = 0; r < kWakeRounds; ++r) {
    await_stage(stage[r % consumers], r + 1);
    std::this_thread::sleep_for(Micros(rng.below(300)));
    fan.push(Ev(r));
    fan.flush();
  }
  for (std::size_t k = 0; k < consumers; ++k) await_stage(stage[k], kClosing);
  std::this_thread::sleep_for(Micros(rng.below(300)));
  fan.close();
  for (std::thread& t : threads) t.join();
}

// The constructor's precondition on the consumer count.
template <class Cfg>
void rejects_bad_counts() {
  using FanOut = typename Cfg::FanOut;
  for (std::size_t bad : {std::size_t{0}, FanOut::kMaxConsumers + 1}) {
    bool threw = false;
    try {
      FanOut fan(bad);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    HSPC_CHECK(threw, "%zu consumers accepted", bad);
  }
  const FanOut widest(FanOut::kMaxConsumers);
  HSPC_CHECK(widest.consumers() == FanOut::kMaxConsumers, "consumers()");
}

template <class Cfg>
void run_variant(hspc_test::Watchdog& watchdog) {
  rejects_bad_counts<Cfg>();
  for (std::size_t consumers : kConsumerCounts) {
    const std::string name = Cfg::name(consumers);
    watchdog.arm(name, std::chrono::minutes(2));
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t seed = std::hash<std::string>{}(name)&0xffffU;
    mixed<Cfg>(consumers, seed + 1, 4, kBelowWrap - 3);
    mixed<Cfg>(consumers, seed + 2, 0, 0);
    mixed<Cfg>(consumers, seed + 3, 200, kBelowWrap);
    wakeups<Cfg>(consumers, seed, consumers % 2 == 0 ? 0 : kBelowWrap - 2);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    std::printf("ok %-75s %6lld ms\n", name.c_str(), static_cast<long long>(ms.count()));
    std::fflush(stdout);
  }
}

template <class... Cfgs>
void run_all() {
  hspc_test::Watchdog watchdog;
  (run_variant<Cfgs>(watchdog), ...);
}

}  // namespace

int main() {
  // Buffers, buffer_bytes, event bytes, padding: one event per buffer (every push hands over and
  // moves on), a few per buffer, many per buffer, and buffers larger than most runs.
  run_all<Config<2, 64, 64, 0>,          // 1 per buffer, over-aligned events, packed
          Config<3, 64, 16, 128>,        // 4 per buffer
          Config<8, 1024, 24, 0>,        // 42 per buffer
          Config<2, 1024, 8, 64>,        // 128 per buffer
          Config<4, 65536, 16, 512>>();  // 4096 per buffer
  // With a latency bound (the last argument, ns): 1 ns is due at every push (a buffer per event);
  // 2 us and 20 us end buffers where the clock says, among full ones and flushes.
  run_all<Config<3, 64, 16, 128, 1>,          // 4 per buffer
          Config<2, 1024, 8, 64, 2000>,       // 128 per buffer
          Config<4, 65536, 16, 0, 20000>>();  // 4096 per buffer
  return 0;
}
