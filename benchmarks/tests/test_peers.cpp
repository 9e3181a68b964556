// Every peer contender of hspc_peers delivers every event once, in order, in both the throughput
// and the round-trip samples (a peer adapter that lost events would make its numbers meaningless).
#include <cstdint>
#include <cstdio>

#include "bench/peers.hpp"
#include "bench/transfer.hpp"
#include "check.hpp"
#include "harness/sample.hpp"
#include "hspc/channel.hpp"

namespace {

namespace hb = hspc_harness;
using E8 = hb::Event<8>;
using E24 = hb::Event<24>;
constexpr std::size_t kCapacity = 8192;

template <class A>
void delivers(hb::Context& ctx, const char* name) {
  hb::Workload w;
  w.events = 300000;  // more than a peer's capacity and than boost's batch: wrap-around and full
  const hb::Sample throughput = hb::run_throughput<A>(w, ctx);
  w.events = 2000;
  const hb::Sample round_trip = hb::run_round_trip<A>(w, ctx);
  if (!throughput.verified || !round_trip.verified) std::fprintf(stderr, "%s failed\n", name);
  HARNESS_CHECK(throughput.verified && round_trip.verified);
}

}  // namespace

int main() {
  hb::Context ctx{hb::calibrate(3, 1u << 16), {}};
  delivers<hspc_peers::BoostSpscBulk<E8, kCapacity>>(ctx, "boost_spsc_bulk");
  delivers<hspc_peers::BoostSpscSingle<E8, kCapacity>>(ctx, "boost_spsc_single");
  delivers<hspc_peers::MoodycamelRwq<E8, kCapacity>>(ctx, "moodycamel_rwq");
  delivers<hspc_peers::MoodycamelBlockingRwq<E8, kCapacity>>(ctx, "moodycamel_blocking_rwq");
  delivers<hspc_peers::MoodycamelCqBulk<E8, kCapacity>>(ctx, "moodycamel_cq_bulk");
  delivers<hspc_peers::AtomicQueueSpsc<E8, kCapacity>>(ctx, "atomic_queue_spsc");
  delivers<hspc_peers::TbbBoundedQueue<E8, kCapacity>>(ctx, "tbb_bounded_queue");
  // Other event sizes and small capacities (hspc-gen bench sizes the peers by the channel).
  delivers<hspc_peers::BoostSpscBulk<E24, 64>>(ctx, "boost_spsc_bulk 24 B x 64");
  delivers<hspc_peers::MoodycamelCqBulk<hb::Event<4096>, 16>>(ctx, "moodycamel_cq_bulk 4 KiB x 16");
  delivers<hspc_peers::AtomicQueueSpsc<E24, 64>>(ctx, "atomic_queue_spsc 24 B x 64");
  // The transfer line and the channel moved in runs, whole and partial buffers.
  delivers<hb::WholeBuffers<E8, 4, 16384>>(ctx, "whole_buffers 4 x 16 KiB");
  delivers<hb::WholeBuffers<hb::Event<4096>, 2, 4096>>(ctx, "whole_buffers 4 KiB events");
  using Channel = hspc::BasicChannel<E24, hspc::Primitive::futex, 4, 4096, 128>;
  delivers<hb::RunsOf<Channel>>(ctx, "channel in runs of 256");
  std::puts("peers: ok");
  return 0;
}
