// BasicChannel's contract where it can be checked deterministically: the block layout, the
// visibility rules of flush and close, slot hand-back, try_push/try_pop edges, pop_for timeouts,
// emplace of aggregates, the latency bound's extremes, the instrumentation counters, pinning and
// the stack offset.
#include "hspc/channel.hpp"

#include <sched.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

namespace {

using hspc::BasicChannel;
using hspc::Primitive;

// ---- layout ----

struct Region {
  std::size_t offset;
  std::size_t bytes;
};

template <class Channel>
void check_layout() {
  using L = typename Channel::Layout;
  using T = typename Channel::value_type;
  constexpr std::size_t pad = Channel::kPaddingBytes;
  std::vector<Region> regions = {
      {L::kProducerShared, sizeof(hspc::detail::ProducerShared)},
      {L::kConsumerShared, sizeof(hspc::detail::ConsumerShared)},
      {L::kProducerCursor, sizeof(hspc::detail::ProducerCursor<T>)},
      {L::kConsumerCursor, sizeof(hspc::detail::ConsumerCursor<T>)},
      {L::kDataReady, sizeof(typename Channel::Waiter)},
      {L::kSpaceReady, sizeof(typename Channel::Waiter)},
  };
  for (std::size_t i = 0; i < Channel::kBuffers; ++i) {
    regions.push_back({L::kFirstSlot + i * L::kSlotStride, L::kSlotBytes});
  }
  HSPC_CHECK(regions.front().offset >= pad, "no leading gap");
  for (std::size_t i = 1; i < regions.size(); ++i) {
    const Region& before = regions[i - 1];
    const Region& at = regions[i];
    HSPC_CHECK(at.offset >= before.offset + before.bytes + pad, "padding %zu: region %zu too close",
               pad, i);
    if (pad >= 64) HSPC_CHECK(at.offset % 64 == 0, "padding %zu: region %zu off its line", pad, i);
  }
  HSPC_CHECK(regions.back().offset + regions.back().bytes + pad <= L::kBytes, "block too small");
  HSPC_CHECK(L::kBytes % 64 == 0 && L::kAlign % alignof(T) == 0, "block alignment");
  HSPC_CHECK(L::kSlotEvents % alignof(T) == 0 && L::kSlotStride % alignof(T) == 0, "event align");
  if constexpr (pad == 0) {
    // Packed really means packed: tail directly after head and closed.
    HSPC_CHECK(L::kConsumerShared == sizeof(hspc::detail::ProducerShared), "padding 0 not packed");
    HSPC_CHECK(L::kSlotStride == L::kSlotBytes, "padding 0: slots not adjacent");
  }
}

// The producer's cursor as it was before the latency bound: without a bound it is not a byte more.
struct UnboundedCursor {
  std::uint64_t* events;
  std::uint32_t slot, head, tail_cache, fill;
  bool closed;
  std::uint64_t waits;
};
static_assert(std::is_empty_v<hspc::detail::LatencyTimer<0>>);
static_assert(sizeof(hspc::detail::ProducerCursor<std::uint64_t>) == sizeof(UnboundedCursor));
static_assert(sizeof(hspc::detail::ProducerCursor<std::uint64_t, 1000>) > sizeof(UnboundedCursor));

void layouts() {
  using Wide = hspc_test::Event<64, 64>;
  check_layout<BasicChannel<std::uint64_t, Primitive::condvar, 3, 64, 0>>();
  check_layout<BasicChannel<std::uint64_t, Primitive::futex, 8, 1024, 64>>();
  check_layout<BasicChannel<hspc_test::Event<24>, Primitive::spinlock, 2, 1000, 128>>();
  check_layout<BasicChannel<Wide, Primitive::hybrid, 64, 64, 512>>();
  check_layout<BasicChannel<Wide, Primitive::mutex, 2, 4096, 0>>();
  check_layout<BasicChannel<std::uint64_t, Primitive::futex, 3, 1024, 0, 5000, 1000000>>();
  check_layout<BasicChannel<Wide, Primitive::condvar, 2, 4096, 128, 5000, 1>>();
  static_assert(BasicChannel<std::uint64_t, Primitive::futex, 2, 64, 0>::kEventsPerBuffer == 8);
  static_assert(
      BasicChannel<hspc_test::Event<24>, Primitive::futex, 2, 1024, 0>::kEventsPerBuffer == 42);
  // An event larger than a buffer still gets one slot of its own.
  static_assert(BasicChannel<hspc_test::Event<128>, Primitive::futex, 2, 64, 0>::kEventsPerBuffer ==
                1);
}

// ---- single-thread semantics (one thread may play both roles with the non-blocking calls) ----

template <Primitive P>
void visibility_and_slots() {
  BasicChannel<std::uint64_t, P, 3, 64, 64> ch;  // 3 slots of 8 events
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  std::uint64_t v = 0;
  const auto expect_pop = [&] {
    HSPC_CHECK(ch.try_pop(v) && v == next_out, "%s: expected %llu", hspc::primitive_name(P),
               static_cast<unsigned long long>(next_out));
    ++next_out;
  };
  HSPC_CHECK(!ch.try_pop(v) && !ch.done(), "new channel");
  for (int i = 0; i < 5; ++i) ch.push(next_in++);
  HSPC_CHECK(!ch.try_pop(v), "unflushed events must not be visible");
  ch.flush();
  ch.flush();  // nothing left: must not publish an empty slot
  for (int i = 0; i < 5; ++i) expect_pop();
  HSPC_CHECK(!ch.try_pop(v), "only 5 were pushed");

  int accepted = 0;
  while (ch.try_push(next_in)) ++next_in, ++accepted;
  HSPC_CHECK(accepted == 24, "%s: %d accepted into 3 free slots of 8", hspc::primitive_name(P),
             accepted);
  expect_pop();  // the consumer now holds the next slot, partly read: not free yet
  HSPC_CHECK(!ch.try_push(next_in), "a partly read slot was handed back");
  const std::size_t rest = ch.consume([&](const std::uint64_t* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) HSPC_CHECK(data[i] == next_out + i, "consume order");
  });
  HSPC_CHECK(rest == 7, "consume delivered %zu, the rest of the slot is 7", rest);
  next_out += rest;
  for (int i = 0; i < 8; ++i) HSPC_CHECK(ch.try_push(next_in++), "slot not handed back");
  HSPC_CHECK(!ch.try_push(next_in), "all full again");

