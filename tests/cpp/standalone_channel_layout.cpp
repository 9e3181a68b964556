// channel_layout.hpp on its own: a padded and a packed layout instantiated, and one with a
// latency bound.
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

// A latency bound's clock rides in the producer's cursor; without one the cursor is as before.
using Bounded = hspc::detail::ChannelLayout<std::uint64_t, 3, 8, 64, FakeWaiter, 2000000>;
static_assert(sizeof(Bounded::Producer) > sizeof(Layout<64>::Producer), "the clock is stored");

}  // namespace

std::size_t standalone_channel_layout() {
  return Layout<0>::kBytes + Layout<64>::kBytes + Layout<512>::kBytes + Bounded::kBytes +
         static_cast<std::size_t>(hspc::detail::is_power_of_two(64));
}
