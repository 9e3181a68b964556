"""`--effort estimate`: every channel parameter from heuristics on the host, without measuring.

This is also the tuner's starting point and its fallback (FFTW's ESTIMATE planner): it must
always give a correct, reasonable channel, quickly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hspc_gen.host.machine import Host
from hspc_gen.model import (
    LIMITS,
    SEARCH_MIN_BUFFER_BYTES,
    ChannelParams,
    PinThreads,
    Primitive,
    buffer_floor,
    floor_power_of_two,
)
from hspc_gen.model.threads import ThreadAdvice

# Blocking first: on a small or shared host the peer is often not running, and spinning then
# burns the CPU the peer needs (a pause-spin hand-off on one CPU took ~8 ms, a futex one ~2 µs).
BLOCKING_PREFERENCE = (
    Primitive.futex,
    Primitive.hybrid,
    Primitive.condvar,
    Primitive.mutex,
    Primitive.backoff_spin,
    Primitive.pause_spin,
    Primitive.spinlock,
)
# With CPUs to spare, a short calibrated spin before blocking wins latency and costs little.
SPARE_CPU_PREFERENCE = (Primitive.hybrid, *(p for p in BLOCKING_PREFERENCE if p != "hybrid"))
SPARE_CPUS_FOR_SPINNING = 4
DEFAULT_BUFFERS = 4
MAX_ESTIMATED_BUFFER_BYTES = 1 << 20


def padding_bytes(host: Host) -> int:
    """Two lines on x86 (the adjacent-line prefetcher pulls pairs of lines), else one line."""
    line = host.cache_line_bytes
    x86 = any(vendor in host.model_name for vendor in ("Intel", "AMD", "Xeon", "EPYC"))
    return min(LIMITS["padding_bytes"].high, 2 * line if x86 else line)


@dataclass(frozen=True)
class MeasuredPairs:
    """What an earlier run measured of the host's CPU pairs, which the estimate believes before
    sysfs (a guest's sysfs may hide SMT siblings; a cpuset may leave one thread per core)."""

    smt: bool  # some lasting class of pairs measures as two hardware threads of one core
    near_pair: tuple[int, int] | None  # the fastest lasting class of two distinct cores


def stack_offset_bytes(host: Host, measured: MeasuredPairs | None = None) -> int:
    """SMT siblings share an L1 indexed by the low address bits: move the producer's stack off
    the consumer's by a few lines (the paper's p4); elsewhere the aliasing does not bite."""
    smt = host.smt if measured is None else measured.smt
    return 4096 + 4 * host.cache_line_bytes if smt else 0


def buffer_count(event_bytes: int, max_buffer_memory: int) -> int:
    """DEFAULT_BUFFERS, or as many as the memory bound allows of the smallest buffers (two at
    least: the target is refused when not even two fit)."""
    floor = buffer_floor(event_bytes, max_buffer_memory)
    return max(LIMITS["buffers"].low, min(DEFAULT_BUFFERS, max_buffer_memory // floor))


def buffer_bytes(host: Host, buffers: int, event_bytes: int, max_buffer_memory: int) -> int:
    """All buffers together in about half the L2 a core owns, so they stay cached; never more
    than the memory bound allows, never less than one event."""
    target = max(host.l2_bytes_per_core() // (2 * buffers), SEARCH_MIN_BUFFER_BYTES)
    size = floor_power_of_two(min(target, MAX_ESTIMATED_BUFFER_BYTES))
    size = min(size, floor_power_of_two(max_buffer_memory // buffers))
    return max(size, buffer_floor(event_bytes, max_buffer_memory))


def primitive(host: Host, allowed: Sequence[Primitive]) -> Primitive:
    spare = len(host.allowed_cpus) >= SPARE_CPUS_FOR_SPINNING
    order = SPARE_CPU_PREFERENCE if spare else BLOCKING_PREFERENCE
    return next(p for p in order if p in allowed)


def placement(
    host: Host, pin: PinThreads, measured: MeasuredPairs | None = None
) -> tuple[int, int]:
    """Unpinned unless pinning is demanded: pinning rarely helps (Thread Reinforcer, Bogner et
    al.). When pinned: two distinct cores sharing a cache, avoiding CPU 0 when others exist;
    where the pairs were measured, the fastest lasting class's pair of two distinct cores."""
    if pin is not PinThreads.always:
        return -1, -1
    if measured is not None and measured.near_pair is not None:
        return measured.near_pair  # as the search places it: the producer on the lower CPU
    cpus = [c for c in host.allowed_cpus if c != 0] or list(host.allowed_cpus)
    producer = cpus[0]
    others = [c for c in host.allowed_cpus if host.core_of(c) != host.core_of(producer)]
    consumer = (others or [c for c in host.allowed_cpus if c != producer] or [producer])[0]
    return producer, consumer


def estimate(
    host: Host,
    event_bytes: int,
    max_buffer_memory: int,
    allowed: Sequence[Primitive],
    pin: PinThreads,
    *,
    measured: MeasuredPairs | None = None,
) -> ChannelParams:
    buffers = buffer_count(event_bytes, max_buffer_memory)
    producer_cpu, consumer_cpu = placement(host, pin, measured)
    return ChannelParams(
        padding_bytes=padding_bytes(host),
        stack_offset_bytes=stack_offset_bytes(host, measured),
        buffers=buffers,
        buffer_bytes=buffer_bytes(host, buffers, event_bytes, max_buffer_memory),
        primitive=primitive(host, allowed),
        producer_cpu=producer_cpu,
        consumer_cpu=consumer_cpu,
    )


def thread_advice(
    host: Host, producers: int | str, consumers: int | str, work: tuple[float, float]
) -> ThreadAdvice:
    """Thread counts without measuring: one producer (or the fixed count), enough consumers per
    producer to keep up with its work, anywhere on the CPUs we may use."""
    fixed_producers = producers if isinstance(producers, int) else 1
    producer_ns, consumer_ns = work
    if isinstance(consumers, int):
        per_producer = max(1, consumers // fixed_producers)
    elif producer_ns > 0 and consumer_ns > 0:
        per_producer = max(1, math.ceil(consumer_ns / producer_ns))
    else:
        per_producer = 1
    cpus = tuple(host.allowed_cpus)
    consumers_total = fixed_producers * per_producer
    return ThreadAdvice(fixed_producers, consumers_total, per_producer, cpus, cpus, pinned=False)
