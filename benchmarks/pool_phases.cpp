// The phase benchmark (issue 25 item 4): producers feeding a BasicConsumerPool whose handler's
// cost moves in phases, light compute -> heavy compute -> a blocking wait (Xu's free_workload:
// more consumers than CPUs pay) -> light, measured in windows: events handled and consumer
// threads per window. Every configuration runs the same phases with a fresh pool, one after
// another in this process:
//   fixed<k>  the pool with adaptive = false, start_consumers = k, for k = 1 .. max
//   pool      the pool's own controller (PoolOptions' defaults), starting at --start
//   hill      the same pool driven by .NET's hill climbing (hill_climbing.hpp), from --start
// --rep r rotates the order by r, so repeated runs alternate which configuration goes first.
// Output (stdout), one line per window:
//   config,rep,window,t_s,phase,events_per_s,consumers,cpu_busy,cpu_self
// cpu_busy: the host's CPUs busy (0..1, every process); cpu_self: this process's share of them.
// and a summary line per configuration on stderr. Not a test: nothing is judged here
// (benchmarks/results/pool-phases-*/analyse.py does that).
//
// Options: --producers N (8) --max N (8) --start N (2) --phase_ms MS (3500) --window_ms MS (100)
//   --producer_ns NS (300) --light_ns NS (50) --heavy_ns NS (2000) --block_us US (1000)
//   --rep R (0) --only NAME (one configuration) --trace 1 (the pool's samples and moves)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/work.hpp"
#include "hill_climbing.hpp"
#include "hspc/pool.hpp"

namespace {

struct Ev {
  std::uint32_t producer;
  std::uint32_t seq;
  std::uint64_t value;
};
using Pool = hspc::BasicConsumerPool<Ev, hspc::Primitive::futex, 4, 1024, 64>;

struct Options {
  int producers = 8, max = 8, start = 2, rep = 0, trace = 0;
  int phase_ms = 3500, window_ms = 100;
  double producer_ns = 300, light_ns = 50, heavy_ns = 2000, block_us = 1000;
  std::string only;
};

const char* const kPhases[] = {"light", "heavy", "blocking", "light"};
constexpr int kPhaseCount = 4;

struct alignas(64) Counter {
  std::atomic<std::uint64_t> n{0};
};

// The handler's cost for the phase it reads per event (a relaxed load of a word the sampler
// writes at each phase change).
struct Load {
  std::atomic<int> phase{0};
  std::uint64_t light_loops = 0, heavy_loops = 0;
  std::chrono::microseconds block{100};
  std::unique_ptr<Counter[]> handled;

