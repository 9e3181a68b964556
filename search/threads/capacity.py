"""What the host can run at once, and a first estimate of the thread count.

A TopologyShape is the part of a Host the thread search needs (allowed CPUs with their core,
package and last-level cache, the cgroup quota, whether it is a virtual machine). Tests build
shapes of 2 to 128 CPUs with `uniform` instead of writing sysfs trees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hspc_gen.host import Host
from hspc_gen.model import MAX_THREADS
from hspc_gen.model.threads import Capacity

SMT_YIELD = 0.3
"""What a second hardware thread adds to its core: Saunders et al. measured 33-35% offloaded."""
KEEP_UP_SLACK = 0.1
"""Consumers per producer round the cost ratio up only past this much."""
SEARCH_HEADROOM = 4
"""The search may go this many times past the first estimate."""
MAX_SAMPLE_THREADS = 256
"""The most threads the benchmark harness runs in one sample (runtime/bench: kMaxSampleThreads)."""


@dataclass(frozen=True, order=True)
class CpuPlace:
    cpu: int
    core: int  # physical core, unique across packages
    package: int
    llc: int  # index of the last-level cache instance


@dataclass(frozen=True)
class TopologyShape:
    places: tuple[CpuPlace, ...]  # the CPUs this process may run on, in CPU order
    cpu_quota: float | None = None  # cgroup CPU bandwidth in CPUs; None: unlimited
    virtual: bool = False

    def __post_init__(self) -> None:
        if not self.places:
            raise ValueError("a topology needs at least one allowed CPU")

    @classmethod
    def from_host(cls, host: Host) -> TopologyShape:
        llc_of = {cpu: i for i, group in enumerate(host.llc_groups()) for cpu in group}
        package_of = {p.cpu: p.package for p in host.topology}
        places = tuple(
            CpuPlace(cpu, host.core_of(cpu), package_of[cpu], llc_of.get(cpu, package_of[cpu]))
            for cpu in host.allowed_cpus
        )
        return cls(places, host.cpu_quota, host.virtual)

    @classmethod
    def uniform(
        cls,
        *,
        packages: int = 1,
        cores_per_package: int,
        threads_per_core: int = 1,
        llc_per_package: int = 1,
        cpu_quota: float | None = None,
        virtual: bool = False,
    ) -> TopologyShape:
        """A regular machine numbered as Linux numbers most x86 parts: the first hardware thread
        of every core, package by package, then the second threads, and so on."""
        cores = packages * cores_per_package
        per_llc = cores_per_package // llc_per_package
        places = [
            CpuPlace(
                cpu=t * cores + core,
                core=core,
                package=core // cores_per_package,
                llc=core // per_llc,
            )
            for t in range(threads_per_core)
            for core in range(cores)
        ]
        return cls(tuple(sorted(places)), cpu_quota, virtual)

    @property
    def cpus(self) -> tuple[int, ...]:
        return tuple(p.cpu for p in self.places)

    @property
    def cores(self) -> int:
        return len({p.core for p in self.places})

    @property
    def packages(self) -> int:
        return len({p.package for p in self.places})

    @property
    def threads_per_core(self) -> int:
        return max(len(self.siblings(p.cpu)) for p in self.places)

    def place(self, cpu: int) -> CpuPlace:
        for p in self.places:
            if p.cpu == cpu:
                return p
        raise KeyError(cpu)

    def siblings(self, cpu: int) -> tuple[int, ...]:
        """The allowed hardware threads of `cpu`'s core, `cpu` included."""
        core = self.place(cpu).core
        return tuple(p.cpu for p in self.places if p.core == core)

    def llc_groups(self) -> tuple[tuple[int, ...], ...]:
        """The allowed CPUs of each last-level cache, in order of their lowest CPU."""
        groups: dict[int, list[int]] = {}
        for p in self.places:
            groups.setdefault(p.llc, []).append(p.cpu)
        return tuple(sorted(tuple(g) for g in groups.values()))

    def usable_cpus(self) -> float:
        """Logical CPUs the process can keep busy at once: the allowed ones, capped by quota."""
        return min(float(len(self.places)), self.cpu_quota or math.inf)

    def core_equivalents(self) -> float:
        """Throughput capacity in whole cores: every core, each extra sibling a SMT_YIELD of
        one, capped by the quota."""
        extra = len(self.places) - self.cores
        return min(self.cores + SMT_YIELD * extra, self.cpu_quota or math.inf)

    def capacity(self) -> Capacity:
        """The shape as the result reports it."""
        return Capacity(
            cpus=len(self.places),
            cores=self.cores,
            threads_per_core=self.threads_per_core,
            packages=self.packages,
            llc_groups=len(self.llc_groups()),
            cpu_quota=self.cpu_quota,
            core_equivalents=self.core_equivalents(),
            virtual=self.virtual,
        )


