// One profiled thread's session: where its hook puts events and who turns them into a profile.
// No Python here: the hook (the producer) calls push() under the GIL; in Mode::kChannel the
// session is one producer of its profiler's pool (SessionPool), whose consumer threads drain every
// session's channel into that session's Aggregator without ever taking the GIL. The other modes
// are the paper's comparison lines, timed by the benchmark:
//   kNull     the hook is installed and does nothing (the interpreter's own tracing floor);
//   kEmpty    the hook does the producer's whole work, into a buffer nobody reads (Achievable);
//   kChannel  the profiler: events cross the tuned channel to the pool's consumers;
//   kInline   the same aggregation done in the hook itself (Upper bound, cProfile's way).
#pragma once

#include "aggregate.hpp"
#include "pyprof_channel.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace hspcprof {

enum class Mode { kNull, kEmpty, kChannel, kInline };

// The pool that drains every kChannel session of a profiler: one consumer thread per CPU at most
// (and per thread profiled, the pool's ordered mode), instead of one per thread. Ordered, so one
// session's events reach its Aggregator in push order, one consumer at a time; the handler is
// told the event's place and finds the session's Aggregator there. That table needs no lock: a
// place's entry is written before its producer's first push (whose hand-off publishes it to the
// consumers), and rewritten only when add_producer() gives the place to a new session, which it
// does once every call for the last one has returned (ConsumerPool's place contract). An
// Aggregator is plain data handed from consumer to consumer with its lane: a turn starts with
// the lane's claim (an acquire CAS) and ends with its release (a release store), so each turn
// reads the claim word the last one released and sees everything it wrote (the profile, the
// open call stack); and the thread that folds a closed session in first sees
// Producer::finished() (an acquire load of the counter the last turn bumped, acq_rel, after its
// handler calls), so the whole profile is visible to it. A pool holds at most kMaxProducers
// producers alive at once; more threads than that get another pool.
class SessionPool {
 public:
  using Pool = pyprof::ConsumerPool<Event>;
  using Producer = Pool::Producer;

  SessionPool() = default;
  SessionPool(const SessionPool&) = delete;
  SessionPool& operator=(const SessionPool&) = delete;

  // A producer for a new session whose events go to `profile`; throws what the pool throws.
  Producer& join(Aggregator& profile) {
    for (auto& lanes : pools_) {
      if (Producer* in = lanes->join(profile)) return *in;
    }
    pools_.push_back(std::make_unique<Lanes>(cpu_ns_));
    return *pools_.back()->join(profile);
  }

  // Returns once every session has closed and every event was handled, then stops the consumers;
  // rethrows what the handler threw (a profile that could not grow: std::bad_alloc).
  void wait() {
    for (auto& lanes : pools_) lanes->pool.wait();
  }

  // The most consumer threads its pools ran at once (summed over pools: an upper bound).
  std::size_t peak_consumers() const noexcept {
    std::size_t most = 0;
    for (const auto& lanes : pools_) most += lanes->pool.peak_consumers();
    return most;
  }

  // CPU seconds the consumer threads that have ended took.
  double consumer_cpu() const noexcept { return static_cast<double>(cpu_ns_.load()) * 1e-9; }

 private:
  // One pool and its table of places.
  struct Lanes {
    explicit Lanes(std::atomic<std::uint64_t>& cpu_ns)
        : pool(0, [this, &cpu_ns](std::size_t place, const Event& e) {
            if (!t_timed) time_this_thread(cpu_ns);
            profiles[place]->apply(e);
          }) {}

    // Null when the pool holds kMaxProducers producers alive, none of them closed (with one
    // closed, add_producer() waits for its consumer to drain it, which needs no GIL).
    Producer* join(Aggregator& profile) {
      Producer* in = nullptr;
      try {
        in = &pool.add_producer();
      } catch (const std::length_error&) {
        return nullptr;
      }
      profiles[in->place()] = &profile;  // before its first push
      return in;
    }

    std::array<Aggregator*, Pool::kMaxProducers> profiles{};
    Pool pool;  // last: its consumers stop before the table goes
  };

