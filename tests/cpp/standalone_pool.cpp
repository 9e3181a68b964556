// pool.hpp on its own: every member of the pool instantiated for every primitive, with and
// without a latency bound, ordered and not.
#include "hspc/pool.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace {

template <hspc::Primitive P, std::size_t MaxLatencyNs>
std::size_t use_pool(bool ordered) {
  std::atomic<std::size_t> handled{0};
  hspc::BasicConsumerPool<std::uint64_t, P, 2, 64, 64, 5000, MaxLatencyNs> pool(
      1, [&handled](const std::uint64_t&) { ++handled; }, hspc::PoolOptions{1, 2, ordered});
  auto& in = pool.producer(0);
  in.push(1);
  in.emplace(2U);
  if (in.try_push(3)) in.flush();
  in.close();
  auto& late = pool.add_producer();
  late.close();
  pool.wait();
  const hspc::PoolAdjustments moved = pool.adjustments();
  return handled + pool.consumers() + pool.producers() + moved.grown + in.waits();
}

template <hspc::Primitive P>
std::size_t use_pool() {
  return use_pool<P, 0>(true) + use_pool<P, 1000000>(true) + use_pool<P, 0>(false) +
         use_pool<P, 1000000>(false);
}

}  // namespace

std::size_t standalone_pool() {
  return use_pool<hspc::Primitive::condvar>() + use_pool<hspc::Primitive::mutex>() +
         use_pool<hspc::Primitive::spinlock>() + use_pool<hspc::Primitive::backoff_spin>() +
         use_pool<hspc::Primitive::pause_spin>() + use_pool<hspc::Primitive::futex>() +
         use_pool<hspc::Primitive::hybrid>();
}