  for (int i = 0; i < 24; ++i) expect_pop();  // the three full slots, in ring order
  HSPC_CHECK(!ch.try_pop(v) && !ch.done(), "drained but open");

  for (int i = 0; i < 3; ++i) ch.push(next_in++);
  ch.close();  // publishes the 3 unflushed events, then ends the stream
  HSPC_CHECK(!ch.done(), "3 events still undelivered");
  expect_pop();
  HSPC_CHECK(ch.pop(v) && v == next_out++, "pop after close, events left");
  HSPC_CHECK(ch.pop_for(v, std::chrono::seconds(1)) && v == next_out++, "pop_for after close");
  HSPC_CHECK(ch.done() && !ch.pop(v) && !ch.try_pop(v), "end of stream");
  HSPC_CHECK(ch.consume([](const std::uint64_t*, std::size_t) {}) == 0, "consume at the end");
  HSPC_CHECK(next_in == next_out, "every event exactly once");
  HSPC_CHECK(ch.producer_waits() == 0, "the producer never had to wait");
}

// pop_for on an empty channel times out with every primitive and duration type, each timeout is
// counted as a consumer wait, and the channel works afterwards.
template <Primitive P>
void timeouts() {
  BasicChannel<std::uint64_t, P, 2, 64, 128> ch;
  std::uint64_t v = 0;
  HSPC_CHECK(!ch.pop_for(v, std::chrono::milliseconds(2)), "%s: 2 ms", hspc::primitive_name(P));
  HSPC_CHECK(!ch.pop_for(v, std::chrono::nanoseconds(1)), "1 ns");
  HSPC_CHECK(!ch.pop_for(v, std::chrono::seconds(-1)), "negative");
  HSPC_CHECK(!ch.pop_for(v, std::chrono::duration<double>(1e-4)), "double seconds");
  HSPC_CHECK(ch.consumer_waits() == 4, "%llu waits counted",
             static_cast<unsigned long long>(ch.consumer_waits()));
  ch.push(42);
  ch.flush();
  HSPC_CHECK(ch.pop_for(v, std::chrono::hours::max()) && v == 42, "data after timeouts");
  HSPC_CHECK(ch.consumer_waits() == 4, "a ready pop_for is not a wait");
}

