// The consumer's half of the profiler: what CPython's _lsprof computes in its hook, computed here
// from the event stream instead, on the consumer thread. It touches no Python object: a function
// is only its key (a code object's or a PyMethodDef's address), resolved to a name later, under
// the GIL. The arithmetic follows _lsprof (CPython 3.11, Modules/_lsprof.c) step by step, since
// the counts must equal cProfile's exactly, quirks included. Beside the functions it keeps the
// calling-context tree (stacks.hpp): the same calls, charged to the stack they ran on.
#pragma once

#include "stacks.hpp"

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace hspcprof {

// A function's identity and what happened to it: the kind rides in the key's low bit, free
// since code objects and PyMethodDefs are at least 8-byte aligned. 16 bytes, as app.yaml says.
struct Event {
  std::int64_t time;
  std::uintptr_t word;
};
static_assert(sizeof(Event) == 16, "app.yaml declares 16-byte events");

enum Kind : std::uintptr_t { kEnter = 0, kLeave = 1 };

constexpr Event make_event(std::int64_t time, const void* key, Kind kind) noexcept {
  return Event{time, reinterpret_cast<std::uintptr_t>(key) | kind};
}

// _lsprof's ProfilerSubEntry: one function as called from one caller. Times in clock ticks.
struct Totals {
  std::int64_t total = 0;    // tt: from call to return, counted at the outermost level only
  std::int64_t inline_ = 0;  // it: total less the callees' totals
  long calls = 0;
  long recursive_calls = 0;
  long depth = 0;  // how many calls are open right now
};

// _lsprof's ProfilerEntry: a function, with its callees by key (the caller -> callee edges).
struct Entry : Totals {
  std::uintptr_t key = 0;
  std::unordered_map<std::uintptr_t, Totals> callees;
};

class Aggregator {
 public:
  explicit Aggregator(std::size_t stack_nodes = StackTree::kDefaultNodes) : stacks_(stack_nodes) {}

  void apply(const Event& e) {
    const std::uintptr_t key = e.word & ~std::uintptr_t{1};
    if ((e.word & 1) == kEnter) {
      enter(key, e.time);
    } else {
      leave(key, e.time);
    }
  }

  void apply(const Event* events, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) apply(events[i]);
  }

  // _lsprof's flush_unmatched: the calls still open when the profiler is disabled end now.
  void close_open_calls(std::int64_t now) {
    while (!stack_.empty()) stop(now, *stack_.back().entry);
  }

  void clear() {
    stack_.clear();
    entries_.clear();
    stacks_.clear();
  }

  // Adds another thread's finished profile, as pstats.Stats.add sums one profile into another.
  void absorb(const Aggregator& other) {
    for (const auto& [key, theirs] : other.entries_) {
      Entry& mine = entries_[key];
      mine.key = key;
      add(mine, theirs);
      for (const auto& [callee, edge] : theirs.callees) add(mine.callees[callee], edge);
    }
    stacks_.absorb(other.stacks_);
  }

  bool idle() const noexcept { return stack_.empty(); }
  const std::unordered_map<std::uintptr_t, Entry>& entries() const noexcept { return entries_; }
  const StackTree& stacks() const noexcept { return stacks_; }

 private:
  struct Context {
    Entry* entry;
    Totals* edge;  // the caller's edge to entry, null at the top of the stack
    std::int64_t start;
    std::int64_t callees_total;  // subt
    std::uint32_t node;          // the stack it runs on, in stacks_
  };

  // initContext: references into unordered_map nodes stay valid as the maps grow.
  void enter(std::uintptr_t key, std::int64_t now) {
    Entry& entry = entries_[key];
    entry.key = key;
    ++entry.depth;
    Totals* edge = nullptr;
    std::uint32_t parent = StackTree::kRoot;
    if (!stack_.empty()) {
      edge = &stack_.back().entry->callees[key];
      ++edge->depth;
      parent = stack_.back().node;
    }
    stack_.push_back(Context{&entry, edge, now, 0, stacks_.enter(parent, key)});
  }

  // ptrace_leave_call: a return with no open call is ignored; a return naming a function with no
  // entry only drops the open call; otherwise the returning function is charged, even if it is
  // not the one the open call named (as _lsprof does).
  void leave(std::uintptr_t key, std::int64_t now) {
    if (stack_.empty()) return;
    Context& top = stack_.back();
    if (top.entry->key == key) {
      stop(now, *top.entry);
      return;
    }
    const auto found = entries_.find(key);
    if (found == entries_.end()) {
      stacks_.drop(top.node);
      stack_.pop_back();
    } else {
      stop(now, found->second);
    }
  }

  // Stop: the open call at the top of the stack ends, charged to entry.
  void stop(std::int64_t now, Entry& entry) {
    const Context top = stack_.back();
    stack_.pop_back();
    const std::int64_t total = now - top.start;
    const std::int64_t inline_ = total - top.callees_total;
    Totals* edge = top.edge;
    if (!stack_.empty()) {
      stack_.back().callees_total += total;
      if (&entry != top.entry) edge = find_edge(*stack_.back().entry, entry.key);
    }
    charge(entry, total, inline_);
    if (edge != nullptr) charge(*edge, total, inline_);
    stacks_.leave(top.node, total, inline_);
  }

  static Totals* find_edge(Entry& caller, std::uintptr_t key) {
    const auto found = caller.callees.find(key);
    return found == caller.callees.end() ? nullptr : &found->second;
  }

  static void add(Totals& into, const Totals& t) {
    into.total += t.total;
    into.inline_ += t.inline_;
    into.calls += t.calls;
    into.recursive_calls += t.recursive_calls;
  }

  static void charge(Totals& t, std::int64_t total, std::int64_t inline_) {
    if (--t.depth == 0) {
      t.total += total;
    } else {
      ++t.recursive_calls;
    }
    t.inline_ += inline_;
    ++t.calls;
  }

  std::unordered_map<std::uintptr_t, Entry> entries_;
  std::vector<Context> stack_;
  StackTree stacks_;
};

}  // namespace hspcprof
