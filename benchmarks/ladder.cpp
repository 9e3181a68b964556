// hspc_ladder: the paper's Stage One ladder (Figure 1) on this host, then every primitive at a few
// points with 8-byte events, round-trip latency, and the single-event hand-off with both threads
// on one CPU. See benchmarks/README.md for how to run and read it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/harness.hpp"
#include "hspc/channel.hpp"
#include "programs.hpp"

namespace {

using hspc::BasicChannel;
using hspc::Primitive;
using hspc_programs::pinned;
using hspc_programs::Placement;
using hspc_programs::Registrar;
namespace hb = hspc_harness;

using E1 = hb::Event<1>;
using E8 = hb::Event<8>;

// Events per sample: ~10-50 ms for the fast variants on this class of host.
constexpr std::uint64_t kStageOneEvents = 8'000'000;
constexpr std::uint64_t kSaturatedEvents = 8'000'000;
constexpr std::uint64_t kRoundTrips = 20'000;
constexpr std::uint64_t kOneCpuRoundTrips = 500;  // a collapsing primitive costs ms per trip
constexpr std::size_t kPad = 128;  // adjacent-line prefetch pairs 64-byte lines: pad by two

template <class Ch>
using Bulk = hb::ChannelContender<Ch>;

// p5..p9 of the paper: triple buffering of 1 KiB buffers with single-byte events.
template <Primitive P, std::size_t Buffers, std::size_t BufferBytes, std::size_t Padding>
using OneByte = Bulk<BasicChannel<E1, P, Buffers, BufferBytes, Padding>>;

template <class E>
hb::Sample producer_alone(const hb::Workload& w, hb::Context& ctx) {
  return hb::run_producer_alone<E>(w, ctx, w.ring_bytes);
}

void baselines_1b(Registrar& r, const hb::Workload& w) {
  r.add("1B/baseline_producer", &producer_alone<E1>, w);
  r.add("1B/baseline_consumer", &hb::run_consumer_alone<E1>, w);
  r.add("1B/p0_parallel", &hb::run_p0_parallel<E1>, w);
  r.add("1B/upper_bound", &hb::run_upper_bound<E1>, w);
}

// The paper's p5 has no synchronization at all; our channel always synchronizes, so p5/p6 use
// the cheapest wait (hybrid: spin, then futex) to isolate the buffers' padding, and p7/p8 the
// paper's condition variables with and without padding around them.
void ladder_1b(Registrar& r, const hb::Workload& w) {
  r.add("1B/p5_shared_buffers", &hb::run_throughput<OneByte<Primitive::hybrid, 3, 1024, 0>>, w);
  r.add("1B/p6_padded_buffers", &hb::run_throughput<OneByte<Primitive::hybrid, 3, 1024, kPad>>, w);
  r.add("1B/p7_condvar", &hb::run_throughput<OneByte<Primitive::condvar, 3, 1024, 0>>, w);
  r.add("1B/p8_padded_condvar", &hb::run_throughput<OneByte<Primitive::condvar, 3, 1024, kPad>>, w);
  r.add("1B/p9_condvar_4x16KiB", &hb::run_throughput<OneByte<Primitive::condvar, 4, 16384, kPad>>,
        w);
  r.add("1B/p9_condvar_4x64KiB", &hb::run_throughput<OneByte<Primitive::condvar, 4, 65536, kPad>>,
        w);
  r.add("1B/p9_hybrid_4x16KiB", &hb::run_throughput<OneByte<Primitive::hybrid, 4, 16384, kPad>>, w);
}

void baselines_8b(Registrar& r, const hb::Workload& w) {
  r.add("8B/baseline_producer", &producer_alone<E8>, w);
  r.add("8B/baseline_consumer", &hb::run_consumer_alone<E8>, w);
  r.add("8B/p0_parallel", &hb::run_p0_parallel<E8>, w);
}

template <Primitive P, std::size_t Buffers, std::size_t BufferBytes>
using Point8 = Bulk<BasicChannel<E8, P, Buffers, BufferBytes, kPad>>;

// Saturated 8-byte throughput at a small, a middle and a large point; round trip; hand-off.
template <Primitive P>
void primitive(Registrar& r, const Placement& at) {
  const std::string name = hspc::primitive_name(P);
  const hb::Workload w = pinned(kSaturatedEvents, at);
  r.add("8B/" + name + "/2x4KiB", &hb::run_throughput<Point8<P, 2, 4096>>, w);
  r.add("8B/" + name + "/4x64KiB", &hb::run_throughput<Point8<P, 4, 65536>>, w);
  r.add("8B/" + name + "/8x256KiB", &hb::run_throughput<Point8<P, 8, 262144>>, w);
  r.add("8B/" + name + "/4x64KiB_pop",
        &hb::run_throughput<hb::PerEvent<BasicChannel<E8, P, 4, 65536, kPad>>>, w);
  r.add("round_trip/" + name, &hb::run_round_trip<Point8<P, 2, 4096>>, pinned(kRoundTrips, at),
        benchmark::kMicrosecond);
  r.add("handoff_1cpu/" + name, &hb::run_round_trip<Point8<P, 2, 4096>>,
        pinned(kOneCpuRoundTrips, at, /*one_cpu=*/true), benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<hb::Options> opt = hb::init(argc, argv);
  if (!opt) return 2;
  hb::Session session(*opt);
  Registrar r(session, "ladder", /*iterations=*/1);
  const Placement at = hspc_programs::default_placement();
  const hb::Workload w1 = pinned(kStageOneEvents, at);
  baselines_1b(r, w1);
  ladder_1b(r, w1);
  baselines_8b(r, pinned(kSaturatedEvents, at));
  primitive<Primitive::condvar>(r, at);
  primitive<Primitive::mutex>(r, at);
  primitive<Primitive::spinlock>(r, at);
  primitive<Primitive::backoff_spin>(r, at);
  primitive<Primitive::pause_spin>(r, at);
  primitive<Primitive::futex>(r, at);
  primitive<Primitive::hybrid>(r, at);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return session.wrong_answers() == 0 ? 0 : 1;  // a wrong answer fails the run, too
}
