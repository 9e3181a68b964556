// app.yaml's producer_source: the profiled interpreter. Each event spends the recorded time the
// interpreter with hspcprof's C hook takes before it (the program's work, the hook, the clock
// read), then writes the 16-byte event the hook would push. The time is spent as a calibrated
// count of dependent multiply-adds, never by polling a clock: a preempted producer must fall
// behind, as the interpreter would, not catch up.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "replay.hpp"

namespace {

std::uint64_t spin(std::uint64_t loops, std::uint64_t x) noexcept {
  while (loops-- != 0) {
    x = x * 2862933555777941757ULL + 3037000493ULL;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// Loops per ns on this host, measured once when the program loads, before anything is timed:
// the median of nine probes, so a probe that was preempted does not count.
double loops_per_ns() {
  constexpr std::uint64_t kProbe = 1 << 18;
  std::vector<double> rates;
  std::uint64_t x = spin(kProbe, 1);
  for (int i = 0; i < 9; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    x = spin(kProbe, x);
    const std::chrono::duration<double, std::nano> ns = std::chrono::steady_clock::now() - t0;
    rates.push_back(static_cast<double>(kProbe) / std::max(ns.count(), 1.0));
  }
  asm volatile("" : : "r"(x));
  std::nth_element(rates.begin(), rates.begin() + 4, rates.end());
  return rates[4];
}

const double kLoopsPerNs = loops_per_ns();

// Per thread: with one producer (app.yaml) that is the interpreter's own state.
thread_local stage2::Replay replay;
thread_local std::uint64_t work = 1;

}  // namespace

// The recording goes on from where the last call left it, whatever `seq` is: a sample that
// starts again at 0 is the same interpreter, profiling on.
void hspc_produce(std::uint64_t /*seq*/, void* event, std::size_t size) {
  if (size != sizeof(hspcprof::Event)) std::abort();  // app.yaml's event.size is 16
  const double loops = static_cast<double>(replay.gap_ns()) * kLoopsPerNs;
  work = spin(static_cast<std::uint64_t>(loops + 0.5), work);
  const hspcprof::Event e = replay.next();
  std::memcpy(event, &e, sizeof e);
}
