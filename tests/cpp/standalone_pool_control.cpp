// pool_control.hpp on its own: the options, the rule's every member, the CPU meter.
#include "hspc/pool_control.hpp"

#include <cstddef>

std::size_t standalone_pool_control() {
  const hspc::PoolOptions options = hspc::detail::checked_pool_options(hspc::PoolOptions{1, 2}, 64);
  hspc::detail::PoolController rule(options, 1, hspc::detail::pool_max_consumers(options, 64));
  const hspc::detail::PoolTotals a, b;
  const hspc::detail::PoolSample s = hspc::detail::PoolSample::between(a, b, 1e6, 1, 2, 0.5);
  hspc::detail::HostCpuMeter cpu;
  const hspc::PoolAdjustments moved{1, 2, 3};
  return static_cast<std::size_t>(rule.decide(s) + 1) + rule.next_interval_ns() +
         static_cast<std::size_t>(cpu.sample() + 1) + moved.intervals;
}
