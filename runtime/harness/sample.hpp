// Timed samples through a contender: saturated throughput, paced one-way latency (each event
// flushed, or not: the paced kind), and ping-pong round trips. The producer is the benchmark
// thread; the consumer is the persistent worker.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "harness/contender.hpp"
#include "harness/sides.hpp"

namespace hspc_harness {

namespace detail {

// Median and 99th percentile (nearest rank) of `ns`, which is reordered.
inline void percentiles(std::vector<std::int64_t>& ns, Sample& s) {
  if (ns.empty()) return;
  const std::size_t mid = ns.size() / 2;
  const std::size_t p99 = std::min(ns.size() - 1, (ns.size() * 99 + 99) / 100 - 1);
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(mid), ns.end());
  s.latency_p50_ns = static_cast<double>(ns[mid]);
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(p99), ns.end());
  s.latency_p99_ns = static_cast<double>(ns[p99]);
}

template <class A, class Side>
void drain(A& q, Side& side) {
  using E = typename A::Event;
  if constexpr (A::kBulk) {
    while (q.consume([&side](const E* events, std::size_t n) { side.on_span(events, n); }) != 0) {
    }
  } else {
    E ev;
    while (q.pop(ev)) side.on_event(ev);
  }
}

// The skeleton every two-thread sample shares: the consumer body runs on the worker (pinned,
// probed, behind the gate), the producer body on this thread (pinned, probed, opening the gate).
// Each body returns the time its side finished; the sample ends at the later of the two.
template <class Launch, class ConsumerBody, class ProducerBody>
Sample two_sided(const Workload& w, Context& ctx, ConsumerBody consumer, ProducerBody producer) {
  Sample s;
  s.events = w.events;
  StartGate gate;
  Clock::time_point consumer_end{};
  ctx.worker.post([&] {
    ScopedPin pin(w.consumer_cpu);
    ThreadProbe probe;
    probe.start();
    consumer_end = consumer(gate);
    probe.stop_cheap();
    s.consumer = probe.finish();
    s.consumer_tid = current_tid();
  });
  Clock::time_point t0{};
  Clock::time_point producer_end{};
  // The producer's body travels by value, as a user's loop inside run_with_stack_offset would
  // capture its channel: its captures then live in the launched frame, not behind a reference.
  Launch::run([&, producer]() mutable {
    ScopedPin pin(w.producer_cpu);
    ThreadProbe probe;
    probe.start();
    t0 = gate.producer_open();
    producer_end = producer();
    probe.stop_cheap();
    ctx.worker.wait();
    s.producer = probe.finish();
  });
  s.wall_ns = ns_between(t0, std::max(consumer_end, producer_end));
  return s;
}

}  // namespace detail

// Saturated throughput: `events` events pushed as fast as the producer's work allows, timed until
// the consumer has the last one. A slow variant's sample stops early once it has run ctx.cap_ns
// (checked every kCapCheckEvents events): it is timed over the events it pushed, so a grid of
// variants a hundred times apart in speed costs a bounded time per sample, and none reads as hung.
inline constexpr std::uint64_t kCapCheckEvents = 1024;

namespace detail {
// Contenders whose consumer stops after begin()'s count (the peers) cannot end a sample early.
template <class A, class = void>
struct EndsByCount : std::false_type {};
template <class A>
struct EndsByCount<A, std::void_t<decltype(A::kEndsByCount)>>
    : std::bool_constant<A::kEndsByCount> {};
}  // namespace detail

template <class A, class Launch = DirectLaunch>
Sample run_throughput(const Workload& w, Context& ctx) {
  using E = typename A::Event;
  A q;
  q.begin(w.events);
  bool ok = false;
  std::atomic<std::uint64_t> pushed{0};
  auto consumer = [&](StartGate& gate) {
    ConsumerSide<E> side(w, ctx.calibration);
    gate.consumer_arrive_and_wait();
    detail::drain(q, side);
    const auto end = Clock::now();
    // A contender that ends by count can hand over its last event before the producer has
    // stored `pushed`; it is never capped, so all w.events were pushed. The others end at
    // close(), which comes after the store.
    const std::uint64_t sent =
        detail::EndsByCount<A>::value ? w.events : pushed.load(std::memory_order_acquire);
    ok = side.verified(sent);
    return end;
  };
  auto producer = [&] {
    ProducerSide<E> side(w, ctx.calibration);
    auto&& p = producer_of(q);  // a gathering contender's run cursor, on this stack
    const std::int64_t cap_ns = detail::EndsByCount<A>::value ? 0 : ctx.cap_ns;
    const auto stop = Clock::now() + std::chrono::nanoseconds(cap_ns);
    // Pushes in chunks, the clock read between them: the timed loop itself is the plain one.
    const std::uint64_t chunk = cap_ns > 0 ? kCapCheckEvents : w.events;
    std::uint64_t i = 0;
    while (i < w.events) {
      const std::uint64_t end = std::min(w.events, i + chunk);
      for (; i < end; ++i) p.push(side.next(i));
      if (cap_ns > 0 && i < w.events && Clock::now() > stop) break;
    }
    pushed.store(i, std::memory_order_release);  // before close(): the consumer reads it after
    p.close();
    return Clock::time_point{};  // the consumer's end time ends the sample
  };
  Sample s = detail::two_sided<Launch>(w, ctx, consumer, producer);
  s.events = pushed.load(std::memory_order_relaxed);
  s.verified = ok;
  return s;
}

