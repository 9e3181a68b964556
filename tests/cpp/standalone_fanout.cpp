// fanout.hpp on its own, every member instantiated for every primitive, with and without a
// latency bound.
#include "hspc/fanout.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace {

template <hspc::Primitive P, std::size_t MaxLatencyNs>
std::size_t use_fanout() {
  hspc::BasicFanOut<std::uint64_t, P, 2, 64, 64, 5000, MaxLatencyNs> fan(2);
  fan.push(1);
  fan.emplace(2U);
  if (fan.try_push(3)) fan.flush();
  fan.close();
  std::uint64_t v = 0;
  std::size_t n = std::size_t{fan.pop(0, v)} + std::size_t{fan.try_pop(1, v)} +
                  std::size_t{fan.pop_for(0, v, std::chrono::milliseconds(1))};
  n += fan.consume(1, [](const std::uint64_t*, std::size_t) {});
  return n + fan.done(0) + fan.consumers() + fan.producer_waits() + fan.consumer_waits(1) +
         static_cast<std::size_t>(fan.spin_budget()) + fan.kMaxLatencyNs;
}

// Without a latency bound and with one (1 ms).
template <hspc::Primitive P>
std::size_t use_fanout() {
  return use_fanout<P, 0>() + use_fanout<P, 1000000>();
}

}  // namespace

std::size_t standalone_fanout() {
  return use_fanout<hspc::Primitive::condvar>() + use_fanout<hspc::Primitive::mutex>() +
         use_fanout<hspc::Primitive::spinlock>() + use_fanout<hspc::Primitive::backoff_spin>() +
         use_fanout<hspc::Primitive::pause_spin>() + use_fanout<hspc::Primitive::futex>() +
         use_fanout<hspc::Primitive::hybrid>();
}
