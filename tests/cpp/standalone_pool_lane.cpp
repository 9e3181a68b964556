// pool_lane.hpp on its own: a lane's producer calls, a turn claimed and released, with and
// without a latency bound, for every primitive.
#include "hspc/pool_lane.hpp"

#include <cstddef>
#include <cstdint>

#include "hspc/primitives.hpp"

namespace {

template <hspc::Primitive P, std::size_t MaxLatencyNs>
std::size_t use_lane() {
  using Lane = hspc::detail::PoolLane<std::uint64_t, P, 2, 64, 64, 5000, MaxLatencyNs, 0, false>;
  typename Lane::Lot lot(1, 0);
  Lane lane(lot);
  lane.producer.push(1);
  lane.producer.emplace(2U);
  if (lane.producer.try_push(3)) lane.producer.flush();
  lane.producer.close();
  std::size_t n = lane.wanted() + lane.try_claim();
  n += lane.channel.try_consume([](const std::uint64_t*, std::size_t) {});
  hspc::detail::PoolTotals totals;
  lane.add_to(totals, 1);
  return n + lane.release() + lane.producer.waits() + static_cast<std::size_t>(totals.waiting);
}

template <hspc::Primitive P>
std::size_t use_lane() {
  return use_lane<P, 0>() + use_lane<P, 1000000>();
}

}  // namespace

std::size_t standalone_pool_lane() {
  return use_lane<hspc::Primitive::condvar>() + use_lane<hspc::Primitive::mutex>() +
         use_lane<hspc::Primitive::spinlock>() + use_lane<hspc::Primitive::backoff_spin>() +
         use_lane<hspc::Primitive::pause_spin>() + use_lane<hspc::Primitive::futex>() +
         use_lane<hspc::Primitive::hybrid>();
}
