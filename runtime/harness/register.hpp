// Google Benchmark glue: one benchmark per sample source, manual time (the sample's own wall time
// from start gate to last event), items processed, and the interference counters the tuner
// records. Never ->Threads(2): the consumer is the persistent worker, not a benchmark thread.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/fault.hpp"
#include "harness/plan.hpp"
#include "harness/sides.hpp"
#include "harness/variant.hpp"
#include "harness/watchdog.hpp"

namespace hspc_harness {

// The harness's own flags (Google Benchmark's are left for benchmark::Initialize):
//   --plan FILE          the plan to run (plan programs only)
//   --deadline_s S       abort the process if one sample runs longer (default 60; 0: never)
//   --loops_per_ns X     use this work calibration instead of measuring it (to repeat a run)
//   --cap_s S            a throughput sample's producer stops after S seconds (default 0: never)
struct Options {
  std::string plan_path;
  double deadline_s = 60.0;
  double loops_per_ns = 0.0;
  double cap_s = 0.0;
};

namespace detail {

// Takes "--name VALUE" or "--name=VALUE" at argv[i]; advances i past what it used.
inline bool take_flag(int argc, char** argv, int& i, const std::string& name, std::string& out) {
  const std::string arg = argv[i];
  const std::string flag = "--" + name;
  if (arg.rfind(flag + "=", 0) == 0) {
    out = arg.substr(flag.size() + 1);
    return true;
  }
  if (arg == flag && i + 1 < argc) {
    out = argv[++i];
    return true;
  }
  return false;
}

}  // namespace detail

// Removes the harness's flags from argv; returns an error message, empty if all is well.
inline std::string take_options(int& argc, char** argv, Options& opt) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string value;
    if (detail::take_flag(argc, argv, i, "plan", opt.plan_path)) continue;
    if (detail::take_flag(argc, argv, i, "deadline_s", value)) {
      if (!detail::parse_double(value, opt.deadline_s)) return "bad --deadline_s " + value;
      continue;
    }
    if (detail::take_flag(argc, argv, i, "cap_s", value)) {
      if (!detail::parse_double(value, opt.cap_s) || !(opt.cap_s >= 0 && opt.cap_s <= 3600)) {
        return "bad --cap_s " + value;
      }
      continue;
    }
    if (detail::take_flag(argc, argv, i, "loops_per_ns", value)) {
      if (!detail::parse_double(value, opt.loops_per_ns) || opt.loops_per_ns <= 0) {
        return "bad --loops_per_ns " + value;
      }
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return "";
}

// Everything the registered benchmarks share for the life of the process. Building it installs
// the fault reports (fault.hpp): the line a fatal signal or exit() in a sample writes.
class Session {
 public:
  explicit Session(const Options& opt)
      : ctx_{opt.loops_per_ns > 0 ? Calibration{opt.loops_per_ns} : calibrate(),
             {},
             static_cast<std::int64_t>(opt.cap_s * 1e9)},
        watchdog_(opt.deadline_s) {
    fault::install("hspc_harness");
    benchmark::AddCustomContext("hspc_loops_per_ns", std::to_string(ctx_.calibration.loops_per_ns));
    benchmark::AddCustomContext("hspc_deadline_s", std::to_string(opt.deadline_s));
  }
  Context& context() noexcept { return ctx_; }
  // Seconds since the session started: when a benchmark ran, to line samples up with phases of
  // host load after a randomly interleaved run.
  double seconds_since_start() const noexcept {
    return std::chrono::duration<double>(Clock::now() - started_).count();
  }
  Watchdog& watchdog() noexcept { return watchdog_; }
  // Samples that failed so far (moved no events, or failed verification); the developer
  // programs exit 1 if any did.
  std::uint64_t wrong_answers() const noexcept { return wrong_answers_; }
  void count_wrong_answer() noexcept { ++wrong_answers_; }

