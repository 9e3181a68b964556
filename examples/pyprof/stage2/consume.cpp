// app.yaml's consumer_source: hspcprof's consumer thread, its real aggregation code (aggregate.hpp)
// fed the recorded events in order, as _core.cpp's consumer feeds it the channel's events.
//
// It takes the events from the recording, not from `event`: hspc-gen's benchmark carries events
// of its own through the channel (sequence-numbered, to check that each arrives once and in
// order), not the bytes hspc_produce wrote, and its consumer-alone baseline replays a ring of
// them. So the consumer keeps its own place in the recording; the events it aggregates are
// those the producer writes, in the same order, and the channel carries 16 bytes per event
// either way.
#include <cstddef>

#include "replay.hpp"

namespace {

// Process-wide, as a profiler's totals are: one consumer (app.yaml's threads) updates them, and
// they stay warm from one sample to the next as in a long profile. Not for concurrent consumers.
struct Profile {
  hspcprof::Aggregator aggregate;
  stage2::Replay replay;
} profile;

}  // namespace

void hspc_consume(const void* /*event*/, std::size_t /*size*/) {
  profile.aggregate.apply(profile.replay.next());
}
