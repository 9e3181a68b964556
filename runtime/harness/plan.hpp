// The plan: which benchmarks to run, in which order. The tuner writes it (its randomised blocked
// rounds are the order of the lines); the harness registers the benchmarks in exactly that order.
//
// Format (text, one benchmark per line; '#' starts a comment line; blank lines are ignored):
//
//   NAME KIND VARIANT EVENTS ITERATIONS CPUS [KEY=VALUE ...]
//
//   NAME        the benchmark's name in Google Benchmark's output; no blanks (e.g. r3/c1a2b3c4d5)
//   KIND        throughput | latency | paced | round_trip | producer_alone | consumer_alone
//               | p0_parallel | optimal | achievable | upper_bound  (baselines take the event type,
//               and for achievable the buffer memory, from VARIANT) | pairs | fanout.
//               latency: single events pushed pace_ns of producer work apart, each flushed at
//               once (the hand-off alone); paced: the same load without the flushes, so the
//               buffer's fill and the variant's latency bound decide when an event is seen (what
//               an application that never flushes gets; the last events go at close). Both
//               report push-to-pop latency_p50_ns and latency_p99_ns over every event.
//   VARIANT     an id of the rendered variant table
//   EVENTS      events per sample (>= 1); for pairs and fanout, events per producer
//   ITERATIONS  samples of this line (>= 1); counters are averaged over them
//   CPUS        PRODUCER,CONSUMER logical CPU numbers (-1 leaves that side unpinned), or '-'
//               ('-' for pairs and fanout, which pin through cpus=)
//   KEY=VALUE   workload per event: producer_ns, consumer_ns (synthetic work, ns), consumer_bytes
//               (consumer working set), pace_ns (paced kinds: work between events), ring_bytes
//               (the baselines' private ring, default 1024); threads: pairs=N (pairs kind, default
//               1), producers=P and consumers=K (fanout kind, defaults 1; K >= P, consumer j is
//               producer j % P's, at most 64 per producer), cpus=LIST (pairs and fanout: one CPU
//               per thread joined by '+', producers first, e.g. cpus=2+3+4+5 for pairs=2 is
//               producers on 2, 3 and their consumers on 4, 5; no cpus= leaves all unpinned).
//               At most 256 threads per sample.
//
// Example:
//   # round 0
//   r0/c1a2b3c4d5 throughput c1a2b3c4d5 2000000 1 1,0 producer_ns=40 consumer_ns=15
//   r0/producer_alone producer_alone c1a2b3c4d5 2000000 1 1,0 producer_ns=40 consumer_ns=15
//   r0/2p pairs c1a2b3c4d5 1000000 1 - pairs=2 cpus=0+1+0+1
//   r0/1p3c fanout c1a2b3c4d5 1000000 1 - consumers=3 consumer_ns=90
//   r0/p/c1a2b3c4d5 paced c1a2b3c4d5 20000 1 1,0 pace_ns=2000 consumer_ns=15
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/pairs.hpp"
#include "harness/sides.hpp"
#include "harness/thread_stats.hpp"
#include "harness/variant.hpp"