// The latency bound at its extremes. 1 ns is due at every clock reading, and the clock is then read
// at every push (no push rate makes a quarter of 1 ns span two pushes): each push, emplace,
// try_push and bulk push hands its events over at once, without flush. An hour is never due within
// this test: events show only when their slot fills or at flush, as without a bound.
template <Primitive P>
void latency_bound_extremes() {
  constexpr std::size_t kHourNs = std::size_t{3600} * 1000 * 1000 * 1000;
  const char* name = hspc::primitive_name(P);
  std::uint64_t v = 0;
  BasicChannel<std::uint64_t, P, 3, 4096, 64, 5000, 1> eager;  // 3 slots of 512 events
  eager.push(1);
  HSPC_CHECK(eager.try_pop(v) && v == 1, "%s: a due push was not handed over", name);
  eager.emplace(2U);
  HSPC_CHECK(eager.try_pop(v) && v == 2, "%s: a due emplace was not handed over", name);
  HSPC_CHECK(eager.try_push(3), "%s: try_push into a free channel", name);
  HSPC_CHECK(eager.try_pop(v) && v == 3, "%s: a due try_push was not handed over", name);
  const std::uint64_t run[5] = {4, 5, 6, 7, 8};
  eager.push(run, 5);
  std::uint64_t out[8] = {};
  HSPC_CHECK(eager.pop(out, 8) == 5 && out[0] == 4 && out[4] == 8, "%s: bulk push", name);
  for (std::uint64_t i = 9; i < 100; ++i) {  // many more hand-offs than slots, across the ring
    eager.push(i);
    HSPC_CHECK(eager.try_pop(v) && v == i, "%s: push %llu not handed over", name,
               static_cast<unsigned long long>(i));
  }
  eager.close();
  HSPC_CHECK(eager.done() && eager.producer_waits() == 0, "%s: eager end", name);

  BasicChannel<std::uint64_t, P, 3, 4096, 64, 5000, kHourNs> patient;
  for (std::uint64_t i = 0; i < 600; ++i) patient.push(i);  // one full slot, 88 pending
  for (std::uint64_t i = 0; i < 512; ++i) HSPC_CHECK(patient.try_pop(v) && v == i, "full slot");
  HSPC_CHECK(!patient.try_pop(v), "%s: an hour's bound handed a slot over early", name);
  patient.flush();
  for (std::uint64_t i = 512; i < 600; ++i) HSPC_CHECK(patient.try_pop(v) && v == i, "flushed");
  HSPC_CHECK(!patient.try_pop(v) && !patient.done(), "%s: drained but open", name);
}

// The hand-off counters wrap at 2^32, which 3 does not divide: slot indices derived from the
// counters would jump (2, 0, 0) and refill a slot before it is read. Full fill/drain cycles
// across the wrap, for a non-power-of-two and a power-of-two ring.
template <std::size_t Buffers>
void counter_wrap() {
  BasicChannel<std::uint64_t, Primitive::futex, Buffers, 64, 0> ch(
      hspc::detail::CounterStart{0xffffffffU - 1});
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  std::uint64_t v = 0;
  for (int cycle = 0; cycle < 4; ++cycle) {
    while (ch.try_push(next_in)) ++next_in;
    HSPC_CHECK(next_in - next_out == Buffers * 8, "cycle %d: %llu accepted", cycle,
               static_cast<unsigned long long>(next_in - next_out));
    while (ch.try_pop(v)) {
      HSPC_CHECK(v == next_out, "buffers %zu, cycle %d: got %llu, expected %llu", Buffers, cycle,
                 static_cast<unsigned long long>(v), static_cast<unsigned long long>(next_out));
      ++next_out;
    }
    HSPC_CHECK(next_out == next_in, "cycle %d: not drained", cycle);
  }
}

