// The tuned contender lives in its own translation unit: a generated header re-wraps the runtime
// in the user's namespace, which may well be `hspc` itself, so it must not meet
// runtime/hspc/*.hpp in one translation unit. Nothing here includes them.
#include "tuned.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>

#ifdef HSPC_TUNED_HEADER
#include <utility>

#include HSPC_TUNED_HEADER
#include "harness/contender.hpp"
#include "harness/event.hpp"
#include "harness/sample.hpp"

namespace hspc_programs {

namespace {

using TunedChannel = HSPC_TUNED_NAMESPACE::Channel<hspc_harness::Event<8>>;

// The producer runs with the header's own stack offset, as the header tells its users to.
struct TunedLaunch {
  template <class F>
  static void run(F&& f) {
    HSPC_TUNED_NAMESPACE::run_with_stack_offset(std::forward<F>(f));
  }
};

}  // namespace

void register_tuned(Registrar& r, const Placement& at, std::uint64_t events,
                    std::uint64_t round_trips) {
  using Bulk = hspc_harness::ChannelContender<TunedChannel>;
  using Pop = hspc_harness::PerEvent<TunedChannel>;
  r.add("throughput/tuned_bulk", &hspc_harness::run_throughput<Bulk, TunedLaunch>,
        pinned(events, at));
  r.add("throughput/tuned_pop", &hspc_harness::run_throughput<Pop, TunedLaunch>,
        pinned(events, at));
  // The bulk calls: push(ptr, 256) and pop(ptr, 256), as hspc-gen bench's tuned_runs.
  using Runs = hspc_harness::RunsOf<TunedChannel>;
  r.add("throughput/tuned_runs", &hspc_harness::run_throughput<Runs, TunedLaunch>,
        pinned(events, at));
  r.add("round_trip/tuned", &hspc_harness::run_round_trip<Bulk, TunedLaunch>,
        pinned(round_trips, at), benchmark::kMicrosecond);
}

}  // namespace hspc_programs

#else

namespace hspc_programs {

void register_tuned(Registrar&, const Placement&, std::uint64_t, std::uint64_t) {}

}  // namespace hspc_programs

#endif