  // A consumer thread's CPU time, added to its pool's total as the thread ends (the pool's
  // threads serve that pool alone). Set on the thread's first event: one load of a static TLS
  // word per event.
  struct ThreadClock {
    std::atomic<std::uint64_t>* into = nullptr;
    ~ThreadClock() {
      timespec used{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
      if (into != nullptr) {
        into->fetch_add(static_cast<std::uint64_t>(used.tv_sec) * 1000000000u +
                        static_cast<std::uint64_t>(used.tv_nsec));
      }
    }
  };
  static inline thread_local bool t_timed __attribute__((tls_model("initial-exec"))) = false;
  [[gnu::noinline]] static void time_this_thread(std::atomic<std::uint64_t>& cpu_ns) {
    static thread_local ThreadClock clock;
    clock.into = &cpu_ns;
    t_timed = true;
  }

  std::atomic<std::uint64_t> cpu_ns_{0};
  std::vector<std::unique_ptr<Lanes>> pools_;  // after cpu_ns_: its threads end first
};

class Session {
 public:
  // In Mode::kChannel, a producer of `pool` (which must outlive it); throws what the pool throws.
  // The calling-context tree keeps at most about stack_nodes stacks (stacks.hpp).
  Session(Mode mode, SessionPool* pool, std::size_t stack_nodes = StackTree::kDefaultNodes)
      : aggregate_(stack_nodes) {
    if (mode == Mode::kEmpty) sink_.resize(pyprof::kTuning.buffer_bytes / sizeof(Event));
    if (mode == Mode::kChannel) {
      producer_ = &pool->join(aggregate_);
      waits_before_ = producer_->waits();
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
      *staged_end_ = e;
      if (++staged_end_ == staged_.data() + staged_.size()) hand_over();
    } else if constexpr (M == Mode::kInline) {
      aggregate_.apply(e);
    }
    ++events_;
  }

  // The producer's last step: no event follows; the calls still open end at `now`.
  void close(std::int64_t now) {
    closed_at_ = now;
    closed_ = true;
    if (producer_ != nullptr && !drained_) {
      hand_over();
      stalls_ = producer_->waits() - waits_before_;
      producer_->close();
    }
  }

  bool closed() const noexcept { return closed_; }

  // True once finish() would not wait: the pool has handled every event of the closed session
  // (Producer::finished()'s acquire makes the Aggregator's state visible here). Asked under the
  // GIL, like add_producer(), so a place is never reused unseen: see reused().
  bool drained() noexcept {
    if (!drained_ && closed_ && (producer_ == nullptr || producer_->finished())) drained_ = true;
    return drained_;
  }

  // A new session, `next`, was opened: if it got this closed session's producer, the pool had
  // handled every event of this one before giving it away (and add_producer()'s acquire saw it).
  void opened(const Session& next) noexcept {
    if (closed_ && producer_ != nullptr && next.producer_ == producer_) drained_ = true;
  }

  // Waits until the pool has drained this session, then ends the open calls. After close(); the
  // consumers never take the GIL, so a caller may hold it. Idempotent.
  void finish() {
    while (!drained()) std::this_thread::sleep_for(std::chrono::microseconds(50));
    aggregate_.close_open_calls(closed_at_);
  }

  const Aggregator& aggregate() const noexcept { return aggregate_; }
  std::uint64_t events() const noexcept { return events_; }
  std::uint64_t stalls() const noexcept { return stalls_; }

 private:
  // The staged events into the channel, in order, in one copy. Out of line: the callbacks' own
  // code stays a few stores, with no register saved for the channel's.
  [[gnu::noinline]] void hand_over() {
    producer_->push(staged_.data(), static_cast<std::size_t>(staged_end_ - staged_.data()));
    staged_end_ = staged_.data();
  }

  // Mode::kChannel's events wait here, then go into the channel a run at a time: its push of one
  // event (a pointer chase to the lane whose turn it is, two fill counts to bump and test) cost
  // as much as the callbacks' own work; a run's is one copy.
  static constexpr std::size_t kStaged = 128;  // 2 KiB: in L1 with the channel's current lines
  std::array<Event, kStaged> staged_;
  Event* staged_end_ = staged_.data();
  std::uint64_t events_ = 0;
  std::vector<Event> sink_;
  std::size_t slot_ = 0;
  SessionPool::Producer* producer_ = nullptr;
  std::uint64_t waits_before_ = 0;  // the place's earlier producers' waits
  std::uint64_t stalls_ = 0;
  Aggregator aggregate_;
  std::int64_t closed_at_ = 0;
  bool closed_ = false;
  bool drained_ = false;
};

}  // namespace hspcprof
