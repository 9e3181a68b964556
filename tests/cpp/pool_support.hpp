// Shared pieces of the pool tests (pool.cpp, pool_deal.cpp): a producer's seeded mix of calls and
// a restless controller.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "hspc/pool.hpp"
#include "test_support.hpp"

namespace hspc_test {

// `events` events carrying `id` in seq's top byte, by a seeded mix of emplace, try_push, push and
// bulk pushes of runs (up to a few hundred, across buffers' ends) with flushes and yields now and
// then; then close().
template <class Producer, class Ev>
void produce(Producer& in, std::uint32_t id, std::uint32_t events, Rng rng) {
  std::vector<Ev> run;
  for (std::uint32_t i = 0; i < events; ++i) {
    const Ev ev((id << 24) | i);
    switch (rng.below(5)) {
      case 4: {
        const std::uint32_t n = std::min(rng.below(300) + 1, events - i);
        run.clear();
        for (std::uint32_t k = 0; k < n; ++k) run.emplace_back((id << 24) | (i + k));
        in.push(run.data(), run.size());
        i += n - 1;
        break;
      }
      case 0:
        in.emplace((id << 24) | i);
        break;
      case 1:
        while (!in.try_push(ev)) std::this_thread::yield();
        break;
      default:
        in.push(ev);
    }
    if (rng.below(300) == 0) in.flush();
    if (rng.below(4096) == 0) std::this_thread::yield();
  }
  in.close();
}

// A busy controller: tiny intervals, quick to move both ways.
inline hspc::PoolOptions restless(std::size_t min, std::size_t max, bool ordered = true) {
  hspc::PoolOptions o{min, max, ordered};
  o.interval_ns = 300000;
  o.grow_wait_ns = 1000;
  o.grow_intervals = 1;
  o.shrink_intervals = 2;
  o.shrink_idle = 0.5;
  o.cpu_busy_max = 1.0;
  return o;
}

}  // namespace hspc_test
