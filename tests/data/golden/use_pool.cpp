// Uses every call of a generated header's ConsumerPool, so that compiling it with -Werror under
// g++ and clang++ checks the pool's part of the header, and running it checks the pool end to
// end: three producers (one added late), every event handled once and each producer's in order;
// then unordered, two producers, every event handled once; a handler told each event's place.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include HSPC_GENERATED_HEADER

namespace ch = HSPC_GENERATED_NAMESPACE;

struct Event {
  std::uint32_t producer;
  std::uint32_t seq;
};

int main() {
  constexpr std::uint32_t kEvents = 50000;
  constexpr std::size_t kProducers = 3;
  std::uint32_t next[kProducers] = {};  // one consumer at a time per producer: no lock needed
  std::atomic<bool> ok{true};
  ch::ConsumerPool<Event> pool(kProducers - 1, [&](const Event& e) {
    if (e.seq != next[e.producer]++) ok = false;
  });
  // A handler told the event's place (per-producer state): producer(0)'s events come at place 0.
  std::uint32_t at_place[1] = {};
  ch::ConsumerPool<Event> limited(
      1, [&](std::size_t place, const Event& e) { at_place[place] += e.seq; },
      ch::PoolOptions{1, 2, true});
  auto& first = limited.producer(0);
  for (std::uint32_t i = 1; i <= 3; ++i) first.push(Event{0, i});
  first.close();
  limited.wait();
  const bool placed = first.place() == 0 && first.finished() && at_place[0] == 6 &&
                      limited.peak_consumers() >= 1 && limited.peak_consumers() <= 2;
  const std::size_t running = pool.consumers();
  std::vector<std::thread> producers;
  const auto produce = [&](std::uint32_t id, auto& in) {
    for (std::uint32_t i = 0; i < kEvents; ++i) {
      if (i % 3 == 0) {
        in.push(Event{id, i});
      } else if (i % 3 == 1) {
        in.emplace(Event{id, i});
      } else {
        while (!in.try_push(Event{id, i})) std::this_thread::yield();
      }
      if (i % 1000 == 999) in.flush();
    }
    in.close();
  };
  auto& late = pool.add_producer();  // before any producer closes: a new place
  for (std::uint32_t id = 0; id + 1 < kProducers; ++id) {
    producers.emplace_back([&, id] { produce(id, pool.producer(id)); });
  }
  producers.emplace_back([&] { produce(kProducers - 1, late); });
  for (auto& t : producers) t.join();
  pool.wait();
  bool all = placed && ok.load() && running >= 1 && pool.producers() == kProducers;
  for (std::uint32_t n : next) all = all && n == kEvents;
  // Unordered: any consumer takes any buffer, so a flag per event, set once.
  std::vector<std::atomic<std::uint8_t>> seen(2 * kEvents);
  for (auto& flag : seen) flag.store(0);
  ch::ConsumerPool<Event> any(
      2, [&](const Event& e) { seen[e.producer * kEvents + e.seq].fetch_add(1); },
      ch::PoolOptions{1, 3, false});
  producers.clear();
  for (std::uint32_t id = 0; id < 2; ++id) {
    producers.emplace_back([&, id] { produce(id, any.producer(id)); });
  }
  for (auto& t : producers) t.join();
  any.wait();
  for (const auto& flag : seen) all = all && flag.load() == 1;
  const ch::PoolAdjustments moved = pool.adjustments();
  std::printf(
      "%s: %u events from each of %zu producers, %zu consumers at the start, grown %llu, "
      "shrunk %llu\n",
      all ? "ok" : "WRONG", kEvents, kProducers, running,
      static_cast<unsigned long long>(moved.grown), static_cast<unsigned long long>(moved.shrunk));
  return all ? 0 : 1;
}
