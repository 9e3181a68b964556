// Samples with many threads, for the thread-count search: `pairs` (N independent producer/consumer
// pairs, each with its own channel) and `fanout` (P producers, each handing whole buffers round
// robin to its own consumers through a BasicFanOut). Every thread waits at one start gate; the
// clock stops when every consumer has its last event. Each producer pushes EVENTS events.
//
// The threads, their start gate and what each reports back: many_threads.hpp.
//
// Waiting is measured in the harness, around the channel: a producer tries try_push first and
// times only the push that follows a refusal (no cost when it need not wait); a per-event consumer
// does the same with try_pop and pop; a bulk consumer reads the clock once per buffer (at the end
// of each consume callback) and adds the gap before a callback whose consume() counted a wait.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/contender.hpp"
#include "harness/many_threads.hpp"
#include "harness/sides.hpp"
#include "hspc/channel.hpp"
#include "hspc/fanout.hpp"

namespace hspc_harness {

// The most consumers a plan may give one fan-out.
inline constexpr std::size_t kMaxFanOutConsumers = 64;
static_assert(hspc::BasicFanOut<char, hspc::Primitive::futex, 2, 64, 0>::kMaxConsumers ==
              kMaxFanOutConsumers);

namespace detail {

// The hspc channel behind a variant-table type (a bare BasicChannel, or one driven as a
// ChannelContender or PerEvent) and its fan-out, with every one of the channel's parameters;
// void for anything else (a peer queue), which these kinds decline. Every parameter is matched:
// a channel this did not recognise would be declined, and the thread search would get samples
// that moved nothing.
template <class T>
struct HspcChannelOf {
  using Channel = void;
  using FanOut = void;
};
template <class T, hspc::Primitive P, std::size_t B, std::size_t BufferBytes, std::size_t Padding,
          std::size_t Spin, std::size_t MaxLatencyNs, std::size_t PrefetchBytes, bool HugePages>
struct HspcChannelOf<hspc::BasicChannel<T, P, B, BufferBytes, Padding, Spin, MaxLatencyNs,
                                        PrefetchBytes, HugePages>> {
  using Channel = hspc::BasicChannel<T, P, B, BufferBytes, Padding, Spin, MaxLatencyNs,
                                     PrefetchBytes, HugePages>;
  using FanOut = hspc::BasicFanOut<T, P, B, BufferBytes, Padding, Spin, MaxLatencyNs, PrefetchBytes,
                                   HugePages>;
};
template <class Ch>
struct HspcChannelOf<ChannelContender<Ch>> : HspcChannelOf<Ch> {};
template <class Ch>
struct HspcChannelOf<PerEvent<Ch>> : HspcChannelOf<Ch> {};

// A producer's whole run into q (a channel or a fan-out), timing only the pushes that wait.
template <class E, class Q>
ThreadEnd produce_timed(Q& q, const Workload& w, const Calibration& c) {
  ProducerSide<E> side(w, c);
  ThreadEnd end;
  for (std::uint64_t i = 0; i < w.events; ++i) {
    const E& ev = side.next(i);
    if (q.try_push(ev)) continue;
    const auto t = Clock::now();
    q.push(ev);
    end.wait_ns += elapsed_ns(t, Clock::now());
  }
  q.close();
  end.end = Clock::now();
  return end;
}

// Drains one consumer's stream into side (bulk with consume, or per event), timing its waits.
// Q gives consume, pop, try_pop and consumer_waits for this consumer.
template <bool Bulk, class E, class Q, class Side>
std::int64_t drain_timed(Q& q, Side& side) {
  std::int64_t wait_ns = 0;
  if constexpr (Bulk) {
    std::uint64_t waits = q.consumer_waits();
    Clock::time_point idle_since = Clock::now();
    auto on_run = [&](const E* events, std::size_t n) {
      if (q.consumer_waits() != waits) {
        waits = q.consumer_waits();
        wait_ns += elapsed_ns(idle_since, Clock::now());
      }
      side.on_span(events, n);
      idle_since = Clock::now();
    };
    while (q.consume(on_run) != 0) {
    }
    if (q.consumer_waits() != waits) wait_ns += elapsed_ns(idle_since, Clock::now());
  } else {
    E ev;
    for (;;) {
      if (!q.try_pop(ev)) {
        const auto t = Clock::now();
        const bool got = q.pop(ev);
        wait_ns += elapsed_ns(t, Clock::now());
        if (!got) break;
      }
      side.on_event(ev);
    }
  }
  return wait_ns;
}

// Consumer k of a fan-out, with a channel's consumer interface.
template <class FanOut>
struct FanOutLane {
  FanOut* fan;
  std::size_t k;

