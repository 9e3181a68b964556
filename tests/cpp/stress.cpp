// Threaded stress of BasicChannel for one primitive (HSPC_STRESS_PRIMITIVE, set per executable by
// meson so that Ninja builds the primitives on both cores) over a table of buffers x buffer_bytes
// x event size x padding x producer stack offset x latency bound. Each variant runs:
// - mixed: random (seeded) mixes of push/emplace/try_push/bulk push with random flushes against
//   pop/try_pop/bulk pop/pop_for/consume; checks exactly-once, in-order, intact delivery and the
//   sums. With a latency bound the producer also hands slots over partly filled wherever its clock
//   says so, among those calls; a 1 ns bound is due at every push, so no run the consumer gets
//   may then be longer than one bulk push;
// - wakeups: pop_for timeouts on an empty channel, then flush waking a consumer blocked in
//   pop/pop_for/consume, then close waking a blocked consumer.
// Built against the runtime by meson, or against a header hspc-gen wrote (the whole runtime
// re-wrapped in the app's namespace) by the end-to-end test: -DHSPC_GENERATED_HEADER="path"
// -DHSPC_GENERATED_NAMESPACE=name.
#ifdef HSPC_GENERATED_HEADER
#include HSPC_GENERATED_HEADER
namespace hspc = HSPC_GENERATED_NAMESPACE;
#else
#include "hspc/channel.hpp"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace {

using hspc::Primitive;
using hspc_test::Event;
using hspc_test::Rng;

constexpr Primitive kPrimitive = Primitive::HSPC_STRESS_PRIMITIVE;
constexpr std::uint32_t kMixedEvents = 120000 / hspc_test::kSlowdown;
constexpr std::uint32_t kWakeRounds = 9;
constexpr std::uint32_t kBulkMax = 37;  // odd, so bulk runs straddle slot boundaries
constexpr std::uint32_t kBelowWrap = 0xffffffffU;

template <std::size_t B, std::size_t BufferBytes, std::size_t EventBytes, std::size_t Padding,
          std::size_t StackOffset, std::size_t MaxLatencyNs = 0, std::size_t SpinNs = 5000,
          std::size_t PrefetchBytes = 0, bool HugePages = false>
struct Config {
  // 64-byte events also get 64-byte alignment: the layout must honour an over-aligned T.
  using Ev = Event<EventBytes, EventBytes == 64 ? 64 : 4>;
  using Channel = hspc::BasicChannel<Ev, kPrimitive, B, BufferBytes, Padding, SpinNs, MaxLatencyNs,
                                     PrefetchBytes, HugePages>;
  static constexpr std::size_t kStackOffset = StackOffset;

  static std::string name() {
    return std::string(hspc::primitive_name(kPrimitive)) + " buffers=" + std::to_string(B) +
           " buffer_bytes=" + std::to_string(BufferBytes) + " event=" + std::to_string(EventBytes) +
           " padding=" + std::to_string(Padding) + " stack=" + std::to_string(StackOffset) +
           (MaxLatencyNs != 0 ? " bound_ns=" + std::to_string(MaxLatencyNs) : "") +
           (SpinNs != 5000 ? " spin_ns=" + std::to_string(SpinNs) : "") +
           (PrefetchBytes != 0 ? " prefetch=" + std::to_string(PrefetchBytes) : "") +
           (HugePages ? " huge_pages" : "");
  }
};

// The longest run consume may hand over: a slot, or with a 1 ns bound (due at every clock reading,
// which then comes at every push) what one push or bulk push put in.
template <class Channel>
constexpr std::size_t kMaxRun =
    Channel::kMaxLatencyNs == 1 && kBulkMax < Channel::kEventsPerBuffer ? kBulkMax
                                                                        : Channel::kEventsPerBuffer;

// The consumer's record: the next sequence number it must see and the checksum sum so far.
template <class Ev>
struct Tally {
  std::uint32_t next = 0;
  std::uint64_t sum = 0;
  void take(const Ev& ev) {
    HSPC_CHECK(ev.seq == next, "got seq %u, expected %u", ev.seq, next);
    HSPC_CHECK(ev.intact(), "event %u corrupted", ev.seq);
    ++next;
    sum += ev.check;
  }
};

