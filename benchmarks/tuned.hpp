// A generated header's Channel as one more contender of hspc_peers, compiled in only when the
// build defines HSPC_TUNED_HEADER (the header's path, a string literal) and HSPC_TUNED_NAMESPACE
// (its namespace); benchmarks/run.py --tuned-header sets both.
#pragma once

#include <cstdint>

#include "programs.hpp"

namespace hspc_programs {

// Registers the tuned channel (bulk, per-event pop, round trip) if one was compiled in.
void register_tuned(Registrar& r, const Placement& at, std::uint64_t events,
                    std::uint64_t round_trips);

}  // namespace hspc_programs
