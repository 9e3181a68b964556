// primitives.hpp on its own, every waiting policy instantiated.
#include "hspc/primitives.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace {

template <hspc::Primitive P>
bool use_policy() {
  std::atomic<std::uint32_t> state{0};
  hspc::WaiterFor<P> waiter(1000);
  const auto ready = [&] { return state.load(std::memory_order_acquire) != 0; };
  waiter.publish([&] { state.store(1, std::memory_order_release); });
  waiter.notify();
  waiter.wait(ready);
  return waiter.wait_until(ready, std::chrono::steady_clock::now()) &&
         waiter.wait_until(ready, std::chrono::system_clock::now()) &&
         hspc::primitive_name(P)[0] != '\0';
}

}  // namespace

bool standalone_primitives() {
  hspc::cpu_relax();
  return use_policy<hspc::Primitive::condvar>() && use_policy<hspc::Primitive::mutex>() &&
         use_policy<hspc::Primitive::spinlock>() && use_policy<hspc::Primitive::backoff_spin>() &&
         use_policy<hspc::Primitive::pause_spin>() && use_policy<hspc::Primitive::futex>() &&
         use_policy<hspc::Primitive::hybrid>();
}
