#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "hspc/affinity.hpp"
#include "hspc/pool_evidence.hpp"

namespace hspc {

namespace detail {
struct PoolSample;
}

// A rule of the caller's own in place of the built-in one (the phase benchmark drives the pool
// with a hill climber through it; PoolOptions::rule, used when adaptive): called from the pool's
// controller thread only, once per interval, and must not throw. decide() returns the move in
// consumers (the pool clamps it to [min, max]); next_interval_ns() the next interval's length.
class PoolRule {
 public:
  virtual ~PoolRule() = default;
  virtual int decide(const detail::PoolSample& sample) = 0;
  virtual std::uint64_t next_interval_ns() = 0;
};

// What a BasicConsumerPool is asked to do: its consumer limits, its mode, and its controller's
// parameters. An aggregate, so PoolOptions{min_consumers, max_consumers, ordered} works in C++17;
// every field has a default.
struct PoolOptions {
  // The fewest consumer threads the pool runs (at least 1) and the most (0: the CPUs this process
  // may run on; at most 64 in any case). An explicit max above the CPUs is honoured: a handler
  // that blocks can use more consumers than CPUs (cpu_busy_max still holds growth back).
  std::size_t min_consumers = 1;
  std::size_t max_consumers = 0;
  // true: one producer's events are handled in push order, by one consumer at a time.
  // false: whole buffers go to any free consumer, in no order, so that more consumers than
  // producers can help (each producer then writes max_consumers channels).
  bool ordered = true;
  // The consumers it starts with (0: min_consumers), within [min_consumers, max_consumers].
  std::size_t start_consumers = 0;
  // false: the count stays where it started (the controller only samples).
  bool adaptive = true;
  // The controller's interval: each one lasts uniform [0.5, 1.5] x interval_ns, so that it
  // cannot lock onto a periodic load.
  std::uint64_t interval_ns = 20000000;
  // Growth: buffers waited longer than this on average (Xu's AIT) while the consumers were
  // busy, in grow_intervals intervals in a row, and a CPU was free.
  std::uint64_t grow_wait_ns = 200000;
  std::uint32_t grow_intervals = 2;
  // Shrinking: at least shrink_idle consumers' worth of idle (parked) time per interval, and no
  // backlog, in shrink_intervals intervals in a row (hysteresis: one idle moment is not enough).
  double shrink_idle = 1.0;
  std::uint32_t shrink_intervals = 5;
  // No growth while the host's CPUs were busier than this fraction over the interval (read from
  // /proc/stat; 1 or more: no such check).
  double cpu_busy_max = 0.95;
  // The interval lengths' random sequence (the same seed, the same lengths).
  std::uint64_t seed = 0x5eed5eed;
  // Evidence: after each move, the median throughput (events per second) of the trial_intervals
  // intervals after it (the first one after the move not counted) against that of the
  // trial_intervals before. A growth stays only if it gained more than the margin, a removal
  // only if it lost no more than the margin; a move that fails is undone and not tried again
  // for hold_intervals (doubling with each failure in a row, up to 16x) or until the load
  // changes. The margin: max(margin, the noise of the intervals before: 2 x their median
  // absolute deviation over their median).
  std::uint32_t trial_intervals = 3;
  double margin = 0.05;
  std::uint32_t hold_intervals = 25;
  // Not null: this rule decides instead (it must outlive the pool).
  PoolRule* rule = nullptr;
};

// The consumers the controller added and removed (a move of k counts k; an undone trial counts
// both ways), and how many intervals it judged.
struct PoolAdjustments {
  std::uint64_t grown;
  std::uint64_t shrunk;
  std::uint64_t intervals;
};

namespace detail {

constexpr std::size_t kMaxPoolConsumers = 64;  // one bit each in the parking lot's word

// Running sums the controller differences between two samples: waits (ended, and the time so
// far of those still going), how many ended, how many are still going, idle (parked) time and
// events handled.
// Every sum only grows, so the difference of two is what happened between them.
struct PoolTotals {
  double waited_ns = 0, waits = 0, waiting = 0, idle_ns = 0, events = 0;
};

// max_consumers with 0 read as the CPUs this process may run on, at most `most`.
inline std::size_t pool_max_consumers(const PoolOptions& options, std::size_t most) noexcept {
  if (options.max_consumers != 0) return options.max_consumers;
  const int cpus = allowed_cpu_count();
  const std::size_t usable = cpus < 1 ? 1 : static_cast<std::size_t>(cpus);
  return usable < most ? usable : most;
}

// The options, or std::invalid_argument saying what is wrong with them.
inline PoolOptions checked_pool_options(const PoolOptions& options, std::size_t most) {
  const std::size_t max = pool_max_consumers(options, most);
  if (options.min_consumers < 1 || options.min_consumers > max || max > most) {
    throw std::invalid_argument("BasicConsumerPool: need 1 <= min <= max <= 64 consumers");
  }
  return options;
}

// One interval as the controller sees it (BasicConsumerPool gathers it).
struct PoolSample {
  double interval_ns;      // how long the interval lasted
  double wait_ns;          // buffer wait accrued in it: hand-off until a consumer took the lane
  double waits;            // the waits that ended in it, plus those still going at its end
  double idle_ns;          // consumer time spent parked in it, summed over consumers
  std::size_t consumers;   // consumer threads at its end
  std::size_t open_lanes;  // lanes of producers not yet finished: the most consumers that help
  double cpu_busy;         // the host's busy fraction in it; negative: unknown
  double events;           // events handled in it

