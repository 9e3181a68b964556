"""Where a producer/consumer pair can run: the host as the space sees it (CPUs, SMT siblings,
caches, the measured classes of CPU pairs) and the placements worth racing on it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hspc_gen.model import PinThreads

UNPINNED_CPUS: tuple[int, int] = (-1, -1)
SIBLING_CLASS = "smt_sibling"  # the measured class of two hardware threads of one core


@dataclass(frozen=True)
class HostShape:
    """What the space needs to know about the host: CPUs, SMT siblings, caches."""

    logical_cpus: int
    allowed_cpus: tuple[int, ...]
    cores: int
    threads_per_core: int
    sibling_pairs: tuple[tuple[int, int], ...] = ()
    llc_groups: tuple[tuple[int, ...], ...] = ()
    cache_line_bytes: int = 64
    l2_bytes: int = 0
    huge_pages: bool = False  # transparent huge pages can back a channel's block (madvise)
    class_pairs: tuple[tuple[str, int, int], ...] = ()
    """One (class, producer_cpu, consumer_cpu) per measured class of CPU pairs, fastest first
    (topology.classes.representative_pairs); empty when the host was not measured."""

    typical_pair: tuple[int, int] | None = None
    """On a host that moves its CPUs about (measured), the representative of the class most
    pairs measure in: where the search measures, since a rarer class may be gone next time."""

    def class_of(self, producer_cpu: int, consumer_cpu: int) -> str | None:
        """The measured class a pinned placement represents, if it is one of class_pairs."""
        pair = {producer_cpu, consumer_cpu}
        return next((name for name, a, b in self.class_pairs if {a, b} == pair), None)


def placements(host: HostShape, pin_threads: PinThreads) -> tuple[tuple[int, int], ...]:
    """(producer_cpu, consumer_cpu) pairs worth trying, in tie order: unpinned first.

    Pinned choices: one pair per measured class of CPU pairs (how the host places a pair, as
    measured), fastest class first; on a host not measured, from sysfs: two distinct cores
    sharing a last-level cache (avoiding CPU 0, which takes most interrupts, when another choice
    exists), and SMT siblings where the host has them.
    """
    pinned = _measured(host) or [p for p in (_distinct_cores(host), _siblings(host)) if p]
    if pin_threads is PinThreads.never or not pinned:
        return (UNPINNED_CPUS,)
    if pin_threads is PinThreads.always:
        return tuple(pinned)
    return (UNPINNED_CPUS, *pinned)


def _measured(host: HostShape) -> list[tuple[int, int]]:
    allowed = set(host.allowed_cpus)
    pairs = [(a, b) for _, a, b in host.class_pairs if a in allowed and b in allowed]
    return list(dict.fromkeys(pairs))


def _core_of(host: HostShape) -> dict[int, int]:
    core = {cpu: cpu for cpu in host.allowed_cpus}
    for a, b in host.sibling_pairs:
        low = min(core.get(a, a), core.get(b, b))
        core[a] = core[b] = low
    return core


def _prefer(pairs: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
    ordered = sorted(pairs, key=lambda p: (0 in p, p))
    return ordered[0] if ordered else None


def _distinct_cores(host: HostShape) -> tuple[int, int] | None:
    allowed = set(host.allowed_cpus)
    core = _core_of(host)
    groups = host.llc_groups or (tuple(host.allowed_cpus),)
    pairs = [
        (a, b)
        for group in groups
        for a in sorted(allowed.intersection(group))
        for b in sorted(allowed.intersection(group))
        if a < b and core[a] != core[b]
    ]
    return _prefer(pairs)


def _siblings(host: HostShape) -> tuple[int, int] | None:
    allowed = set(host.allowed_cpus)
    pairs = [(min(a, b), max(a, b)) for a, b in host.sibling_pairs if a in allowed and b in allowed]
    return _prefer(pairs)
