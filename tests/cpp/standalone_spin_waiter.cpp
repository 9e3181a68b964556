// spin_waiter.hpp on its own: the three spinning policies instantiated.
#include "hspc/spin_waiter.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace {

template <class Waiter>
bool use_policy() {
  std::atomic<std::uint32_t> state{0};
  Waiter waiter(1000);
  const auto ready = [&] { return state.load(std::memory_order_acquire) != 0; };
  waiter.publish([&] { state.store(1, std::memory_order_release); });
  waiter.notify();
  waiter.wait(ready);
  return waiter.wait_until(ready, std::chrono::steady_clock::now()) &&
         waiter.wait_until(ready, std::chrono::system_clock::now());
}

}  // namespace

bool standalone_spin_waiter() {
  return use_policy<hspc::SpinlockWaiter>() && use_policy<hspc::BackoffSpinWaiter>() &&
         use_policy<hspc::PauseSpinWaiter>();
}
