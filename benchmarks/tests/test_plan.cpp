// The plan format and the Google Benchmark glue: plans parse as documented and are rejected with
// the line at fault; the harness's flags are taken out of argv; benchmarks run in exactly the
// plan's order with manual time, items and the counters the tuner records.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "check.hpp"
#include "harness/register.hpp"
#include "hspc/channel.hpp"

namespace {

namespace hb = hspc_harness;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

void parses_a_plan() {
  const hb::PlanResult plan = hb::parse_plan(
      "# a comment\n"
      "\n"
      "r0/b throughput cA 1000 3 - producer_ns=40 consumer_ns=15.5 consumer_bytes=4096\n"
      "  r0/a   round_trip  cB 10 1 0,-1 pace_ns=100 ring_bytes=64\r\n"
      "r1/p producer_alone cA 7 1 -1,-1\n");
  HARNESS_CHECK(plan.error.empty());
  HARNESS_CHECK(plan.entries.size() == 3);
  const hb::PlanEntry& b = plan.entries[0];
  HARNESS_CHECK(b.name == "r0/b" && b.kind == hb::Kind::throughput && b.variant == "cA");
  HARNESS_CHECK(b.workload.events == 1000 && b.iterations == 3);
  HARNESS_CHECK(b.workload.producer_cpu == -1 && b.workload.consumer_cpu == -1);
  HARNESS_CHECK(b.workload.producer_ns == 40 && b.workload.consumer_ns == 15.5);
  HARNESS_CHECK(b.workload.consumer_bytes == 4096 && b.workload.ring_bytes == 1024);
  const hb::PlanEntry& a = plan.entries[1];
  HARNESS_CHECK(a.name == "r0/a" && a.kind == hb::Kind::round_trip && a.variant == "cB");
  HARNESS_CHECK(a.workload.producer_cpu == 0 && a.workload.consumer_cpu == -1);
  HARNESS_CHECK(a.workload.pace_ns == 100 && a.workload.ring_bytes == 64);
  HARNESS_CHECK(plan.entries[2].kind == hb::Kind::producer_alone);
}

void parses_thread_keys() {
  const hb::PlanResult plan = hb::parse_plan(
      "p pairs cA 10 1 - pairs=2 cpus=0+0+0+0\n"
      "f fanout cA 10 1 -1,-1 producers=2 consumers=5 consumer_ns=9\n"
      "g fanout cA 10 1 - consumers=3 cpus=0+0+0+0\n");
  HARNESS_CHECK(plan.error.empty());
  const hb::Workload& p = plan.entries[0].workload;
  HARNESS_CHECK(plan.entries[0].kind == hb::Kind::pairs && p.pairs == 2);
  HARNESS_CHECK((p.cpus == std::vector<int>{0, 0, 0, 0}));
  const hb::Workload& f = plan.entries[1].workload;
  HARNESS_CHECK(plan.entries[1].kind == hb::Kind::fanout && f.producers == 2 && f.consumers == 5);
  HARNESS_CHECK(f.cpus.empty() && f.consumer_ns == 9 && f.pairs == 1);
  HARNESS_CHECK(plan.entries[2].workload.consumers == 3 && plan.entries[2].workload.producers == 1);
}

void rejects_bad_lines() {
  const char* bad[] = {
      "x throughput cA 1000 1",               // too few fields
      "x sprint cA 1000 1 -",                 // unknown kind
      "x throughput cA 0 1 -",                // no events
      "x throughput cA 10 zero -",            // iterations not a number
      "x throughput cA -5 1 -",               // negative events
      "x throughput cA 10 1 1",               // cpus without a comma
      "x throughput cA 10 1 0,100000",        // a CPU this process cannot use
      "x throughput cA 10 1 - colour=blue",   // unknown key
      "x throughput cA 10 1 - producer_ns=",  // empty value
      "x throughput cA 10 1 - consumer_ns=-1",
      "x throughput cA 10 1 - ring_bytes=0",
      "x throughput cA 10 1 - pairs=2",                // thread keys on a two-thread kind
      "x throughput cA 10 1 - cpus=0+0",               // so is cpus=
      "x pairs cA 10 1 - consumers=2",                 // a fanout key on pairs
      "x fanout cA 10 1 - pairs=2",                    // and a pairs key on fanout
      "x pairs cA 10 1 - pairs=0",                     // no pairs
      "x pairs cA 10 1 - pairs=129",                   // more than 256 threads
      "x pairs cA 10 1 0,0 pairs=2",                   // CPUS column instead of cpus=
      "x pairs cA 10 1 - pairs=2 cpus=0+0+0",          // a CPU per thread
      "x pairs cA 10 1 - cpus=0+",                     // an empty item
      "x pairs cA 10 1 - cpus=0+-1",                   // -1 is no CPU
      "x pairs cA 10 1 - cpus=0,0",                    // '+' joins
      "x pairs cA 10 1 - cpus=0+100000",               // a CPU this process cannot use
      "x fanout cA 10 1 - producers=3 consumers=2",    // a producer without consumers
      "x fanout cA 10 1 - consumers=65",               // over 64 for one producer
      "x fanout cA 10 1 - producers=2 consumers=129",  // ditto
  };
  for (const char* line : bad) {
    const hb::PlanResult plan = hb::parse_plan(std::string("# ok\n") + line + "\n");
    if (!starts_with(plan.error, "plan:2: ")) std::fprintf(stderr, "accepted: %s\n", line);
    HARNESS_CHECK(starts_with(plan.error, "plan:2: "));
    HARNESS_CHECK(plan.entries.empty());
  }
  HARNESS_CHECK(!hb::read_plan("/nonexistent/plan.txt").error.empty());
}

void takes_its_own_flags() {
  char prog[] = "prog", plan[] = "--plan=p.txt", deadline[] = "--deadline_s", five[] = "5",
       loops[] = "--loops_per_ns=2.5", filter[] = "--benchmark_filter=x";
  char* argv[] = {prog, plan, deadline, five, loops, filter, nullptr};
  int argc = 6;
  hb::Options opt;
  HARNESS_CHECK(hb::take_options(argc, argv, opt).empty());
  HARNESS_CHECK(argc == 2 && std::string(argv[1]) == "--benchmark_filter=x");
  HARNESS_CHECK(opt.plan_path == "p.txt" && opt.deadline_s == 5 && opt.loops_per_ns == 2.5);
  char bad[] = "--loops_per_ns=fast";
  char* argv2[] = {prog, bad, nullptr};
  int argc2 = 2;
  HARNESS_CHECK(!hb::take_options(argc2, argv2, opt).empty());
}

// Keeps what Google Benchmark reports, in order.
class Capture : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) this->runs.push_back(run);
  }
  std::vector<Run> runs;
};