// consume's callback everywhere (one type, so one instantiation per channel: these tests are
// compiled with UBSan too, whose compile time grows with every instantiation).
template <class Ev, std::size_t MaxRun>
struct TakeRun {
  Tally<Ev>* tally;
  void operator()(const Ev* data, std::size_t n) const {
    HSPC_CHECK(n >= 1 && n <= MaxRun, "run of %zu events", n);
    for (std::size_t i = 0; i < n; ++i) tally->take(data[i]);
  }
};

template <class Channel>
std::uint64_t produce_mixed(Channel& ch, Rng rng, std::uint32_t events,
                            std::uint32_t flush_period) {
  using Ev = typename Channel::value_type;
  std::uint64_t sum = 0;
  Ev run[kBulkMax];
  for (std::uint32_t seq = 0; seq < events; ++seq) {
    const Ev ev(seq);
    sum += ev.check;
    if (rng.below(8) == 0) {  // a bulk push of up to kBulkMax events, maybe across slots
      const std::uint32_t n = 1 + rng.below(std::min<std::uint32_t>(kBulkMax, events - seq));
      run[0] = ev;
      for (std::uint32_t i = 1; i < n; ++i) {
        run[i] = Ev(seq + i);
        sum += run[i].check;
      }
      ch.push(run, n);
      seq += n - 1;
      continue;
    }
    switch (rng.below(4)) {
      case 0:
        ch.emplace(seq);
        break;
      case 1:
        if (!ch.try_push(ev)) ch.push(ev);
        break;
      default:
        ch.push(ev);
    }
    if (flush_period != 0 && rng.below(flush_period) == 0) ch.flush();
    // Now and then the consumer catches up and has to wait.
    if (rng.below(2048) == 0) std::this_thread::yield();
  }
  ch.close();
  return sum;
}

using Micros = std::chrono::microseconds;

template <class Channel, class Ev = typename Channel::value_type>
void check_ended(Channel& ch, Tally<Ev>& tally) {
  const std::uint32_t delivered = tally.next;
  Ev ev;
  HSPC_CHECK(ch.done(), "done() false after the end of stream");
  HSPC_CHECK(!ch.pop(ev), "pop after the end");
  HSPC_CHECK(!ch.try_pop(ev), "try_pop after the end");
  HSPC_CHECK(!ch.pop_for(ev, Micros(1000)), "pop_for after the end");
  HSPC_CHECK(ch.consume(TakeRun<Ev, kMaxRun<Channel>>{&tally}) == 0, "consume after end");
  HSPC_CHECK(tally.next == delivered, "events after the end");
}

template <class Channel, class Ev = typename Channel::value_type>
Tally<Ev> consume_mixed(Channel& ch, Rng rng) {
  Tally<Ev> tally;
  Ev ev;
  for (;;) {
    const std::uint32_t op = rng.below(16);
    if (op < 5) {
      if (!ch.pop(ev)) break;
      tally.take(ev);
    } else if (op < 8) {
      if (ch.try_pop(ev)) tally.take(ev);
    } else if (op < 9) {
      Ev run[kBulkMax];
      const std::size_t n = ch.pop(run, 1 + rng.below(kBulkMax));
      if (n == 0) break;
      for (std::size_t i = 0; i < n; ++i) tally.take(run[i]);
    } else if (op < 10) {
      if (ch.pop_for(ev, Micros(rng.below(200)))) {
        tally.take(ev);
      } else if (ch.done()) {
        break;
      }
    } else if (ch.consume(TakeRun<Ev, kMaxRun<Channel>>{&tally}) == 0) {
      break;
    }
  }
  check_ended(ch, tally);
  return tally;
}

