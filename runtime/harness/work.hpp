// Synthetic per-event work for Stage Two workloads (the paper's §4: the producer and consumer do
// real work besides passing events). Work is a calibrated count of dependent multiply-adds, never
// clock polling: polling would make the work shrink when a thread is preempted and hide the
// interference the tuner is trying to see.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace hspc_harness {

// `loops` dependent multiply-adds starting from `x`; returns the final value so the caller can
// sink it. The empty asm keeps the chain in a register and stops the compiler from folding it.
inline std::uint64_t burn(std::uint64_t loops, std::uint64_t x) noexcept {
  for (std::uint64_t i = 0; i < loops; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// Loops of `burn` per nanosecond on this host, measured once at start-up.
struct Calibration {
  double loops_per_ns = 0.0;

  std::uint64_t loops_for(double ns) const noexcept {
    return ns <= 0.0 ? 0 : static_cast<std::uint64_t>(std::llround(ns * loops_per_ns));
  }
};

// The median of `probes` timed runs of `probe_loops` loops: the median, because a probe that was
// preempted on this shared host is an outlier, not information.
inline Calibration calibrate(int probes = 9, std::uint64_t probe_loops = 1u << 20) {
  std::vector<double> rates;
  std::uint64_t sink = 1;
  sink = burn(probe_loops / 4, sink);  // warm-up: frequency ramp and first-use costs
  for (int i = 0; i < probes; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = burn(probe_loops, sink);
    const auto t1 = std::chrono::steady_clock::now();
    const double ns =
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    rates.push_back(static_cast<double>(probe_loops) / std::max(ns, 1.0));
  }
  asm volatile("" : : "r"(sink));
  std::nth_element(rates.begin(), rates.begin() + probes / 2, rates.end());
  return Calibration{rates[static_cast<std::size_t>(probes / 2)]};
}

// The consumer's private working set (consumer_bytes, rounded up to whole 64-byte lines): one
// line is updated per event, chosen by hashing the sequence number, as a profiler's table would
// be. Allocated and pre-faulted by the consumer thread before timing (first touch on its node).
class WorkingSet {
 public:
  explicit WorkingSet(std::size_t bytes) : lines_(round_up_pow2((bytes + 63) / 64)) {
    if (bytes > 0) {
      data_ = std::make_unique<std::uint64_t[]>(lines_ * kWordsPerLine);  // zeroed: pre-faulted
    }
  }

  bool empty() const noexcept { return data_ == nullptr; }

  void touch(std::uint64_t seq) noexcept {
    const std::uint64_t line = (seq * 0x9E3779B97F4A7C15ULL >> 32) & (lines_ - 1);
    data_[line * kWordsPerLine] += seq;
  }

  std::uint64_t digest() const noexcept {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < lines_; ++i) sum += data_ ? data_[i * kWordsPerLine] : 0;
    return sum;
  }

 private:
  static constexpr std::size_t kWordsPerLine = 64 / sizeof(std::uint64_t);

  static std::size_t round_up_pow2(std::size_t n) noexcept {
    std::size_t p = 1;
    while (p < n) p <<= 1;
    return p;
  }

  std::size_t lines_;
  std::unique_ptr<std::uint64_t[]> data_;
};

}  // namespace hspc_harness