  template <class F>
  std::size_t consume(F&& f) {
    return fan->consume(k, std::forward<F>(f));
  }
  bool pop(typename FanOut::value_type& ev) { return fan->pop(k, ev); }
  bool try_pop(typename FanOut::value_type& ev) { return fan->try_pop(k, ev); }
  std::uint64_t consumer_waits() const noexcept { return fan->consumer_waits(k); }
};

// Events a consumer of a round-robin fan-out must get: consumer m of K receives buffers m, m + K,
// ... of a stream of `events` events cut into buffers of `per_buffer` (the last one partial).
inline std::uint64_t round_robin_share(std::uint64_t events, std::uint64_t per_buffer,
                                       std::uint64_t m, std::uint64_t consumers) noexcept {
  const std::uint64_t full = events / per_buffer;
  const std::uint64_t rest = events % per_buffer;
  const std::uint64_t full_buffers = full > m ? (full - 1 - m) / consumers + 1 : 0;
  return full_buffers * per_buffer + (rest != 0 && full % consumers == m ? rest : 0);
}

}  // namespace detail

// The consumer side of consumer m of K in a fan-out: the same work (the app's too) and
// working-set touch as ConsumerSide, but it expects the fan-out's share of the stream (event j of
// its own is number (m + (j / per_buffer) * K) * per_buffer + j % per_buffer) and checks every
// field stamp() sets.
//
// With a latency bound (`cut_by_clock`) the fan-out hands a buffer over when it is due, not only
// when full: consumer m still gets buffers m, m + K, ... whole, but where each was cut only the
// producer's clock knew. Then each consumer checks what it can alone (every event intact, each
// run of consecutive numbers in order) and sums what it took; run_fanout checks the sums of a
// producer's consumers against the whole stream (count and checksum).
template <class E>
class RoundRobinConsumerSide {
 public:
  RoundRobinConsumerSide(const Workload& w, const Calibration& c, std::size_t m,
                         std::size_t consumers, std::size_t per_buffer, bool cut_by_clock = false)
      : loops_(c.loops_for(w.consumer_ns)),
        working_set_(w.consumer_bytes),
        per_buffer_(per_buffer),
        skip_((consumers - 1) * per_buffer),
        expected_(detail::round_robin_share(w.events, per_buffer, m, consumers)),
        cut_by_clock_(cut_by_clock) {
    check_.next = m * per_buffer;
    prepare_app_thread();
  }

  void on_event(const E& ev) noexcept { on_span(&ev, 1); }
  // State copied into locals for the loop, as in ConsumerSide::on_span.
  void on_span(const E* events, std::size_t n) noexcept {
    Check check = check_;
    std::uint64_t x = x_;
    for (std::size_t i = 0; i < n; ++i) {
      if (cut_by_clock_) {
        check.take_any(events[i]);
      } else {
        check.take(events[i], per_buffer_, skip_);
      }
      if (loops_ != 0) x = burn(loops_, x);
#ifdef HSPC_APP_CONSUMER
      app_consume(&events[i], sizeof(E));
#endif
      if (!working_set_.empty()) working_set_.touch(events[i].seq);
    }
    check_ = check;
    x_ = x;
  }
  // Alone: exactly its share (cut by the clock: every event it took intact).
  bool verified() const noexcept {
    return check_.mismatches == 0 && (cut_by_clock_ || check_.taken == expected_);
  }
  std::uint64_t taken() const noexcept { return check_.taken; }
  std::uint64_t checksum() const noexcept { return check_.checksum; }
  ~RoundRobinConsumerSide() { sink(x_ ^ working_set_.digest()); }

 private:
  struct Check {
    std::uint64_t next = 0;       // the stream number the next event must carry
    std::uint64_t in_buffer = 0;  // events taken from the current buffer
    std::uint64_t taken = 0;
    std::uint64_t mismatches = 0;
    std::uint64_t checksum = 0;  // as Verifier's: the seqs and the tags (cut_by_clock only)
    void take(const E& ev, std::uint64_t per_buffer, std::uint64_t skip) noexcept {
      mismatches |= static_cast<std::uint64_t>(ev.seq ^ static_cast<typename E::Seq>(next));
      if constexpr (E::kHasPayload) {
        const auto tag = static_cast<std::uint8_t>(next);
        mismatches |= static_cast<std::uint64_t>((ev.payload[0] ^ tag) |
                                                 (ev.payload[sizeof(ev.payload) - 1] ^ tag));
      }
      ++taken;
      ++next;
      if (++in_buffer == per_buffer) {
        in_buffer = 0;
        next += skip;
      }
    }
    // A number other than the next starts another buffer of this consumer's.
    void take_any(const E& ev) noexcept {
      checksum += ev.seq;
      if constexpr (E::kHasPayload) {
        const auto tag = static_cast<std::uint8_t>(ev.seq);
        mismatches |= static_cast<std::uint64_t>((ev.payload[0] ^ tag) |
                                                 (ev.payload[sizeof(ev.payload) - 1] ^ tag));
        checksum += 2u * tag;
      }
      ++taken;
    }
  };

