"""A deterministic simulated host for testing the thread search without the hardware.

`SimulatedHost.run` has the harness's `Run` signature (configurations, rounds, call number, events
per producer of each) and `measure` the `Measure` one: it times configurations in shuffled
rounds with seeded noise, and reports the OS metrics Thread Reinforcer reads as plausible
functions of the operating point (physics.py). The noise is multiplicative: a factor every sample
of a round shares (a neighbour's build, a frequency change: what pairing cancels), a drift along
the round, a smaller factor of each sample's own, a heavy tail (a sample that lost its CPU for a
while), and for unpinned samples where the OS put the partners that time (placement noise: the
share of groups whose producer and consumer sit on other caches or sockets is drawn anew each
sample). The host keeps a clock of simulated seconds (each sample's wall time, its set-up, and
each call's start), so a test can hold the search to a budget without timing anything.
`true_throughput` and `ground_truth` give the noise-free answer the search is judged against.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hspc_gen.model.shape import TopologyShape
from hspc_gen.search.records.samples import Sample
from hspc_gen.search.threads.capacity import WorkCost
from hspc_gen.search.threads.measure import Config, ThreadSample
from threadsim.hosts import Machine
from threadsim.physics import (
    Operating,
    SimWorkload,
    operating_point,
    placement_spread,
)

WORKLOADS: tuple[SimWorkload, ...] = (
    SimWorkload("cpu_bound", 200.0, 200.0),
    SimWorkload("blocking_1", 200.0, 200.0, wait_ratio=1.0, sigma=0.001, kappa=2e-6),
    SimWorkload("blocking_3", 200.0, 200.0, wait_ratio=3.0, sigma=0.001, kappa=2e-6),
    SimWorkload("blocking_9", 200.0, 200.0, wait_ratio=9.0, sigma=0.001, kappa=2e-6),
    SimWorkload("lock_limited", 200.0, 200.0, sigma=0.15, kappa=0.005),
    SimWorkload("producer_heavy", 600.0, 150.0),
    SimWorkload("consumer_heavy", 150.0, 400.0),
)
"""The workload matrix of issue 5."""

MANY_CORE_WORKLOADS: tuple[SimWorkload, ...] = (
    *WORKLOADS,
    # examples/app.yaml on the 16-CPU host: the consumer sleeps in the channel most of its time,
    # so more groups than the CPUs fill its idle CPU time (throughput rose to 68 threads there).
    SimWorkload("sleeping_consumer", 40.0, 15.0, handoff_ns=2.0),
    # The same work with a consumer that spins while it waits: nothing gains past the CPUs.
    SimWorkload("spinning_consumer", 40.0, 15.0, handoff_ns=2.0, spin=1.0),
)
"""Issue 23's matrix: issue 5's and the two ways a channel's waiting side can wait."""

EVENTS_PER_SAMPLE = 1 << 20
"""Events of a `measure` sample, all producers together (a `run` is told its events)."""
TAIL_PROBABILITY = 0.05
OWN_NOISE = 0.25
"""A sample's own noise, as a share of the round's shared noise level."""
DRIFT = 0.2
"""Drift from the first to the last sample of a round, as a share of the noise level."""
METRIC_NOISE = 0.05
# Plausible OS behaviour (per second): a fully idle channel waiter wakes this often; the OS moves
# each of fewer-than-cores threads this often, and each thread it has to slice in this often.
IDLE_WAKEUPS = 2000.0
SHUFFLE_MIGRATIONS = 100.0
BALANCE_MIGRATIONS = 400.0
SLICES = 250.0
# What the simulated clock adds to the timed part: a call's process start, a sample's set-up
# (the start gate, pinning, its record) and waking each of its threads.
CALL_START_SECONDS = 0.05
SAMPLE_SETUP_SECONDS = 0.002
THREAD_WAKE_SECONDS = 20e-6


@dataclass(frozen=True)
class OsRates:
    """The OS's view of one configuration, per second of wall time."""

    voluntary_switches: float
    involuntary_switches: float
    migrations: float


@dataclass(frozen=True)
class GroundTruth:
    """The best noise-free throughput over a set of configurations and the fewest threads any
    configuration needs to reach a share of it."""

    best_events_per_s: float
    best: Config
    threads_for: dict[float, int]


