// Benchmark kinds and the variant table: how a plan line's variant id reaches a template
// instantiation. The rendered benchmark provides the table, e.g.
//
//   static const hspc_harness::Variant kVariants[] = {
//       {"c1a2b3c4d5", &hspc_harness::run<hspc::BasicChannel<hspc_harness::Event<8>,
//                                       hspc::Primitive::futex, 4, 16384, 128>>},
//       {"c9f8e7d6c5", &hspc_harness::run<hspc_harness::PerEvent<...>,
//       hspc_harness::StackOffset<4096>>},
//   };
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

#include "harness/baselines.hpp"
#include "harness/contender.hpp"
#include "harness/pairs.hpp"
#include "harness/sample.hpp"

namespace hspc_harness {

// What one benchmark measures. The names are the plan's and the records' arm names.
enum class Kind {
  throughput,      // saturated events through the variant
  latency,         // paced single events, each flushed: push-to-pop median and p99
  round_trip,      // ping-pong through two instances (one CPU for both: the hand-off test)
  producer_alone,  // the baselines, with the variant's event type
  consumer_alone,
  p0_parallel,
  optimal,
  achievable,
  upper_bound,
  pairs,   // pairs=N producer/consumer pairs at once, a channel each (hspc channels only)
  fanout,  // producers=P, each handing buffers round robin to its consumers=K (hspc channels only)
  paced,   // latency's paced load without the flushes: buffer fill and latency bound decide
};

struct KindName {
  Kind kind;
  const char* name;
};

inline constexpr KindName kKindNames[] = {
    {Kind::throughput, "throughput"},
    {Kind::latency, "latency"},
    {Kind::round_trip, "round_trip"},
    {Kind::producer_alone, "producer_alone"},
    {Kind::consumer_alone, "consumer_alone"},
    {Kind::p0_parallel, "p0_parallel"},
    {Kind::optimal, "optimal"},
    {Kind::achievable, "achievable"},
    {Kind::upper_bound, "upper_bound"},
    {Kind::pairs, "pairs"},
    {Kind::fanout, "fanout"},
    {Kind::paced, "paced"},
};

// True and sets `out` if `name` is a kind's name.
inline bool parse_kind(std::string_view name, Kind& out) noexcept {
  for (const KindName& k : kKindNames) {
    if (name == k.name) {
      out = k.kind;
      return true;
    }
  }
  return false;
}

inline const char* kind_name(Kind kind) noexcept {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

// Runs one sample of `kind` for contender T (a contender, or a bare channel type driven in bulk).
// Launch runs the producer's body (DirectLaunch, or a stack-offset launcher).
template <class T, class Launch = DirectLaunch>
Sample run(Kind kind, const Workload& w, Context& ctx) {
  using A = AsContenderT<T>;
  using E = typename A::Event;
  switch (kind) {
    case Kind::throughput:
      return run_throughput<A, Launch>(w, ctx);
    case Kind::latency:
      return run_latency<A, Launch>(w, ctx);
    case Kind::round_trip:
      return run_round_trip<A, Launch>(w, ctx);
    case Kind::producer_alone:
      return run_producer_alone<E>(w, ctx, w.ring_bytes);
    case Kind::consumer_alone:
      return run_consumer_alone<E>(w, ctx);
    case Kind::p0_parallel:
      return run_p0_parallel<E>(w, ctx);
    case Kind::optimal:
      return run_optimal<E>(w, ctx);
    case Kind::achievable:
      return run_producer_alone<E>(w, ctx, A::kCapacityBytes ? A::kCapacityBytes : w.ring_bytes);
    case Kind::upper_bound:
      return run_upper_bound<E>(w, ctx);
    case Kind::pairs:
      return run_pairs<T, Launch>(w, ctx);
    case Kind::fanout:
      return run_fanout<T, Launch>(w, ctx);
    case Kind::paced:
      return run_paced<A, Launch>(w, ctx);
  }
  return Sample{};
}

using RunFn = Sample (*)(Kind, const Workload&, Context&);

// One row of a variant table.
struct Variant {
  const char* id;
  RunFn run;
};

inline const Variant* find_variant(const Variant* begin, const Variant* end,
                                   std::string_view id) noexcept {
  for (const Variant* v = begin; v != end; ++v) {
    if (id == v->id) return v;
  }
  return nullptr;
}

}  // namespace hspc_harness
