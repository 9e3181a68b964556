// What the two developer benchmark programs share: where to pin, and a registrar that names,
// sizes and registers samples in one place.
#pragma once

#include <sched.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/cpus.hpp"
#include "harness/register.hpp"
#include "harness/sides.hpp"

namespace hspc_programs {

using hspc_harness::allowed_cpus;
using hspc_harness::Context;
using hspc_harness::Sample;
using hspc_harness::Workload;

// The placements the programs use: two distinct CPUs (the last two allowed, away from CPU 0 where
// interrupts usually land), and one CPU for both threads (the hand-off test).
struct Placement {
  int producer = -1;
  int consumer = -1;
  int shared = -1;
};

inline Placement default_placement() {
  const std::vector<int> cpus = allowed_cpus();
  Placement p;
  if (cpus.empty()) return p;
  p.shared = cpus.back();
  p.consumer = cpus.back();
  p.producer = cpus.size() >= 2 ? cpus[cpus.size() - 2] : cpus.back();
  return p;
}

using SampleFn = std::function<Sample(const Workload&, Context&)>;

// Registers samples with a common iteration count, each under "program/name".
class Registrar {
 public:
  Registrar(hspc_harness::Session& session, std::string program, std::uint64_t iterations)
      : session_(session), program_(std::move(program)), iterations_(iterations) {}

  void add(const std::string& name, SampleFn fn, Workload w,
           benchmark::TimeUnit unit = benchmark::kMillisecond) {
    hspc_harness::register_sample(
        session_, program_ + "/" + name, iterations_,
        [fn = std::move(fn), w](Context& ctx) { return fn(w, ctx); }, unit);
  }

 private:
  hspc_harness::Session& session_;
  std::string program_;
  std::uint64_t iterations_;
};

// Workload for `events` events between two pinned threads (or on one CPU when shared).
inline Workload pinned(std::uint64_t events, const Placement& p, bool one_cpu = false) {
  Workload w;
  w.events = events;
  w.producer_cpu = one_cpu ? p.shared : p.producer;
  w.consumer_cpu = one_cpu ? p.shared : p.consumer;
  return w;
}

}  // namespace hspc_programs