namespace detail {

// Paced one-way latency: single events with pace_ns of extra producer work between them, so the
// channel is mostly empty; push-to-pop time of every event. FlushEach flushes every event at once
// (the hand-off alone); without, the buffer's fill and the channel's latency bound decide when an
// event becomes visible, as an application that never flushes sees it.
template <class A, class Launch, bool FlushEach>
Sample paced_latency(const Workload& w, Context& ctx) {
  using E = typename A::Event;
  A q;
  q.begin(w.events);
  std::vector<std::int64_t> pushed(w.events), popped(w.events);  // zeroed: pre-faulted
  bool ok = false;
  auto consumer = [&](StartGate& gate) {
    ConsumerSide<E> side(w, ctx.calibration);
    gate.consumer_arrive_and_wait();
    E ev;
    for (std::uint64_t i = 0; q.pop(ev); ++i) {
      popped[std::min(i, w.events - 1)] = now_ns();  // extra events fail verification below
      side.on_event(ev);
    }
    const auto end = Clock::now();
    ok = side.verified(w.events);
    return end;
  };
  auto producer = [&] {
    ProducerSide<E> side(w, ctx.calibration);
    auto&& p = producer_of(q);
    const std::uint64_t pace = ctx.calibration.loops_for(w.pace_ns);
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < w.events; ++i) {
      const E& ev = side.next(i);
      x = burn(pace, x);
      pushed[i] = now_ns();
      p.push(ev);
      if constexpr (FlushEach) p.flush();
    }
    p.close();
    sink(x);
    return Clock::time_point{};
  };
  Sample s = two_sided<Launch>(w, ctx, consumer, producer);
  s.verified = ok;
  std::vector<std::int64_t> latency(w.events);
  for (std::uint64_t i = 0; i < w.events; ++i) latency[i] = popped[i] - pushed[i];
  percentiles(latency, s);
  return s;
}

}  // namespace detail

// Paced one-way latency of the hand-off alone: single events, each flushed at once, with pace_ns
// of extra producer work between them; push-to-pop time of every event.
template <class A, class Launch = DirectLaunch>
Sample run_latency(const Workload& w, Context& ctx) {
  return detail::paced_latency<A, Launch, /*FlushEach=*/true>(w, ctx);
}

// Paced one-way latency as an application sees it: run_latency's load without the flushes, so an
// event waits in its buffer until the buffer fills, the channel's latency bound hands it over, or
// close() (the last events). A channel without a bound shows its whole fill time here.
template <class A, class Launch = DirectLaunch>
Sample run_paced(const Workload& w, Context& ctx) {
  return detail::paced_latency<A, Launch, /*FlushEach=*/false>(w, ctx);
}

// Ping-pong: the producer sends one event and waits for the consumer to echo it back through a
// second contender. With both threads pinned to one CPU this is the single-event hand-off test.
template <class A, class Launch = DirectLaunch>
Sample run_round_trip(const Workload& w, Context& ctx) {
  using E = typename A::Event;
  A there;
  A back;
  there.begin(w.events);
  back.begin(w.events);
  std::vector<std::int64_t> rtt(w.events);
  bool consumer_ok = false;
  bool producer_ok = false;
  auto consumer = [&](StartGate& gate) {
    ConsumerSide<E> side(w, ctx.calibration);
    gate.consumer_arrive_and_wait();
    E ev;
    while (there.pop(ev)) {
      side.on_event(ev);
      back.push(ev);
      back.flush();
    }
    back.close();
    consumer_ok = side.verified(w.events);
    return Clock::time_point{};  // the producer receives the last echo
  };
  auto producer = [&] {
    ProducerSide<E> side(w, ctx.calibration);
    // The echoes are checked, but carry no consumer work here, nor the app's (its consumer runs
    // on the consumer's thread only).
    Workload echo_checks;
    ConsumerSide<E, /*RunsApp=*/false> echoes(echo_checks, ctx.calibration);
    E ev;
    for (std::uint64_t i = 0; i < w.events; ++i) {
      const std::int64_t t = now_ns();
      there.push(side.next(i));
      there.flush();
      if (!back.pop(ev)) break;  // the echo stream ended early: verification fails below
      echoes.on_event(ev);
      rtt[i] = now_ns() - t;
    }
    const auto end = Clock::now();
    there.close();
    producer_ok = echoes.verified(w.events);
    return end;
  };
  Sample s = detail::two_sided<Launch>(w, ctx, consumer, producer);
  s.verified = consumer_ok && producer_ok;
  detail::percentiles(rtt, s);
  return s;
}

}  // namespace hspc_harness
