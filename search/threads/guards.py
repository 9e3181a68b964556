"""When more threads than CPUs may be recommended: only when measured idle time justifies it.

More threads than CPUs pay only when threads sleep (a consumer that sleeps in the channel while
its producer works, blocking work): then a count that fills the CPUs on average still leaves them
idle at moments, and more threads fill them. Threads that spin while they wait, or never wait,
keep their CPUs busy, and more of them only take turns (Thread Reinforcer's CPU_UTIL signal: no
more parallelism to gain). So the search reads, at the largest count it measured that fits the
CPUs, the CPU time its threads used: when they left at least IDLE_SHARE of what they could use
idle, counts past the CPUs are searched and may be recommended, and `oversubscription` says why
in words; otherwise the search stays within the CPUs.
"""

from __future__ import annotations

from collections.abc import Iterable

from hspc_gen.search.threads.measure import Point

IDLE_SHARE = 0.05
"""CPU time the threads left unused, of what they could use, that makes more threads worth it."""


def oversubscription(
    points: Iterable[Point], cpus: int, usable: float, fits: int | None = None
) -> str | None:
    """Why counts with more threads than `fits` (default `cpus`; the search's fewest threads
    when they are more, one group of a producer and its consumers) may be recommended, or None
    when they may not. `usable`: the CPUs the process may keep busy (the quota caps it)."""
    limit = cpus if fits is None else fits
    fits_cpus = [p for p in points if p.config.threads <= limit and not p.config.pinned]
    if not fits_cpus:
        return None
    at = max(fits_cpus, key=lambda p: (p.config.threads, p.config))
    could = min(usable, float(at.config.threads))
    idle = 1.0 - at.cpu_utilisation / could
    if not idle >= IDLE_SHARE:
        return None
    return (
        f"at {at.config.threads} threads the CPUs were {at.cpu_utilisation:.1f} of "
        f"{could:g} busy ({idle:.0%} idle; the threads waited {at.wait_fraction:.0%} of their "
        f"time), so more threads than the {cpus} CPUs can fill that idle time"
    )