  void handle(const Ev& e) const {
    const int p = phase.load(std::memory_order_relaxed);
    std::uint64_t sink = e.value;
    if (p == 2) {
      std::this_thread::sleep_for(block);
    } else {
      sink = hspc_harness::burn(p == 1 ? heavy_loops : light_loops, sink);
    }
    asm volatile("" : : "r"(sink));
    // One consumer at a time per producer (ordered mode): a plain add, no read-modify-write.
    std::atomic<std::uint64_t>& n = handled[e.producer].n;
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

// The pool's own controller, wrapped to print each interval's sample and move (--trace=1) on
// stderr: what it saw and what it did.
class Traced final : public hspc::PoolRule {
 public:
  Traced(const hspc::PoolOptions& o, std::size_t max) : inner_(o, o.min_consumers, max) {}
  int decide(const hspc::detail::PoolSample& s) override {
    const int move = inner_.decide(s);
    const double ait = s.waits > 0 ? s.wait_ns / s.waits : 0;
    std::fprintf(stderr,
                 "trace %.1fms events/s %.0f ait_us %.1f idle %.2f cpu %.2f n %zu move %d\n",
                 s.interval_ns / 1e6, s.events * 1e9 / s.interval_ns, ait / 1e3,
                 s.idle_ns / s.interval_ns, s.cpu_busy, s.consumers, move);
    return move;
  }
  std::uint64_t next_interval_ns() override { return inner_.next_interval_ns(); }

 private:
  hspc::detail::PoolController inner_;
};

// This process's CPU time so far, in seconds.
double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

hspc::PoolOptions pool_options(const Options& opt, int fixed, hspc::PoolRule* rule) {
  hspc::PoolOptions o;
  o.min_consumers = 1;
  o.max_consumers = static_cast<std::size_t>(opt.max);
  o.start_consumers = static_cast<std::size_t>(fixed > 0 ? fixed : opt.start);
  o.adaptive = fixed == 0;
  o.rule = rule;
  return o;
}

// One configuration through every phase; its windows printed as they are taken.
void run(const Options& opt, const std::string& name, int fixed, bool hill,
         const hspc_harness::Calibration& cal) {
  Load load;
  load.light_loops = cal.loops_for(opt.light_ns);
  load.heavy_loops = cal.loops_for(opt.heavy_ns);
  load.block = std::chrono::microseconds(static_cast<long>(opt.block_us));
  load.handled = std::make_unique<Counter[]>(static_cast<std::size_t>(opt.producers));
  hspc_harness::HillClimbing climber(1, opt.max, 0x5eed + static_cast<unsigned>(opt.rep));
  Traced traced(pool_options(opt, fixed, nullptr), static_cast<std::size_t>(opt.max));
  hspc::PoolRule* rule = hill ? &climber : nullptr;
  if (opt.trace != 0 && fixed == 0 && !hill) rule = &traced;
  Pool pool(
      static_cast<std::size_t>(opt.producers), [&load](const Ev& e) { load.handle(e); },
      pool_options(opt, fixed, rule));
  std::atomic<bool> stop{false};
  const std::uint64_t producer_loops = cal.loops_for(opt.producer_ns);
  std::vector<std::thread> producers;
  for (int i = 0; i < opt.producers; ++i) {
    producers.emplace_back([&, i] {
      auto& in = pool.producer(static_cast<std::size_t>(i));
      std::uint64_t x = static_cast<std::uint64_t>(i) + 1;
      for (std::uint32_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
        x = hspc_harness::burn(producer_loops, x);
        in.push(Ev{static_cast<std::uint32_t>(i), seq, x});
      }
      in.close();
    });
  }
  using Clock = std::chrono::steady_clock;
  const int per_phase = opt.phase_ms / opt.window_ms;
  const auto window = std::chrono::milliseconds(opt.window_ms);
  hspc::detail::HostCpuMeter cpu;
  (void)cpu.sample();
  const double cpus = static_cast<double>(std::thread::hardware_concurrency());
  double last_self = process_cpu_s();
  const auto t0 = Clock::now();
  auto last_t = t0;
  std::uint64_t last_n = 0, total = 0;
  for (int w = 0; w < per_phase * kPhaseCount; ++w) {
    load.phase.store(w / per_phase == 3 ? 0 : w / per_phase, std::memory_order_relaxed);
    std::this_thread::sleep_until(t0 + window * (w + 1));
    const auto now = Clock::now();
    std::uint64_t n = 0;
    for (int i = 0; i < opt.producers; ++i) n += load.handled[i].n.load(std::memory_order_relaxed);
    const double s = std::chrono::duration<double>(now - last_t).count();
    const double self = process_cpu_s();
    std::printf("%s,%d,%d,%.3f,%s,%.0f,%zu,%.3f,%.3f\n", name.c_str(), opt.rep, w,
                std::chrono::duration<double>(now - t0).count(), kPhases[w / per_phase],
                static_cast<double>(n - last_n) / s, pool.consumers(), cpu.sample(),
                (self - last_self) / s / cpus);
    last_self = self;
    total += n - last_n;
    last_n = n;
    last_t = now;
  }
  stop.store(true);
  for (auto& t : producers) t.join();
  pool.wait();
  const hspc::PoolAdjustments a = pool.adjustments();
  std::fprintf(stderr, "%s rep %d: %llu events in the windows, grown %llu shrunk %llu\n",
               name.c_str(), opt.rep, static_cast<unsigned long long>(total),
               static_cast<unsigned long long>(a.grown), static_cast<unsigned long long>(a.shrunk));
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* eq = std::strchr(a, '=');
    if (std::strncmp(a, "--", 2) != 0 || eq == nullptr) return false;
    const std::string key(a + 2, eq), value(eq + 1);
    int* ints[] = {&opt.producers, &opt.max,       &opt.start, &opt.rep,
                   &opt.phase_ms,  &opt.window_ms, &opt.trace};
    const char* int_keys[] = {"producers", "max", "start", "rep", "phase_ms", "window_ms", "trace"};
    double* dbls[] = {&opt.producer_ns, &opt.light_ns, &opt.heavy_ns, &opt.block_us};
    const char* dbl_keys[] = {"producer_ns", "light_ns", "heavy_ns", "block_us"};
    bool known = key == "only";
    if (known) opt.only = value;
    for (int k = 0; k < 7; ++k) {
      if (key == int_keys[k]) *ints[k] = std::atoi(value.c_str()), known = true;
    }
    for (int k = 0; k < 4; ++k) {
      if (key == dbl_keys[k]) *dbls[k] = std::atof(value.c_str()), known = true;
    }
    if (!known) return false;
  }
  return opt.producers >= 1 && opt.max >= 1 && opt.max <= 64 && opt.start >= 1 &&
         opt.start <= opt.max && opt.window_ms >= 1 && opt.phase_ms >= opt.window_ms;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: hspc_pool_phases [--KEY=VALUE]... (see benchmarks/pool_phases.cpp)\n");
    return 2;
  }
  const hspc_harness::Calibration cal = hspc_harness::calibrate();
  std::fprintf(stderr, "loops_per_ns %.4f\n", cal.loops_per_ns);
  std::vector<std::string> names;
  for (int k = 1; k <= opt.max; ++k) names.push_back("fixed" + std::to_string(k));
  names.push_back("pool");
  names.push_back("hill");
  std::rotate(names.begin(), names.begin() + opt.rep % static_cast<int>(names.size()), names.end());
  std::printf("config,rep,window,t_s,phase,events_per_s,consumers,cpu_busy,cpu_self\n");
  for (const std::string& name : names) {
    if (!opt.only.empty() && name != opt.only) continue;
    const int fixed = name.rfind("fixed", 0) == 0 ? std::atoi(name.c_str() + 5) : 0;
    run(opt, name, fixed, name == "hill", cal);
    std::fflush(stdout);
  }
  return 0;
}