using Futex = hspc::BasicChannel<hb::Event<8>, hspc::Primitive::futex, 4, 4096, 128>;
using Condvar = hspc::BasicChannel<hb::Event<8>, hspc::Primitive::condvar, 2, 1024, 64>;

const hb::Variant kVariants[] = {
    {"cFutex", &hb::run<Futex>},
    {"cCondvarPop", &hb::run<hb::PerEvent<Condvar>>},
};

void runs_in_plan_order() {
  const hb::PlanResult plan = hb::parse_plan(
      "z/first throughput cFutex 20000 2 -\n"
      "a/second producer_alone cCondvarPop 20000 1 -\n"
      "m/third round_trip cCondvarPop 500 1 - pace_ns=10\n"
      "b/fourth upper_bound cFutex 20000 1 - consumer_ns=5\n"
      "c/fifth pairs cFutex 5000 2 - pairs=2 cpus=0+0+0+0\n"
      "d/sixth fanout cCondvarPop 5000 1 - producers=2 consumers=3\n");
  HARNESS_CHECK(plan.error.empty());
  hb::Options opt;
  opt.deadline_s = 120;
  hb::Session session(opt);
  HARNESS_CHECK(
      hb::register_plan(session, plan.entries, std::begin(kVariants), std::end(kVariants)).empty());
  const hb::PlanResult unknown = hb::parse_plan("x throughput cNope 10 1 -\n");
  HARNESS_CHECK(
      !hb::register_plan(session, unknown.entries, std::begin(kVariants), std::end(kVariants))
           .empty());
  Capture capture;
  benchmark::RunSpecifiedBenchmarks(&capture);
  HARNESS_CHECK(capture.runs.size() == plan.entries.size());
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    const auto& run = capture.runs[i];
    HARNESS_CHECK(starts_with(run.benchmark_name(), plan.entries[i].name + "/"));
    HARNESS_CHECK(run.iterations ==
                  static_cast<benchmark::IterationCount>(plan.entries[i].iterations));
    HARNESS_CHECK(run.real_accumulated_time > 0);
    for (const char* counter :
         {"cpu_ns_per_event", "cpu_ns_producer", "cpu_ns_consumer", "nivcsw_producer",
          "nivcsw_consumer", "migrations", "migrations_producer", "migrations_consumer", "verified",
          "items_per_second", "events", "delay_ns_producer", "delay_ns_consumer"}) {
      HARNESS_CHECK(run.counters.count(counter) == 1);
    }
    HARNESS_CHECK(run.counters.at("verified").value == 1.0);
    const hb::Workload& w = plan.entries[i].workload;
    const bool many = i >= 4;  // pairs, fanout: EVENTS per producer; waits counted
    HARNESS_CHECK(run.counters.at("events").value ==
                  static_cast<double>(w.events * (many ? w.pairs * w.producers : 1)));
    HARNESS_CHECK(run.counters.count("waits") == (many ? 1u : 0u));
    HARNESS_CHECK(run.counters.count("wait_ns") == (many ? 1u : 0u));
  }
  HARNESS_CHECK(capture.runs[2].counters.count("latency_p50_ns") == 1);
  HARNESS_CHECK(capture.runs[0].counters.count("latency_p50_ns") == 0);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  parses_a_plan();
  parses_thread_keys();
  rejects_bad_lines();
  takes_its_own_flags();
  runs_in_plan_order();
  std::puts("plan: ok");
  return 0;
}
