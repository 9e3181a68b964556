"""What the thread search measures and how: configurations, samples, and paired comparisons.

The search never runs anything itself: it calls a `Measure` (the simulator in tests, the harness
for real), which runs `rounds` rounds, each timing every given configuration once in a shuffled
order, and numbers its samples' rounds 0..rounds-1. `Lab` renumbers them globally, so any two
configurations measured in one call pair up round by round, and keeps everything for the evidence.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hspc_gen.model.threads import UNPINNED_PLACEMENT
from hspc_gen.search.decisions import stats
from hspc_gen.search.records.samples import Sample


@dataclass(frozen=True, order=True)
class Config:
    """Producers, consumers (consumer j reads from producer j mod producers: each producer hands
    whole buffers round robin to its own consumers), and where the threads run."""

    producers: int
    consumers: int
    placement: str = UNPINNED_PLACEMENT
    producer_cpus: tuple[int, ...] = ()  # one per producer when pinned
    consumer_cpus: tuple[int, ...] = ()  # one per consumer when pinned
    replica: int = 0
    """Above 0: an independently timed copy of the same configuration (an A/A arm), run
    alongside it to pin down the noise of a reference every comparison shares."""

    def __post_init__(self) -> None:
        if self.producers < 1 or self.consumers < self.producers:
            raise ValueError(f"every producer needs a consumer of its own: {self}")
        pinned = (len(self.producer_cpus), len(self.consumer_cpus))
        if self.pinned and pinned != (self.producers, self.consumers):
            raise ValueError(f"a pinned configuration lists one CPU per thread: {self}")

    @property
    def pinned(self) -> bool:
        return bool(self.producer_cpus or self.consumer_cpus)

    @property
    def threads(self) -> int:
        return self.producers + self.consumers

    @property
    def consumers_per_producer(self) -> int:
        return math.ceil(self.consumers / self.producers)

    def group_of(self, consumer: int) -> int:
        return consumer % self.producers

    def group_sizes(self) -> tuple[int, ...]:
        """Consumers of each producer."""
        base, extra = divmod(self.consumers, self.producers)
        return tuple(base + (g < extra) for g in range(self.producers))

    @property
    def label(self) -> str:
        where = "@" + self.placement if self.pinned else ""
        copy = f"#{self.replica}" if self.replica else ""
        return f"{self.producers}p{self.consumers}c{where}{copy}"

    def counts(self) -> Config:
        """The same counts, unpinned."""
        return Config(self.producers, self.consumers)

    def original(self) -> Config:
        """What a replica is a copy of (itself when it is not one)."""
        return dataclasses.replace(self, replica=0)

    def copy(self, replica: int) -> Config:
        return dataclasses.replace(self, replica=replica)


@dataclass(frozen=True)
class ThreadSample:
    """One timed run of one configuration: the harness's Sample (events, wall and CPU time per
    role, involuntary switches, migrations, all summed over the role's threads) and what Thread
    Reinforcer reads besides, for our own process and without root."""

    sample: Sample
    voluntary_switches: int
    wait_ns: float  # summed over threads: time spent waiting in the channel (instrumented waits)


class BudgetSpentError(Exception):
    """A call would end past the budget (now, or when this command first ran): the search
    stops there and answers from what it measured before."""


Measure = Callable[[Sequence[Config], int], Mapping[Config, Sequence[ThreadSample]]]


@dataclass(frozen=True)
class Relative:
    """A candidate's throughput over a reference's, paired by round (1.05 = 5% more events/s)."""

    gain: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Point:
    """One measured configuration, for the evidence: throughput and the OS metrics per point."""

    config: Config
    events_per_s: float
    ci95_low: float
    ci95_high: float
    samples: int
    cpu_utilisation: float  # CPUs busy: CPU seconds per wall second, all threads
    voluntary_switches_per_s: float
    migrations_per_s: float
    wait_fraction: float  # share of the threads' time spent waiting in the channel
    vs_best: Relative | None = None  # over the search's best count, paired (set for the evidence)

    def per_event(self, rate: float) -> float:
        return rate / self.events_per_s if self.events_per_s > 0 else math.inf


def _ns_per_event(s: Sample) -> float:
    return s.ns_per_event


class Lab:
    """Every sample the search took, with rounds numbered across calls."""

    def __init__(self, measure: Measure) -> None:
        self._measure = measure
        self._samples: dict[Config, list[ThreadSample]] = {}
        self._next_round = 0
        # The search asks the same question again until new rounds arrive; a bootstrap is dear.
        self._compared: dict[tuple[Config, Config, int, int], Relative] = {}
        self._points: dict[tuple[Config, int], Point] = {}

    def run(self, configs: Sequence[Config], rounds: int) -> int:
        """Measure the configurations together; returns the first global round number used."""
        unique = sorted(set(configs))
        first = self._next_round
        results = self._measure(unique, rounds)
        for config in unique:
            for ts in results[config]:
                moved = dataclasses.replace(ts.sample, round=first + ts.sample.round)
                self._samples.setdefault(config, []).append(dataclasses.replace(ts, sample=moved))
        self._next_round = first + rounds
        return first

    @property
    def rounds(self) -> int:
        return self._next_round

    def measured(self) -> tuple[Config, ...]:
        return tuple(sorted(self._samples))

    def samples(self, config: Config, since: int = 0) -> list[Sample]:
        return [ts.sample for ts in self._samples.get(config, []) if ts.sample.round >= since]

    def compare(self, candidate: Config, reference: Config, since: int = 0) -> Relative:
        """Throughput of candidate over reference on the rounds (from `since`) both ran in."""
        key = (candidate, reference, since, self._next_round)
        if key not in self._compared:
            self._compared[key] = self._compare(candidate, reference, since)
        return self._compared[key]

    def _compare(self, candidate: Config, reference: Config, since: int) -> Relative:
        # The estimate and interval of stats.compare, without its Wilcoxon p-values: the
        # search reads none, and it asks thousands of these.
        d = stats.paired_log_ratios(
            self.samples(candidate, since), self.samples(reference, since), _ns_per_event
        )
        if d.size == 0:
            return Relative(math.nan, 0.0, math.inf, 0)
        low, high = stats.bootstrap_interval(d)
        gain = math.exp(-float(stats.hodges_lehmann(d)))
        return Relative(gain, math.exp(-high), math.exp(-low), int(d.size))

    def shared(self, a: Config, b: Config) -> int:
        """Rounds both configurations ran in (what a comparison of the two pairs, at most)."""
        rounds = [{ts.sample.round for ts in self._samples.get(c, [])} for c in (a, b)]
        return len(rounds[0] & rounds[1])

    def point(self, config: Config) -> Point:
        key = (config, self._next_round)
        if key not in self._points:
            self._points[key] = self._point(config)
        return self._points[key]

    def _point(self, config: Config) -> Point:
        runs = self._samples.get(config, [])
        summary = stats.summarize([ts.sample for ts in runs])
        wall_s = np.array([ts.sample.wall_ns / 1e9 for ts in runs], dtype=float)
        cpu = np.array([ts.sample.cpu_ns_producer + ts.sample.cpu_ns_consumer for ts in runs])
        vcx = np.array([ts.voluntary_switches for ts in runs], dtype=float)
        migrations = np.array([ts.sample.migrations for ts in runs], dtype=float)
        wait = np.array([ts.wait_ns for ts in runs], dtype=float)
        return Point(
            config=config,
            events_per_s=summary.median,
            ci95_low=summary.ci95_low,
            ci95_high=summary.ci95_high,
            samples=summary.n,
            cpu_utilisation=_median(cpu / 1e9 / wall_s),
            voluntary_switches_per_s=_median(vcx / wall_s),
            migrations_per_s=_median(migrations / wall_s),
            wait_fraction=_median(wait / 1e9 / wall_s / config.threads),
        )

    def curve(self) -> tuple[Point, ...]:
        return tuple(self.point(c) for c in self.measured() if not c.replica)


def _median(values: np.ndarray) -> float:
    return float(np.median(values)) if values.size else math.nan
