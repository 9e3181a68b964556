// slot_ring.hpp on its own (the waiter comes after it): one slot taken, handed over, emptied and
// released through every step BasicChannel uses.
#include "hspc/slot_ring.hpp"

#include <cstdint>
#include <new>

#include "hspc/futex_waiter.hpp"

namespace {

class Ring : public hspc::detail::SlotRing<std::uint64_t, hspc::FutexWaiter, 2, 64, 64> {
 public:
  Ring() : SlotRing(hspc::detail::CounterStart{0}, spin_ns) {}

  std::uint64_t round_trip() {
    if (!slot_free()) return 0;
    take_free_slot();
    hspc::detail::ProducerCursor<std::uint64_t>& p = producer();
    ::new (static_cast<void*>(p.events)) std::uint64_t(42);
    p.fill = 1;
    publish();
    if (holding_slot() || !next_slot(hspc::detail::kForever)) return 0;
    hspc::detail::ConsumerCursor<std::uint64_t>& c = consumer();
    const std::uint64_t got = c.events[c.read] + static_cast<std::uint64_t>(spin_ns_);
    release_slot();
    produced().closed.store(true, std::memory_order_release);
    data_ready().notify();
    return slot_published() || slot_events(0) == nullptr ? 0 : got + kEventsPerBuffer;
  }

 private:
  static constexpr std::int64_t spin_ns = 0;
};

}  // namespace

std::uint64_t standalone_slot_ring() {
  Ring ring;
  return ring.round_trip();
}
