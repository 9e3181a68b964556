"""What the host can run at once, and a first estimate of the thread count.

The host comes as a TopologyShape (model.shape), the part of a Host the thread search needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hspc_gen.model import MAX_THREADS
from hspc_gen.model.shape import TopologyShape

KEEP_UP_SLACK = 0.1
"""Consumers per producer round the cost ratio up only past this much."""
SEARCH_HEADROOM = 4
"""The search may go this many times past the first estimate."""
MAX_SAMPLE_THREADS = 256
"""The most threads the harness runs in one sample (runtime/harness: kMaxSampleThreads)."""


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
