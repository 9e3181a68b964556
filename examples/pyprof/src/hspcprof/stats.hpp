// A profile as _lsprof hands it to cProfile's snapshot code: a list of
// ((label, calls, reccalls, totaltime, inlinetime), [callee tuples]) per function, made under
// the GIL from the consumer's totals and the labels the producer kept.
#pragma once

#include "aggregate.hpp"
#include "keyset.hpp"
#include "names.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hspcprof {

// (label, callcount, reccallcount, totaltime, inlinetime): the fields of _lsprof's entries.
// The label is the one object stored for the key: cProfile's snapshot code matches an edge to
// its callee by the label's identity (id(code)), so entry and edges must share it.
inline PyObject* totals_tuple(const KeySet& labels, std::uintptr_t key, const Totals& t,
                              double scale) {
  PyObject* label = static_cast<PyObject*>(labels.find(key));
  return Py_BuildValue("(Olldd)", label, t.calls, t.recursive_calls,
                       static_cast<double>(t.total) * scale,
                       static_cast<double>(t.inline_) * scale);
}

template <class Map>
std::vector<std::uintptr_t> sorted_keys(const Map& map) {
  std::vector<std::uintptr_t> keys;
  keys.reserve(map.size());
  for (const auto& kv : map) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

inline PyObject* entry_tuple(const KeySet& labels, const Entry& e, double scale) {
  const Ref callees(PyList_New(0));
  if (!callees) return nullptr;
  for (const std::uintptr_t key : sorted_keys(e.callees)) {
    const Ref edge(totals_tuple(labels, key, e.callees.at(key), scale));
    if (!edge || PyList_Append(callees.get(), edge.get()) != 0) return nullptr;
  }
  const Ref head(totals_tuple(labels, e.key, e, scale));
  if (!head) return nullptr;
  return Py_BuildValue("(OO)", head.get(), callees.get());
}

// Entries in ascending key order, as _lsprof's rotating tree enumerates them: when two
// functions share a pstats label, the same one wins in both profilers.
inline PyObject* stats_list(const KeySet& labels, const Aggregator& profile, double scale) {
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (const std::uintptr_t key : sorted_keys(profile.entries())) {
    const Ref entry(entry_tuple(labels, profile.entries().at(key), scale));
    if (!entry || PyList_Append(list.get(), entry.get()) != 0) return nullptr;
  }
  return list.release();
}

}  // namespace hspcprof

namespace hspcprof {

// The calling-context tree, one tuple per stack, parents first:
// (parent index, label, calls, totaltime, own time); index 0 is the root, never listed, and the
// label is None for a '[truncated]' node (stacks.hpp).
inline PyObject* stacks_list(const KeySet& labels, const Aggregator& profile, double scale) {
  const auto& nodes = profile.stacks().nodes();
  Ref list(PyList_New(0));
  if (!list) return nullptr;
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const StackNode& n = nodes[i];
    void* label = n.key == StackTree::kTruncated ? nullptr : labels.find(n.key);
    const Ref node(Py_BuildValue("(IOldd)", static_cast<unsigned>(n.parent),
                                 label != nullptr ? static_cast<PyObject*>(label) : Py_None,
                                 n.calls, static_cast<double>(n.total) * scale,
                                 static_cast<double>(n.own) * scale));
    if (!node || PyList_Append(list.get(), node.get()) != 0) return nullptr;
  }
  return list.release();
}

}  // namespace hspcprof
