// Uses every call of a generated header's API (Channel and FanOut, each producer and consumer
// call, the bulk ones too, the thread advice, the host check), so that compiling it with -Werror
// and the strict warnings users build with (-Wconversion, -Wsign-conversion, -Wuseless-cast,
// -Wshadow) under g++ and clang++ checks the whole header, and running it checks the hand-offs end
// to end, in order and each event once.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <thread>
#include <utility>

#include HSPC_GENERATED_HEADER

namespace ch = HSPC_GENERATED_NAMESPACE;

namespace {

struct Event {
  std::uint64_t seq;
};

constexpr std::uint64_t kEvents = 100000;

// The producer pushes with every call of the channel's producer side, in turn.
template <class Push, class PushRun, class TryPush>
void produce(Push&& push, PushRun&& push_run, TryPush&& try_push) {
  Event run[16];
  for (std::uint64_t i = 0; i < kEvents;) {
    if (i % 64 == 0) {
      std::size_t n = 0;
      for (; n < 16; ++n) run[n] = Event{i + n};
      push_run(run, n);
      i += n;
    } else if (i % 3 == 0) {
      while (!try_push(Event{i})) std::this_thread::yield();
      ++i;
    } else {
      push(Event{i});
      ++i;
    }
  }
}

// The consumer takes with every call of the channel's consumer side, in turn; false on a gap.
template <class Lane>
bool consume_all(Lane& lane) {
  std::uint64_t next = 0;
  bool ok = true;
  auto check = [&](const Event& e) { ok = ok && e.seq == next++; };
  Event e{};
  Event run[8];
  while (next < kEvents / 4) {
    if (lane.pop(e)) check(e);
  }
  while (next < kEvents / 2) {
    if (lane.try_pop(e)) check(e);
  }
  while (next < 5 * kEvents / 8) {
    if (lane.pop_for(e, std::chrono::milliseconds(1))) check(e);
  }
  while (next < 3 * kEvents / 4) {
    const std::size_t got = lane.pop(run, sizeof run / sizeof run[0]);
    for (std::size_t i = 0; i < got; ++i) check(run[i]);
  }
  while (lane.consume([&](const Event* events, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) check(events[i]);
  }) != 0) {
  }
  return ok && next == kEvents && lane.done();
}

bool channel_delivers() {
  ch::Channel<Event> channel;
  bool ok = false;
  std::thread consumer([&] {
    ch::pin_current_thread(ch::kTuning.consumer_cpu);
    ok = consume_all(channel);
  });
  ch::pin_current_thread(ch::kTuning.producer_cpu);
  ch::run_with_stack_offset([&] {
    produce([&](const Event& e) { channel.emplace(e); },
            [&](const Event* events, std::size_t n) { channel.push(events, n); },
            [&](const Event& e) { return channel.try_push(e); });
    channel.flush();
    channel.close();
  });
  consumer.join();
  (void)channel.producer_waits();
  (void)channel.consumer_waits();
  return ok && channel.spin_budget() >= 0;
}

// One consumer of a FanOut, seen through the Channel's consumer calls.
struct FanOutLane {
  ch::FanOut<Event>& fan;
  bool pop(Event& e) { return fan.pop(0, e); }
  bool try_pop(Event& e) { return fan.try_pop(0, e); }
  bool pop_for(Event& e, std::chrono::milliseconds t) { return fan.pop_for(0, e, t); }
  std::size_t pop(Event* out, std::size_t max) {
    std::size_t n = 0;
    while (n < max && fan.try_pop(0, out[n])) ++n;
    return n;
  }
  template <class F>
  std::size_t consume(F&& f) {
    return fan.consume(0, std::forward<F>(f));
  }
  bool done() const { return fan.done(0); }
};

bool fanout_delivers() {
  ch::FanOut<Event> fan(1);
  bool ok = false;
  std::thread consumer([&] {
    FanOutLane lane{fan};
    ok = consume_all(lane);
  });
  produce([&](const Event& e) { fan.push(e); },
          [&](const Event* events, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) fan.emplace(events[i]);
          },
          [&](const Event& e) { return fan.try_push(e); });
  fan.flush();
  fan.close();
  consumer.join();
  (void)fan.producer_waits();
  (void)fan.consumer_waits(0);
  return ok && fan.consumers() == 1 && fan.spin_budget() >= 0;
}

}  // namespace

int main() {
  static_assert(ch::kTuning.buffers >= 2, "kTuning is a constant expression");
  bool ok = channel_delivers() && fanout_delivers();
  const int cpus = ch::allowed_cpu_count();
  // The thread advice: counts, and CPU lists of at least one entry each (-1: not pinned).
  ok = ok && ch::kProducers >= 1 && ch::kConsumers >= 1 && ch::kConsumersPerProducer >= 1 &&
       std::size(ch::kProducerCpus) >= 1 && std::size(ch::kConsumerCpus) >= 1 &&
       ch::kProducerCpus[0] >= -1 && (ch::kPinThreads || ch::kConsumerCpus[0] >= -1);
  // The golden record is of no real host: the check runs and says what differs.
  const auto match = ch::tuned_host_matches();
  ok = ok && cpus >= 1 && !match && match.reason[0] != '\0' && ch::kTunedOn.logical_cpus >= 1;
  std::printf("%s: %llu events through a Channel and a FanOut (%s)\n", ok ? "ok" : "WRONG",
              static_cast<unsigned long long>(kEvents), ch::primitive_name(ch::kTuning.primitive));
  return ok ? 0 : 1;
}
