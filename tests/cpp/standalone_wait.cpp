// wait.hpp on its own: the spin hint, the deadline helpers, the spin phase and the yield phase.
#include "hspc/wait.hpp"

#include <chrono>
#include <cstdint>

bool standalone_wait() {
  hspc::cpu_relax();
  hspc::detail::seq_cst_fence();
  const hspc::detail::SteadyTime soon = hspc::detail::deadline_after(std::chrono::milliseconds(1));
  const hspc::detail::SteadyTime forever = hspc::detail::deadline_after(std::chrono::hours::max());
  const hspc::detail::SteadyTime now = hspc::detail::to_steady(std::chrono::system_clock::now());
  hspc::detail::SpinPhase phase(1000, soon);
  std::uint32_t spins = 0;
  while (phase.spin(1)) ++spins;
  int polls = 0;
  const bool ready = hspc::detail::yield_until([&] { return ++polls == 2; }, soon);
  return ready && forever == hspc::detail::kForever && now <= soon && spins > 0;
}
