// The phase benchmark's hill climber (benchmarks/hill_climbing.hpp) on made-up samples, as .NET's
// algorithm behaves: while throughput follows the thread count it climbs; with throughput flat it
// does not (its bias, 0.15, walks it down); it never leaves [min, max]; it refuses growth above
// 95% CPU; samples with too few completions are extended (10 ms) instead of judged.
#include "../hill_climbing.hpp"

#include <cstdio>

#include "check.hpp"

namespace {

using hspc::detail::PoolSample;

// `steps` samples of 100 ms with completions = rate(threads) / 10, following the climber's moves.
template <class Rate>
int drive(hspc_harness::HillClimbing& hc, int start, int steps, Rate rate, double cpu = 0.5) {
  int threads = start;
  for (int i = 0; i < steps; ++i) {
    const PoolSample s{
        1e8, 0, 0, 0, static_cast<std::size_t>(threads), 64, cpu, rate(threads) / 10};
    threads += hc.decide(s);
    HARNESS_CHECK(threads >= 1 && threads <= 16);
  }
  return threads;
}

void climbs_while_it_pays() {
  hspc_harness::HillClimbing hc(1, 16, 1);
  const int end = drive(hc, 2, 400, [](int n) { return 1000.0 * n; });
  std::printf("linear: 2 -> %d threads after 400 samples\n", end);
  HARNESS_CHECK(end >= 6);
}

void stays_when_flat() {
  hspc_harness::HillClimbing hc(1, 16, 2);
  const int end = drive(hc, 4, 400, [](int) { return 50000.0; });
  std::printf("flat: 4 -> %d threads after 400 samples\n", end);
  HARNESS_CHECK(end <= 4);
}

void no_growth_when_busy() {
  hspc_harness::HillClimbing hc(1, 16, 3);
  const int end = drive(
      hc, 2, 400, [](int n) { return 1000.0 * n; }, 0.99);
  std::printf("busy: 2 -> %d threads after 400 samples\n", end);
  HARNESS_CHECK(end <= 3);  // the wave alone moves it by its magnitude (1)
}

void extends_short_samples() {
  hspc_harness::HillClimbing hc(1, 16, 4);
  (void)hc.decide(PoolSample{1e8, 0, 0, 0, 8, 64, 0.5, 1000});  // the first is always taken
  HARNESS_CHECK(hc.decide(PoolSample{1e7, 0, 0, 0, 8, 64, 0.5, 10}) == 0);
  HARNESS_CHECK(hc.next_interval_ns() == 10000000ULL);  // 7 / 10 > 15%: 10 ms more
}

}  // namespace

int main() {
  climbs_while_it_pays();
  stays_when_flat();
  no_growth_when_busy();
  extends_short_samples();
  std::printf("hill_climbing: all passed\n");
  return 0;
}
