// A consumer that crashes: it writes through a null pointer on its 1000th event (the smoke test
// expects SIGSEGV, reported as the user's consumer code).
#include <cstddef>
#include <cstdint>

namespace {

std::uint64_t consumed = 0;
int* volatile nowhere = nullptr;  // volatile: the compiler cannot see it is null and trap early

}  // namespace

void hspc_consume(const void* event, std::size_t size) {
  (void)event;
  (void)size;
  if (++consumed == 1000) *nowhere = 1;
}