  // The interval between two sums taken interval_ns apart.
  static PoolSample between(const PoolTotals& last, const PoolTotals& now, double interval_ns,
                            std::size_t consumers, std::size_t open_lanes, double cpu_busy) {
    const double waited = now.waited_ns - last.waited_ns;
    return {interval_ns,
            waited > 0 ? waited : 0.0,  // a wait still going that a race re-stamped: none
            now.waits - last.waits + now.waiting,
            now.idle_ns - last.idle_ns,
            consumers,
            open_lanes,
            cpu_busy,
            now.events - last.events};
  }
};

// The controller's decision rule, kept apart from the threads so that it can be tested on made-up
// samples. What it proposes: backlog (Xu's AIT above grow_wait_ns while fewer than half a consumer
// idled: the wait is not a parked consumer's wake-up) with room to grow (below max, below the open
// lanes, a CPU free) for grow_intervals intervals in a row proposes one more consumer; idleness
// (shrink_idle consumers parked on average, no backlog) for shrink_intervals in a row fewer: down
// to the fewest that leave less than shrink_idle idle.
// What it does: each move is a trial, judged on throughput with a margin (PoolOptions: evidence)
// and undone if it failed; that direction is then held off (hysteresis) until its hold ends or the
// load changes (PoolEvidence::baseline says when).
// Nothing moves while a trial runs, so the count moves one step per trial at most. A move resets
// the runs; trial_intervals = 0: no trials (every proposal is a move that stands).
class PoolController {
 public:
  PoolController(const PoolOptions& options, std::size_t min_consumers, std::size_t max_consumers)
      : options_(options),
        min_(min_consumers),
        max_(max_consumers),
        rng_(options.seed),
        evidence_(options.trial_intervals) {}

  // The move in consumers: +1 (grow), -k (shrink), the undoing of a failed trial, or 0.
  int decide(const PoolSample& s) {
    if (options_.rule != nullptr) return options_.rule->decide(s);
    const double rate = s.interval_ns > 0 ? s.events * 1e9 / s.interval_ns : 0.0;
    const int proposal = propose(s);
    if (evidence_.on_trial()) return judge(rate);
    if (evidence_.baseline(rate)) grow_hold_ = shrink_hold_ = grow_fails_ = shrink_fails_ = 0;
    if (proposal > 0 && grow_hold_ == 0 && evidence_.ready()) return start(proposal);
    if (proposal < 0 && shrink_hold_ == 0 && evidence_.ready()) return start(proposal);
    return 0;
  }

  // The next interval's length: uniform in [0.5, 1.5] x interval_ns (splitmix64).
  std::uint64_t next_interval_ns() {
    if (options_.rule != nullptr) return options_.rule->next_interval_ns();
    std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const double unit = static_cast<double>(z >> 11) / 9007199254740992.0;  // [0, 1)
    return static_cast<std::uint64_t>((0.5 + unit) * static_cast<double>(options_.interval_ns));
  }

