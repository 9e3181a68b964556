// The harness measures what it claims: every kind of sample runs through the real channel on real
// threads and checks its answer; a channel that loses, repeats, reorders or tears an event is
// reported unverified; the consumer is one persistent thread; pinning is undone after a sample.
#include <pthread.h>
#include <sched.h>

#include <cstdint>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include "check.hpp"
#include "harness/baselines.hpp"
#include "harness/cpus.hpp"
#include "harness/sample.hpp"
#include "harness/stack_offset.hpp"
#include "harness/variant.hpp"
#include "hspc/channel.hpp"

namespace {

namespace hb = hspc_harness;
using harness_test::kScale;
using hspc::Primitive;

template <class E, Primitive P = Primitive::futex>
using Channel = hspc::BasicChannel<E, P, 4, 1024, 64>;

hb::Workload workload(std::uint64_t events) {
  hb::Workload w;
  w.events = events;
  return w;
}

bool same_mask(pid_t tid, const cpu_set_t& want) {
  cpu_set_t now;
  CPU_ZERO(&now);
  sched_getaffinity(tid, sizeof(now), &now);
  return CPU_EQUAL(&now, &want);
}

// The checksum's closed form agrees with adding up the events one by one.
template <std::size_t Bytes>
void checksum_closed_form() {
  using E = hb::Event<Bytes>;
  for (std::uint64_t n : {0ull, 1ull, 255ull, 256ull, 257ull, 65537ull, 100003ull}) {
    hb::Verifier<E> v;
    E ev{};
    for (std::uint64_t i = 0; i < n; ++i) {
      hb::stamp(ev, i);
      v.check(ev);
    }
    HARNESS_CHECK(v.in_order());
    HARNESS_CHECK(v.checksum() == hb::expected_checksum<E>(n));
  }
}

void events_and_checksums() {
  static_assert(sizeof(hb::Event<2>) == 2 && sizeof(hb::Event<64>) == 64);
  checksum_closed_form<1>();
  checksum_closed_form<2>();
  checksum_closed_form<8>();
  checksum_closed_form<12>();
  checksum_closed_form<24>();
}

void calibration() {
  const hb::Calibration c = hb::calibrate(3, 1u << 16);
  HARNESS_CHECK(c.loops_per_ns > 0);
  HARNESS_CHECK(c.loops_for(0) == 0 && c.loops_for(-5) == 0);
  HARNESS_CHECK(c.loops_for(1000) >= c.loops_for(10));
}

// Every kind, through the variant table's dispatcher, gives a verified sample of the right size.
template <class T, class Launch = hb::DirectLaunch>
void every_kind(hb::Context& ctx, const hb::Workload& w) {
  for (const hb::KindName& k : hb::kKindNames) {
    hb::Kind parsed{};
    HARNESS_CHECK(hb::parse_kind(k.name, parsed) && parsed == k.kind);
    const hb::Sample s = hb::run<T, Launch>(k.kind, w, ctx);
    if (!s.verified) std::fprintf(stderr, "kind %s not verified\n", k.name);
    HARNESS_CHECK(s.verified);
    HARNESS_CHECK(s.events == w.events && s.wall_ns > 0);
    const bool latency =
        k.kind == hb::Kind::latency || k.kind == hb::Kind::round_trip || k.kind == hb::Kind::paced;
    HARNESS_CHECK(latency == (s.latency_p50_ns > 0));
    HARNESS_CHECK(!latency || s.latency_p50_ns <= s.latency_p99_ns);
  }
}

void kinds_through_channels(hb::Context& ctx) {
  hb::Workload w = workload(20000 / kScale);
  every_kind<Channel<hb::Event<8>>>(ctx, w);
  every_kind<Channel<hb::Event<1>, Primitive::hybrid>>(ctx, w);
  every_kind<hb::PerEvent<Channel<hb::Event<24>, Primitive::condvar>>>(ctx, w);
  every_kind<Channel<hb::Event<12>, Primitive::pause_spin>, hb::StackOffset<4096>>(ctx, w);
  // Stage Two: work on both sides and a consumer working set, and a ring that does not divide
  // the event count.
  w.producer_ns = 40;
  w.consumer_ns = 15;
  w.consumer_bytes = 1 << 16;
  w.pace_ns = 200;
  w.ring_bytes = 1000;
  every_kind<Channel<hb::Event<24>, Primitive::spinlock>>(ctx, w);
}

enum class Fault { none, drop, duplicate, swap, tear };

// The real channel with one fault injected at event 100 on the consumer side.
template <class Ch, Fault F, bool Bulk>
class Faulty : public hb::ChannelContender<Ch> {
  using Base = hb::ChannelContender<Ch>;

 public:
  using Event = typename Base::Event;
  static constexpr bool kBulk = Bulk;

  bool pop(Event& ev) {
    if (pending_) {
      ev = held_;
      pending_ = false;
      return true;
    }
    if (!Base::pop(ev)) return false;
    if (ev.seq != 100) return true;
    if constexpr (F == Fault::drop) {
      return Base::pop(ev);
    } else if constexpr (F == Fault::duplicate) {
      held_ = ev;
      pending_ = true;
    } else if constexpr (F == Fault::swap) {
      held_ = ev;
      pending_ = Base::pop(ev);
    } else if constexpr (F == Fault::tear) {
      ev.payload[0] ^= 1;
    }
    return true;
  }

  // Bulk: the faulty event is dropped from its run.
  template <class F2>
  std::size_t consume(F2&& f) {
    return Base::consume([&f](const Event* events, std::size_t n) {
      std::vector<Event> run(events, events + n);
      for (std::size_t i = 0; i < run.size(); ++i) {
        if (run[i].seq == 100) run.erase(run.begin() + static_cast<std::ptrdiff_t>(i));
      }
      f(static_cast<const Event*>(run.data()), run.size());
    });
  }

