// A consumer defined with the wrong signature (a non-const event pointer): the smoke program must
// fail to link, and the linker names the signature it expected.
#include <cstddef>

void hspc_consume(void* event, std::size_t size) {
  (void)event;
  (void)size;
}