@dataclass(frozen=True)
class WorkCost:
    """One pair's measured work per event: CPU time per side, and blocking time over CPU time
    (time a thread sleeps on I/O or locks outside the channel, per unit of its computing)."""

    producer_ns: float
    consumer_ns: float
    wait_ratio: float = 0.0

    def __post_init__(self) -> None:
        if self.producer_ns <= 0 or self.consumer_ns <= 0 or self.wait_ratio < 0:
            raise ValueError(f"work costs must be positive, wait ratio non-negative: {self}")

    @classmethod
    def from_pair(cls, wall_ns: float, producer_cpu_ns: float, consumer_cpu_ns: float) -> WorkCost:
        """One pair's costs from its per-event wall time and each side's CPU time. The slower
        side never waits for the other in the channel, so what of its wall time it spent off
        its CPU it slept on work of its own (blocking): the wait ratio Goetz's estimate needs."""
        floor = 1.0  # ns: a side that does nothing still costs something to move an event
        producer, consumer = max(producer_cpu_ns, floor), max(consumer_cpu_ns, floor)
        slower = max(producer, consumer)
        return cls(producer, consumer, max(0.0, wall_ns / slower - 1.0))

    def consumers_per_producer(self) -> int:
        """Enough consumers to keep up with one producer when the consumer is the heavier side,
        within KEEP_UP_SLACK: a measured cost a few percent over the producer's is noise or
        close enough, and a second consumer would sit idle half its time."""
        return max(1, math.ceil(self.consumer_ns / self.producer_ns - KEEP_UP_SLACK))

    def group_cpus(self, consumers_per_producer: int) -> float:
        """CPUs one producer and its consumers keep busy, unhindered: the slower side sets the
        pace, the faster one idles, and every thread sleeps wait_ratio of its compute."""
        k = consumers_per_producer
        period = max(self.producer_ns, self.consumer_ns / k) * (1.0 + self.wait_ratio)
        return (self.producer_ns + self.consumer_ns) / period


@dataclass(frozen=True)
class Estimate:
    """Goetz's N = cores x (1 + wait/compute), per producer group: where the CPUs saturate, so
    the search's coarse grid is laid out from it."""

    producers: int
    consumers_per_producer: int
    max_threads: int

    @property
    def threads(self) -> int:
        return self.producers * (1 + self.consumers_per_producer)


def estimate(shape: TopologyShape, cost: WorkCost, max_threads: int = MAX_THREADS) -> Estimate:
    """Groups enough to keep every core (within the quota) busy; SMT is left to the search, which
    measures what the siblings add instead of assuming it."""
    k = cost.consumers_per_producer()
    cores = min(float(shape.cores), shape.cpu_quota or math.inf)
    groups = max(1, round(cores / cost.group_cpus(k)))
    cap = max(1, max_threads // (1 + k))
    producers = min(groups, cap)
    limit = min(max_threads, max(SEARCH_HEADROOM * producers * (1 + k), 2 * len(shape.places)))
    return Estimate(producers, k, max(limit, 1 + k))
