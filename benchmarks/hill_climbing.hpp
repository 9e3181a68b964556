// A re-implementation, in C++, of the .NET thread pool's hill climbing (dotnet/runtime,
// PortableThreadPool.HillClimbing.cs), as a PoolRule that drives a BasicConsumerPool's consumer
// count: the phase benchmark's comparison. Written from the published algorithm and its default
// parameters, not translated line by line:
//   wave period 4 samples, max wave magnitude 20, wave magnitude multiplier 1.0, wave history 8
//   periods (32 samples), bias (target throughput ratio) 0.15, target signal-to-noise 3.0, max
//   change 4 threads per second, max change per sample 20, sample interval uniform in
//   [10, 200] ms (re-drawn at each change of count; 10 ms while a sample is too short to trust),
//   error smoothing 0.01, gain exponent 2.0, max sample error 0.15, no growth above 95% CPU.
// Left out: the thread pool's starvation injection (one thread per 500 ms while nothing is
// dequeued), which lives outside HillClimbing.cs; here work is always dequeued.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <random>

#include "hspc/pool_control.hpp"

namespace hspc_harness {

class HillClimbing final : public hspc::PoolRule {
 public:
  HillClimbing(int min_threads, int max_threads, std::uint64_t seed)
      : min_(min_threads), max_(max_threads), rng_(seed) {
    sample_ms_ = draw_interval();
    next_ms_ = sample_ms_;
  }

  int decide(const hspc::detail::PoolSample& s) override {
    const int current = static_cast<int>(s.consumers);
    const int next = update(current, s.interval_ns / 1e9, s.events, s.cpu_busy);
    return next - current;
  }

  std::uint64_t next_interval_ns() override {
    return static_cast<std::uint64_t>(next_ms_) * 1000000ULL;
  }

  double control_setting() const noexcept { return control_; }

 private:
  static constexpr int kWavePeriod = 4;
  static constexpr int kMaxWaveMagnitude = 20;
  static constexpr double kWaveMagnitudeMultiplier = 1.0;
  static constexpr int kSamplesToMeasure = kWavePeriod * 8;
  static constexpr double kTargetThroughputRatio = 0.15;
  static constexpr double kTargetSignalToNoise = 3.0;
  static constexpr double kMaxChangePerSecond = 4.0;
  static constexpr double kMaxChangePerSample = 20.0;
  static constexpr int kSampleMsLow = 10, kSampleMsHigh = 200;
  static constexpr double kErrorSmoothing = 0.01;
  static constexpr double kGainExponent = 2.0;
  static constexpr double kMaxSampleError = 0.15;
  static constexpr double kCpuHigh = 0.95;

  int draw_interval() {
    return std::uniform_int_distribution<int>(kSampleMsLow, kSampleMsHigh)(rng_);
  }

  void changed(int count) {
    last_count_ = count;
    sample_ms_ = draw_interval();
  }

  // The sinusoid of `period` in the newest n samples (Goertzel), divided by n.
  std::complex<double> wave(const double* v, int n, double period) const {
    const double w = 2 * M_PI / period, c = std::cos(w), coeff = 2 * c;
    double q1 = 0, q2 = 0;
    for (int i = 0; i < n; ++i) {
      const double q0 = coeff * q1 - q2 + v[(total_ - n + i) % kSamplesToMeasure];
      q2 = q1;
      q1 = q0;
    }
    return std::complex<double>(q1 - q2 * c, q2 * std::sin(w)) / static_cast<double>(n);
  }

