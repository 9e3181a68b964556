// pool_crew.hpp on its own: one consumer started and retired, the handler kept, the sums.
#include "hspc/pool_crew.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

std::size_t standalone_pool_crew() {
  hspc::detail::PoolCrew crew(1);
  hspc::detail::PoolHandler<std::uint32_t> handler([](const std::uint32_t&) {});
  const std::uint32_t events[2] = {1, 2};
  std::atomic<std::uint64_t> handled{0};
  handler.run(0, events, 2, handled);
  handler.rethrow();
  std::size_t places = 0;
  hspc::detail::PoolHandler<std::uint32_t> by_place(
      [&places](std::size_t place, const std::uint32_t&) { places += place; });
  by_place.run(3, events, 2, handled);
  const bool started = crew.grow([&crew](std::size_t k) {
    crew.worker(k).waited(5);
    while (!crew.worker(k).retiring()) {
    }
    crew.left();
  });
  if (started) crew.shrink([](std::size_t) {});
  hspc::detail::PoolTotals totals;
  crew.add_to(totals, 1);
  crew.join_all();
  return crew.live() + crew.running() + crew.peak() + places +
         static_cast<std::size_t>(totals.waits + totals.events) + handled.load();
}
