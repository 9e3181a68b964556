// mutex_waiter.hpp on its own: the policy instantiated.
#include "hspc/mutex_waiter.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>

bool standalone_mutex_waiter() {
  std::atomic<std::uint32_t> state{0};
  hspc::MutexWaiter waiter(1000);
  const auto ready = [&] { return state.load(std::memory_order_acquire) != 0; };
  waiter.publish([&] { state.store(1, std::memory_order_release); });
  waiter.notify();
  waiter.wait(ready);
  return waiter.wait_until(ready, std::chrono::steady_clock::now()) &&
         waiter.wait_until(ready, std::chrono::system_clock::now());
}
