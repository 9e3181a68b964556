// The user's own per-event code alone, before any tuning: the producer (hspc_produce) for EVENTS
// events into one scratch event, then the consumer (hspc_consume) over EVENTS events holding the
// bytes the producer wrote (zeroed events without a producer), both on the main thread. A crash,
// a hang or an exit() is reported as in the benchmark (fault.hpp, watchdog.hpp), naming the side:
//   hspc_smoke: fatal signal SIGSEGV in the user's consumer code (hspc_consume) during sample
//   'smoke/consumer'                                                           (on one line)
//   hspc_smoke: watchdog: sample 'smoke/producer' exceeded the 10.000 s deadline; the producer
//   was in the user's hspc_produce                                             (on one line)
//   hspc_smoke: exit() called during sample 'smoke/consumer' from the user's consumer code
//   (hspc_consume)                                                             (on one line)
// On success it prints, on stdout, and exits 0:
//   hspc_smoke: ok events=N producer_ns_per_event=X consumer_ns_per_event=Y   (0: no such side)
// Bad flags: a message and exit status 2.
//
// Build (no Google Benchmark needed):
//   g++ -std=c++17 -O2 -pthread -Iruntime [-DHSPC_APP_PRODUCER] [-DHSPC_APP_CONSUMER]
//       -DHSPC_EVENT_BYTES=<n> runtime/harness/smoke_main.cpp <user sources...> -o smoke
// Run:
//   smoke [--events=N] [--deadline_s=S]      (defaults 100000 and 60; S = 0: no watchdog)
//
// The build is also the signature probe: a user function defined with another signature does
// not link, and the linker names the signature expected, e.g.
//   undefined reference to `hspc_consume(void const*, unsigned long)'
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/app.hpp"
#include "harness/event.hpp"
#include "harness/fault.hpp"
#include "harness/watchdog.hpp"

#ifndef HSPC_EVENT_BYTES
#error "build with -DHSPC_EVENT_BYTES=<the benchmark's event size in bytes>"
#endif

namespace {

using Event = hspc_harness::Event<HSPC_EVENT_BYTES>;
using Clock = std::chrono::steady_clock;

// The producer's last events, replayed to the consumer in order of their slots.
constexpr std::uint64_t kRingEvents = 1024;

// The signature probe: the exact signatures' addresses, kept in the program even though unused.
#ifdef HSPC_APP_PRODUCER
[[gnu::used]] void (*const kProduceSignature)(std::uint64_t, void*, std::size_t) = &::hspc_produce;
#endif
#ifdef HSPC_APP_CONSUMER
[[gnu::used]] void (*const kConsumeSignature)(const void*, std::size_t) = &::hspc_consume;
#endif

struct Options {
  std::uint64_t events = 100000;
  double deadline_s = 60.0;
};

// Takes "--name=VALUE" or "--name VALUE" at argv[i]; advances i past what it used.
bool take_flag(int argc, char** argv, int& i, const char* name, std::string& out) {
  const std::string arg = argv[i];
  const std::string flag = std::string("--") + name;
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

// An error message, empty when the flags are good.
std::string parse_options(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    std::string value;
    char* end = nullptr;
    if (take_flag(argc, argv, i, "events", value)) {
      opt.events = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || value[0] == '-' || *end != '\0' || opt.events == 0) {
        return "bad --events '" + value + "' (a whole number >= 1)";
      }
    } else if (take_flag(argc, argv, i, "deadline_s", value)) {
      opt.deadline_s = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(opt.deadline_s >= 0.0) || opt.deadline_s > 1e6) {
        return "bad --deadline_s '" + value + "' (seconds >= 0)";
      }
    } else {
      return std::string("unknown argument '") + argv[i] + "' (flags: --events=N --deadline_s=S)";
    }
  }
  return "";
}

[[maybe_unused]] double ns_per_event(Clock::time_point t0, Clock::time_point t1,
                                     std::uint64_t events) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  return static_cast<double>(ns) / static_cast<double>(events);
}

// The producer alone: each event written into the scratch event, then kept in the ring.
double run_producer(std::uint64_t events, std::vector<Event>& ring) {
#ifdef HSPC_APP_PRODUCER
  alignas(Event) unsigned char scratch[sizeof(Event)] = {};
  std::size_t slot = 0;
  const auto t0 = Clock::now();
  for (std::uint64_t i = 0; i < events; ++i) {
    hspc_harness::app_produce(i, scratch, sizeof(Event));
    std::memcpy(&ring[slot], scratch, sizeof(Event));
    if (++slot == ring.size()) slot = 0;
  }
  return ns_per_event(t0, Clock::now(), events);
#else
  (void)events;
  (void)ring;
  return 0.0;
#endif
}

// The consumer alone, over the ring's events in turn.
double run_consumer(std::uint64_t events, const std::vector<Event>& ring) {
#ifdef HSPC_APP_CONSUMER
  std::size_t slot = 0;
  const auto t0 = Clock::now();
  for (std::uint64_t i = 0; i < events; ++i) {
    hspc_harness::app_consume(&ring[slot], sizeof(Event));
    if (++slot == ring.size()) slot = 0;
  }
  return ns_per_event(t0, Clock::now(), events);
#else
  (void)events;
  (void)ring;
  return 0.0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  hspc_harness::fault::install("hspc_smoke");
  Options opt;
  const std::string error = parse_options(argc, argv, opt);
  if (!error.empty()) {
    std::fprintf(stderr, "hspc_smoke: %s\n", error.c_str());
    return 2;
  }
  std::vector<Event> ring(opt.events < kRingEvents ? opt.events : kRingEvents);  // zeroed
  hspc_harness::Watchdog watchdog(opt.deadline_s);  // one deadline for the whole run
  watchdog.arm("smoke/producer");
  const double producer_ns = run_producer(opt.events, ring);
  hspc_harness::fault::name_sample("smoke/consumer");
  const double consumer_ns = run_consumer(opt.events, ring);
  watchdog.disarm();
  std::printf("hspc_smoke: ok events=%llu producer_ns_per_event=%.2f consumer_ns_per_event=%.2f\n",
              static_cast<unsigned long long>(opt.events), producer_ns, consumer_ns);
  return 0;
}
