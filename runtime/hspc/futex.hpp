#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>

namespace hspc {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "futex words are std::atomic<std::uint32_t> handed to the kernel as plain words");

// FUTEX_WAIT_PRIVATE: sleeps while word == expected; timeout is relative (nullptr = none).
inline long futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       const timespec* timeout) noexcept {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
                   timeout, static_cast<std::uint32_t*>(nullptr), 0);
}

// FUTEX_WAKE_PRIVATE: wakes up to count threads sleeping on word.
inline long futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count,
                   static_cast<const timespec*>(nullptr), static_cast<std::uint32_t*>(nullptr), 0);
}

}  // namespace hspc
