// A consumer that works alone (the smoke runs 100000 events) and crashes on its 300,000th
// event: a failure that only a longer run shows, which the run stage must name.
#include <cstddef>
#include <cstdint>

namespace {

std::uint64_t consumed = 0;

}  // namespace

void hspc_consume(const void* event, std::size_t size) {
  (void)size;
  if (++consumed == 300000) {
    volatile const int* null = nullptr;
    (void)*null;
  }
  (void)event;
}
