// Why is the bulk path (push(ptr, 256) / pop(ptr, 256)) slower than push + consume in hspc-gen
// bench on the 16-CPU Xeon guest? One process, interleaved rounds, the tuned header of that host's
// third run: the per-event and bulk paths; the bulk path with the consumer's run at several page
// offsets (4K aliasing between the copy's loads from the slot and its stores to the run); and the
// producer's run gathered with its cursor in a local variable (as a user's loop keeps it) or in
// memory beside the run (a std::size_t count, as the harness's RunsOf and the peers' BatchedPeer
// keep it, or a pointer): in memory, the cursor is loaded and stored again every event.
// gunzip -k tp8_channel.hpp.gz; g++ -O2 -DNDEBUG -std=c++17 -pthread bulk_probe.cpp
// ./a.out PRODUCER_CPU CONSUMER_CPU ROUNDS
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tp8_channel.hpp"

namespace {

using Ev = std::uint64_t;
constexpr std::size_t kRun = 256;
constexpr std::uint64_t kEvents = std::uint64_t{1} << 26;

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct Mode {
  std::string name;
  int kind;             // 0 consume, 1 pop per event, 2 runs (a local count), 3 a count in
                        // memory beside the run, 4 a pointer cursor in memory beside it
  std::size_t in_off;   // bytes past a page for the producer's run
  std::size_t out_off;  // bytes past a page for the consumer's run
};

double sample(const Mode& m, int pcpu, int ccpu, char* in_page, char* out_page) {
  auto ch = std::make_unique<tp8::Channel<Ev>>();
  Ev* in = reinterpret_cast<Ev*>(in_page + m.in_off);
  Ev* out = reinterpret_cast<Ev*>(out_page + m.out_off);
  std::uint64_t sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::thread consumer([&] {
    pin(ccpu);
    std::uint64_t s = 0;
    if (m.kind == 0) {
      while (ch->consume([&](const Ev* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) s += p[i];
      }) != 0) {
      }
    } else if (m.kind == 1) {
      Ev e;
      while (ch->pop(e)) s += e;
    } else {
      std::size_t n;
      while ((n = ch->pop(out, kRun)) != 0)
        for (std::size_t i = 0; i < n; ++i) s += out[i];
    }
    sum = s;
  });
  pin(pcpu);
  struct Gathered {
    Ev in[kRun];
    std::size_t fill;
    Ev* next;
  };
  auto g = std::make_unique<Gathered>();
  g->fill = 0;
  g->next = g->in;
  if (m.kind == 3) {
    for (std::uint64_t i = 0; i < kEvents; ++i) {
      g->in[g->fill++] = i;
      if (g->fill == kRun) {
        ch->push(g->in, kRun);
        g->fill = 0;
      }
    }
  } else if (m.kind == 4) {
    for (std::uint64_t i = 0; i < kEvents; ++i) {
      *g->next++ = i;
      if (g->next == g->in + kRun) {
        ch->push(g->in, kRun);
        g->next = g->in;
      }
    }
  } else if (m.kind == 2) {
    std::size_t f = 0;
    for (std::uint64_t i = 0; i < kEvents; ++i) {
      in[f++] = i;
      if (f == kRun) {
        ch->push(in, kRun);
        f = 0;
      }
    }
    if (f != 0) ch->push(in, f);
  } else {
    for (std::uint64_t i = 0; i < kEvents; ++i) ch->push(i);
  }
  ch->close();
  consumer.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sum != kEvents * (kEvents - 1) / 2) std::abort();
  return kEvents / s;
}

}  // namespace

int main(int argc, char** argv) {
  const int pcpu = argc > 1 ? std::atoi(argv[1]) : 0;
  const int ccpu = argc > 2 ? std::atoi(argv[2]) : 1;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 10;
  const std::vector<Mode> modes = {
      {"consume", 0, 0, 0},
      {"pop", 1, 0, 0},
      {"runs in0 out0", 2, 0, 0},
      {"runs in0 out64", 2, 0, 64},
      {"runs in0 out1024", 2, 0, 1024},
      {"runs in0 out2176", 2, 0, 2176},
      {"runs in0 out3072", 2, 0, 3072},
      {"runs in2048 out1024", 2, 2048, 1024},
      {"runs count in memory", 3, 0, 0},
      {"runs cursor in memory", 4, 0, 0},
  };
  char* in_page = static_cast<char*>(std::aligned_alloc(4096, 4 * 4096));
  char* out_page = static_cast<char*>(std::aligned_alloc(4096, 4 * 4096));
  std::fill(in_page, in_page + 4 * 4096, 0);
  std::fill(out_page, out_page + 4 * 4096, 0);
  std::vector<std::vector<double>> rates(modes.size());
  std::vector<std::size_t> order(modes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  unsigned seed = 1;
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[rand_r(&seed) % i]);
    for (std::size_t i : order) rates[i].push_back(sample(modes[i], pcpu, ccpu, in_page, out_page));
  }
  std::printf(
      "CPUs %d,%d, %d rounds, %llu events a sample; M events/s: median [min, max], "
      "median of the per-round ratio to consume\n",
      pcpu, ccpu, rounds, static_cast<unsigned long long>(kEvents));
  for (std::size_t i = 0; i < modes.size(); ++i) {
    std::vector<double> v = rates[i], ratio;
    for (int r = 0; r < rounds; ++r) ratio.push_back(rates[i][r] / rates[0][r]);
    std::sort(v.begin(), v.end());
    std::sort(ratio.begin(), ratio.end());
    std::printf("%-22s %8.1f [%7.1f, %7.1f]  ratio %.3f [%.3f, %.3f]\n", modes[i].name.c_str(),
                v[v.size() / 2] / 1e6, v.front() / 1e6, v.back() / 1e6, ratio[ratio.size() / 2],
                ratio.front(), ratio.back());
  }
}
