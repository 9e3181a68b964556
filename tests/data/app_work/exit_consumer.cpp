// A consumer that ends the process: exit(3) on its first event (the smoke test expects status 3
// and a line naming the user's consumer code).
#include <cstddef>
#include <cstdlib>

void hspc_consume(const void* event, std::size_t size) {
  (void)event;
  (void)size;
  std::exit(3);
}
