// pool_lane.hpp on its own: a lane's turn claimed and released, its stamp, and its reopening
// after an end, for every primitive.
#include "hspc/pool_lane.hpp"

#include <cstddef>
#include <cstdint>

#include "hspc/primitives.hpp"

namespace {

template <hspc::Primitive P>
std::size_t use_lane() {
  using Channel = hspc::BasicChannel<std::uint64_t, P, 2, 64, 64>;
  hspc::detail::PoolLane<Channel> lane;
  lane.channel.push(1);
  lane.channel.flush();
  lane.stamp();
  lane.channel.close();
  std::size_t n = lane.wanted() + lane.try_claim();
  n += lane.channel.try_consume([](const std::uint64_t*, std::size_t) {});
  hspc::detail::PoolTotals totals;
  lane.add_to(totals, 1);
  n += lane.release();
  lane.reopen();
  return n + lane.channel.ended() + static_cast<std::size_t>(totals.waiting);
}

}  // namespace

std::size_t standalone_pool_lane() {
  return use_lane<hspc::Primitive::condvar>() + use_lane<hspc::Primitive::mutex>() +
         use_lane<hspc::Primitive::spinlock>() + use_lane<hspc::Primitive::backoff_spin>() +
         use_lane<hspc::Primitive::pause_spin>() + use_lane<hspc::Primitive::futex>() +
         use_lane<hspc::Primitive::hybrid>();
}