namespace hspc_harness {

struct PlanEntry {
  std::string name;
  Kind kind = Kind::throughput;
  std::string variant;
  std::uint64_t iterations = 1;
  Workload workload;
};

struct PlanResult {
  std::vector<PlanEntry> entries;
  std::string error;  // empty when the plan is valid; else "plan:LINE: what is wrong"
};

namespace detail {

inline bool parse_u64(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

inline bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(v >= 0.0) || v > 1e12) return false;
  out = v;
  return true;
}

inline bool parse_cpu(const std::string& text, int& out) {
  if (text == "-1") {
    out = -1;
    return true;
  }
  std::uint64_t v = 0;
  if (!parse_u64(text, v) || !cpu_allowed(static_cast<int>(v)) || v > 4096) return false;
  out = static_cast<int>(v);
  return true;
}

inline std::string parse_cpus(const std::string& text, Workload& w) {
  if (text == "-") return "";
  const auto comma = text.find(',');
  if (comma == std::string::npos || !parse_cpu(text.substr(0, comma), w.producer_cpu) ||
      !parse_cpu(text.substr(comma + 1), w.consumer_cpu)) {
    return "CPUS must be '-' or PRODUCER,CONSUMER with CPUs this process may use (or -1), got '" +
           text + "'";
  }
  return "";
}

// "2+3+4": CPUs this process may use, joined by '+'.
inline bool parse_cpu_list(const std::string& text, std::vector<int>& out) {
  out.clear();
  std::size_t from = 0;
  for (;;) {
    const std::size_t plus = text.find('+', from);
    int cpu = -1;
    if (!parse_cpu(text.substr(from, plus - from), cpu) || cpu < 0) return false;
    out.push_back(cpu);
    if (plus == std::string::npos) return true;
    from = plus + 1;
  }
}

inline bool parse_count(const std::string& text, std::size_t& out) {
  std::uint64_t v = 0;
  if (!parse_u64(text, v) || v == 0 || v > kMaxSampleThreads) return false;
  out = static_cast<std::size_t>(v);
  return true;
}

inline std::string parse_key(const std::string& item, Workload& w) {
  const auto eq = item.find('=');
  const std::string key = item.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
  bool ok = false;
  if (key == "producer_ns") {
    ok = parse_double(value, w.producer_ns);
  } else if (key == "consumer_ns") {
    ok = parse_double(value, w.consumer_ns);
  } else if (key == "pace_ns") {
    ok = parse_double(value, w.pace_ns);
  } else if (key == "consumer_bytes") {
    std::uint64_t bytes = 0;
    ok = parse_u64(value, bytes);
    w.consumer_bytes = bytes;
  } else if (key == "ring_bytes") {
    std::uint64_t bytes = 0;
    ok = parse_u64(value, bytes) && bytes > 0;
    w.ring_bytes = bytes;
  } else if (key == "pairs") {
    ok = parse_count(value, w.pairs);
  } else if (key == "producers") {
    ok = parse_count(value, w.producers);
  } else if (key == "consumers") {
    ok = parse_count(value, w.consumers);
  } else if (key == "cpus") {
    ok = parse_cpu_list(value, w.cpus);
  }
  if (ok) return "";
  return "bad KEY=VALUE '" + item +
         "' (keys: producer_ns, consumer_ns, pace_ns, consumer_bytes, ring_bytes, pairs, "
         "producers, consumers, cpus)";
}

// The thread keys against the kind: each only where it means something, and a shape that runs.
inline std::string check_threads(Kind kind, const Workload& w) {
  const bool pairs = kind == Kind::pairs;
  const bool fanout = kind == Kind::fanout;
  if (!pairs && w.pairs != 1) return "pairs= is for the pairs kind";
  if (!fanout && (w.producers != 1 || w.consumers != 1)) {
    return "producers= and consumers= are for the fanout kind";
  }
  if (!pairs && !fanout) return w.cpus.empty() ? "" : "cpus= is for the pairs and fanout kinds";
  if (w.producer_cpu != -1 || w.consumer_cpu != -1) {
    return "pairs and fanout take their CPUs from cpus=: CPUS must be '-'";
  }
  if (fanout && w.consumers < w.producers) return "fanout needs consumers >= producers";
  if (fanout && (w.consumers + w.producers - 1) / w.producers > kMaxFanOutConsumers) {
    return "fanout takes at most 64 consumers per producer";
  }
  const std::size_t threads = sample_threads(pairs, fanout, w);
  if (threads > kMaxSampleThreads) return "more than 256 threads in one sample";
  if (!w.cpus.empty() && w.cpus.size() != threads) {
    return "cpus= lists " + std::to_string(w.cpus.size()) + " CPUs for " + std::to_string(threads) +
           " threads (one per thread, producers first)";
  }
  return "";
}

inline std::string parse_line(const std::string& line, PlanEntry& e) {
  std::istringstream in(line);
  std::string kind, events, iterations, cpus;
  if (!(in >> e.name >> kind >> e.variant >> events >> iterations >> cpus)) {
    return "expected NAME KIND VARIANT EVENTS ITERATIONS CPUS [KEY=VALUE ...]";
  }
  if (!parse_kind(kind, e.kind)) return "unknown KIND '" + kind + "'";
  if (!parse_u64(events, e.workload.events) || e.workload.events == 0) {
    return "EVENTS must be a whole number >= 1, got '" + events + "'";
  }
  if (!parse_u64(iterations, e.iterations) || e.iterations == 0) {
    return "ITERATIONS must be a whole number >= 1, got '" + iterations + "'";
  }
  std::string error = parse_cpus(cpus, e.workload);
  for (std::string item; error.empty() && in >> item;) error = parse_key(item, e.workload);
  return error.empty() ? check_threads(e.kind, e.workload) : error;
}

}  // namespace detail

// Parses a plan's text; stops at the first error.
inline PlanResult parse_plan(const std::string& text) {
  PlanResult result;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    PlanEntry entry;
    const std::string error = detail::parse_line(line, entry);
    if (!error.empty()) {
      result.error = "plan:" + std::to_string(number) + ": " + error;
      result.entries.clear();
      return result;
    }
    result.entries.push_back(std::move(entry));
  }
  return result;
}

inline PlanResult read_plan(const std::string& path) {
  std::ifstream file(path);
  if (!file) return PlanResult{{}, "cannot read plan file '" + path + "'"};
  std::ostringstream text;
  text << file.rdbuf();
  return parse_plan(text.str());
}

}  // namespace hspc_harness
