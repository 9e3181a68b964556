// Producer work for tests/data/targets/full/app.yaml: stamps each event with its sequence number.
#include <cstddef>
#include <cstdint>
#include <cstring>

void hspc_produce(std::uint64_t seq, void* event, std::size_t size) {
  std::memset(event, 0, size);
  std::memcpy(event, &seq, size < sizeof seq ? size : sizeof seq);
}
