// The many-thread kinds measure what they claim: pairs and fan-outs of every shape run through the
// real channels on real threads and verify every consumer's share; a fan-out consumer given the
// wrong share, a lost, repeated, reordered or torn event is reported unverified; every thread
// starts behind the gate, pinned where cpus= says and unpinned afterwards, on persistent workers.
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "harness/cpus.hpp"
#include "harness/pairs.hpp"
#include "harness/stack_offset.hpp"
#include "harness/variant.hpp"
#include "hspc/channel.hpp"

namespace {

namespace hb = hspc_harness;
using harness_test::kScale;
using hspc::Primitive;

template <class E, Primitive P = Primitive::futex, std::size_t BufferBytes = 1024>
using Channel = hspc::BasicChannel<E, P, 4, BufferBytes, 64>;

hb::Workload workload(std::uint64_t events) {
  hb::Workload w;
  w.events = events;
  return w;
}

void check_sample(const hb::Sample& s, std::uint64_t events, const char* what) {
  if (!s.verified) std::fprintf(stderr, "%s: not verified\n", what);
  HARNESS_CHECK(s.verified);
  HARNESS_CHECK(s.events == events && s.wall_ns > 0);
  HARNESS_CHECK(s.waits >= 0 && s.wait_ns >= 0);
  HARNESS_CHECK(s.producer.cpu_ns > 0 && s.consumer.cpu_ns > 0);
  HARNESS_CHECK(s.producer.nvcsw >= 0 && s.consumer.nivcsw >= 0 && s.producer.migrations >= -1);
}

template <class T, class Launch = hb::DirectLaunch>
void pairs_of(hb::Context& ctx, hb::Workload w) {
  for (std::size_t n : {1, 2, 3}) {
    w.pairs = n;
    check_sample(hb::run_pairs<T, Launch>(w, ctx), n * w.events, "pairs");
  }
}

template <class T, class Launch = hb::DirectLaunch>
void fanouts_of(hb::Context& ctx, hb::Workload w) {
  const std::size_t shapes[][2] = {{1, 1}, {1, 2}, {1, 3}, {1, 5}, {2, 2}, {2, 3}, {2, 5}};
  for (const auto& shape : shapes) {
    w.producers = shape[0];
    w.consumers = shape[1];
    check_sample(hb::run_fanout<T, Launch>(w, ctx), shape[0] * w.events, "fanout");
  }
}

// Event counts that are and are not whole buffers; bulk and per-event consumers; 1-byte events
// (their sequence number wraps at 256); Stage Two work; the producers' stack offset.
void shapes(hb::Context& ctx) {
  const std::uint64_t events = 30000 / kScale;
  pairs_of<Channel<hb::Event<8>>>(ctx, workload(events));
  pairs_of<hb::PerEvent<Channel<hb::Event<24>, Primitive::condvar>>>(ctx, workload(events + 7));
  pairs_of<Channel<hb::Event<1>, Primitive::hybrid, 64>, hb::StackOffset<4096>>(ctx,
                                                                                workload(events));
  fanouts_of<Channel<hb::Event<8>>>(ctx, workload(events));
  fanouts_of<Channel<hb::Event<1>, Primitive::pause_spin, 64>>(ctx, workload(events + 5));
  fanouts_of<hb::PerEvent<Channel<hb::Event<12>, Primitive::mutex, 256>>, hb::StackOffset<4096>>(
      ctx, workload(events + 1));
  hb::Workload work = workload(events / 4);
  work.producer_ns = 20;
  work.consumer_ns = 60;
  work.consumer_bytes = 1 << 14;
  fanouts_of<Channel<hb::Event<16>, Primitive::futex, 128>>(ctx, work);
  pairs_of<Channel<hb::Event<16>, Primitive::spinlock, 128>>(ctx, work);
}

// Every code shape the tuner can pick (prefetch, huge pages, a latency bound) runs as pairs and
// fan-outs, as the variant table names it: none is declined (a declined sample moved nothing,
// and the thread search once read it as a measurement).
void every_code_shape(hb::Context& ctx) {
  using Shaped =
      hspc::BasicChannel<hb::Event<8>, Primitive::hybrid, 4, 4096, 64, 2000, 0, 256, true>;
  using Bounded = hspc::BasicChannel<hb::Event<8>, Primitive::futex, 4, 1024, 64, 5000, 50000, 64>;
  static_assert(!std::is_void_v<hb::detail::HspcChannelOf<Shaped>::FanOut>);
  static_assert(hb::detail::HspcChannelOf<Shaped>::FanOut::Channel::kPrefetchBytes == 256);
  static_assert(hb::detail::HspcChannelOf<Shaped>::FanOut::Channel::kHugePages);
  static_assert(hb::detail::HspcChannelOf<Bounded>::FanOut::kMaxLatencyNs == 50000);
  const std::uint64_t events = 20000 / kScale;
  pairs_of<hb::AsContenderT<Shaped>, hb::StackOffset<4096>>(ctx, workload(events));
  fanouts_of<hb::AsContenderT<Shaped>, hb::StackOffset<4096>>(ctx, workload(events));
  pairs_of<hb::PerEvent<Bounded>>(ctx, workload(events + 3));
  fanouts_of<hb::AsContenderT<Bounded>>(ctx, workload(events + 3));
  hb::Workload slow = workload(events / 8);  // buffers cut short by the bound, not by the fill
  slow.producer_ns = 2000;
  fanouts_of<hb::AsContenderT<Bounded>>(ctx, slow);
  fanouts_of<
      hb::PerEvent<hspc::BasicChannel<hb::Event<1>, Primitive::hybrid, 4, 64, 64, 5000, 20000>>>(
      ctx, slow);
  // What a peer queue gets from these kinds: a sample that moved nothing, which the harness
  // reports and the tuner records as the arm's failure.
  hb::Workload w = workload(events);
  w.producers = 2;
  w.consumers = 2;
  const hb::Sample declined = hb::run_fanout<int>(w, ctx);
  HARNESS_CHECK(declined.events == 0 && !declined.verified);
}

// Each consumer's share of the stream adds up to the whole stream, whatever the cut.
void shares_add_up() {
  for (std::uint64_t events : {0ull, 1ull, 7ull, 64ull, 65ull, 1000ull, 4097ull}) {
    for (std::uint64_t per_buffer : {1ull, 3ull, 8ull, 4096ull}) {
      for (std::uint64_t consumers : {1ull, 2ull, 5ull, 64ull}) {
        std::uint64_t total = 0;
        for (std::uint64_t m = 0; m < consumers; ++m) {
          total += hb::detail::round_robin_share(events, per_buffer, m, consumers);
        }
        HARNESS_CHECK(total == events);
      }
    }
  }
  HARNESS_CHECK(hb::detail::round_robin_share(10, 3, 0, 2) == 6);  // buffers 0, 2 (0-2, 6-8)
  HARNESS_CHECK(hb::detail::round_robin_share(10, 3, 1, 2) == 4);  // buffers 1, 3 (3-5, 9)
}

enum class Fault { none, wrong_consumer, drop, duplicate, swap_buffers, tear };

// Feeds consumer 1 of 3 (4 events per buffer, 100 events) its share, with one fault.
template <class E>
bool share_verifies(Fault fault) {
  hb::Workload w = workload(100);
  const hb::Calibration c{1.0};
  const std::size_t m = fault == Fault::wrong_consumer ? 2 : 1;
  hb::RoundRobinConsumerSide<E> side(w, c, m, 3, 4);
  std::vector<E> share;
  for (std::uint64_t buffer = 1; buffer * 4 < w.events; buffer += 3) {
    for (std::uint64_t i = buffer * 4; i < buffer * 4 + 4 && i < w.events; ++i) {
      E ev{};
      hb::stamp(ev, i);
      share.push_back(ev);
    }
  }
  if (fault == Fault::drop) share.erase(share.begin() + 5);
  if (fault == Fault::duplicate) share.insert(share.begin() + 5, share[5]);
  if (fault == Fault::swap_buffers)
    std::swap_ranges(share.begin(), share.begin() + 4, share.begin() + 4);
  if constexpr (E::kHasPayload) {
    if (fault == Fault::tear) share[6].payload[0] ^= 1;
  }
  side.on_span(share.data(), share.size() / 2);
  for (std::size_t i = share.size() / 2; i < share.size(); ++i) side.on_event(share[i]);
  return side.verified();
}

// A share cut by the clock: buffers of any length, each a run of consecutive numbers; the side
// sums what it took (run_fanout checks the sums of a producer's consumers against the stream)
// and reports a torn event alone.
void shares_cut_by_the_clock() {
  const hb::Calibration c{1.0};
  std::vector<hb::Event<12>> share;
  for (std::uint64_t i : {3, 4, 5, 9, 10, 300, 301, 302}) {
    hb::Event<12> ev{};
    hb::stamp(ev, i);
    share.push_back(ev);
  }
  hb::RoundRobinConsumerSide<hb::Event<12>> side(workload(400), c, 1, 3, 4, true);
  side.on_span(share.data(), share.size());
  HARNESS_CHECK(side.verified() && side.taken() == share.size());
  std::uint64_t sum = 0;
  for (const auto& ev : share) sum += ev.seq + 2u * static_cast<std::uint8_t>(ev.seq);
  HARNESS_CHECK(side.checksum() == sum);
  share[4].payload[0] ^= 1;
  hb::RoundRobinConsumerSide<hb::Event<12>> torn(workload(400), c, 1, 3, 4, true);
  torn.on_span(share.data(), share.size());
  HARNESS_CHECK(!torn.verified());
}

void wrong_shares_are_reported() {
  HARNESS_CHECK(share_verifies<hb::Event<12>>(Fault::none));
  HARNESS_CHECK(share_verifies<hb::Event<1>>(Fault::none));
  for (Fault f :
       {Fault::wrong_consumer, Fault::drop, Fault::duplicate, Fault::swap_buffers, Fault::tear}) {
    HARNESS_CHECK(!share_verifies<hb::Event<12>>(f));
  }
}

// What each thread of a many_sided run saw of itself.
struct Seen {
  std::mutex mutex;
  std::vector<long> tids;
  std::vector<std::vector<int>> masks;
};

void record_threads(hb::Context& ctx, const hb::Workload& w, std::size_t producers,
                    std::size_t consumers, Seen& seen) {
  seen.tids.assign(producers + consumers, 0);
  seen.masks.assign(producers + consumers, {});
  const hb::Sample s =
      hb::detail::many_sided<hb::DirectLaunch>(w, ctx, producers, consumers, [&](std::size_t i) {
        const std::lock_guard<std::mutex> lock(seen.mutex);
        seen.tids[i] = hb::current_tid();
        seen.masks[i] = hb::allowed_cpus();
        return hb::detail::ThreadEnd{};
      });
  HARNESS_CHECK(s.verified && s.wall_ns > 0);
}

// cpus= pins thread i (producers first) to cpus[i] for the sample only; the same persistent
// threads run every sample; producer 0 is the benchmark thread and consumer 0 the usual worker.
void threads_and_pinning(hb::Context& ctx) {
  const std::vector<int> cpus = hb::allowed_cpus();
  hb::Workload w = workload(1);
  w.cpus = {cpus.back(), cpus.front(), cpus.front(), cpus.back(), cpus.back()};
  Seen first;
  record_threads(ctx, w, 2, 3, first);
  for (std::size_t i = 0; i < w.cpus.size(); ++i) {
    HARNESS_CHECK(first.masks[i] == std::vector<int>{w.cpus[i]});
  }
  HARNESS_CHECK(first.tids[0] == hb::current_tid());
  HARNESS_CHECK(std::set<long>(first.tids.begin(), first.tids.end()).size() == 5);
  HARNESS_CHECK(hb::allowed_cpus() == cpus);
  const std::size_t pool = hb::extra_workers().size();
  HARNESS_CHECK(pool >= 3);
  w.cpus.clear();
  Seen second;
  record_threads(ctx, w, 2, 3, second);
  HARNESS_CHECK(second.tids == first.tids);
  HARNESS_CHECK(hb::extra_workers().size() == pool);
  for (const std::vector<int>& mask : second.masks) HARNESS_CHECK(mask == cpus);
  // The consumer of the two-thread kinds is consumer 0 here.
  w.events = 1000;
  const hb::Sample s = hb::run_throughput<hb::ChannelContender<Channel<hb::Event<8>>>>(w, ctx);
  HARNESS_CHECK(s.verified && s.consumer_tid == first.tids[2]);
}

}  // namespace

int main() {
  shares_add_up();
  wrong_shares_are_reported();
  shares_cut_by_the_clock();
  hb::Context ctx{hb::calibrate(3, 1u << 16), {}};
  threads_and_pinning(ctx);
  shapes(ctx);
  every_code_shape(ctx);
  std::puts("pairs: ok");
  return 0;
}
