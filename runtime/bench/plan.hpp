// The plan: which benchmarks to run, in which order. The tuner writes it (its randomised blocked
// rounds are the order of the lines); the harness registers the benchmarks in exactly that order.
//
// Format (text, one benchmark per line; '#' starts a comment line; blank lines are ignored):
//
//   NAME KIND VARIANT EVENTS ITERATIONS CPUS [KEY=VALUE ...]
//
//   NAME        the benchmark's name in Google Benchmark's output; no blanks (e.g. r3/c1a2b3c4d5)
//   KIND        throughput | latency | round_trip | producer_alone | consumer_alone | p0_parallel
//               | optimal | achievable | upper_bound  (baselines take the event type, and for
//               achievable the buffer memory, from VARIANT)
//   VARIANT     an id of the rendered variant table
//   EVENTS      events per sample (>= 1)
//   ITERATIONS  samples of this line (>= 1); counters are averaged over them
//   CPUS        PRODUCER,CONSUMER logical CPU numbers (-1 leaves that side unpinned), or '-'
//   KEY=VALUE   workload per event: producer_ns, consumer_ns (synthetic work, ns), consumer_bytes
//               (consumer working set), pace_ns (latency kind: work between events), ring_bytes
//               (the baselines' private ring, default 1024)
//
// Example:
//   # round 0
//   r0/c1a2b3c4d5 throughput c1a2b3c4d5 2000000 1 1,0 producer_ns=40 consumer_ns=15
//   r0/producer_alone producer_alone c1a2b3c4d5 2000000 1 1,0 producer_ns=40 consumer_ns=15
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/sides.hpp"
#include "bench/thread_stats.hpp"
#include "bench/variant.hpp"

namespace hspc_bench {

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
  }
  if (ok) return "";
  return "bad KEY=VALUE '" + item +
         "' (keys: producer_ns, consumer_ns, pace_ns, consumer_bytes, ring_bytes)";
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
  return error;
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

}  // namespace hspc_bench
