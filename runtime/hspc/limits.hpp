#pragma once

#include <cstddef>

namespace hspc {

// The runtime's named sizes, and the parameter limits BasicChannel enforces at compile time.
// The tuner's table of limits (generator/model: LIMITS) holds the same numbers; a test compiles
// this header and compares, so every point the tuner may choose compiles.

// The cache line the layout pads to: 64 bytes on every target we build for. Not
// std::hardware_destructive_interference_size: g++ warns on its use in a header
// (-Winterference-size: it varies with -mtune/-mcpu), and clang 14 does not provide it.
inline constexpr std::size_t kCacheLineBytes = 64;

// Buffers: the slots of a channel's ring.
inline constexpr std::size_t kMinBuffers = 2;
inline constexpr std::size_t kMaxBuffers = 64;

// BufferBytes: the bytes of events one slot holds.
inline constexpr std::size_t kMinBufferBytes = 64;
inline constexpr std::size_t kMaxBufferBytes = std::size_t{16} << 20;  // 16 MiB

// PaddingBytes: 0, or a power of two up to this.
inline constexpr std::size_t kMaxPaddingBytes = 512;

// run_with_stack_offset_bytes: the paper's widest aliasing window (64 KiB); a larger shift only
// risks overflowing the stack.
inline constexpr std::size_t kMaxStackOffsetBytes = std::size_t{64} << 10;  // 64 KiB

// SpinNs: how long a wait spins before it yields or sleeps. A millisecond is hundreds of wake-ups
// on any host we know: a waiter still spinning then should have slept long before.
inline constexpr std::size_t kMaxSpinNs = 1000000;  // 1 ms

// PrefetchBytes: how much of a slot the producer (for writing) and the consumer (for reading)
// prefetch on taking it: 0, or a power of two up to this (a code-shape variant).
inline constexpr std::size_t kMaxPrefetchBytes = std::size_t{64} << 10;  // 64 KiB

// HugePages: a block at least this large is aligned to it and advised onto transparent huge pages
// (a code-shape variant; a smaller block, or a kernel without them, keeps its small pages).
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;  // 2 MiB

}  // namespace hspc
