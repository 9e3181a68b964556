// Shared pieces of the channel tests: checked events, a seeded generator, a hang watchdog and
// sanitizer-aware work scaling. Plain executables: a failed check prints and aborts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#define HSPC_CHECK(cond, ...)                                                       \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                            \
      std::fprintf(stderr, "\n");                                                   \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

namespace hspc_test {

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HSPC_TEST_TSAN 1
#endif
#if __has_feature(address_sanitizer)
#define HSPC_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define HSPC_TEST_TSAN 1
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HSPC_TEST_ASAN 1
#endif

// Work divisor under sanitizers, which slow this code down (measured: the TSan suite took ~1/4 of
// the plain suite's time at a divisor of 16, so 4 keeps them comparable).
#if defined(HSPC_TEST_TSAN)
constexpr std::uint32_t kSlowdown = 4;
#elif defined(HSPC_TEST_ASAN)
constexpr std::uint32_t kSlowdown = 2;
#else
constexpr std::uint32_t kSlowdown = 1;
#endif

// splitmix64: small, seedable, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }

 private:
  std::uint64_t state_;
};

constexpr std::uint32_t mix(std::uint32_t seq, std::uint32_t word) {
  std::uint32_t x = seq * 0x9e3779b1U + word * 0x85ebca77U + 0x165667b1U;
  x ^= x >> 15;
  x *= 0x2c1b3c6dU;
  x ^= x >> 12;
  return x;
}

template <std::size_t Words>
struct Payload {
  std::uint32_t word[Words];
};
template <>
struct Payload<0> {};

// An event of exactly N bytes: a sequence number, payload words derived from it, and a checksum
// over both, so a torn, stale or misplaced event is caught, not just a reordered one.
// alignas(Align): lets a test hand the channel an over-aligned T (64) to lay out.
template <std::size_t N, std::size_t Align = 4>
struct alignas(Align) Event : Payload<(N - 8) / 4> {
  static constexpr std::size_t kWords = (N - 8) / 4;
  std::uint32_t seq;
  std::uint32_t check;

  Event() = default;
  explicit Event(std::uint32_t s) : seq(s), check(0) {
    if constexpr (kWords > 0) {
      for (std::size_t i = 0; i < kWords; ++i)
        this->word[i] = mix(s, static_cast<std::uint32_t>(i));
    }
    check = checksum();
  }

  std::uint32_t checksum() const {
    std::uint32_t sum = mix(seq, 0xffffffffU);
    if constexpr (kWords > 0) {
      for (std::size_t i = 0; i < kWords; ++i) sum = mix(sum, this->word[i]);
    }
    return sum;
  }

  bool intact() const {
    if constexpr (kWords > 0) {
      for (std::size_t i = 0; i < kWords; ++i) {
        if (this->word[i] != mix(seq, static_cast<std::uint32_t>(i))) return false;
      }
    }
    return check == checksum();
  }
};

// Aborts the process if a stage stays armed longer than its limit: a hang becomes a failure
// naming the stage instead of a silent meson timeout. Not a timing assertion: limits are minutes.
class Watchdog {
 public:
  Watchdog() : thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(std::string stage, std::chrono::seconds limit) {
    const std::lock_guard<std::mutex> lock(mutex_);
    stage_ = std::move(stage);
    deadline_ = std::chrono::steady_clock::now() + limit;
    cv_.notify_one();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      if (std::chrono::steady_clock::now() >= deadline_) {
        std::fprintf(stderr, "watchdog: '%s' hung; aborting\n", stage_.c_str());
        std::abort();
      }
      cv_.wait_until(lock, deadline_);
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::string stage_ = "start";
  std::chrono::steady_clock::time_point deadline_ =
      std::chrono::steady_clock::now() + std::chrono::minutes(5);
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hspc_test
