// Collapse protection: producer and consumer pinned to the same CPU must still hand events over,
// with every primitive. A ping-pong runs over two channels (one event per buffer one way, a
// flushed partial buffer the other way), once with the channels created before pinning (the spin
// budget is SpinNs: bounded spinning, then yielding) and once created by an already pinned thread
// (the spin budget must be 0). Correctness only: the printed round-trip times are information;
// the watchdog only turns a hang into a failure. The spinning primitives run again at the longest
// spin budget the tuner may choose (kMaxSpinNs, 1 ms): pinned after creation, each wait may spin
// that long before the peer sharing its CPU gets it, and the hand-off must still complete.
#include "hspc/affinity.hpp"
#include "hspc/channel.hpp"

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace {

using hspc::Primitive;

constexpr std::uint32_t kRoundTrips = 2000 / hspc_test::kSlowdown;
// At the 1 ms budget a hand-off pinned after creation takes a millisecond: fewer round trips.
constexpr std::uint32_t kLongSpinRoundTrips = kRoundTrips / 10;

// The lowest CPU this process may use (CPU 0 need not be in a container's mask).
int first_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  HSPC_CHECK(::sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity failed");
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) return cpu;
  }
  HSPC_CHECK(false, "empty affinity mask");
  return -1;
}

template <Primitive P, std::size_t SpinNs>
void ping_pong(int cpu, bool create_pinned) {
  using Ev = hspc_test::Event<64, 64>;
  using There = hspc::BasicChannel<Ev, P, 2, 64, 64, SpinNs>;  // each push hands its buffer over
  using Back = hspc::BasicChannel<std::uint64_t, P, 2, 64, 64, SpinNs>;  // replies flush a part
  if (create_pinned) hspc::pin_current_thread(cpu);
  There there;
  Back back;
  if (create_pinned) {
    HSPC_CHECK(hspc::allowed_cpu_count() == 1, "pinning to CPU %d had no effect", cpu);
    HSPC_CHECK(there.spin_budget() == 0 && back.spin_budget() == 0,
               "a one-CPU process must not spin");
  } else if (hspc::allowed_cpu_count() > 1) {
    HSPC_CHECK(there.spin_budget() == static_cast<std::int64_t>(There::kSpinNs), "spin budget %lld",
               static_cast<long long>(there.spin_budget()));
  }
  std::thread echo([&] {
    hspc::pin_current_thread(cpu);
    Ev ev;
    while (there.pop(ev)) {
      HSPC_CHECK(ev.intact(), "event %u corrupted", ev.seq);
      back.push(ev.seq);
      back.flush();
    }
    back.close();
  });
  hspc::pin_current_thread(cpu);
  HSPC_CHECK(hspc::allowed_cpu_count() == 1, "pinning to CPU %d had no effect", cpu);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t reply = 0;
  const std::uint32_t trips = SpinNs >= hspc::kMaxSpinNs ? kLongSpinRoundTrips : kRoundTrips;
  for (std::uint32_t i = 0; i < trips; ++i) {
    there.push(Ev(i));
    HSPC_CHECK(back.pop(reply) && reply == i, "round trip %u answered %llu", i,
               static_cast<unsigned long long>(reply));
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  there.close();
  HSPC_CHECK(!back.pop(reply) && back.done(), "echo did not close");
  echo.join();
  const double us = std::chrono::duration<double, std::micro>(elapsed).count() / trips;
  std::printf(
      "ok %-13s spin_ns=%-7zu %-22s %8.1f us per round trip (2 hand-offs), waits %llu/%llu\n",
      hspc::primitive_name(P), SpinNs, create_pinned ? "created pinned" : "pinned after creation",
      us, static_cast<unsigned long long>(there.consumer_waits()),
      static_cast<unsigned long long>(back.consumer_waits()));
  std::fflush(stdout);
}

template <Primitive P, std::size_t SpinNs = 5000>
void both_ways(hspc_test::Watchdog& watchdog, int cpu) {
  watchdog.arm(std::string("same cpu ") + hspc::primitive_name(P), std::chrono::seconds(60));
  // Each run in a fresh thread: pinning must not narrow the main thread's mask for the next run.
  std::thread([cpu] { ping_pong<P, SpinNs>(cpu, false); }).join();
  std::thread([cpu] { ping_pong<P, SpinNs>(cpu, true); }).join();
}

}  // namespace

int main() {
  const int cpu = first_allowed_cpu();
  hspc_test::Watchdog watchdog;
  both_ways<Primitive::condvar>(watchdog, cpu);
  both_ways<Primitive::mutex>(watchdog, cpu);
  both_ways<Primitive::spinlock>(watchdog, cpu);
  both_ways<Primitive::backoff_spin>(watchdog, cpu);
  both_ways<Primitive::pause_spin>(watchdog, cpu);
  both_ways<Primitive::futex>(watchdog, cpu);
  both_ways<Primitive::hybrid>(watchdog, cpu);
  both_ways<Primitive::backoff_spin, hspc::kMaxSpinNs>(watchdog, cpu);
  both_ways<Primitive::hybrid, hspc::kMaxSpinNs>(watchdog, cpu);
  return 0;
}
