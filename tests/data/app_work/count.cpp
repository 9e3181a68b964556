// The app's own per-event work, as app.yaml's producer_source and consumer_source name it: here
// it only counts its calls and reports them at exit, so a test can see the tuner compiled it in.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace {

std::atomic<std::uint64_t> produced{0};
std::atomic<std::uint64_t> consumed{0};

struct Report {
  ~Report() {
    std::fprintf(stderr, "app_work: produced=%llu consumed=%llu\n",
                 static_cast<unsigned long long>(produced.load()),
                 static_cast<unsigned long long>(consumed.load()));
  }
} report;

}  // namespace

void hspc_produce(std::uint64_t seq, void* event, std::size_t size) {
  if (size > 0) static_cast<unsigned char*>(event)[0] = static_cast<unsigned char>(seq);
  produced.fetch_add(1, std::memory_order_relaxed);
}

void hspc_consume(const void* event, std::size_t size) {
  (void)event;
  (void)size;
  consumed.fetch_add(1, std::memory_order_relaxed);
}
