// The producer's timestamp: the cheapest clock that still counts wall time across CPUs. A TSC
// that is both constant (fixed rate whatever the frequency) and non-stop (runs in deep idle
// states) is such a clock, read in a few cycles; anything else falls back to CLOCK_MONOTONIC.
#pragma once

#include <time.h>

#include <cstdint>
#include <fstream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HSPCPROF_HAVE_TSC 1
#else
#define HSPCPROF_HAVE_TSC 0
#endif

namespace hspcprof {

inline std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Both flags must be there: the kernel lists them per CPU, all alike, so the first "flags" line
// is enough.
inline bool tsc_is_wall_clock() {
#if HSPCPROF_HAVE_TSC
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      const std::string padded = line + " ";
      return padded.find(" constant_tsc ") != std::string::npos &&
             padded.find(" nonstop_tsc ") != std::string::npos;
    }
  }
#endif
  return false;
}

class Clock {
 public:
  Clock() : use_tsc_(tsc_is_wall_clock()) { mark(first_); }

  std::int64_t now() const noexcept {
#if HSPCPROF_HAVE_TSC
    if (use_tsc_) return static_cast<std::int64_t>(__rdtsc());
#endif
    return monotonic_ns();
  }

  bool uses_tsc() const noexcept { return use_tsc_; }

  // Ticks per second. The TSC's rate is measured against CLOCK_MONOTONIC over the time since the
  // clock was made (at import), at least kMinSpanNs, so the error of the two end readings is
  // under 1e-4 of the rate. A longer span only refines it: the best is kept.
  double ticks_per_second() {
    if (!use_tsc_) return 1e9;
    Mark last{};
    mark(last);
    while (last.ns - first_.ns < kMinSpanNs) {
      const timespec pause{0, static_cast<long>(kMinSpanNs - (last.ns - first_.ns))};
      ::nanosleep(&pause, nullptr);
      mark(last);
    }
    return static_cast<double>(last.ticks - first_.ticks) * 1e9 /
           static_cast<double>(last.ns - first_.ns);
  }

 private:
  struct Mark {
    std::int64_t ticks;
    std::int64_t ns;
  };
  static constexpr std::int64_t kMinSpanNs = 20'000'000;

  // The monotonic reading is bracketed by two tick readings; their midpoint is the tick count
  // at which it was taken, to within half the bracket.
  void mark(Mark& m) const noexcept {
    const std::int64_t before = now();
    m.ns = monotonic_ns();
    const std::int64_t after = now();
    m.ticks = before + (after - before) / 2;
  }

  bool use_tsc_;
  Mark first_{};
};

}  // namespace hspcprof