// emplace builds T(args...) or, for aggregates (no parenthesized aggregate init in C++17),
// T{args...}.
struct Pair {
  int a;
  int b;
};
struct Built {
  Built() = default;
  Built(int x, int y) : sum(x + y) {}
  int sum;
};

void emplace_forms() {
  BasicChannel<Pair, Primitive::futex, 2, 64, 0> pairs;
  pairs.emplace(1, 2);
  pairs.emplace(Pair{3, 4});
  pairs.close();
  Pair p{};
  HSPC_CHECK(pairs.pop(p) && p.a == 1 && p.b == 2, "aggregate emplace");
  HSPC_CHECK(pairs.pop(p) && p.a == 3 && p.b == 4, "copy emplace");
  BasicChannel<Built, Primitive::condvar, 2, 64, 0> built;
  built.emplace(5, 6);
  built.flush();
  Built b{};
  HSPC_CHECK(built.try_pop(b) && b.sum == 11, "constructor emplace");
}

// The largest buffers: 2 x 16 MiB, pre-faulted, still one allocation that works.
void largest_buffers() {
  BasicChannel<std::uint64_t, Primitive::hybrid, 2, std::size_t{16} << 20, 512> ch;
  static_assert(decltype(ch)::kEventsPerBuffer == std::size_t{2} << 20);
  for (std::uint64_t i = 0; i < 1000; ++i) ch.push(i);
  ch.close();
  std::uint64_t sum = 0;
  const std::size_t n = ch.consume([&](const std::uint64_t* data, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) sum += data[i];
  });
  HSPC_CHECK(n == 1000 && sum == 999 * 1000 / 2 && ch.done(), "16 MiB buffers");
}

// Unconsumed events are simply dropped with the block (ASan checks nothing leaks).
void destroy_with_events() {
  BasicChannel<std::uint64_t, Primitive::condvar, 4, 256, 64> ch;
  for (std::uint64_t i = 0; i < 70; ++i) ch.push(i);
}

// ---- affinity and stack offset ----

template <std::size_t Offset>
std::uintptr_t frame_under_offset() {
  std::uintptr_t frame = 0;
  hspc::run_with_stack_offset_bytes<Offset>([&] {
    // The frame address, not a local's: ASan may move locals to a heap "fake stack".
    frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  });
  return frame;
}

void stack_offset() {
  const std::uintptr_t base = frame_under_offset<0>();
  const std::uintptr_t shifted_4k = frame_under_offset<4096>();
  const std::uintptr_t shifted_64k = frame_under_offset<65536>();
  HSPC_CHECK(base - shifted_4k >= 4096, "4096 offset moved the stack by %zu",
             static_cast<std::size_t>(base - shifted_4k));
  HSPC_CHECK(base - shifted_64k >= 65536, "65536 offset moved the stack by %zu",
             static_cast<std::size_t>(base - shifted_64k));
}

void pinning() {
  std::thread([] {
    const int before = hspc::allowed_cpu_count();
    HSPC_CHECK(before >= 1, "sched_getaffinity failed");
    hspc::pin_current_thread(-1);
    HSPC_CHECK(hspc::allowed_cpu_count() == before, "pin_current_thread(-1) changed the mask");
    const int cpu = ::sched_getcpu();
    hspc::pin_current_thread(cpu);
    HSPC_CHECK(hspc::allowed_cpu_count() == 1, "pinning to CPU %d had no effect", cpu);
    HSPC_CHECK(::sched_getcpu() == cpu, "running on CPU %d, pinned to %d", ::sched_getcpu(), cpu);
    // A channel created by a thread that can use one CPU only never spins.
    BasicChannel<std::uint64_t, Primitive::pause_spin, 2, 64, 64, 7000> ch;
    HSPC_CHECK(ch.spin_budget() == 0, "spin budget %lld on one CPU",
               static_cast<long long>(ch.spin_budget()));
    HSPC_CHECK(hspc::spin_budget_ns(7000) == 0, "spin_budget_ns on one CPU");
  }).join();
  if (hspc::allowed_cpu_count() > 1) {
    BasicChannel<std::uint64_t, Primitive::pause_spin, 2, 64, 64, 7000> ch;
    HSPC_CHECK(ch.spin_budget() == 7000, "spin budget %lld",
               static_cast<long long>(ch.spin_budget()));
  }
}

