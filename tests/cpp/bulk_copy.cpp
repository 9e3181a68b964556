// The channel's bulk calls as a caller writes them, with a constant run length: check_bulk_copy.py
// compiles this to assembly and reads how the runs are copied. (No anonymous namespace: functions
// of its types would have internal linkage, and unused ones no code at all.)
#include <cstddef>
#include <cstdint>

#include "hspc/channel.hpp"

struct BulkCopyEvent {
  std::uint64_t seq;
};

using BulkCopyChannel = hspc::BasicChannel<BulkCopyEvent, hspc::Primitive::futex, 16, 131072, 128>;

std::size_t take_run(BulkCopyChannel& ch, BulkCopyEvent* out) { return ch.pop(out, 256); }
void give_run(BulkCopyChannel& ch, const BulkCopyEvent* in) { ch.push(in, 256); }
