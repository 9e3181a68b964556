// How this host's CPUs talk to each other (search/measure/topology.py): for each pair of CPUs
// (a, b), one thread pinned to a and one pinned to b measure
//   round_trip  one cache line bounced between them: a stores, waits for b's store, stores again.
//               A sample is a batch of round trips timed on a, over the round trips it holds.
//   block       a writes a block of --block-bytes (a channel's buffer) and flags it; b reads it
//               whole. A sample is b's time from seeing the flag to its last word read.
// The first batch of each is a warm-up and left out. A sample that took a time slice is an
// outlier the reader's median leaves aside; nothing here retries.
//
// Prints one JSON document on stdout and exits 0:
//   {"probe":"hspc-gen topology","cpus":[0,1],"samples":S,"round_trips":R,"block_bytes":B,
//    "pairs":[{"a":0,"b":1,"round_trip_ns":[...],"block_ns":[...]},
//             {"a":0,"b":9,"skipped":"CPU 9 is not one this process may use"}]}
// A pair with a CPU this process may not use, or whose threads could not be placed, or whose
// peer stalled, is skipped with the reason: the others are still measured. Bad flags: a message
// and exit status 2.
//
// Build: g++ -std=c++17 -O2 -pthread runtime/harness/topology_main.cpp -o topology
// Run:   topology [--pairs=A:B,A:B,...] [--samples=N] [--round-trips=N] [--block-bytes=N]
//        Without --pairs, every pair of the CPUs this process may use (a < b).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness/cpus.hpp"

namespace {

using Clock = std::chrono::steady_clock;
// A peer that has not answered for this long is not running (its CPU was taken away, or the
// host stopped the vCPU): the pair is skipped rather than waited on. A time slice is ~4 ms.
constexpr std::int64_t kStallNs = 500'000'000;
constexpr std::uint32_t kSpinsPerClockCheck = 1024;
// Apart from everything else the threads touch: the measured line moves alone.
constexpr std::size_t kLineAlign = 128;  // two 64-byte lines: the adjacent-line prefetcher's pair

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

struct Options {
  std::vector<std::pair<int, int>> pairs;
  std::uint32_t samples = 21;
  std::uint32_t round_trips = 200;
  std::size_t block_bytes = 64 << 10;
  bool all_pairs = true;
};

// The state two threads share while they measure one pair.
struct Shared {
  alignas(kLineAlign) std::atomic<std::uint64_t> line{0};  // the round trip's bounced line
  alignas(kLineAlign) std::atomic<std::uint64_t> flag{0};  // block k written: k + 1
  alignas(kLineAlign) std::atomic<std::uint64_t> ack{0};   // block k read: k + 1
  alignas(kLineAlign) std::atomic<int> placed_a{0};        // 1: on its CPU, -1: could not be
  alignas(kLineAlign) std::atomic<int> placed_b{0};
  alignas(kLineAlign) std::atomic<bool> stalled{false};  // either side gave up on the other
};

// Spins until `word` holds `value`. False when the peer stalled (or gave up first).
bool wait_for(const std::atomic<std::uint64_t>& word, std::uint64_t value,
              std::atomic<bool>& stalled) {
  std::uint32_t spins = 0;
  std::int64_t since = 0;
  while (word.load(std::memory_order_acquire) != value) {
    if (++spins % kSpinsPerClockCheck != 0) continue;
    if (stalled.load(std::memory_order_relaxed)) return false;
    const std::int64_t now = now_ns();
    if (since == 0) {
      since = now;
    } else if (now - since > kStallNs) {
      stalled.store(true, std::memory_order_relaxed);
      return false;
    }
  }
  return true;
}

// Pins the calling thread to `cpu` and checks that it now runs there.
bool pin_here(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set) != 0) return false;
  return ::sched_getcpu() == cpu;
}

