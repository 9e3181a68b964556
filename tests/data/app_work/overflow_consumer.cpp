// A consumer that overflows its stack (unbounded recursion) on its first event: the smoke test
// expects the SIGSEGV to be reported as the user's consumer code all the same (the handler runs
// on a signal stack of its own).
#include <cstddef>
#include <cstdint>

namespace {

// Never reached: volatile, so the compiler cannot see the recursion has no end.
volatile std::uint64_t bottom = ~std::uint64_t{0};

// Not a tail call: the frame's array is used after the recursive call returns.
std::uint64_t descend(std::uint64_t depth) {
  if (depth == bottom) return 0;
  volatile unsigned char frame[256];
  frame[0] = static_cast<unsigned char>(depth);
  const std::uint64_t below = descend(depth + 1);
  return below + frame[0];
}

}  // namespace

void hspc_consume(const void* event, std::size_t size) {
  (void)event;
  (void)size;
  (void)descend(0);
}