 private:
  int propose(const PoolSample& s) noexcept {
    const double ait = s.waits > 0 ? s.wait_ns / s.waits : 0.0;
    const double idle = s.interval_ns > 0 ? s.idle_ns / s.interval_ns : 0.0;
    const bool backlog = ait > static_cast<double>(options_.grow_wait_ns) && idle < 0.5;
    const bool cpu_free = options_.cpu_busy_max >= 1.0 || s.cpu_busy < options_.cpu_busy_max;
    const bool room = s.consumers < max_ && s.consumers < s.open_lanes && cpu_free;
    grow_run_ = backlog && room ? grow_run_ + 1 : 0;
    const bool idle_enough = !backlog && idle >= options_.shrink_idle && s.consumers > min_;
    shrink_run_ = idle_enough ? shrink_run_ + 1 : 0;
    grow_hold_ -= grow_hold_ != 0 ? 1 : 0;
    shrink_hold_ -= shrink_hold_ != 0 ? 1 : 0;
    if (grow_run_ >= options_.grow_intervals) return 1;
    if (shrink_run_ < options_.shrink_intervals) return 0;
    // Down at once to the fewest that leave less than shrink_idle idle (and one per busy
    // consumer): after a blocking phase most of a large pool idles, and one step per run would
    // take seconds. More would only shrink again on the next run.
    const double busy = static_cast<double>(s.consumers) - idle;
    const double keep = std::max(std::ceil(busy), std::ceil(busy + options_.shrink_idle) - 1);
    const std::size_t target =
        keep > static_cast<double>(min_) ? static_cast<std::size_t>(keep) : min_;
    return target < s.consumers ? -static_cast<int>(s.consumers - target) : -1;
  }

  int start(int step) noexcept {
    grow_run_ = 0;
    shrink_run_ = 0;
    evidence_.start(step);
    return step;
  }

  // One interval of a trial; at its end, the verdict: 0 (kept) or the move that undoes it.
  int judge(double rate) noexcept {
    const int step = evidence_.step();
    const int verdict = evidence_.judge(rate, options_.margin);
    if (verdict == PoolEvidence::kPending) return 0;
    std::uint32_t& fails = verdict > 0 ? grow_fails_ : shrink_fails_;
    if (verdict == PoolEvidence::kGrowKept || verdict == PoolEvidence::kShrinkKept) {
      fails = 0;
      return 0;
    }
    (verdict > 0 ? grow_hold_ : shrink_hold_) = options_.hold_intervals << (fails < 4 ? fails : 4);
    ++fails;
    grow_run_ = 0;
    shrink_run_ = 0;
    return -step;
  }

  PoolOptions options_;
  std::size_t min_, max_;
  std::uint64_t rng_;
  PoolEvidence evidence_;
  std::uint32_t grow_run_ = 0, shrink_run_ = 0;
  std::uint32_t grow_hold_ = 0, shrink_hold_ = 0, grow_fails_ = 0, shrink_fails_ = 0;
};

// The host's CPU busy fraction between two readings of /proc/stat's first line (all CPUs: other
// processes' load counts, as it should when deciding whether a CPU is free). A few system calls
// per interval; -1 when the file cannot be read.
class HostCpuMeter {
 public:
  double sample() noexcept {
    std::uint64_t busy = 0;
    std::uint64_t total = 0;
    if (!read(busy, total)) return -1.0;
    const std::uint64_t d_total = total - total_;
    const double fraction = total_ != 0 && d_total != 0
                                ? static_cast<double>(busy - busy_) / static_cast<double>(d_total)
                                : -1.0;
    busy_ = busy;
    total_ = total;
    return fraction;
  }

 private:
  static bool read(std::uint64_t& busy, std::uint64_t& total) noexcept {
    std::FILE* f = std::fopen("/proc/stat", "r");
    if (f == nullptr) return false;
    unsigned long long v[8] = {};
    const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                                &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    std::fclose(f);
    if (got < 5) return false;
    total = 0;
    for (unsigned long long x : v) total += x;
    busy = total - v[3] - v[4];  // idle and iowait
    return true;
  }

  std::uint64_t busy_ = 0;
  std::uint64_t total_ = 0;
};

}  // namespace detail

}  // namespace hspc
