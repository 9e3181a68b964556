// One profiled thread's session: where its hook puts events and who turns them into a profile.
// No Python here: the hook (the producer) calls push() under the GIL; in Mode::kChannel a C++
// thread (the consumer) drains the channel into the session's Aggregator without ever taking
// the GIL. The other modes are the paper's comparison lines, timed by the benchmark:
//   kNull     the hook is installed and does nothing (the interpreter's own tracing floor);
//   kEmpty    the hook does the producer's whole work, into a buffer nobody reads (Achievable);
//   kChannel  the profiler: events cross the tuned channel to the consumer thread;
//   kInline   the same aggregation done in the hook itself (Upper bound, cProfile's way).
#pragma once

#include "aggregate.hpp"
#include "pyprof_channel.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

namespace hspcprof {

enum class Mode { kNull, kEmpty, kChannel, kInline };

class Session {
 public:
  // Starts the consumer thread in Mode::kChannel; throws what std::thread throws. The
  // calling-context tree keeps at most about stack_nodes stacks (stacks.hpp).
  explicit Session(Mode mode, std::size_t stack_nodes = StackTree::kDefaultNodes)
      : aggregate_(stack_nodes) {
    if (mode == Mode::kEmpty) sink_.resize(pyprof::kTuning.buffer_bytes / sizeof(Event));
    if (mode == Mode::kChannel) {
      channel_ = std::make_unique<pyprof::Channel<Event>>();
      consumer_ = std::thread(&Session::consume, this);
    }
  }

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    if (!closed_) close(closed_at_);
    finish();
  }

  // The producer's one step per event; M is the session's mode, fixed by the hook installed.
  template <Mode M>
  void push(const Event& e) {
    if constexpr (M == Mode::kEmpty) {
      sink_[slot_] = e;
      if (++slot_ == sink_.size()) slot_ = 0;
    } else if constexpr (M == Mode::kChannel) {
      channel_->push(e);
    } else if constexpr (M == Mode::kInline) {
      aggregate_.apply(e);
    }
    ++events_;
  }

  // The producer's last step: no event follows; the calls still open end at `now`.
  void close(std::int64_t now) {
    closed_at_ = now;
    closed_ = true;
    if (channel_) channel_->close();
  }

  bool closed() const noexcept { return closed_; }

  // True once finish() would not wait: the consumer has drained the closed channel.
  bool drained() const noexcept { return !consumer_.joinable() || drained_.load(); }

  // Waits for the consumer, then ends the open calls. After close(); idempotent.
  void finish() {
    if (consumer_.joinable()) consumer_.join();
    aggregate_.close_open_calls(closed_at_);
  }

  const Aggregator& aggregate() const noexcept { return aggregate_; }
  std::uint64_t events() const noexcept { return events_; }
  std::uint64_t stalls() const noexcept { return channel_ ? channel_->producer_waits() : 0; }
  double consumer_cpu() const noexcept { return consumer_cpu_; }

 private:
  void consume() {
    pyprof::pin_current_thread(pyprof::kTuning.consumer_cpu);
    while (channel_->consume(
               [this](const Event* events, std::size_t n) { aggregate_.apply(events, n); }) != 0) {
    }
    timespec used{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
    consumer_cpu_ = static_cast<double>(used.tv_sec) + static_cast<double>(used.tv_nsec) * 1e-9;
    drained_.store(true);
  }

  std::uint64_t events_ = 0;
  std::vector<Event> sink_;
  std::size_t slot_ = 0;
  std::unique_ptr<pyprof::Channel<Event>> channel_;
  Aggregator aggregate_;
  std::thread consumer_;
  std::atomic<bool> drained_{false};
  std::int64_t closed_at_ = 0;
  bool closed_ = false;
  double consumer_cpu_ = 0;
};

}  // namespace hspcprof