 private:
  Context ctx_;
  Watchdog watchdog_;
  std::uint64_t wrong_answers_ = 0;
  Clock::time_point started_ = Clock::now();
};

namespace detail {

// Sums over a benchmark's samples, reported as per-sample averages.
struct Totals {
  std::uint64_t samples = 0, events = 0, unverified = 0, latency_samples = 0, wait_samples = 0;
  double cpu_producer = 0, cpu_consumer = 0, nivcsw_p = 0, nivcsw_c = 0, nvcsw_p = 0, nvcsw_c = 0,
         migrations_p = 0, migrations_c = 0, delay_p = 0, delay_c = 0, p50 = 0, p99 = 0, waits = 0,
         wait_ns = 0;
  bool migrations_known = true;
  bool delay_known = true;

  void add(const Sample& s) {
    ++samples;
    events += s.events;
    unverified += s.verified ? 0 : 1;
    cpu_producer += static_cast<double>(s.producer.cpu_ns);
    cpu_consumer += static_cast<double>(s.consumer.cpu_ns);
    nivcsw_p += static_cast<double>(s.producer.nivcsw);
    nivcsw_c += static_cast<double>(s.consumer.nivcsw);
    nvcsw_p += static_cast<double>(s.producer.nvcsw);
    nvcsw_c += static_cast<double>(s.consumer.nvcsw);
    migrations_known = migrations_known && s.producer.migrations >= 0 && s.consumer.migrations >= 0;
    migrations_p += static_cast<double>(s.producer.migrations);
    migrations_c += static_cast<double>(s.consumer.migrations);
    delay_known = delay_known && s.producer.delay_ns >= 0 && s.consumer.delay_ns >= 0;
    delay_p += static_cast<double>(s.producer.delay_ns);
    delay_c += static_cast<double>(s.consumer.delay_ns);
    if (s.latency_p50_ns >= 0) {
      ++latency_samples;
      p50 += s.latency_p50_ns;
      p99 += s.latency_p99_ns;
    }
    if (s.wait_ns >= 0) {
      ++wait_samples;
      waits += static_cast<double>(s.waits);
      wait_ns += static_cast<double>(s.wait_ns);
    }
  }