class SimulatedHost:
    """Stateful like a real machine: each call draws fresh noise from (seed, call number), and
    the clock advances by what the call took. `shape` is what the search is told (sysfs);
    `machine`, when given, is what the CPUs really are (a guest may hide its SMT siblings)."""

    def __init__(
        self,
        shape: TopologyShape,
        workload: SimWorkload,
        *,
        noise: float = 0.10,
        seed: int = 0,
        machine: Machine | None = None,
    ) -> None:
        self.shape = shape
        self.machine = machine or Machine("as-told", shape, shape)
        self._hidden_smt = self.machine.hidden_smt
        self.workload = workload
        self.noise = noise
        self.seed = seed
        self.seconds = 0.0
        self._calls = 0
        self._cache: dict[Config, Operating] = {}

    def clock(self) -> float:
        """Simulated seconds since the host started: what a budget reads."""
        return self.seconds

    def operating(self, config: Config) -> Operating:
        config = config.original()  # a replica runs the very same threads
        if config not in self._cache:
            m, hidden = self.machine, self._hidden_smt
            point = operating_point(
                m.physical, self.workload, config, hidden_smt=hidden, multiplexed=m.multiplexed
            )
            self._cache[config] = point
        return self._cache[config]

    def true_throughput(self, config: Config) -> float:
        return self.operating(config).events_per_s

    def os_rates(self, config: Config) -> OsRates:
        op, w = self.operating(config), self.workload
        groups = config.producers
        vcx = op.events_per_s * (2.0 * (w.wait_ratio > 0) + 2.0 * w.sigma * (groups - 1))
        vcx += IDLE_WAKEUPS * op.idle_fraction * config.threads * (1.0 - w.spin)
        cpus, cores = len(self.shape.places), self.shape.cores
        over = max(0.0, op.runnable - cpus)
        migrations = 0.0
        if not config.pinned:
            shuffled = config.threads if config.threads < cores else 0
            uneven = 1.5 if config.threads % cpus else 1.0
            migrations = SHUFFLE_MIGRATIONS * shuffled + BALANCE_MIGRATIONS * over * uneven
            migrations += 0.05 * vcx * min(1.0, config.threads / cpus)
        return OsRates(vcx, SLICES * over, migrations)

    def probe(self) -> WorkCost:
        """One pair's costs as a short noisy calibration run measures them: each side's CPU
        time per event (its spinning included) and the time both sleep beyond it."""
        rng = np.random.default_rng([self.seed, 1 << 30])
        jitter = np.exp(rng.normal(0.0, self.noise * OWN_NOISE, size=3))
        op = self.operating(Config(1, 1))
        wall = 1e9 / op.events_per_s
        return WorkCost.from_pair(
            wall * float(jitter[2]),
            wall * op.producer_cpus * float(jitter[0]),
            wall * op.consumer_cpus * float(jitter[1]),
        )

    def measure(self, configs: Sequence[Config], rounds: int) -> dict[Config, list[ThreadSample]]:
        """The `Measure` signature: every sample moves EVENTS_PER_SAMPLE events in all."""
        events = {c: max(1, EVENTS_PER_SAMPLE // c.producers) for c in configs}
        return self.run(configs, rounds, self._calls, events)

    def run(
        self,
        configs: Sequence[Config],
        rounds: int,
        call: int,
        events: Mapping[Config, int],
    ) -> dict[Config, list[ThreadSample]]:
        """The harness's `Run` signature: `events` per producer of each configuration."""
        rng = np.random.default_rng([self.seed, call])
        self._calls = max(self._calls, call + 1)
        self.seconds += CALL_START_SECONDS
        out: dict[Config, list[ThreadSample]] = {c: [] for c in configs}
        for r in range(rounds):
            shared = math.exp(rng.normal(0.0, self.noise))
            drift = rng.normal(0.0, self.noise * DRIFT)
            order = rng.permutation(len(configs))
            for position, index in enumerate(order):
                config = configs[int(index)]
                own = math.exp(rng.normal(0.0, self.noise * OWN_NOISE))
                tail_draw, tail_size = rng.random(), rng.exponential(3.0 * self.noise)
                tail = 1.0 + tail_size if tail_draw < TAIL_PROBABILITY else 1.0
                placed = math.exp(rng.normal(0.0, self._spread(config)))
                slow = shared * own * tail * placed * (1.0 + drift * position / len(configs))
                jitter = np.exp(rng.normal(0.0, METRIC_NOISE, size=3))
                moved = events[config] * config.producers
                sample = self._sample(config, r, moved, slow, jitter)
                out[config].append(sample)
                self.seconds += sample.sample.wall_ns / 1e9 + SAMPLE_SETUP_SECONDS
                self.seconds += THREAD_WAKE_SECONDS * config.threads
        return out

    def _spread(self, config: Config) -> float:
        if config.pinned:
            return 0.0
        physical, op = self.machine.physical, self.operating(config)
        return placement_spread(physical, self.workload, config, op)

    def _sample(
        self, config: Config, rnd: int, events: int, slow: float, jitter: np.ndarray
    ) -> ThreadSample:
        op, rates = self.operating(config), self.os_rates(config)
        wall_ns = events / op.events_per_s * 1e9 * slow
        wall_s = wall_ns / 1e9
        # The slowdown stretches the wall time; the CPU time the work needs stays what it was.
        involuntary = int(rates.involuntary_switches * wall_s * jitter[0])
        sample = Sample(
            arm=config.label,
            round=rnd,
            events=events,
            wall_ns=wall_ns,
            cpu_ns_producer=op.producer_cpus * wall_ns / slow,
            cpu_ns_consumer=op.consumer_cpus * wall_ns / slow,
            nivcsw_producer=involuntary // 2,
            nivcsw_consumer=involuntary - involuntary // 2,
            migrations=int(rates.migrations * wall_s * jitter[1]),
            verified=True,
        )
        return ThreadSample(
            sample=sample,
            voluntary_switches=int(rates.voluntary_switches * wall_s * jitter[2]),
            wait_ns=op.idle_fraction * config.threads * wall_ns,
        )

    def ground_truth(
        self, configs: Iterable[Config], shares: Sequence[float] = (0.95,)
    ) -> GroundTruth:
        """The exhaustive, noise-free sweep the recommendation is checked against."""
        curve = {c: self.true_throughput(c) for c in configs}
        best = max(curve, key=lambda c: (curve[c], -c.threads))
        top = curve[best]
        threads_for = {
            share: min(c.threads for c, x in curve.items() if x >= share * top) for share in shares
        }
        return GroundTruth(top, best, threads_for)


def count_grid(max_threads: int, max_consumers_per_producer: int = 4) -> tuple[Config, ...]:
    """Every unpinned (producers, consumers) with whole consumer groups, up to max_threads."""
    return tuple(
        Config(p, p * k)
        for k in range(1, max_consumers_per_producer + 1)
        for p in range(1, max_threads // (1 + k) + 1)
    )
