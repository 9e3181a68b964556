// Benchmark events of a chosen size, and the consumer-side check that they arrived exactly once,
// in order and intact. A channel that loses, repeats, reorders or tears an event is reported as a
// wrong answer by the sample, never hidden behind a fast time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace hspc_harness {

namespace detail {

// The sequence number's type: the widest unsigned integer (up to 8 bytes) whose size divides
// `Bytes`, so the event has no padding (a 1-byte event, the paper's Stage One, carries the
// sequence number modulo 256; a 12-byte event a 32-bit one).
template <std::size_t Bytes>
using SeqFor = std::conditional_t<
    (Bytes % 8 == 0), std::uint64_t,
    std::conditional_t<(Bytes % 4 == 0), std::uint32_t,
                       std::conditional_t<(Bytes % 2 == 0), std::uint16_t, std::uint8_t>>>;

template <std::size_t Bytes, std::size_t PayloadBytes = Bytes - sizeof(SeqFor<Bytes>)>
struct EventLayout {
  SeqFor<Bytes> seq;
  // First and last byte carry the low byte of seq, so a torn copy shows up in the checksum.
  std::uint8_t payload[PayloadBytes];
};

template <std::size_t Bytes>
struct EventLayout<Bytes, 0> {
  SeqFor<Bytes> seq;
};

// 0 + 1 + ... + (n-1) modulo 2^64 (halving the even factor first, so nothing is lost).
constexpr std::uint64_t triangle(std::uint64_t n) noexcept {
  return n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
}

// Sum of (i mod 2^bits) for i in [0, n), modulo 2^64: the checksum the consumer must reach.
constexpr std::uint64_t sum_truncated(std::uint64_t n, unsigned bits) noexcept {
  if (bits >= 64) return triangle(n);
  const std::uint64_t period = std::uint64_t{1} << bits;
  return (n >> bits) * triangle(period) + triangle(n & (period - 1));
}

}  // namespace detail

// An event of exactly `Bytes` bytes carrying a sequence number (truncated to the bytes available).
template <std::size_t Bytes>
struct Event : detail::EventLayout<Bytes> {
  static_assert(Bytes >= 1, "an event holds at least its sequence number");
  using Seq = detail::SeqFor<Bytes>;
  static constexpr std::size_t kBytes = Bytes;
  static constexpr bool kHasPayload = Bytes > sizeof(Seq);
};

static_assert(sizeof(Event<1>) == 1 && sizeof(Event<8>) == 8 && sizeof(Event<12>) == 12);
static_assert(sizeof(Event<24>) == 24 && std::is_trivially_copyable_v<Event<24>>);

// Stamps event number `i` into `ev` (only the seq and the two tag bytes: the rest of the payload
// keeps whatever it held, as a real producer would leave untouched fields).
template <class E>
inline void stamp(E& ev, std::uint64_t i) noexcept {
  ev.seq = static_cast<typename E::Seq>(i);
  if constexpr (E::kHasPayload) {
    const auto tag = static_cast<std::uint8_t>(i);
    ev.payload[0] = tag;
    ev.payload[sizeof(ev.payload) - 1] = tag;
  }
}

// What the consumer must have summed after `n` events numbered 0..n-1.
template <class E>
constexpr std::uint64_t expected_checksum(std::uint64_t n) noexcept {
  const std::uint64_t seqs = detail::sum_truncated(n, 8 * sizeof(typename E::Seq));
  return E::kHasPayload ? seqs + 2 * detail::sum_truncated(n, 8) : seqs;
}

// Consumer-side check: order (each seq equals the next expected number), count and checksum.
// Branch-free per event, so checking costs the same in every variant and in the baselines.
template <class E>
class Verifier {
 public:
  void check(const E& ev) noexcept {
    mismatches_ |= static_cast<std::uint64_t>(ev.seq ^ static_cast<typename E::Seq>(next_));
    checksum_ += ev.seq;
    if constexpr (E::kHasPayload) {
      checksum_ += ev.payload[0];
      checksum_ += ev.payload[sizeof(ev.payload) - 1];
    }
    ++next_;
  }
  // consumer_alone replays one pre-filled ring: each pass restarts the sequence at 0.
  void restart_sequence() noexcept { next_ = 0; }
  std::uint64_t checksum() const noexcept { return checksum_; }
  bool in_order() const noexcept { return mismatches_ == 0; }
  std::uint64_t next() const noexcept { return next_; }

 private:
  std::uint64_t next_ = 0;
  std::uint64_t mismatches_ = 0;
  std::uint64_t checksum_ = 0;
};

}  // namespace hspc_harness