// Both sides placed (true), or either could not be (false); waits for the other's answer.
bool meet(std::atomic<int>& mine, const std::atomic<int>& theirs, bool placed) {
  mine.store(placed ? 1 : -1, std::memory_order_release);
  int answer = 0;
  while ((answer = theirs.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
  return placed && answer == 1;
}

struct PairResult {
  std::vector<double> round_trip_ns;
  std::vector<double> block_ns;
  std::string skipped;  // empty when measured
};

// Side a: starts every round trip and writes every block.
void side_a(Shared& s, const Options& o, std::uint64_t* block, PairResult& out) {
  const std::uint32_t batches = o.samples + 1;  // the first warms up
  const std::size_t words = o.block_bytes / sizeof(std::uint64_t);
  std::uint64_t next = 1;
  for (std::uint32_t batch = 0; batch < batches; ++batch) {
    const std::int64_t start = now_ns();
    for (std::uint32_t k = 0; k < o.round_trips; ++k, next += 2) {
      s.line.store(next, std::memory_order_release);
      if (!wait_for(s.line, next + 1, s.stalled)) return;
    }
    const double per_trip = static_cast<double>(now_ns() - start) / o.round_trips;
    if (batch > 0) out.round_trip_ns.push_back(per_trip);
  }
  for (std::uint64_t k = 0; k < batches; ++k) {
    for (std::size_t j = 0; j < words; ++j) block[j] = k + j;
    s.flag.store(k + 1, std::memory_order_release);
    if (!wait_for(s.ack, k + 1, s.stalled)) return;
  }
}

// Side b: answers every round trip and reads every block, checking what arrived.
void side_b(Shared& s, const Options& o, const std::uint64_t* block, PairResult& out,
            std::string& damaged) {
  const std::uint32_t batches = o.samples + 1;
  const std::uint64_t words = o.block_bytes / sizeof(std::uint64_t);
  const std::uint64_t trips = static_cast<std::uint64_t>(batches) * o.round_trips;
  for (std::uint64_t i = 0; i < trips; ++i) {
    if (!wait_for(s.line, 2 * i + 1, s.stalled)) return;
    s.line.store(2 * i + 2, std::memory_order_release);
  }
  for (std::uint64_t k = 0; k < batches; ++k) {
    if (!wait_for(s.flag, k + 1, s.stalled)) return;
    const std::int64_t start = now_ns();
    std::uint64_t sum = 0;
    for (std::uint64_t j = 0; j < words; ++j) sum += block[j];
    const std::int64_t end = now_ns();
    if (sum != k * words + words * (words - 1) / 2) damaged = "a block arrived damaged";
    if (k > 0) out.block_ns.push_back(static_cast<double>(end - start));
    s.ack.store(k + 1, std::memory_order_release);
  }
}

PairResult measure_pair(int a, int b, const Options& o, std::uint64_t* block) {
  Shared s;
  PairResult out;
  std::string damaged;
  std::thread on_b([&] {
    if (meet(s.placed_b, s.placed_a, pin_here(b))) side_b(s, o, block, out, damaged);
  });
  std::thread on_a([&] {
    if (meet(s.placed_a, s.placed_b, pin_here(a))) side_a(s, o, block, out);
  });
  on_a.join();
  on_b.join();
  if (s.placed_a.load() != 1 || s.placed_b.load() != 1) {
    out.skipped = "its threads could not be placed on CPUs " + std::to_string(a) + " and " +
                  std::to_string(b);
  } else if (s.stalled.load()) {
    out.skipped = "a thread stalled for over 0.5 s (its CPU did not run it)";
  } else if (!damaged.empty()) {
    out.skipped = damaged;
  }
  return out;
}

bool parse_number(const char* text, unsigned long low, unsigned long high, unsigned long& out) {
  char* end = nullptr;
  out = std::strtoul(text, &end, 10);
  return end != text && *end == '\0' && out >= low && out <= high;
}

bool parse_pairs(const char* text, std::vector<std::pair<int, int>>& out) {
  std::string list(text);
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(start, comma - start);
    const std::size_t colon = item.find(':');
    unsigned long a = 0;
    unsigned long b = 0;
    if (colon == std::string::npos ||
        !parse_number(item.substr(0, colon).c_str(), 0, CPU_SETSIZE - 1, a) ||
        !parse_number(item.substr(colon + 1).c_str(), 0, CPU_SETSIZE - 1, b) || a == b) {
      return false;
    }
    out.emplace_back(static_cast<int>(a), static_cast<int>(b));
    start = comma + 1;
  }
  return !out.empty();
}

bool parse_flag(const char* arg, Options& o) {
  const auto value = [arg](const char* name) -> const char* {
    const std::size_t n = std::strlen(name);
    return std::strncmp(arg, name, n) == 0 ? arg + n : nullptr;
  };
  unsigned long n = 0;
  if (const char* v = value("--pairs=")) {
    o.all_pairs = false;
    return parse_pairs(v, o.pairs);
  }
  if (const char* v = value("--samples=")) {
    if (!parse_number(v, 1, 10000, n)) return false;
    o.samples = static_cast<std::uint32_t>(n);
    return true;
  }
  if (const char* v = value("--round-trips=")) {
    if (!parse_number(v, 1, 1000000, n)) return false;
    o.round_trips = static_cast<std::uint32_t>(n);
    return true;
  }
  if (const char* v = value("--block-bytes=")) {
    if (!parse_number(v, 64, 64ul << 20, n) || n % 64 != 0) return false;
    o.block_bytes = n;
    return true;
  }
  return false;
}

void print_list(const std::vector<double>& values) {
  std::printf("[");
  for (std::size_t i = 0; i < values.size(); ++i) std::printf(i ? ",%.2f" : "%.2f", values[i]);
  std::printf("]");
}

void print_pair(int a, int b, const PairResult& r, bool first) {
  std::printf("%s\n{\"a\":%d,\"b\":%d,", first ? "" : ",", a, b);
  if (!r.skipped.empty()) {
    std::printf("\"skipped\":\"%s\"}", r.skipped.c_str());  // our own words: nothing to escape
    return;
  }
  std::printf("\"round_trip_ns\":");
  print_list(r.round_trip_ns);
  std::printf(",\"block_ns\":");
  print_list(r.block_ns);
  std::printf("}");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (!parse_flag(argv[i], o)) {
      std::fprintf(stderr,
                   "topology: unknown or bad flag %s (expected --pairs=A:B,..., --samples=N "
                   "1..10000, --round-trips=N 1..1000000, --block-bytes=N a multiple of 64)\n",
                   argv[i]);
      return 2;
    }
  }
  const std::vector<int> cpus = hspc_harness::allowed_cpus();
  if (o.all_pairs) {
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      for (std::size_t j = i + 1; j < cpus.size(); ++j) o.pairs.emplace_back(cpus[i], cpus[j]);
    }
  }
  // Page-aligned, so that the block's lines are the same from run to run.
  void* memory = std::aligned_alloc(4096, (o.block_bytes + 4095) / 4096 * 4096);
  if (memory == nullptr) {
    std::fprintf(stderr, "topology: cannot allocate a %zu-byte block\n", o.block_bytes);
    return 1;
  }
  auto* block = static_cast<std::uint64_t*>(memory);
  std::printf("{\"probe\":\"hspc-gen topology\",\"cpus\":[");
  for (std::size_t i = 0; i < cpus.size(); ++i) std::printf(i ? ",%d" : "%d", cpus[i]);
  std::printf("],\"samples\":%u,\"round_trips\":%u,\"block_bytes\":%zu,\"pairs\":[", o.samples,
              o.round_trips, o.block_bytes);
  bool first = true;
  for (const auto& [a, b] : o.pairs) {
    const bool usable =
        std::count(cpus.begin(), cpus.end(), a) && std::count(cpus.begin(), cpus.end(), b);
    PairResult r;
    if (usable) {
      r = measure_pair(a, b, o, block);
    } else {
      const int missing = std::count(cpus.begin(), cpus.end(), a) ? b : a;
      r.skipped = "CPU " + std::to_string(missing) + " is not one this process may use";
    }
    print_pair(a, b, r, first);
    first = false;
  }
  std::printf("]}\n");
  std::free(memory);
  return 0;
}
