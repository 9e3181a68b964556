// Every peer contender of hspc_peers delivers every event once, in order, in both the throughput
// and the round-trip samples (a peer adapter that lost events would make its numbers meaningless).
#include <cstdint>
#include <cstdio>

#include "../peers.hpp"
#include "bench/sample.hpp"
#include "check.hpp"

namespace {

namespace hb = hspc_bench;

template <class A>
void delivers(hb::Context& ctx, const char* name) {
  hb::Workload w;
  w.events = 300000;  // more than a peer's capacity and than boost's batch: wrap-around and full
  const hb::Sample throughput = hb::run_throughput<A>(w, ctx);
  w.events = 2000;
  const hb::Sample round_trip = hb::run_round_trip<A>(w, ctx);
  if (!throughput.verified || !round_trip.verified) std::fprintf(stderr, "%s failed\n", name);
  BENCH_CHECK(throughput.verified && round_trip.verified);
}

}  // namespace

int main() {
  hb::Context ctx{hb::calibrate(3, 1u << 16), {}};
  delivers<hspc_peers::BoostSpscBulk>(ctx, "boost_spsc_bulk");
  delivers<hspc_peers::BoostSpscSingle>(ctx, "boost_spsc_single");
  delivers<hspc_peers::MoodycamelRwq>(ctx, "moodycamel_rwq");
  delivers<hspc_peers::MoodycamelBlockingRwq>(ctx, "moodycamel_blocking_rwq");
  delivers<hspc_peers::AtomicQueueSpsc>(ctx, "atomic_queue_spsc");
  delivers<hspc_peers::TbbBoundedQueue>(ctx, "tbb_bounded_queue");
  std::puts("peers: ok");
  return 0;
}
