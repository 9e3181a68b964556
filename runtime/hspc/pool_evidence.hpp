#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hspc {

namespace detail {

// PoolEvidence: whether a move of the pool's consumer count paid, judged on throughput samples
// (events per second, one per controller interval) with a margin, as the tuner judges a
// candidate against the incumbent: a difference within the noise is no evidence.
//
// Between trials it keeps the last k samples (the baseline: the count as it stands). A trial
// begins at a move; the interval after the move is skipped (the new consumer starting, the queue
// settling), then k samples are taken and the medians compared. A growth is kept only if it
// gained more than the margin (one that neither gained nor lost beyond it is measured k samples
// more, as the tuner races an undecided pair, and judged on all 2k); a removal only if it lost no
// more than the margin. The margin is
// max(floor, 2 x the baseline's median absolute deviation over its median): a noisy baseline
// asks for a larger difference. A kept move's samples become the next baseline; a failed one's
// are dropped (the count goes back), so the next trial waits for k fresh samples.
class PoolEvidence {
 public:
  static constexpr std::size_t kMaxSamples = 8;
  // judge()'s verdicts: growth has the positive ones, removal the negative.
  static constexpr int kPending = 0, kGrowKept = 1, kGrowFailed = 2, kShrinkKept = -1,
                       kShrinkFailed = -2;

  // k samples on each side (at most kMaxSamples); 0: no trials, every move stands.
  explicit PoolEvidence(std::uint32_t k) noexcept : k_(k < kMaxSamples ? k : kMaxSamples) {}

  // One interval's throughput while no trial runs: the baseline's newest sample. A sample outside
  // [1/2, 2] x the baseline's median says the load changed: the baseline starts again from it,
  // and the answer is true (what was learnt under the old load proves nothing now).
  bool baseline(double rate) noexcept {
    if (k_ == 0) return false;
    const double m = median(before_, before_n_);
    const bool changed = before_n_ != 0 && (rate > 2 * m || rate < m / 2);
    if (changed) before_n_ = 0;
    if (before_n_ == k_) std::copy(before_ + 1, before_ + k_, before_);
    before_[before_n_ == k_ ? k_ - 1 : before_n_++] = rate;
    return changed;
  }
  // Enough baseline for a trial (always, with no trials).
  bool ready() const noexcept { return before_n_ == k_; }
  bool on_trial() const noexcept { return step_ != 0; }
  int step() const noexcept { return step_; }

  // A move of `step` consumers (> 0: growth) begins its trial now (nothing, with no trials).
  void start(int step) noexcept {
    step_ = k_ != 0 ? step : 0;
    after_n_ = 0;
    skipped_ = false;
  }

  // One interval's throughput during the trial; kPending until its last, then the verdict.
  int judge(double rate, double floor) noexcept {
    if (!skipped_) {
      skipped_ = true;  // the move's own interval: mixed
      return kPending;
    }
    after_[after_n_++] = rate;
    if (after_n_ < k_ || (after_n_ > k_ && after_n_ < 2 * k_)) return kPending;
    const double before = median(before_, k_);
    const double after = median(after_, after_n_);
    const double margin = std::max(floor, noise(before_, k_));
    const bool grew = step_ > 0;
    const bool kept = grew ? after > before * (1 + margin) : after >= before * (1 - margin);
    if (grew && !kept && after > before * (1 - margin) && after_n_ == k_ && 2 * k_ <= kMaxSamples) {
      return kPending;  // neither gained nor lost beyond the margin: k more samples, then decide
    }
    step_ = 0;
    if (kept) {
      std::copy(after_ + after_n_ - k_, after_ + after_n_, before_);
    } else {
      before_n_ = 0;
    }
    if (grew) return kept ? kGrowKept : kGrowFailed;
    return kept ? kShrinkKept : kShrinkFailed;
  }

  // The median of n values (n <= kMaxSamples; 0 for none).
  static double median(const double* v, std::size_t n) noexcept {
    if (n == 0) return 0.0;
    double c[kMaxSamples] = {};
    for (std::size_t i = 0; i < n; ++i) {  // insertion sort: a few values (std::sort's inlined
      std::size_t j = i;                   // 16-wide insertion step trips g++'s -Warray-bounds)
      for (; j > 0 && c[j - 1] > v[i]; --j) c[j] = c[j - 1];
      c[j] = v[i];
    }
    return n % 2 == 1 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  }

  // 2 x the median absolute deviation over the median: about the relative spread of one sample.
  static double noise(const double* v, std::size_t n) noexcept {
    const double m = median(v, n);
    double d[kMaxSamples] = {};
    for (std::size_t i = 0; i < n; ++i) d[i] = m > v[i] ? m - v[i] : v[i] - m;
    return m > 0 ? 2 * median(d, n) / m : 0.0;
  }

 private:
  std::size_t k_;
  int step_ = 0;  // the move on trial; 0: none
  bool skipped_ = false;
  std::size_t before_n_ = 0, after_n_ = 0;
  double before_[kMaxSamples] = {}, after_[kMaxSamples] = {};
};

}  // namespace detail

}  // namespace hspc
