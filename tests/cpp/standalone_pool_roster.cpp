// pool_roster.hpp on its own: producers added, a lane found, one finished and its place reused.
#include "hspc/pool_roster.hpp"

#include <cstddef>
#include <cstdint>

#include "hspc/pool_deal.hpp"
#include "hspc/primitives.hpp"

std::size_t standalone_pool_roster() {
  using Deal =
      hspc::detail::PoolDeal<std::uint64_t, hspc::Primitive::futex, 2, 64, 64, 5000, 0, 0, false>;
  Deal::Lot lot(1, 0);
  hspc::detail::PoolRoster<Deal> roster(1, lot);
  roster.add().close();
  std::size_t next = 0;
  const auto found = roster.find(next, 0);
  std::size_t n = 0;
  if (found.lane != nullptr && found.lane->try_claim()) {
    if (found.lane->channel.ended() && !found.lane->finished.exchange(true) &&
        found.deal->lane_finished()) {
      n += roster.finished_one();
    }
    n += found.lane->release();
  }
  roster.add().close();  // the first place again
  hspc::detail::PoolTotals totals;
  roster.add_to(totals, 1);
  return n + roster.size() + roster.open_lanes() + roster.all_finished() + next;
}
