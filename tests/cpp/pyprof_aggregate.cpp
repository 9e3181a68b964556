// hspcprof's consumer (examples/pyprof/src/hspcprof/aggregate.hpp) on hand-made event streams,
// where each total can be worked out by hand from _lsprof's rules; and the producer's key set
// through its growth. The Python tests compare with cProfile on real programs; these pin the
// rules cProfile's output cannot isolate (mismatched returns) and run under the sanitizers.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "aggregate.hpp"
#include "keyset.hpp"
#include "test_support.hpp"

namespace {

using hspcprof::Aggregator;
using hspcprof::kEnter;
using hspcprof::kLeave;
using hspcprof::make_event;

alignas(16) const char kFunctions[4][16] = {};
const void* const f = kFunctions[0];
const void* const g = kFunctions[1];
const void* const h = kFunctions[2];
const void* const never_called = kFunctions[3];

std::uintptr_t key(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

const hspcprof::Entry& entry(const Aggregator& a, const void* p) {
  const auto found = a.entries().find(key(p));
  HSPC_CHECK(found != a.entries().end(), "no entry");
  return found->second;
}

const hspcprof::Totals& edge(const Aggregator& a, const void* caller, const void* callee) {
  const auto& callees = entry(a, caller).callees;
  const auto found = callees.find(key(callee));
  HSPC_CHECK(found != callees.end(), "no edge");
  return found->second;
}

// f(0) -> f(10) -> f(20 .. 25) returns, (.. 40), (.. 100): the outermost call alone adds to the
// total, the inner two count as recursive, and the edge f -> f is itself recursive once.
void direct_recursion() {
  Aggregator a;
  a.apply(make_event(5, g, kLeave));  // a return with no open call: ignored
  for (std::int64_t t : {0, 10, 20}) a.apply(make_event(t, f, kEnter));
  for (std::int64_t t : {25, 40, 100}) a.apply(make_event(t, f, kLeave));
  HSPC_CHECK(a.idle(), "calls left open");
  HSPC_CHECK(a.entries().size() == 1, "%zu entries", a.entries().size());
  const auto& e = entry(a, f);
  HSPC_CHECK(e.calls == 3 && e.recursive_calls == 2, "%ld/%ld", e.calls, e.recursive_calls);
  HSPC_CHECK(e.total == 100 && e.inline_ == 100, "tt %lld it %lld", (long long)e.total,
             (long long)e.inline_);
  const auto& self = edge(a, f, f);
  HSPC_CHECK(self.calls == 2 && self.recursive_calls == 1, "%ld/%ld", self.calls,
             self.recursive_calls);
  HSPC_CHECK(self.total == 30, "edge tt %lld", (long long)self.total);
}

// f calls g, which returns as h (h was seen before): h is charged, as _lsprof does, though it
// was not open: its depth goes below zero, so the call counts as recursive and adds no total;
// g's call stays open in g's depth. A return naming a function never entered only drops the
// open call, charging nothing.
void mismatched_returns() {
  Aggregator a;
  a.apply(make_event(0, h, kEnter));
  a.apply(make_event(1, h, kLeave));
  a.apply(make_event(10, f, kEnter));
  a.apply(make_event(20, g, kEnter));
  a.apply(make_event(30, h, kLeave));
  a.apply(make_event(40, g, kEnter));
  a.apply(make_event(45, never_called, kLeave));
  a.apply(make_event(50, f, kLeave));
  const auto& hh = entry(a, h);
  HSPC_CHECK(hh.calls == 2 && hh.recursive_calls == 1 && hh.depth == -1, "h %ld/%ld depth %ld",
             hh.calls, hh.recursive_calls, hh.depth);
  HSPC_CHECK(hh.total == 1 && hh.inline_ == 1 + 10, "h tt %lld it %lld", (long long)hh.total,
             (long long)hh.inline_);
  HSPC_CHECK(entry(a, g).calls == 0 && entry(a, g).depth == 2, "g charged");
  const auto& ff = entry(a, f);
  // f's callees: the 10 ticks charged to h; the dropped call subtracts nothing.
  HSPC_CHECK(ff.total == 40 && ff.inline_ == 30, "f tt %lld it %lld", (long long)ff.total,
             (long long)ff.inline_);
  HSPC_CHECK(entry(a, f).callees.count(key(h)) == 0, "an edge f -> h was made");
}

// Calls open when the profiler is disabled end then, innermost first.
void open_calls_close_at_disable() {
  Aggregator a;
  a.apply(make_event(0, f, kEnter));
  a.apply(make_event(10, g, kEnter));
  a.close_open_calls(70);
  HSPC_CHECK(a.idle(), "calls left open");
  HSPC_CHECK(entry(a, g).total == 60 && entry(a, f).total == 70, "totals");
  HSPC_CHECK(entry(a, f).inline_ == 10 && edge(a, f, g).calls == 1, "f's own time, edge");
}

void keyset_grows() {
  hspcprof::KeySet set;
  std::vector<std::uint64_t> values(5000);
  for (std::size_t i = 0; i < values.size(); ++i) {
    HSPC_CHECK(set.insert(0x1000 + 16 * i, &values[i]), "new key %zu refused", i);
  }
  HSPC_CHECK(!set.insert(0x1000, nullptr), "a key stored twice");
  HSPC_CHECK(set.size() == values.size(), "%zu keys", set.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    HSPC_CHECK(set.find(0x1000 + 16 * i) == &values[i], "key %zu lost", i);
  }
  HSPC_CHECK(set.find(0x8) == nullptr, "a key never stored found");
  std::size_t seen = 0;
  set.for_each_value([&](void*) { ++seen; });
  HSPC_CHECK(seen == values.size(), "%zu values", seen);
}

}  // namespace

int main() {
  direct_recursion();
  mismatched_returns();
  open_calls_close_at_disable();
  keyset_grows();
  std::puts("pyprof_aggregate: ok");
  return 0;
}
