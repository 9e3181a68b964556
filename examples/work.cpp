// Example per-event work for app.yaml's workload.producer_source and workload.consumer_source.
//
// hspc-gen compiles the file(s) named there with its benchmark harness (C++17) and calls
//   void hspc_produce(std::uint64_t seq, void* event, std::size_t size);
// on the producer thread once per event, seq = 0, 1, 2, ..., to fill the event in place, and
//   void hspc_consume(const void* event, std::size_t size);
// on the consumer thread once per event, to process it. `size` is event.size; `event` is aligned
// to event.align. One file may define both, or each side may have its own.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

// Per thread, so that several consumers never share (and race on) one cache line.
thread_local std::uint64_t hspc_example_checksum = 0;

void hspc_produce(std::uint64_t seq, void* event, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(event);
  for (std::size_t offset = 0; offset < size; offset += sizeof seq) {
    std::memcpy(bytes + offset, &seq, std::min(sizeof seq, size - offset));
  }
}

void hspc_consume(const void* event, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(event);
  std::uint64_t sum = hspc_example_checksum;
  for (std::size_t i = 0; i < size; ++i) {
    sum = sum * 31 + bytes[i];
  }
  // Kept in a variable with external linkage, so the compiler cannot drop the work as unused.
  hspc_example_checksum = sum;
}