  int update(int current, double seconds, double completions, double cpu_busy) {
    if (current != last_count_) {  // someone else moved it (the pool's limits): follow
      control_ += current - last_count_;
      changed(current);
    }
    seconds += acc_seconds_;
    completions += acc_completions_;
    // Too few completions to trust (+-(threads - 1) of them): 10 ms more of this sample.
    const double error = completions > 0 ? (current - 1.0) / completions : current > 1 ? 1e9 : 0;
    if (total_ > 0 && error >= kMaxSampleError) {
      acc_seconds_ = seconds;
      acc_completions_ = completions;
      next_ms_ = 10;
      return current;
    }
    acc_seconds_ = 0;
    acc_completions_ = 0;
    const double throughput = seconds > 0 ? completions / seconds : 0;
    samples_[total_ % kSamplesToMeasure] = throughput;
    counts_[total_ % kSamplesToMeasure] = current;
    ++total_;
    const double move_fraction = climb();
    double move = std::pow(std::abs(move_fraction), kGainExponent) * (move_fraction >= 0 ? 1 : -1) *
                  kMaxChangePerSecond * seconds;
    move = std::min(move, kMaxChangePerSample);
    if (move > 0 && cpu_busy > kCpuHigh) move = 0;
    control_ += move;
    int magnitude = static_cast<int>(0.5 + control_ * noise_ * kTargetSignalToNoise *
                                               kWaveMagnitudeMultiplier * 2.0);
    magnitude = std::max(1, std::min(magnitude, kMaxWaveMagnitude));
    control_ = std::max<double>(min_, std::min<double>(max_ - magnitude, control_));
    int next = static_cast<int>(control_ + magnitude * ((total_ / (kWavePeriod / 2)) % 2));
    next = std::max(min_, std::min(max_, next));
    if (next != current) changed(next);
    next_ms_ = sample_ms_;
    if (ratio_real_ < 0 && next == min_) {  // at the floor and more hurts: look up less often
      next_ms_ =
          std::max(1, static_cast<int>(0.5 + sample_ms_ * 10.0 * std::min(-ratio_real_, 1.0)));
    }
    return next;
  }

  // The move towards more threads in [-1, 1], scaled by confidence; 0 while warming up.
  double climb() {
    ratio_real_ = 0;
    const int n = static_cast<int>(std::min<std::int64_t>(total_ - 1, kSamplesToMeasure)) /
                  kWavePeriod * kWavePeriod;
    if (n <= kWavePeriod) return 0;
    double tsum = 0, csum = 0;
    for (int i = 0; i < n; ++i) {
      tsum += samples_[(total_ - n + i) % kSamplesToMeasure];
      csum += counts_[(total_ - n + i) % kSamplesToMeasure];
    }
    const double avg_t = tsum / n, avg_c = csum / n;
    if (avg_t <= 0 || avg_c <= 0) return 0;
    const double p1 = n / (static_cast<double>(n) / kWavePeriod + 1);
    const double p2 = n / (static_cast<double>(n) / kWavePeriod - 1);
    const std::complex<double> tw = wave(samples_, n, kWavePeriod) / avg_t;
    double err = std::abs(wave(samples_, n, p1) / avg_t);
    if (p2 <= n) err = std::max(err, std::abs(wave(samples_, n, p2) / avg_t));
    const std::complex<double> cw = wave(counts_, n, kWavePeriod) / avg_c;
    noise_ = noise_ == 0 ? err : kErrorSmoothing * err + (1 - kErrorSmoothing) * noise_;
    std::complex<double> ratio = 0;
    if (std::abs(cw) > 0) ratio = (tw - kTargetThroughputRatio * cw) / cw;
    ratio_real_ = ratio.real();
    const double noise_for_confidence = std::max(noise_, err);
    const double confidence =
        noise_for_confidence > 0 ? std::abs(cw) / noise_for_confidence / kTargetSignalToNoise : 1.0;
    return std::clamp(ratio.real(), -1.0, 1.0) * std::clamp(confidence, 0.0, 1.0);
  }

  const int min_, max_;
  std::mt19937_64 rng_;
  int sample_ms_ = 0, next_ms_ = 0;  // the drawn sample length; the next one asked for
  int last_count_ = 0;
  double control_ = 0;
  double noise_ = 0;
  double ratio_real_ = 0;
  double acc_seconds_ = 0, acc_completions_ = 0;
  std::int64_t total_ = 0;
  double samples_[kSamplesToMeasure] = {}, counts_[kSamplesToMeasure] = {};
};

}  // namespace hspc_harness
