// A consumer that hangs: after 5000 events it spins forever (the smoke test expects the watchdog
// to abort it and name the user's consumer code).
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace {

std::uint64_t consumed = 0;
std::atomic<bool> released{false};  // never set: an atomic load keeps the spin well-defined

}  // namespace

void hspc_consume(const void* event, std::size_t size) {
  (void)event;
  (void)size;
  if (++consumed > 5000) {
    while (!released.load(std::memory_order_relaxed)) {
    }
  }
}
