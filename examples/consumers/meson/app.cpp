// A consumer project of hspc-gen: one producer thread and one consumer thread move ticks through
// the channel tuned for this host at configure time (see meson.build). The consumer checks every
// tick's sequence number and sums the prices; the sum must be the one the producer made, exactly.

#include <cstdint>
#include <cstdio>
#include <thread>

#include "ticks_channel.hpp"

namespace {

// 16 bytes, as app.yaml's event.size says: the size the channel was tuned for.
struct Tick {
  std::uint64_t seq;
  std::uint64_t price;
};
static_assert(sizeof(Tick) == 16, "app.yaml declares 16-byte events");

constexpr std::uint64_t kTicks = 1'000'000;

std::uint64_t price_of(std::uint64_t seq) { return (seq * 2654435761u) % 100'000; }

}  // namespace

int main() {
  ticks::Channel<Tick> channel;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t consumed_sum = 0;
  std::thread consumer([&] {
    ticks::pin_current_thread(ticks::kTuning.consumer_cpu);
    Tick tick{};
    while (channel.pop(tick)) {
      out_of_order += tick.seq != received ? 1 : 0;
      consumed_sum += tick.price;
      ++received;
    }
  });

  std::uint64_t produced_sum = 0;
  ticks::pin_current_thread(ticks::kTuning.producer_cpu);
  ticks::run_with_stack_offset([&] {
    for (std::uint64_t seq = 0; seq < kTicks; ++seq) {
      const Tick tick{seq, price_of(seq)};
      produced_sum += tick.price;
      channel.push(tick);
    }
    channel.close();
  });
  consumer.join();

  const bool ok = received == kTicks && out_of_order == 0 && consumed_sum == produced_sum;
  std::printf("%s: %llu of %llu ticks in order, checksum %llu %s, primitive %s\n",
              ok ? "ok" : "FAILED", static_cast<unsigned long long>(received),
              static_cast<unsigned long long>(kTicks),
              static_cast<unsigned long long>(consumed_sum), ok ? "matches" : "differs",
              ticks::primitive_name(ticks::kTuning.primitive));
  return ok ? 0 : 1;
}
