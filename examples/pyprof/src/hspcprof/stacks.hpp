// The calling-context tree: every distinct stack the consumer has seen (the path of keys from the
// thread's first open call down), with the exact own time, total time and call count of the calls
// made on that path. The Aggregator grows it as it replays the events, on the consumer thread;
// it touches no Python object either.
//
// Memory is bounded. A stack deeper than kMaxDepth frames, and any new stack once the tree holds
// its node limit, is folded into a '[truncated]' child of the deepest node that was kept; every
// call below a '[truncated]' node folds into it too. Its own time is the own time of all the
// calls folded in, and its total counts at its outermost open call only (as cProfile counts a
// recursive function's), so the tree's own times still sum to the profile's own times. Each kept
// node has at most one such child: a tree never holds more than twice its node limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace hspcprof {

struct StackNode {
  std::uintptr_t key = 0;  // the function: kTruncated for a folded subtree, 0 at the root
  std::uint32_t parent = 0;
  std::uint32_t level = 0;  // frames from the root: the root is 0
  std::int64_t total = 0;   // ticks, at the outermost open call of the node only
  std::int64_t own = 0;     // ticks: total less the callees' totals
  long calls = 0;
  long depth = 0;  // calls open on this node now (more than one only under '[truncated]')
  std::uintptr_t last_key = 0;   // the callee entered last from here, and its node: a loop
  std::uint32_t last_child = 0;  // calling one function again and again skips the hash
};

class StackTree {
 public:
  static constexpr std::uint32_t kRoot = 0;
  // An odd key: events' keys are addresses with the low bit cleared (aggregate.hpp).
  static constexpr std::uintptr_t kTruncated = 1;
  static constexpr std::uint32_t kMaxDepth = 512;
  static constexpr std::size_t kDefaultNodes = std::size_t{1} << 18;

  explicit StackTree(std::size_t max_nodes = kDefaultNodes) : max_nodes_(max_nodes) { clear(); }

  // A call of `key` made from the call open on `parent`: its node, now open once more. A tree
  // bound to no nodes keeps nothing: every call is the root's, never charged.
  std::uint32_t enter(std::uint32_t parent, std::uintptr_t key) {
    if (max_nodes_ == 0) return kRoot;
    const std::uint32_t node = child(parent, key);
    ++nodes_[node].depth;
    return node;
  }

  // The call open on `node` ended: charged as _lsprof charges a function (aggregate.hpp).
  void leave(std::uint32_t node, std::int64_t total, std::int64_t own) {
    if (node == kRoot) return;
    StackNode& n = nodes_[node];
    if (--n.depth == 0) n.total += total;
    n.own += own;
    ++n.calls;
  }

  // The call open on `node` is dropped uncharged (a return for a function never seen).
  void drop(std::uint32_t node) {
    if (node != kRoot) --nodes_[node].depth;
  }

  void clear() {
    nodes_.assign(1, StackNode{});
    children_.clear();
  }

  // Adds another thread's tree, path by path, as Aggregator::absorb adds its functions. A subtree
  // folded here into the '[truncated]' node its parent folded into adds its own time only: its
  // total lies inside the parent's already.
  void absorb(const StackTree& other) {
    if (max_nodes_ == 0) return;
    std::vector<std::uint32_t> mine(other.nodes_.size(), kRoot);
    for (std::size_t i = 1; i < other.nodes_.size(); ++i) {
      const StackNode& theirs = other.nodes_[i];
      const std::uint32_t parent = mine[theirs.parent];
      mine[i] = child(parent, theirs.key);
      StackNode& n = nodes_[mine[i]];
      if (mine[i] != parent) n.total += theirs.total;
      n.own += theirs.own;
      n.calls += theirs.calls;
    }
  }

  const std::vector<StackNode>& nodes() const noexcept { return nodes_; }
  std::size_t max_nodes() const noexcept { return max_nodes_; }

 private:
  struct Edge {
    std::uint32_t parent;
    std::uintptr_t key;
    bool operator==(const Edge& o) const noexcept { return parent == o.parent && key == o.key; }
  };
  struct EdgeHash {
    std::size_t operator()(const Edge& e) const noexcept {
      return static_cast<std::size_t>(
          (e.key ^ (std::uint64_t{e.parent} << 3)) * 0x9E3779B97F4A7C15ull >> 16);
    }
  };

  std::uint32_t child(std::uint32_t parent, std::uintptr_t key) {
    StackNode& from = nodes_[parent];
    if (from.key == kTruncated) return parent;
    if (from.last_key == key) return from.last_child;
    const auto found = children_.find(Edge{parent, key});
    if (found != children_.end()) {
      from.last_key = key;
      from.last_child = found->second;
      return found->second;
    }
    const bool full = nodes_.size() >= max_nodes_ || nodes_[parent].level >= kMaxDepth;
    if (full && key != kTruncated) return child(parent, kTruncated);
    const auto node = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(StackNode{key, parent, nodes_[parent].level + 1});
    children_.emplace(Edge{parent, key}, node);
    nodes_[parent].last_key = key;  // not `from`: push_back may have moved it
    nodes_[parent].last_child = node;
    return node;
  }

  std::size_t max_nodes_;
  std::vector<StackNode> nodes_;  // a parent always before its children
  std::unordered_map<Edge, std::uint32_t, EdgeHash> children_;
};

}  // namespace hspcprof