// Bulk push spans slots and hands each over as it fills; bulk pop stops at a slot's end and
// releases the slot it empties.
void bulk_calls() {
  BasicChannel<std::uint64_t, Primitive::futex, 3, 64, 0> ch;  // 8 events per slot
  std::uint64_t in[12];
  for (std::uint64_t i = 0; i < 12; ++i) in[i] = i;
  ch.push(in, 12);  // one full slot published, 4 events pending
  std::uint64_t out[16] = {};
  HSPC_CHECK(ch.pop(out, 5) == 5 && out[0] == 0 && out[4] == 4, "first bulk pop");
  HSPC_CHECK(ch.pop(out, 16) == 3 && out[0] == 5 && out[2] == 7, "bulk pop stops at the slot end");
  std::uint64_t one = 0;
  HSPC_CHECK(!ch.try_pop(one), "unflushed events visible");
  ch.push(in, 0);  // nothing: no slot taken, nothing handed over
  ch.close();
  HSPC_CHECK(ch.pop(out, 0) == 0, "max_events 0");
  HSPC_CHECK(ch.pop(out, 16) == 4 && out[0] == 8 && out[3] == 11, "the flushed rest");
  HSPC_CHECK(ch.pop(out, 16) == 0 && ch.done(), "end of stream");
}

// try_consume (what consumers taking turns use) never blocks: 0 while nothing is published, the
// rest of a slot otherwise; pending() and ended() (readable by any thread) follow the hand-offs.
void turns() {
  BasicChannel<std::uint64_t, Primitive::futex, 3, 64, 0> ch;  // 8 events per slot
  std::uint64_t next_out = 0;
  const auto take = [&](const std::uint64_t* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) HSPC_CHECK(data[i] == next_out++, "try_consume order");
  };
  HSPC_CHECK(ch.try_consume(take) == 0 && !ch.pending() && !ch.ended(), "a new channel");
  for (std::uint64_t i = 0; i < 12; ++i) ch.push(i);  // one slot published, 4 events pending
  HSPC_CHECK(ch.pending() && !ch.ended(), "a published slot is pending");
  HSPC_CHECK(ch.try_consume(take) == 8 && !ch.pending(), "one slot, then none pending");
  HSPC_CHECK(ch.try_consume(take) == 0, "unflushed events visible to try_consume");
  std::uint64_t one = 0;
  ch.push(12);
  ch.flush();
  HSPC_CHECK(ch.try_pop(one) && one == 8, "try_pop");
  next_out = 9;
  HSPC_CHECK(ch.pending(), "a slot held partly read is still pending");
  HSPC_CHECK(ch.try_consume(take) == 4 && !ch.pending(), "the rest of a partly read slot");
  ch.close();
  HSPC_CHECK(ch.ended() && ch.done() && ch.try_consume(take) == 0, "the end");
}

template <Primitive... Ps>
void for_primitives() {
  (visibility_and_slots<Ps>(), ...);
  (timeouts<Ps>(), ...);
  (latency_bound_extremes<Ps>(), ...);
}

}  // namespace

int main() {
  layouts();
  for_primitives<Primitive::condvar, Primitive::mutex, Primitive::spinlock, Primitive::backoff_spin,
                 Primitive::pause_spin, Primitive::futex, Primitive::hybrid>();
  counter_wrap<3>();
  counter_wrap<4>();
  emplace_forms();
  bulk_calls();
  turns();
  largest_buffers();
  destroy_with_events();
  stack_offset();
  pinning();
  std::puts("ok");
  return 0;
}
