// What pop(ptr, 256) adds on the consumer's side, on one thread with nothing else in the way:
// reading a 256 KiB slot of 8-byte events in place (what consume() and the per-event path do)
// against copying it out 256 events at a time and reading the copy (what a caller of
// pop(ptr, 256) does). The copy is the C library's memcpy with the size hidden from the compiler,
// as the channel's detail::copy_run does. Each trial times 2000 passes; 15 trials, median and
// quartiles. Build: g++ -O2 -DNDEBUG copy_cost.cpp; run pinned: taskset -c 1 ./a.out
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void copy_run(void* to, const void* from, std::size_t bytes) {
  __asm__("" : "+r"(bytes));
  std::memcpy(to, from, bytes);
}

double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

void report(const char* what, const std::vector<double>& ns) {
  std::printf("%-34s %.3f ns/event [%.3f, %.3f]\n", what, quantile(ns, 0.5), quantile(ns, 0.25),
              quantile(ns, 0.75));
}

}  // namespace

int main() {
  constexpr std::size_t kEvents = 32768, kPasses = 2000, kRun = 256;
  auto* slot = static_cast<std::uint64_t*>(std::aligned_alloc(4096, kEvents * 8));
  alignas(128) static std::uint64_t run[kRun];
  for (std::size_t i = 0; i < kEvents; ++i) slot[i] = i;
  std::vector<double> in_place, copied;
  std::uint64_t sum = 0;
  bool ok = true;
  for (int trial = 0; trial < 15; ++trial) {
    const auto t0 = Clock::now();
    for (std::size_t pass = 0; pass < kPasses; ++pass) {
      std::uint64_t next = 0;
      for (std::size_t i = 0; i < kEvents; ++i) {
        ok &= slot[i] == next++;
        sum += slot[i];
      }
      __asm__ volatile("" ::: "memory");
    }
    const auto t1 = Clock::now();
    for (std::size_t pass = 0; pass < kPasses; ++pass) {
      std::uint64_t next = 0;
      for (std::size_t at = 0; at < kEvents; at += kRun) {
        copy_run(run, slot + at, kRun * 8);
        for (std::size_t i = 0; i < kRun; ++i) {
          ok &= run[i] == next++;
          sum += run[i];
        }
      }
      __asm__ volatile("" ::: "memory");
    }
    const auto t2 = Clock::now();
    const auto per_event = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::nano>(b - a).count() / double(kEvents * kPasses);
    };
    in_place.push_back(per_event(t0, t1));
    copied.push_back(per_event(t1, t2));
  }
  if (!ok) {
    std::puts("wrong sequence");
    return 1;
  }
  __asm__ volatile("" ::"r"(sum));
  report("read in place (consume, pop(T&))", in_place);
  report("copy out 256, read (pop(ptr, 256))", copied);
  std::free(slot);
}
