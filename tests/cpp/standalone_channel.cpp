// channel.hpp on its own, every member instantiated for every primitive.
#include "hspc/channel.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace {

template <hspc::Primitive P>
std::size_t use_channel() {
  hspc::BasicChannel<std::uint64_t, P, 2, 64, 64> ch;
  ch.push(1);
  ch.emplace(2U);
  if (ch.try_push(3)) ch.flush();
  ch.close();
  std::uint64_t v = 0;
  std::size_t n = ch.pop(v) + ch.try_pop(v) + ch.pop_for(v, std::chrono::milliseconds(1));
  n += ch.consume([](const std::uint64_t*, std::size_t) {});
  return n + ch.done() + ch.producer_waits() + ch.consumer_waits() +
         static_cast<std::size_t>(ch.spin_budget());
}

}  // namespace

std::size_t standalone_channel() {
  return use_channel<hspc::Primitive::condvar>() + use_channel<hspc::Primitive::mutex>() +
         use_channel<hspc::Primitive::spinlock>() + use_channel<hspc::Primitive::backoff_spin>() +
         use_channel<hspc::Primitive::pause_spin>() + use_channel<hspc::Primitive::futex>() +
         use_channel<hspc::Primitive::hybrid>();
}
