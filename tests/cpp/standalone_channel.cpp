// channel.hpp on its own, every member instantiated for every primitive, with and without a
// latency bound.
#include "hspc/channel.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace {

template <hspc::Primitive P, std::size_t MaxLatencyNs>
std::size_t use_channel() {
  hspc::BasicChannel<std::uint64_t, P, 2, 64, 64, 5000, MaxLatencyNs> ch;
  ch.push(1);
  ch.emplace(2U);
  if (ch.try_push(3)) ch.flush();
  const std::uint64_t run[2] = {4, 5};
  ch.push(run, 2);
  ch.close();
  std::uint64_t v = 0;
  std::size_t n = std::size_t{ch.pop(v)} + std::size_t{ch.try_pop(v)} +
                  std::size_t{ch.pop_for(v, std::chrono::milliseconds(1))};
  n += ch.consume([](const std::uint64_t*, std::size_t) {});
  n += ch.try_consume([](const std::uint64_t*, std::size_t) {}) + ch.pending() + ch.ended();
  return n + ch.done() + ch.producer_waits() + ch.consumer_waits() +
         static_cast<std::size_t>(ch.spin_budget()) + ch.kMaxLatencyNs;
}

// Without a latency bound and with one (1 ms).
template <hspc::Primitive P>
std::size_t use_channel() {
  return use_channel<P, 0>() + use_channel<P, 1000000>();
}

}  // namespace

std::size_t standalone_channel() {
  return use_channel<hspc::Primitive::condvar>() + use_channel<hspc::Primitive::mutex>() +
         use_channel<hspc::Primitive::spinlock>() + use_channel<hspc::Primitive::backoff_spin>() +
         use_channel<hspc::Primitive::pause_spin>() + use_channel<hspc::Primitive::futex>() +
         use_channel<hspc::Primitive::hybrid>();
}
