// limits.hpp on its own: every named size is a usable constant.
#include "hspc/limits.hpp"

#include <cstddef>

std::size_t standalone_limits() {
  static_assert(hspc::kMinBuffers <= hspc::kMaxBuffers, "buffers range");
  static_assert(hspc::kMinBufferBytes <= hspc::kMaxBufferBytes, "buffer bytes range");
  return hspc::kCacheLineBytes + hspc::kMinBuffers + hspc::kMaxBuffers + hspc::kMinBufferBytes +
         hspc::kMaxBufferBytes + hspc::kMaxPaddingBytes + hspc::kMaxStackOffsetBytes;
}
