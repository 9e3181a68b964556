// The producer's stack offset (the paper's p4, 64 KiB aliasing between the two threads' stacks),
// applied through the runtime's own helper so the benchmark shifts the stack exactly as the
// generated header does.
#pragma once

#include <cstddef>
#include <utility>

#include "hspc/affinity.hpp"

namespace hspc_harness {

// A launcher for run<T, Launch>: runs the producer's body with its stack shifted by OffsetBytes.
template <std::size_t OffsetBytes>
struct StackOffset {
  template <class F>
  static void run(F&& f) {
    hspc::run_with_stack_offset_bytes<OffsetBytes>(std::forward<F>(f));
  }
};

}  // namespace hspc_harness
