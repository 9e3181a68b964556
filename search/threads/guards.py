"""Thread Reinforcer's termination guards, read from two consecutive points of the ramp.

Thread Reinforcer stops when CPU utilisation stops rising (no more parallelism) or when lock
contention is high and rising and, below the core count, voluntary context switches rise sharply
or, above it, migrations do. Our lock contention is the time threads spend waiting in the channel
(instrumented waits); rates are taken per event so that a point doing more work does not look
more contended. Netflix's rule: when threads sit idle in the channel (a producer starves its
consumers), low utilisation is starvation, not the end of parallelism.
"""

from __future__ import annotations

from hspc_gen.search.threads.measure import Point

UTIL_SHARE = 0.25
"""Added threads that raise the CPU utilisation by less than this share of their number found no
more parallelism (a fixed threshold would fire on small steps and miss big ones)."""
SHARP_RISE = 0.5
"""A per-event rate that grows by half or more in one step rises sharply."""
IDLE_SHARE = 0.25
"""Threads waiting in the channel this share of their time are idle (Netflix's rule)."""
HIGH_WAIT = 0.10
"""Channel waits above this share of thread time are high contention (Thread Reinforcer's LOCK)."""


def guard(before: Point, after: Point, cores: int) -> str | None:
    """The termination condition the step from `before` to `after` trips, if any."""
    added = _rise(before.config.threads, after.config.threads)
    no_parallelism = _rise(before.cpu_utilisation, after.cpu_utilisation) < UTIL_SHARE * added
    if no_parallelism and after.wait_fraction < IDLE_SHARE:
        return "cpu_util"
    if after.wait_fraction < HIGH_WAIT:
        return None
    wait_rises = _rise(_waits(before), _waits(after)) >= SHARP_RISE
    if after.config.threads <= cores:
        rate_rises = _rise(_per_event(before, "vcx"), _per_event(after, "vcx")) >= SHARP_RISE
        return "voluntary_switches" if wait_rises and rate_rises else None
    rate_rises = _rise(_per_event(before, "migr"), _per_event(after, "migr")) >= SHARP_RISE
    return "migrations" if wait_rises and rate_rises else None


def _rise(before: float, after: float) -> float:
    if not before > 0:
        return 0.0 if not after > 0 else float("inf")
    return after / before - 1.0


def _waits(p: Point) -> float:
    """Thread-seconds waiting in the channel per event."""
    return p.per_event(p.wait_fraction * p.config.threads)


def _per_event(p: Point, which: str) -> float:
    rate = p.voluntary_switches_per_s if which == "vcx" else p.migrations_per_s
    return p.per_event(rate)
