// The paper's limit lines for the same event type, count and work as the channel samples:
// §3.1 producer_alone and consumer_alone (events into / out of a private 1 KiB ring), §3.2
// p0_parallel (both at once on two threads, sharing nothing), §4 optimal (the producer's work
// only), achievable (work + writing events into a buffer nobody reads) and upper_bound (all the
// work in one thread: a channel slower than this is not worth having).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "harness/sample.hpp"
#include "harness/sides.hpp"

namespace hspc_harness {

namespace detail {

// Events of a private ring of `bytes` bytes (at least one event).
template <class E>
std::size_t ring_events(std::size_t bytes) noexcept {
  return std::max<std::size_t>(1, bytes / sizeof(E));
}

template <class E>
Clock::time_point produce_into_ring(const Workload& w, const Calibration& c, std::vector<E>& ring) {
  ProducerSide<E> side(w, c);
  std::size_t j = 0;
  for (std::uint64_t i = 0; i < w.events; ++i) {
    ring[j] = side.next(i);
    escape(&ring[j]);
    if (++j == ring.size()) j = 0;
  }
  return Clock::now();
}

// Consumes `w.events` events by replaying a pre-filled private ring; true if all checked out.
template <class E>
bool consume_ring(const Workload& w, ConsumerSide<E>& side, const std::vector<E>& ring) {
  const std::uint64_t cap = ring.size();
  const std::uint64_t passes = w.events / cap;
  const std::uint64_t rest = w.events % cap;
  for (std::uint64_t p = 0; p < passes; ++p) {
    side.verifier().restart_sequence();
    side.on_span(ring.data(), cap);
  }
  side.verifier().restart_sequence();
  side.on_span(ring.data(), rest);
  const std::uint64_t want = passes * expected_checksum<E>(cap) + expected_checksum<E>(rest);
  return side.verifier().in_order() && side.verifier().checksum() == want;
}

template <class E>
std::vector<E> filled_ring(std::size_t bytes) {
  std::vector<E> ring(ring_events<E>(bytes));
  for (std::size_t k = 0; k < ring.size(); ++k) stamp(ring[k], k);
  return ring;
}

// A one-thread sample on the benchmark thread (pinned as the producer): `setup` allocates and
// pre-faults after pinning, untimed; `body(state)` is timed and says whether the answer was right.
template <class Setup, class Body>
Sample one_sided(const Workload& w, Setup setup, Body body) {
  Sample s;
  s.events = w.events;
  ScopedPin pin(w.producer_cpu);
  auto state = setup();
  ThreadProbe probe;
  probe.start();
  const auto t0 = Clock::now();
  s.verified = body(state);
  const auto t1 = Clock::now();
  probe.stop_cheap();
  s.producer = probe.finish();
  s.wall_ns = ns_between(t0, t1);
  return s;
}

}  // namespace detail

// The producer's work and events written into a private ring of ring_bytes, never read: with the
// paper's 1 KiB this is §3.1's baseline producer; with the channel's buffer memory, §4's
// achievable line.
template <class E>
Sample run_producer_alone(const Workload& w, Context& ctx, std::size_t ring_bytes) {
  return detail::one_sided(
      w, [&] { return std::vector<E>(detail::ring_events<E>(ring_bytes)); },
      [&](std::vector<E>& ring) {
        detail::produce_into_ring<E>(w, ctx.calibration, ring);
        return true;  // nothing is consumed, so nothing can be wrong
      });
}

template <class E>
Sample run_optimal(const Workload& w, Context& ctx) {
  return detail::one_sided(
      w, [&] { return ProducerSide<E>(w, ctx.calibration); },
      [&](ProducerSide<E>& side) {
        for (std::uint64_t i = 0; i < w.events; ++i) side.work();
        return true;
      });
}

namespace detail {

template <class E>
struct OneThreadPair {
  std::vector<E> ring;
  ProducerSide<E> producer;
  ConsumerSide<E> consumer;
};

}  // namespace detail

// Both sides' work in one thread. The work is one dependency chain of producer_ns + consumer_ns:
// two separate chains in one loop would overlap in the core's out-of-order window and cost
// max(producer_ns, consumer_ns) instead of their sum.
template <class E>
Sample run_upper_bound(const Workload& w, Context& ctx) {
  Workload both = w;
  both.producer_ns = w.producer_ns + w.consumer_ns;
  both.consumer_ns = 0;
  auto setup = [&] {
    return detail::OneThreadPair<E>{std::vector<E>(detail::ring_events<E>(w.ring_bytes)),
                                    ProducerSide<E>(both, ctx.calibration),
                                    ConsumerSide<E>(both, ctx.calibration)};
  };
  return detail::one_sided(w, setup, [&](detail::OneThreadPair<E>& pair) {
    std::size_t j = 0;
    for (std::uint64_t i = 0; i < w.events; ++i) {
      pair.ring[j] = pair.producer.next(i);
      escape(&pair.ring[j]);
      pair.consumer.on_event(pair.ring[j]);
      if (++j == pair.ring.size()) j = 0;
    }
    return pair.consumer.verified(w.events);
  });
}

// The consumer's work over a pre-filled private ring, on the worker thread (pinned as the
// consumer); the benchmark thread just waits.
template <class E>
Sample run_consumer_alone(const Workload& w, Context& ctx) {
  Sample s;
  s.events = w.events;
  ctx.worker.post([&] {
    ScopedPin pin(w.consumer_cpu);
    const std::vector<E> ring = detail::filled_ring<E>(w.ring_bytes);
    ConsumerSide<E> side(w, ctx.calibration);
    ThreadProbe probe;
    probe.start();
    const auto t0 = Clock::now();
    s.verified = detail::consume_ring(w, side, ring);
    const auto t1 = Clock::now();
    probe.stop_cheap();
    s.consumer = probe.finish();
    s.consumer_tid = current_tid();
    s.wall_ns = ns_between(t0, t1);
  });
  ctx.worker.wait();
  return s;
}

// producer_alone and consumer_alone at the same time on two threads, sharing nothing.
template <class E>
Sample run_p0_parallel(const Workload& w, Context& ctx) {
  bool ok = false;
  std::vector<E> producer_ring(detail::ring_events<E>(w.ring_bytes));
  auto consumer = [&](StartGate& gate) {
    const std::vector<E> ring = detail::filled_ring<E>(w.ring_bytes);
    ConsumerSide<E> side(w, ctx.calibration);
    gate.consumer_arrive_and_wait();
    ok = detail::consume_ring(w, side, ring);
    return Clock::now();
  };
  auto producer = [&] { return detail::produce_into_ring<E>(w, ctx.calibration, producer_ring); };
  Sample s = detail::two_sided<DirectLaunch>(w, ctx, consumer, producer);
  s.verified = ok;
  return s;
}

}  // namespace hspc_harness