// `start`: where the 32-bit hand-off counters begin; just below 2^32 makes the run cross the wrap.
template <class Cfg>
void mixed(std::uint64_t seed, std::uint32_t flush_period, std::uint32_t start) {
  typename Cfg::Channel ch(hspc::detail::CounterStart{start});
  Tally<typename Cfg::Ev> tally;
  std::thread consumer([&] { tally = consume_mixed(ch, Rng(seed * 31 + 7)); });
  std::uint64_t sum = 0;
  hspc::run_with_stack_offset_bytes<Cfg::kStackOffset>(
      [&] { sum = produce_mixed(ch, Rng(seed), kMixedEvents, flush_period); });
  consumer.join();
  HSPC_CHECK(tally.next == kMixedEvents, "%s: %u of %u events", Cfg::name().c_str(), tally.next,
             kMixedEvents);
  HSPC_CHECK(tally.sum == sum, "%s: checksum sum differs", Cfg::name().c_str());
}

void await_stage(const std::atomic<std::uint32_t>& stage, std::uint32_t value) {
  while (stage.load(std::memory_order_acquire) != value) std::this_thread::yield();
}

// One blocking receive of the single flushed event, chosen by `how`; false at the end of stream.
template <class Channel, class Ev = typename Channel::value_type>
bool receive(Channel& ch, Tally<Ev>& tally, std::uint32_t how) {
  Ev ev;
  bool got = false;
  switch (how % 4) {
    case 0:
      got = ch.pop(ev);
      break;
    case 1:
      got = ch.pop_for(ev, std::chrono::hours::max());  // "forever" must not overflow
      break;
    case 2:
      got = ch.pop_for(ev, Micros(std::chrono::minutes(10)));
      break;
    default:
      // Exactly one event was flushed, so a run longer than 1 is a failure.
      return ch.consume(TakeRun<Ev, 1>{&tally}) == 1;
  }
  if (got) tally.take(ev);
  return got;
}

template <class Cfg>
void wakeups(std::uint64_t seed, std::uint32_t start) {
  using Ev = typename Cfg::Ev;
  typename Cfg::Channel ch(hspc::detail::CounterStart{start});
  std::atomic<std::uint32_t> stage{0};
  std::thread consumer([&] {
    Ev ev;
    HSPC_CHECK(!ch.pop_for(ev, Micros(200)), "pop_for on an empty channel");
    HSPC_CHECK(!ch.pop_for(ev, Micros(0)), "pop_for(0) on an empty channel");
    HSPC_CHECK(!ch.pop_for(ev, Micros(-5000)), "pop_for(<0) on an empty channel");
    HSPC_CHECK(!ch.try_pop(ev) && !ch.done(), "empty, open channel");
    Tally<Ev> tally;
    for (std::uint32_t round = 0; round < kWakeRounds; ++round) {
      stage.store(round + 1, std::memory_order_release);
      HSPC_CHECK(receive(ch, tally, round), "round %u: nothing received", round);
    }
    stage.store(kWakeRounds + 1, std::memory_order_release);
    HSPC_CHECK(!receive(ch, tally, static_cast<std::uint32_t>(seed)), "close must end the stream");
    HSPC_CHECK(tally.next == kWakeRounds, "%u of %u delivered", tally.next, kWakeRounds);
    check_ended(ch, tally);
  });
  Rng rng(seed);
  // The sleeps make it likely, not certain, that the consumer is already blocked; both orders
  // must work, so nothing here depends on how long anything took.
  for (std::uint32_t round = 0; round < kWakeRounds; ++round) {
    await_stage(stage, round + 1);
    std::this_thread::sleep_for(Micros(rng.below(400)));
    ch.push(Ev(round));
    ch.flush();
  }
  await_stage(stage, kWakeRounds + 1);
  std::this_thread::sleep_for(Micros(rng.below(400)));
  ch.close();
  consumer.join();
}

template <class Cfg>
void run_variant(hspc_test::Watchdog& watchdog) {
  const std::string name = Cfg::name();
  watchdog.arm(name, std::chrono::minutes(2));
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t seed = std::hash<std::string>{}(name)&0xffffU;
  mixed<Cfg>(seed + 1, 4, kBelowWrap - 3);
  mixed<Cfg>(seed + 2, 64, kBelowWrap - 50);
  mixed<Cfg>(seed + 3, 0, kBelowWrap);  // wraps at the first hand-off
  for (std::uint32_t how = 0; how < 4; ++how) wakeups<Cfg>(how, how % 2 == 0 ? 0 : kBelowWrap - 4);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  std::printf("ok %-70s %6lld ms\n", name.c_str(), static_cast<long long>(ms.count()));
  std::fflush(stdout);
}

