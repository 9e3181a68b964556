// pool_deal.hpp on its own: a producer dealing over one lane and over three, with and without a
// latency bound, its end counted, and its reuse, for every primitive.
#include "hspc/pool_deal.hpp"

#include <cstddef>
#include <cstdint>

#include "hspc/primitives.hpp"

namespace {

template <hspc::Primitive P, std::size_t MaxLatencyNs>
std::size_t use_deal(std::size_t lanes) {
  using Deal = hspc::detail::PoolDeal<std::uint64_t, P, 2, 64, 64, 5000, MaxLatencyNs, 0, false>;
  typename Deal::Lot lot(1, 0);
  Deal deal(lanes, lot, 0);
  deal.producer.push(1);
  deal.producer.emplace(2U);
  if (deal.producer.try_push(3)) deal.producer.flush();
  deal.producer.close();
  std::size_t n = 0;
  while (typename Deal::Lane* lane = deal.wanted_lane(0)) {
    n += lane->try_claim();
    n += lane->channel.try_consume([](const std::uint64_t*, std::size_t) {});
    if (lane->channel.ended() && !lane->finished.exchange(true)) n += deal.lane_finished();
    n += lane->release();
  }
  hspc::detail::PoolTotals totals;
  deal.add_to(totals, 1);
  if (deal.reusable()) deal.reopen();
  n += deal.producer.finished() + deal.producer.place() + deal.place();
  return n + deal.lanes() + deal.producer.waits() + static_cast<std::size_t>(totals.waiting);
}

template <hspc::Primitive P>
std::size_t use_deal() {
  return use_deal<P, 0>(1) + use_deal<P, 0>(3) + use_deal<P, 1000000>(3);
}

}  // namespace

std::size_t standalone_pool_deal() {
  return use_deal<hspc::Primitive::condvar>() + use_deal<hspc::Primitive::mutex>() +
         use_deal<hspc::Primitive::spinlock>() + use_deal<hspc::Primitive::backoff_spin>() +
         use_deal<hspc::Primitive::pause_spin>() + use_deal<hspc::Primitive::futex>() +
         use_deal<hspc::Primitive::hybrid>();
}
