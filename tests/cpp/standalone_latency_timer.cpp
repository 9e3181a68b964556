// latency_timer.hpp on its own: the bounded timer's every member, and the unbounded one empty.
#include "hspc/latency_timer.hpp"

#include <cstddef>
#include <type_traits>

namespace {

static_assert(std::is_empty_v<hspc::detail::LatencyTimer<0>>, "no bound: no state");

}  // namespace

std::size_t standalone_latency_timer() {
  hspc::detail::LatencyTimer<1000> timer;
  timer.start();
  std::size_t due = 0;
  for (int i = 0; i < 100; ++i) due += timer.tick(1);
  timer.restart();
  due += timer.tick(4096);
  const hspc::detail::LatencyTimer<0> none;
  return due + sizeof(none) + static_cast<std::size_t>(hspc::detail::steady_now_ns() > 0);
}
