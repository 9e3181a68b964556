// channel_layout.hpp on its own: a padded and a packed layout instantiated.
#include "hspc/channel_layout.hpp"

#include <cstddef>
#include <cstdint>

namespace {

struct FakeWaiter {
  std::uint64_t words[3];
};

template <std::size_t PaddingBytes>
using Layout = hspc::detail::ChannelLayout<std::uint64_t, 3, 8, PaddingBytes, FakeWaiter>;

static_assert(Layout<64>::kAlign == hspc::kCacheLineBytes, "the block starts on a line");
static_assert(Layout<64>::kFirstSlot % hspc::kCacheLineBytes == 0, "padded regions own lines");
static_assert(Layout<0>::kSlotStride == Layout<0>::kSlotBytes, "packed slots are adjacent");

}  // namespace

std::size_t standalone_channel_layout() {
  return Layout<0>::kBytes + Layout<64>::kBytes + Layout<512>::kBytes +
         static_cast<std::size_t>(hspc::detail::is_power_of_two(64));
}
