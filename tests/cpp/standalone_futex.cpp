// futex.hpp on its own: both system call wrappers.
#include "hspc/futex.hpp"

#include <atomic>
#include <cstdint>

long standalone_futex() {
  std::atomic<std::uint32_t> word{1};
  const timespec no_wait{};
  // The word is not 0, so the kernel refuses to sleep (EAGAIN); nothing sleeps on it to wake.
  return hspc::futex_wait(word, 0, &no_wait) + hspc::futex_wake(word, 1);
}