template <class... Cfgs>
void run_all() {
  hspc_test::Watchdog watchdog;
  (run_variant<Cfgs>(watchdog), ...);
}

}  // namespace

int main() {
  // Buffers, buffer_bytes, event bytes, padding, stack offset. Every value of every axis appears
  // several times, each time with different partners (a covering design, not the 480-wide cross
  // product), and the same table runs for every primitive. The spin budget (the last argument,
  // after the latency bound; 5 us when left out) also takes the ends of the range the tuner
  // searches: 0 (yield or sleep at once), its 50 ns grain and the 1 ms limit, the limit only
  // with large buffers (few hand-offs: a waiter may spin a whole millisecond per wait).
  run_all<Config<2, 64, 64, 0, 0>,                 // one event per buffer, packed
          Config<3, 64, 64, 512, 65536>,           // one event per buffer
          Config<8, 64, 64, 128, 4096>,            // one event per buffer
          Config<64, 64, 8, 64, 0, 0, 0>,          // 8 per buffer, 64 buffers, never spins
          Config<2, 64, 16, 512, 0>,               // 4 per buffer
          Config<8, 64, 24, 0, 65536>,             // 2 per buffer, 16 bytes left over
          Config<2, 1024, 16, 128, 65536, 0, 50>,  // 64 per buffer, spins 50 ns
          Config<3, 1024, 24, 0, 4096, 0, 0>,      // 42 per buffer, never spins
          Config<8, 1024, 8, 512, 65536>,          // 128 per buffer
          Config<64, 1024, 24, 128, 4096>,         // 42 per buffer, 64 buffers
          Config<2, 65536, 8, 64, 4096>,           // 8192 per buffer
          Config<3, 65536, 16, 0, 0, 0, 1000000>,  // 4096 per buffer, spins up to 1 ms
          Config<8, 65536, 24, 512, 0>,            // 2730 per buffer
          Config<64, 65536, 16, 64, 65536>>();     // 4 MiB of buffers
  // With a latency bound (the last argument, ns): 1 ns is due at every push (a hand-off per push
  // or bulk push); 2 us and 20 us hand slots over partly filled every few dozen to hundreds of
  // events, at arbitrary points; 200 us mixes timed and full hand-offs.
  run_all<Config<3, 65536, 24, 0, 4096, 1>,                   // 2730 per buffer
          Config<2, 64, 16, 512, 0, 2000, 0>,                 // 4 per buffer, never spins
          Config<8, 1024, 8, 64, 65536, 2000>,                // 128 per buffer
          Config<64, 65536, 8, 128, 0, 20000>,                // 8192 per buffer, 64 buffers
          Config<2, 16384, 64, 0, 4096, 200000, 1000000>>();  // 256 per buffer, spins 1 ms
  // The code shapes (the last two arguments: prefetch bytes, huge pages): a prefetch shorter
  // than, as long as and longer than a slot; huge pages on a block large enough for them (4 MiB
  // of buffers), on one too small (the advice is skipped), and with a latency bound.
  run_all<Config<3, 65536, 24, 128, 0, 0, 5000, 4096>,                  // prefetch a page of 64 KiB
          Config<8, 1024, 8, 64, 4096, 0, 0, 1024>,                     // prefetch a whole slot
          Config<2, 64, 16, 0, 0, 0, 50, 65536>,                        // prefetch past the slot
          Config<4, 1048576, 24, 128, 0, 0, 5000, 16384, true>,         // 4 MiB on huge pages
          Config<3, 1024, 8, 512, 65536, 0, 5000, 0, true>,             // too small: small pages
          Config<64, 65536, 16, 64, 4096, 20000, 5000, 4096, true>>();  // bounded, 4 MiB, huge
  return 0;
}
