// The app's own per-event work (app.yaml's workload.producer_source / consumer_source), when the
// tuner compiles those files in: it defines HSPC_APP_PRODUCER / HSPC_APP_CONSUMER for the sides
// it has. The producer fills a scratch event of the benchmark's size; the consumer reads the
// event it received (the benchmark keeps its own sequence numbers for the verification).
//
// Every call goes through app_produce / app_consume, which mark the calling thread as inside the
// user's code for the fault reports (fault.hpp): one store before the call and one after. Without
// the defines none of this is compiled.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "harness/fault.hpp"

#ifdef HSPC_APP_PRODUCER
void hspc_produce(std::uint64_t seq, void* event, std::size_t size);
#endif
#ifdef HSPC_APP_CONSUMER
void hspc_consume(const void* event, std::size_t size);
#endif

namespace hspc_harness {

#ifdef HSPC_APP_PRODUCER
inline constexpr bool kAppProducer = true;
#else
inline constexpr bool kAppProducer = false;
#endif
#ifdef HSPC_APP_CONSUMER
inline constexpr bool kAppConsumer = true;
#else
inline constexpr bool kAppConsumer = false;
#endif

// Claims this thread's fault slot now (a side's constructor, untimed) so that no event pays for
// it; nothing without user code.
inline void prepare_app_thread() noexcept {
  if constexpr (kAppProducer || kAppConsumer) (void)fault::this_thread_slot();
}

// A call into the user's code, between the two marks. If the call never returns (a crash, an
// exception through a noexcept caller, exit()), the mark stays set for whoever reports it.
#ifdef HSPC_APP_PRODUCER
inline void app_produce(std::uint64_t seq, void* event, std::size_t size) {
  fault::Slot& slot = fault::this_thread_slot();
  slot.code.store(AppCode::producer, std::memory_order_relaxed);
  ::hspc_produce(seq, event, size);
  slot.code.store(AppCode::none, std::memory_order_relaxed);
}
#endif
#ifdef HSPC_APP_CONSUMER
inline void app_consume(const void* event, std::size_t size) {
  fault::Slot& slot = fault::this_thread_slot();
  slot.code.store(AppCode::consumer, std::memory_order_relaxed);
  ::hspc_consume(event, size);
  slot.code.store(AppCode::none, std::memory_order_relaxed);
}
#endif

}  // namespace hspc_harness