  void report(benchmark::State& st) const {
    using benchmark::Counter;
    const double n = samples > 0 ? static_cast<double>(samples) : 1.0;
    st.SetItemsProcessed(static_cast<std::int64_t>(events));
    st.counters["events"] = Counter(static_cast<double>(events) / n);
    st.counters["cpu_ns_per_event"] =
        Counter((cpu_producer + cpu_consumer) / static_cast<double>(events > 0 ? events : 1));
    st.counters["cpu_ns_producer"] = Counter(cpu_producer / n);
    st.counters["cpu_ns_consumer"] = Counter(cpu_consumer / n);
    st.counters["nivcsw_producer"] = Counter(nivcsw_p / n);
    st.counters["nivcsw_consumer"] = Counter(nivcsw_c / n);
    st.counters["nvcsw_producer"] = Counter(nvcsw_p / n);
    st.counters["nvcsw_consumer"] = Counter(nvcsw_c / n);
    // -1: the kernel does not expose se.nr_migrations.
    st.counters["migrations_producer"] = Counter(migrations_known ? migrations_p / n : -1.0);
    st.counters["migrations_consumer"] = Counter(migrations_known ? migrations_c / n : -1.0);
    st.counters["migrations"] =
        Counter(migrations_known ? (migrations_p + migrations_c) / n : -1.0);
    // -1: the kernel does not expose schedstat.
    st.counters["delay_ns_producer"] = Counter(delay_known ? delay_p / n : -1.0);
    st.counters["delay_ns_consumer"] = Counter(delay_known ? delay_c / n : -1.0);
    st.counters["verified"] = Counter(unverified == 0 ? 1.0 : 0.0);
    if (latency_samples > 0) {
      st.counters["latency_p50_ns"] = Counter(p50 / static_cast<double>(latency_samples));
      st.counters["latency_p99_ns"] = Counter(p99 / static_cast<double>(latency_samples));
    }
    if (wait_samples > 0) {  // pairs, fanout: summed over all threads
      st.counters["waits"] = Counter(waits / static_cast<double>(wait_samples));
      st.counters["wait_ns"] = Counter(wait_ns / static_cast<double>(wait_samples));
    }
  }
};

}  // namespace detail

// Registers `sample` as a benchmark of `iterations` samples, each timed by the sample itself.
inline benchmark::internal::Benchmark* register_sample(
    Session& session, const std::string& name, std::uint64_t iterations,
    std::function<Sample(Context&)> sample, benchmark::TimeUnit unit = benchmark::kMicrosecond) {
  auto body = [&session, name, sample = std::move(sample)](benchmark::State& st) {
    detail::Totals totals;
    const double started_s = session.seconds_since_start();
    for (auto _ : st) {
      session.watchdog().arm(name);
      const Sample s = sample(session.context());
      session.watchdog().disarm();
      st.SetIterationTime(static_cast<double>(s.wall_ns) * 1e-9);
      totals.add(s);
      if (s.events == 0) {  // declined or broken: the tuner makes this the arm's failure
        session.count_wrong_answer();
        std::fprintf(stderr, "hspc_harness: %s: NO EVENTS (the sample moved nothing)\n",
                     name.c_str());
      } else if (!s.verified) {
        session.count_wrong_answer();
        std::fprintf(stderr,
                     "hspc_harness: %s: WRONG ANSWER (events lost, repeated, reordered or "
                     "torn)\n",
                     name.c_str());
      }
    }
    totals.report(st);
    st.counters["started_s"] = benchmark::Counter(started_s);
  };
  return benchmark::RegisterBenchmark(name.c_str(), std::move(body))
      ->UseManualTime()
      ->Iterations(static_cast<benchmark::IterationCount>(iterations))
      ->Unit(unit);
}

// Registers every plan entry, in the plan's order; returns an error for an unknown variant id.
inline std::string register_plan(Session& session, const std::vector<PlanEntry>& plan,
                                 const Variant* begin, const Variant* end) {
  std::size_t threads = 2;
  for (const PlanEntry& e : plan) {
    threads = std::max(threads,
                       sample_threads(e.kind == Kind::pairs, e.kind == Kind::fanout, e.workload));
  }
  extra_workers().ensure(threads - 2);  // every extra thread started now, before any timing
  for (const PlanEntry& e : plan) {
    const Variant* v = find_variant(begin, end, e.variant);
    if (v == nullptr)
      return "plan: benchmark '" + e.name + "': unknown variant '" + e.variant + "'";
    RunFn run = v->run;
    register_sample(session, e.name, e.iterations,
                    [run, e](Context& ctx) { return run(e.kind, e.workload, ctx); });
  }
  return "";
}

// Parses the harness's flags and then Google Benchmark's; nullopt (after a message) on bad ones.
inline std::optional<Options> init(int& argc, char** argv) {
  Options opt;
  const std::string error = take_options(argc, argv, opt);
  if (!error.empty()) {
    std::fprintf(stderr, "hspc_harness: %s\n", error.c_str());
    return std::nullopt;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return std::nullopt;
  return opt;
}

// The whole main() of a rendered benchmark: exit status 0, or 2 for a bad command line or plan.
// `--list_variants` alone prints the variant table's ids, one per line (what this build has).
inline int plan_main(int argc, char** argv, const Variant* begin, const Variant* end) {
  if (argc == 2 && std::string(argv[1]) == "--list_variants") {
    for (const Variant* v = begin; v != end; ++v) std::printf("%s\n", v->id);
    return 0;
  }
  const std::optional<Options> opt = init(argc, argv);
  if (!opt) return 2;
  if (opt->plan_path.empty()) {
    std::fprintf(stderr, "hspc_harness: --plan FILE is required\n");
    return 2;
  }
  const PlanResult plan = read_plan(opt->plan_path);
  if (!plan.error.empty()) {
    std::fprintf(stderr, "hspc_harness: %s\n", plan.error.c_str());
    return 2;
  }
  Session session(*opt);
  const std::string error = register_plan(session, plan.entries, begin, end);
  if (!error.empty()) {
    std::fprintf(stderr, "hspc_harness: %s\n", error.c_str());
    return 2;
  }
  benchmark::AddCustomContext("hspc_plan", opt->plan_path);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

template <std::size_t N>
int plan_main(int argc, char** argv, const Variant (&variants)[N]) {
  return plan_main(argc, argv, variants, variants + N);
}

}  // namespace hspc_harness
