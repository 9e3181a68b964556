// pool_parking.hpp on its own (the waiter comes after it): park with work found, every notify.
#include "hspc/pool_parking.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hspc/condvar_waiter.hpp"

std::size_t standalone_pool_parking() {
  hspc::detail::ParkingLot<hspc::CondvarWaiter> lot(2, 0);
  std::atomic<std::int64_t> since{0};
  const std::int64_t parked = lot.park(
      0, [] { return true; }, since);
  lot.notify_one();
  lot.notify(1);
  lot.notify_all();
  return lot.parked() + static_cast<std::size_t>(parked);
}
