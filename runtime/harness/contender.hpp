// Contenders: the one interface through which the harness drives a channel variant or a peer
// queue, so every contender is timed by exactly the same code.
//
// A contender type A provides
//   using Event = ...;                        the event type (hspc_harness::Event<N>)
//   static constexpr bool kBulk;              consumer drains with consume() (true) or pop()
//   static constexpr std::size_t kCapacityBytes;  buffer memory, for the `achievable` baseline
//   A();                                      builds (and pre-faults) the queue: never timed
//   void begin(std::uint64_t events);         events of this sample (queues without close count)
//   void push(const Event&); void flush(); void close();           producer side, blocking
//   template <class F> std::size_t consume(F&& f);  consumer: f(const Event*, n) for the next
//                                             run of events, returns n, 0 at the end of stream
//   bool pop(Event&);                         consumer: one event, false at the end of stream
//   class Producer (optional, public)         the producer's side for one sample, built from the
//                                             contender on the producer's stack with the same
//                                             push/flush/close (producer_of): a contender that
//                                             gathers runs keeps their cursor there
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

namespace hspc_harness {

namespace detail {

template <class C, class T>
T push_argument(void (C::*)(const T&));
template <class C, class T>
T push_argument(void (C::*)(const T&) noexcept);  // noexcept is part of the type in C++17

// The channel's event type, from its push(const T&) (the runtime's BasicChannel does not have to
// export a value_type for the harness to work).
template <class Ch, class = void>
struct ChannelEvent {
  using type = decltype(push_argument(&Ch::push));
};
template <class Ch>
struct ChannelEvent<Ch, std::void_t<typename Ch::value_type>> {
  using type = typename Ch::value_type;
};

// Total buffer bytes if the channel exports its shape (kBuffers, kBufferBytes), else 0: the
// `achievable` baseline then falls back to the plan's ring_bytes.
template <class Ch, class = void>
struct ChannelCapacity : std::integral_constant<std::size_t, 0> {};
template <class Ch>
struct ChannelCapacity<Ch, std::void_t<decltype(Ch::kBuffers), decltype(Ch::kBufferBytes)>>
    : std::integral_constant<std::size_t, Ch::kBuffers * Ch::kBufferBytes> {};

}  // namespace detail

// An hspc channel (runtime BasicChannel or a generated header's Channel<T>), drained in bulk with
// consume(): the paper's per-buffer hand-off, the way a batching consumer uses it.
template <class Ch>
class ChannelContender {
 public:
  using Event = typename detail::ChannelEvent<Ch>::type;
  static constexpr bool kBulk = true;
  static constexpr std::size_t kCapacityBytes = detail::ChannelCapacity<Ch>::value;

  void begin(std::uint64_t /*events*/) noexcept {}  // the channel ends by close()
  void push(const Event& ev) { ch_->push(ev); }
  void flush() { ch_->flush(); }
  void close() { ch_->close(); }
  template <class F>
  std::size_t consume(F&& f) {
    return ch_->consume(std::forward<F>(f));
  }
  bool pop(Event& ev) { return ch_->pop(ev); }

 private:
  // On the heap: the channel is neither copyable nor movable and may be large.
  std::unique_ptr<Ch> ch_ = std::make_unique<Ch>();
};

// The same channel drained one event at a time with pop().
template <class Ch>
class PerEvent : public ChannelContender<Ch> {
 public:
  static constexpr bool kBulk = false;
};

// The same channel moved in runs: the producer gathers kRun events privately and hands them over
// with push(ptr, n), the consumer copies out up to kRun with pop(ptr, max) (the peers' bulk calls).
// A sample's producer gathers through a Producer of its own (producer_of, below).
template <class Ch, std::size_t kRun = 256>
class RunsOf {
 public:
  using Event = typename detail::ChannelEvent<Ch>::type;
  static constexpr bool kBulk = true;
  static constexpr std::size_t kCapacityBytes = detail::ChannelCapacity<Ch>::value;

  // The producer's side for one sample: the run's cursor is its own, on the producer's stack.
  class Producer {
   public:
    explicit Producer(RunsOf& q) noexcept : ch_(*q.ch_), run_(q.runs_->in), next_(run_) {}
    void push(const Event& ev) {
      *next_++ = ev;
      if (next_ == run_ + kRun) hand_over();
    }
    void flush() {
      hand_over();
      ch_.flush();
    }
    void close() {
      hand_over();
      ch_.close();
    }

   private:
    void hand_over() {
      if (next_ != run_) ch_.push(run_, static_cast<std::size_t>(next_ - run_));
      next_ = run_;
    }
    Ch& ch_;
    Event* run_;
    Event* next_;
  };

  void begin(std::uint64_t /*events*/) noexcept {}  // the channel ends by close()
  void push(const Event& ev) { own_.push(ev); }
  void flush() { own_.flush(); }
  void close() { own_.close(); }
  template <class F>
  std::size_t consume(F&& f) {
    const std::size_t n = ch_->pop(runs_->out, kRun);
    if (n != 0) f(static_cast<const Event*>(runs_->out), n);
    return n;
  }
  bool pop(Event& ev) { return ch_->pop(ev); }

 private:
  // Each side's run on its own lines. Zeroed, so pre-faulted before the clock starts, as the
  // channel's own block is: at 4 KiB events the two runs are 2 MiB, whose first touch would be
  // timed.
  struct Runs {
    alignas(128) Event in[kRun]{};
    alignas(128) Event out[kRun]{};
  };
  std::unique_ptr<Ch> ch_ = std::make_unique<Ch>();
  std::unique_ptr<Runs> runs_ = std::make_unique<Runs>();
  alignas(128) Producer own_{*this};  // push, flush, close on the contender: its own lines
};

// The producer's hand on a contender for one sample: the contender itself, or, where it defines a
// Producer (one that gathers runs), that, made on the producer thread's stack. There the run's
// cursor is a local the compiler keeps in a register, as in a user's loop; kept in the contender,
// it is loaded and stored again every event (an event's store may alias it, and the hand-off's
// call keeps it in memory), and a CPU that forwards a store to a load in several cycles pays that
// every event: on the 16-CPU Xeon guest runs went at 0.67-0.87 of push + consume so, 1.15-1.28
// with a local cursor (benchmarks/results/many-core-2026-11-27/bulk).
template <class A, class = void>
struct ProducerOf {
  static A& make(A& q) noexcept { return q; }
};
template <class A>
struct ProducerOf<A, std::void_t<typename A::Producer>> {
  static typename A::Producer make(A& q) noexcept { return typename A::Producer(q); }
};
template <class A>
decltype(auto) producer_of(A& q) noexcept {
  return ProducerOf<A>::make(q);
}

// What the harness drives for a type named in a variant table: contenders as they are, a bare
// channel type as a bulk ChannelContender.
template <class T, class = void>
struct AsContender {
  using type = ChannelContender<T>;
};
template <class T>
struct AsContender<T, std::void_t<decltype(T::kBulk)>> {
  using type = T;
};
template <class T>
using AsContenderT = typename AsContender<T>::type;

}  // namespace hspc_harness