  std::uint64_t loops_;
  std::uint64_t x_ = 1;
  WorkingSet working_set_;
  std::uint64_t per_buffer_;
  std::uint64_t skip_;
  std::uint64_t expected_;
  bool cut_by_clock_;
  Check check_;
};

namespace detail {

inline Sample declined(const char* kind) {
  std::fprintf(stderr, "hspc_harness: the %s kind needs an hspc channel variant\n", kind);
  return Sample{};
}

}  // namespace detail

// `pairs`: w.pairs producer/consumer pairs, each pair with its own channel of type T's.
template <class T, class Launch = DirectLaunch>
Sample run_pairs(const Workload& w, Context& ctx) {
  using Ch = typename detail::HspcChannelOf<T>::Channel;
  if constexpr (std::is_void_v<Ch>) {
    return detail::declined("pairs");
  } else {
    using E = typename Ch::value_type;
    const std::size_t n = w.pairs;
    std::vector<std::unique_ptr<Ch>> channels;
    for (std::size_t i = 0; i < n; ++i) channels.push_back(std::make_unique<Ch>());
    auto body = [&](std::size_t i) {
      if (i < n) return detail::produce_timed<E>(*channels[i], w, ctx.calibration);
      ConsumerSide<E> side(w, ctx.calibration);
      detail::ThreadEnd end;
      end.wait_ns = detail::drain_timed<AsContenderT<T>::kBulk, E>(*channels[i - n], side);
      end.end = Clock::now();
      end.verified = side.verified(w.events);
      return end;
    };
    Sample s = detail::many_sided<Launch>(w, ctx, n, n, body);
    s.events = n * w.events;
    s.waits = 0;
    for (const auto& ch : channels) {
      s.waits += static_cast<std::int64_t>(ch->producer_waits() + ch->consumer_waits());
    }
    return s;
  }
}

// `fanout`: w.producers producers, each with a BasicFanOut (T's parameters) to its consumers;
// consumer j belongs to producer j % producers.
template <class T, class Launch = DirectLaunch>
Sample run_fanout(const Workload& w, Context& ctx) {
  using FanOut = typename detail::HspcChannelOf<T>::FanOut;
  if constexpr (std::is_void_v<FanOut>) {
    return detail::declined("fanout");
  } else {
    using E = typename FanOut::value_type;
    const std::size_t p = w.producers;
    std::vector<std::unique_ptr<FanOut>> fans;
    for (std::size_t g = 0; g < p; ++g) {
      fans.push_back(std::make_unique<FanOut>(w.consumers / p + (g < w.consumers % p ? 1 : 0)));
    }
    constexpr bool kCutByClock = FanOut::kMaxLatencyNs != 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sums(w.consumers);  // taken, checksum
    auto body = [&](std::size_t i) {
      if (i < p) return detail::produce_timed<E>(*fans[i], w, ctx.calibration);
      FanOut& fan = *fans[(i - p) % p];
      const std::size_t m = (i - p) / p;
      RoundRobinConsumerSide<E> side(w, ctx.calibration, m, fan.consumers(),
                                     FanOut::kEventsPerBuffer, kCutByClock);
      detail::FanOutLane<FanOut> lane{&fan, m};
      detail::ThreadEnd end;
      end.wait_ns = detail::drain_timed<AsContenderT<T>::kBulk, E>(lane, side);
      end.end = Clock::now();
      end.verified = side.verified();
      sums[i - p] = {side.taken(), side.checksum()};
      return end;
    };
    Sample s = detail::many_sided<Launch>(w, ctx, p, w.consumers, body);
    if constexpr (kCutByClock) {  // each producer's consumers took its whole stream between them
      for (std::size_t g = 0; g < p; ++g) {
        std::uint64_t taken = 0, checksum = 0;
        for (std::size_t c = g; c < w.consumers; c += p) {
          taken += sums[c].first;
          checksum += sums[c].second;
        }
        s.verified = s.verified && taken == w.events && checksum == expected_checksum<E>(w.events);
      }
    }
    s.events = p * w.events;
    s.waits = 0;
    for (const auto& fan : fans) {
      std::uint64_t waits = fan->producer_waits();
      for (std::size_t k = 0; k < fan->consumers(); ++k) waits += fan->consumer_waits(k);
      s.waits += static_cast<std::int64_t>(waits);
    }
    return s;
  }
}

}  // namespace hspc_harness
