// What waiting costs on this host: the two figures the spin budgets are derived from
// (search/measure/calibrate.py).
//   wake    a thread asleep in FUTEX_WAIT on one CPU, woken by a thread on another CPU: the time
//           from the waker's clock reading just before its store and FUTEX_WAKE to the sleeper's
//           first clock reading after it returns. What a hybrid waiter pays for sleeping.
//   switch  two threads pinned to one CPU, passing it back and forth by futex: a batch of round
//           trips over the switches it took (two per round trip, futex calls included). What a
//           spinning waiter pays for yielding its CPU to a peer that shares it.
// Prints one line per figure, its samples in nanoseconds, and exits 0:
//   wake <ns> <ns> ...
//   switch <ns> <ns> ...
// With one usable CPU the wake line is empty (no second CPU to wake from). Bad flags: a message
// and exit status 2.
//
// Build: g++ -std=c++17 -O2 -pthread -Iruntime runtime/harness/calibrate_main.cpp -o calibrate
// Run:   calibrate [--samples=N]        (default 101)
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "harness/cpus.hpp"
#include "hspc/affinity.hpp"
#include "hspc/futex.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kRoundTripsPerBatch = 200;
constexpr auto kAsleep = std::chrono::microseconds(200);  // the sleeper is in the kernel by then

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Sleeps while word == value.
void sleep_while(std::atomic<std::uint32_t>& word, std::uint32_t value) {
  while (word.load(std::memory_order_acquire) == value) hspc::futex_wait(word, value, nullptr);
}

void publish(std::atomic<std::uint32_t>& word, std::uint32_t value) {
  word.store(value, std::memory_order_release);
  hspc::futex_wake(word, 1);
}

std::vector<double> wake_samples(int sleeper_cpu, int waker_cpu, std::uint32_t samples) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::int64_t> sent_ns{0};
  std::vector<double> out(samples);
  std::thread sleeper([&] {
    hspc::pin_current_thread(sleeper_cpu);
    for (std::uint32_t i = 0; i < samples; ++i) {
      sleep_while(word, i);
      out[i] = static_cast<double>(now_ns() - sent_ns.load(std::memory_order_relaxed));
    }
  });
  hspc::pin_current_thread(waker_cpu);
  for (std::uint32_t i = 0; i < samples; ++i) {
    std::this_thread::sleep_for(kAsleep);
    sent_ns.store(now_ns(), std::memory_order_relaxed);
    publish(word, i + 1);  // the release store orders sent_ns before the sleeper's acquire load
  }
  sleeper.join();
  return out;
}

std::vector<double> switch_samples(int cpu, std::uint32_t samples) {
  std::atomic<std::uint32_t> ping{0};
  std::atomic<std::uint32_t> pong{0};
  const std::uint32_t trips = samples * kRoundTripsPerBatch;
  std::thread echo([&] {
    hspc::pin_current_thread(cpu);
    for (std::uint32_t i = 0; i < trips; ++i) {
      sleep_while(ping, i);
      publish(pong, i + 1);
    }
  });
  hspc::pin_current_thread(cpu);
  std::vector<double> out(samples);
  for (std::uint32_t batch = 0; batch < samples; ++batch) {
    const std::int64_t start = now_ns();
    for (std::uint32_t k = 0; k < kRoundTripsPerBatch; ++k) {
      const std::uint32_t i = batch * kRoundTripsPerBatch + k;
      publish(ping, i + 1);
      sleep_while(pong, i);
    }
    out[batch] = static_cast<double>(now_ns() - start) / (2.0 * kRoundTripsPerBatch);
  }
  echo.join();
  return out;
}

void print(const char* name, const std::vector<double>& samples) {
  std::printf("%s", name);
  for (const double ns : samples) std::printf(" %.0f", ns);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t samples = 101;
  for (int i = 1; i < argc; ++i) {
    const char* flag = "--samples=";
    char* end = nullptr;
    const unsigned long n = std::strncmp(argv[i], flag, std::strlen(flag)) == 0
                                ? std::strtoul(argv[i] + std::strlen(flag), &end, 10)
                                : 0;
    if (end == nullptr || *end != '\0' || n < 1 || n > 100000) {
      std::fprintf(stderr, "calibrate: unknown or bad flag %s (expected --samples=N, 1..100000)\n",
                   argv[i]);
      return 2;
    }
    samples = static_cast<std::uint32_t>(n);
  }
  const std::vector<int> cpus = hspc_harness::allowed_cpus();
  if (cpus.empty()) {
    std::fprintf(stderr, "calibrate: the kernel did not say which CPUs this process may use\n");
    return 1;
  }
  // Each measurement in a thread of its own, so that pinning leaves the main thread's mask whole.
  std::vector<double> wake;
  if (cpus.size() >= 2) {
    std::thread([&] { wake = wake_samples(cpus[0], cpus[1], samples); }).join();
  }
  std::vector<double> switched;
  std::thread([&] { switched = switch_samples(cpus[0], samples); }).join();
  print("wake", wake);
  print("switch", switched);
  return 0;
}
