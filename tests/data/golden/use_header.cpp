// Uses every call of a generated header's API, so that compiling it with -Werror under g++ and
// clang++ checks the whole header, and running it checks one hand-off end to end.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include HSPC_GENERATED_HEADER

namespace ch = HSPC_GENERATED_NAMESPACE;

struct Event {
  std::uint64_t seq;
  std::uint32_t check;
};

int main() {
  static_assert(ch::kTuning.buffers >= 2, "kTuning is a constant expression");
  ch::Channel<Event> channel;
  constexpr std::uint64_t kEvents = 100000;
  std::uint64_t next = 0;
  bool ok = true;
  std::thread consumer([&] {
    ch::pin_current_thread(ch::kTuning.consumer_cpu);
    Event e{};
    auto check = [&](const Event& got) {
      ok = ok && got.seq == next && got.check == static_cast<std::uint32_t>(next * 7);
      ++next;
    };
    while (next < kEvents / 4) {
      if (channel.pop(e)) check(e);
    }
    while (next < kEvents / 2) {
      if (channel.try_pop(e)) check(e);
    }
    while (next < 3 * kEvents / 4) {
      if (channel.pop_for(e, std::chrono::milliseconds(1))) check(e);
    }
    while (channel.consume([&](const Event* run, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) check(run[i]);
    }) != 0) {
    }
    ok = ok && channel.done() && !channel.pop(e);
  });
  ch::pin_current_thread(ch::kTuning.producer_cpu);
  ch::run_with_stack_offset([&] {
    for (std::uint64_t i = 0; i < kEvents; ++i) {
      const Event e{i, static_cast<std::uint32_t>(i * 7)};
      if (i % 3 == 0) {
        channel.push(e);
      } else if (i % 3 == 1) {
        channel.emplace(e);
      } else {
        while (!channel.try_push(e)) std::this_thread::yield();
      }
      if (i % 1000 == 999) channel.flush();
    }
    channel.close();
  });
  consumer.join();
  ok = ok && next == kEvents;
  // The golden record is of no real host: the check runs and says what differs.
  const auto match = ch::tuned_host_matches();
  ok = ok && !match && match.reason[0] != '\0' && ch::kTunedOn.logical_cpus >= 1;
  std::printf("%s: %llu events\n", ok ? "ok" : "WRONG", static_cast<unsigned long long>(next));
  return ok ? 0 : 1;
}
