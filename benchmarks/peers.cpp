// hspc_peers: the channel at good points against the packaged SPSC queues, side by side in one
// run, 8-byte events, no work per event, same harness and threads for all. See README.md.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "bench/peers.hpp"
#include "bench/transfer.hpp"
#include "harness/harness.hpp"
#include "hspc/channel.hpp"
#include "programs.hpp"
#include "tuned.hpp"

namespace {

using hspc::BasicChannel;
using hspc::Primitive;
using hspc_programs::pinned;
using hspc_programs::Placement;
using hspc_programs::Registrar;
namespace hb = hspc_harness;
using E8 = hb::Event<8>;

constexpr std::uint64_t kEvents = 2'000'000;  // a collapsed spin peer runs ~1 M/s here
constexpr std::uint64_t kRoundTrips = 5'000;
constexpr std::size_t kPeerCapacity = 8192;  // 64 KiB of 8-byte events, as the 4 x 16 KiB channel

template <template <class, std::size_t> class Peer>
using Peer8 = Peer<E8, kPeerCapacity>;

template <Primitive P, std::size_t Buffers, std::size_t BufferBytes>
using Channel = BasicChannel<E8, P, Buffers, BufferBytes, 128>;

// Throughput, and unless told otherwise the round trip, of contender A.
template <class A>
void contender(Registrar& r, const std::string& name, const Placement& at, bool round_trip = true) {
  r.add("throughput/" + name, &hb::run_throughput<A>, pinned(kEvents, at));
  if (round_trip) {
    r.add("round_trip/" + name, &hb::run_round_trip<A>, pinned(kRoundTrips, at),
          benchmark::kMicrosecond);
  }
}

// The channel in bulk (consume) and per event (pop); the round trip is the same for both.
template <Primitive P, std::size_t Buffers, std::size_t BufferBytes>
void channel(Registrar& r, const std::string& name, const Placement& at) {
  contender<hb::ChannelContender<Channel<P, Buffers, BufferBytes>>>(r, name + "_bulk", at);
  contender<hb::PerEvent<Channel<P, Buffers, BufferBytes>>>(r, name + "_pop", at, false);
}

hb::Sample producer_alone(const hb::Workload& w, hb::Context& ctx) {
  return hb::run_producer_alone<E8>(w, ctx, w.ring_bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<hb::Options> opt = hb::init(argc, argv);
  if (!opt) return 2;
  hb::Session session(*opt);
  Registrar r(session, "peers", /*iterations=*/1);
  const Placement at = hspc_programs::default_placement();
  r.add("throughput/baseline_producer", &producer_alone, pinned(kEvents, at));
  r.add("throughput/p0_parallel", &hb::run_p0_parallel<E8>, pinned(kEvents, at));
  contender<hb::WholeBuffers<E8, 4, 16384>>(r, "whole_buffers_4x16KiB", at, false);
  channel<Primitive::futex, 4, 65536>(r, "hspc_futex_4x64KiB", at);
  channel<Primitive::hybrid, 4, 65536>(r, "hspc_hybrid_4x64KiB", at);
  channel<Primitive::futex, 4, 16384>(r, "hspc_futex_4x16KiB", at);
  channel<Primitive::pause_spin, 4, 16384>(r, "hspc_pause_spin_4x16KiB", at);
  contender<Peer8<hspc_peers::BoostSpscBulk>>(r, "boost_spsc_bulk", at);
  contender<Peer8<hspc_peers::BoostSpscSingle>>(r, "boost_spsc_single", at);
  contender<Peer8<hspc_peers::MoodycamelRwq>>(r, "moodycamel_rwq", at);
  contender<Peer8<hspc_peers::MoodycamelBlockingRwq>>(r, "moodycamel_blocking_rwq", at);
  contender<Peer8<hspc_peers::MoodycamelCqBulk>>(r, "moodycamel_cq_bulk", at);
  contender<Peer8<hspc_peers::AtomicQueueSpsc>>(r, "atomic_queue_spsc", at);
  contender<Peer8<hspc_peers::TbbBoundedQueue>>(r, "tbb_bounded_queue", at);
  hspc_programs::register_tuned(r, at, kEvents, kRoundTrips);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return session.wrong_answers() == 0 ? 0 : 1;  // a wrong answer fails the run, too
}
