// The profile events of a real program (recording.inc, written by record.py), replayed for
// hspc-gen's Stage Two: app.yaml's producer_source (produce.cpp) runs at the pace the interpreter
// with hspcprof's C hook runs, and its consumer_source (consume.cpp) feeds the same events to
// hspcprof's own Aggregator. The recording is a balanced segment (every call in it returns in
// it), so a cyclic replay never leaves calls open.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../src/hspcprof/aggregate.hpp"

namespace stage2 {

namespace recorded {
#include "recording.inc"
}  // namespace recorded

constexpr std::size_t kEvents = sizeof(recorded::kEvents) / sizeof(recorded::kEvents[0]);

// The keys hspcprof's hook would push: a Python function's code object, a builtin's PyMethodDef.
// Fake addresses, distinct and 16-aligned as real ones are: code objects a few hundred bytes
// apart on the heap, PyMethodDefs 32 bytes apart in a module's static table.
constexpr std::uintptr_t kCodeObjects = 0x7f3a00140000;
constexpr std::uintptr_t kCodeObjectBytes = 0xd0;
constexpr std::uintptr_t kMethodDefs = 0x55d400a61000;
constexpr std::uintptr_t kMethodDefBytes = 0x20;

inline const void* key_of(unsigned function) noexcept {
  const std::uintptr_t address = recorded::kBuiltin[function]
                                     ? kMethodDefs + function * kMethodDefBytes
                                     : kCodeObjects + function * kCodeObjectBytes;
  return reinterpret_cast<const void*>(address);
}

// The recording, cyclically: each event with the time it was made, the clock advancing by the
// recorded gap before it.
class Replay {
 public:
  // The time the interpreter spends before the next event (its own work and the C hook's).
  std::int64_t gap_ns() const noexcept { return recorded::kEvents[at_] >> 8; }

  hspcprof::Event next() noexcept {
    const std::uint32_t word = recorded::kEvents[at_];
    if (++at_ == kEvents) at_ = 0;
    now_ns_ += word >> 8;
    const auto kind = static_cast<hspcprof::Kind>(word & 1);
    return hspcprof::make_event(now_ns_, key_of((word >> 1) & 0x7f), kind);
  }

 private:
  std::size_t at_ = 0;
  std::int64_t now_ns_ = 0;
};

}  // namespace stage2