 private:
  Event held_{};
  bool pending_ = false;
};

void wrong_answers_are_reported(hb::Context& ctx) {
  using Ch = Channel<hb::Event<16>>;
  const hb::Workload w = workload(5000);
  HARNESS_CHECK((hb::run_throughput<Faulty<Ch, Fault::none, false>>(w, ctx).verified));
  HARNESS_CHECK(!(hb::run_throughput<Faulty<Ch, Fault::drop, false>>(w, ctx).verified));
  HARNESS_CHECK(!(hb::run_throughput<Faulty<Ch, Fault::duplicate, false>>(w, ctx).verified));
  HARNESS_CHECK(!(hb::run_throughput<Faulty<Ch, Fault::swap, false>>(w, ctx).verified));
  HARNESS_CHECK(!(hb::run_throughput<Faulty<Ch, Fault::tear, false>>(w, ctx).verified));
  HARNESS_CHECK(!(hb::run_throughput<Faulty<Ch, Fault::drop, true>>(w, ctx).verified));
  HARNESS_CHECK(!(hb::run_latency<Faulty<Ch, Fault::drop, false>>(w, ctx).verified));
  HARNESS_CHECK(!(hb::run_round_trip<Faulty<Ch, Fault::tear, false>>(w, ctx).verified));
}

// One persistent consumer thread for every sample; pins undone on both threads afterwards.
void threads_and_pinning(hb::Context& ctx) {
  const std::vector<int> cpus = hb::allowed_cpus();
  cpu_set_t before;
  CPU_ZERO(&before);
  sched_getaffinity(0, sizeof(before), &before);
  hb::Workload w = workload(10000 / kScale);
  w.producer_cpu = cpus.front();
  w.consumer_cpu = cpus.back();
  const hb::Sample a = hb::run_throughput<hb::ChannelContender<Channel<hb::Event<8>>>>(w, ctx);
  const hb::Sample b = hb::run_round_trip<hb::ChannelContender<Channel<hb::Event<8>>>>(w, ctx);
  HARNESS_CHECK(a.verified && b.verified);
  HARNESS_CHECK(a.consumer_tid != 0 && a.consumer_tid == b.consumer_tid);
  HARNESS_CHECK(a.consumer_tid != hb::current_tid());
  HARNESS_CHECK(same_mask(0, before));
  HARNESS_CHECK(same_mask(static_cast<pid_t>(a.consumer_tid), before));
  // Both threads on one CPU: the hand-off test's placement.
  w.consumer_cpu = w.producer_cpu;
  w.events = 200;
  HARNESS_CHECK((hb::run_round_trip<hb::ChannelContender<Channel<hb::Event<8>>>>(w, ctx).verified));
  HARNESS_CHECK(same_mask(0, before));
  HARNESS_CHECK(a.producer.migrations >= -1 && a.consumer.nivcsw >= 0 && a.consumer.nvcsw >= 0);
}

// A throughput sample past its cap stops early: timed and verified over the events it pushed, so
// a variant far slower than the one samples were sized by costs a bounded time; an uncapped
// sample (and one that finishes inside the cap) moves every event.
void capped_samples(hb::Context& ctx) {
  using A = hb::ChannelContender<Channel<hb::Event<8>>>;
  hb::Workload slow = workload(1'000'000);
  slow.producer_ns = 1000;  // ~1 s uncapped
  ctx.cap_ns = 5'000'000;
  const hb::Sample capped = hb::run_throughput<A>(slow, ctx);
  HARNESS_CHECK(capped.verified);
  HARNESS_CHECK(capped.events >= hb::kCapCheckEvents - 1 && capped.events < slow.events);
  const hb::Sample quick = hb::run_throughput<A>(workload(2000), ctx);
  HARNESS_CHECK(quick.verified && quick.events == 2000);
  ctx.cap_ns = 0;
  slow.events = 20'000;
  const hb::Sample whole = hb::run_throughput<A>(slow, ctx);
  HARNESS_CHECK(whole.verified && whole.events == slow.events);
}

// Two threads that share one CPU wait for it in turn: the run-queue delay the probe reads shows it
// (where the kernel exposes schedstat; -1 where it does not).
void run_queue_delay() {
  const std::int64_t known = hb::detail::thread_run_delay_ns();
  if (known < 0) return;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  HARNESS_CHECK(sched_getaffinity(0, sizeof(mine), &mine) == 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &mine)) ++cpu;
  std::int64_t waited[2] = {0, 0};
  auto burn = [cpu, &waited](int i) {
    hb::ScopedPin pin(cpu);
    hb::ThreadProbe probe;
    probe.start();
    const std::int64_t until = hb::detail::thread_cpu_ns() + 30'000'000;  // 30 ms of CPU
    while (hb::detail::thread_cpu_ns() < until) {
    }
    probe.stop_cheap();
    waited[i] = probe.finish().delay_ns;
  };
  std::thread a(burn, 0);
  std::thread b(burn, 1);
  a.join();
  b.join();
  HARNESS_CHECK(waited[0] >= 0 && waited[1] >= 0);
  HARNESS_CHECK(waited[0] + waited[1] > 10'000'000);  // each waited while the other ran
}

}  // namespace

int main() {
  events_and_checksums();
  calibration();
  hb::Context ctx{hb::calibrate(3, 1u << 16), {}};
  kinds_through_channels(ctx);
  wrong_answers_are_reported(ctx);
  threads_and_pinning(ctx);
  capped_samples(ctx);
  run_queue_delay();
  std::puts("harness: ok");
  return 0;
}
