// A producer that aborts on its 10th event (the smoke test expects SIGABRT, reported as the
// user's producer code).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

void hspc_produce(std::uint64_t seq, void* event, std::size_t size) {
  if (size > 0) static_cast<unsigned char*>(event)[0] = static_cast<unsigned char>(seq);
  if (seq == 9) std::abort();
}
