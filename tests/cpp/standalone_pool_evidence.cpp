// pool_evidence.hpp on its own: every member of PoolEvidence.
#include "hspc/pool_evidence.hpp"

#include <cstddef>

std::size_t standalone_pool_evidence() {
  hspc::detail::PoolEvidence e(3);
  for (double r : {1.0, 2.0, 3.0}) (void)e.baseline(r);
  e.start(e.ready() ? 1 : -1);
  int verdict = e.on_trial() ? e.step() : 0;
  for (double r : {4.0, 5.0, 6.0, 7.0}) verdict += e.judge(r, 0.05);
  const double v[] = {1.0, 2.0};
  return static_cast<std::size_t>(verdict) +
         static_cast<std::size_t>(hspc::detail::PoolEvidence::median(v, 2) +
                                  hspc::detail::PoolEvidence::noise(v, 2));
}
