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
template <class Ch, std::size_t kRun = 256>
class RunsOf {
 public:
  using Event = typename detail::ChannelEvent<Ch>::type;
  static constexpr bool kBulk = true;
  static constexpr std::size_t kCapacityBytes = detail::ChannelCapacity<Ch>::value;

  void begin(std::uint64_t /*events*/) noexcept {}  // the channel ends by close()
  void push(const Event& ev) {
    runs_->in[runs_->fill++] = ev;
    if (runs_->fill == kRun) hand_over();
  }
  void flush() {
    hand_over();
    ch_->flush();
  }
  void close() {
    hand_over();
    ch_->close();
  }
  template <class F>
  std::size_t consume(F&& f) {
    const std::size_t n = ch_->pop(runs_->out, kRun);
    if (n != 0) f(static_cast<const Event*>(runs_->out), n);
    return n;
  }
  bool pop(Event& ev) { return ch_->pop(ev); }

 private:
  void hand_over() {
    if (runs_->fill != 0) ch_->push(runs_->in, runs_->fill);
    runs_->fill = 0;
  }
  // Each side's run on its own lines (the producer's fill with its events, away from the
  // consumer's copy). Zeroed, so pre-faulted before the clock starts, as the channel's own
  // block is: at 4 KiB events the two runs are 2 MiB, whose first touch would be timed.
  struct Runs {
    alignas(128) Event in[kRun]{};
    std::size_t fill = 0;
    alignas(128) Event out[kRun]{};
  };
  std::unique_ptr<Ch> ch_ = std::make_unique<Ch>();
  std::unique_ptr<Runs> runs_ = std::make_unique<Runs>();
};

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
