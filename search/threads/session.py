"""The thread-count search on this host, for real: the tuned channel's benchmark binary measures
one pair's per-event costs, then thread configurations, and the noise-aware Thread Reinforcer
(`recommend`) or an exhaustive sweep reads the measurements.

Like the channel search, it is answered from the record store alone when it can be (a replay
that raises NotRecordedError at the first call never measured), and otherwise built and
measured, every call recorded. A build that fails or a benchmark that crashes or hangs is a
`ThreadFailure` value: the channel's result stands.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from hspc_gen import __version__
from hspc_gen.model import ChannelParams, Figure, PinThreads, Status
from hspc_gen.model.threads import SweepPoint, ThreadAdvice, ThreadFailure
from hspc_gen.search import schedule, stats
from hspc_gen.search.measure.build import JOBS
from hspc_gen.search.measure.toolchain import THREAD_KINDS, Prepared, Toolchain
from hspc_gen.search.records import Cut, RecordKey, candidate_id
from hspc_gen.search.store import RecordStore
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.threads import advice
from hspc_gen.search.threads.capacity import TopologyShape, WorkCost
from hspc_gen.search.threads.harness import HarnessMeasure, MeasureFailedError
from hspc_gen.search.threads.measure import BudgetSpentError, Config, ThreadSample
from hspc_gen.search.threads.recommend import Count, Recommendation, recommend
from hspc_gen.search.threads.recorded import (
    Budget,
    NotRecordedError,
    RecordedMeasure,
    Run,
)
from hspc_gen.target import Workload

THREAD_SEED = 5  # apart from the channel search's seeds
THREAD_SAMPLE_SECONDS = 0.02
COST_ROUNDS = 5
SWEEP_ROUNDS = 10
THREAD_MIN_EVENTS, THREAD_MAX_EVENTS = 20_000, 20_000_000
BUDGET_SPENT = "the budget ran out before the thread counts were measured"


@dataclass(frozen=True)
class ThreadInputs:
    """What the thread search depends on besides the channel: the work, the counts app.yaml
    fixes or leaves to the search, pinning, and the CPUs this process may use."""

    workload: Workload
    producers: Count
    consumers: Count
    pin: PinThreads
    shape: TopologyShape


@dataclass(frozen=True)
class Bench:
    """The tuned channel's measured per-event cost and the Measure sized from it."""

    measure: RecordedMeasure
    cost: WorkCost
    shape: TopologyShape


def thread_key(prepared: Prepared, inputs: ThreadInputs) -> RecordKey:
    """The key of the thread search's records: the channel's build and everything else the
    search depends on (the counts asked, pinning, the CPU mask and quota, the tool's version)."""
    base = prepared.key
    depends = json.dumps(
        [
            base.source_hash,
            inputs.workload.model_dump(mode="json"),
            [str(inputs.producers), str(inputs.consumers), str(inputs.pin)],
            [inputs.shape.cpus, inputs.shape.cpu_quota],
            __version__,
        ],
        sort_keys=True,
    )
    digest = hashlib.sha256(depends.encode()).hexdigest()[:16]
    return RecordKey(base.fingerprint, f"threads-{digest}", base.compiler, base.flags)


def _per_event(samples: Sequence[ThreadSample], ns: Callable[[ThreadSample], float]) -> float:
    """The median of ns(sample) per event (every sample moved events: `Sample` holds to it)."""
    return float(np.median([ns(s) / s.sample.events for s in samples]))


def _events(samples: Sequence[ThreadSample]) -> int:
    """Events per producer for a sample of one pair to last THREAD_SAMPLE_SECONDS of wall time
    (waits included: a channel that hands buffers over often spends its time there)."""
    per_event_ns = max(_per_event(samples, lambda s: s.sample.wall_ns), 1.0)
    events = THREAD_SAMPLE_SECONDS * 1e9 / per_event_ns
    return int(min(THREAD_MAX_EVENTS, max(THREAD_MIN_EVENTS, events)))


def _cost(samples: Sequence[ThreadSample]) -> WorkCost:
    """Per-event CPU time of each side, from the pair's own samples (work plus the channel)."""
    floor = 1.0  # ns: a side that does nothing still costs something to move an event
    return WorkCost(
        max(_per_event(samples, lambda s: s.sample.cpu_ns_producer), floor),
        max(_per_event(samples, lambda s: s.sample.cpu_ns_consumer), floor),
    )


T = TypeVar("T")


@dataclass(frozen=True)
class ThreadRun:
    """Where and until when the thread search measures: the toolchain and the records (it
    builds the channel alone, with the fan-out kind), and the budget."""

    toolchain: Toolchain
    store: RecordStore
    budget: Budget = dataclasses.field(
        default_factory=lambda: Budget(sample_seconds=THREAD_SAMPLE_SECONDS)
    )


class _Recording:
    """Makes the record-backed Measures of one thread search: replay-only, or running on `run`
    (the harness of a built binary, given the events per producer)."""

    def __init__(self, where: ThreadRun, key: RecordKey, run: Callable[[int], Run] | None) -> None:
        self.where, self.key, self.run = where, key, run

    def measure(self, name: str, events: int) -> RecordedMeasure:
        run = None if self.run is None else self.run(events)
        store, budget = self.where.store, self.where.budget
        return RecordedMeasure(
            store, self.key, name, events, seed=THREAD_SEED, run=run, budget=budget
        )

    def bench(self, shape: TopologyShape) -> Bench:
        probe = self.measure("cost", THREAD_MIN_EVENTS)
        pair = probe([Config(1, 1)], COST_ROUNDS)[Config(1, 1)]
        return Bench(self.measure("threads", _events(pair)), _cost(pair), shape)


def _harness(executable: Path, variant: str, workload: Workload) -> Callable[[int], Run]:
    def sized(events: int) -> Run:
        return HarnessMeasure(executable, variant, workload, events, THREAD_SEED).measure

    return sized


def _recommend(inputs: ThreadInputs, bench: Bench) -> Recommendation:
    return recommend(
        bench.shape,
        bench.cost,
        bench.measure,
        producers=inputs.producers,
        consumers=inputs.consumers,
        pin=inputs.pin,
    )


def _search(
    channel: ChannelParams, inputs: ThreadInputs, where: ThreadRun, search: Callable[[Bench], T]
) -> T | ThreadFailure:
    """`search` on the record store alone if it can be, else on the built binary; a failure or
    the end of the budget as a value."""
    try:
        return _replay_or_measure(channel, inputs, where, search)
    except MeasureFailedError as failed:
        return ThreadFailure(failed.status, failed.log)
    except BudgetSpentError:
        return ThreadFailure(Status.skipped, BUDGET_SPENT)


def _replay_or_measure(
    channel: ChannelParams, inputs: ThreadInputs, where: ThreadRun, search: Callable[[Bench], T]
) -> T | ThreadFailure:
    prepared = where.toolchain.prepare(
        make_batch("threads", "threads", [channel], channel, 1), inputs.workload, THREAD_KINDS
    )
    key = thread_key(prepared, inputs)
    try:
        return search(_Recording(where, key, None).bench(inputs.shape))
    except NotRecordedError:
        pass
    if time.monotonic() + schedule.build_seconds(1, JOBS) > where.budget.deadline:
        # Not even its build fits: the estimated advice stays. Recorded as its first call's cut,
        # so that the same command replayed (quicker, with time to spare) stops here too.
        where.store.append(Cut(key, where.budget.run, (THREAD_SEED, 0)))
        raise BudgetSpentError
    built = where.toolchain.build(prepared)
    if built.executable is None or candidate_id(channel) in built.failed:
        return ThreadFailure(Status.compile_error, built.log[-2000:])
    harness = _harness(built.executable, candidate_id(channel), inputs.workload)
    return search(_Recording(where, key, harness).bench(inputs.shape))


def recommend_threads(
    channel: ChannelParams, inputs: ThreadInputs, where: ThreadRun
) -> ThreadAdvice | ThreadFailure:
    """The measured recommendation for the tuned channel, or why it could not be measured."""
    found = _search(channel, inputs, where, lambda b: (_recommend(inputs, b), b.cost))
    if isinstance(found, ThreadFailure):
        return found
    rec, cost = found
    return advice.advice(rec, cost)


def sweep_threads(
    channel: ChannelParams, inputs: ThreadInputs, where: ThreadRun
) -> tuple[ThreadAdvice | ThreadFailure, tuple[SweepPoint, ...]]:
    """The recommendation, then every producer count 1..max_groups (each with the cost's
    consumers per producer) and the recommendation in the same interleaved rounds: the ground
    truth to check it against."""

    def both(bench: Bench) -> tuple[ThreadAdvice, tuple[SweepPoint, ...]]:
        rec = _recommend(inputs, bench)
        return advice.advice(rec, bench.cost), _sweep(bench, rec.config())

    found = _search(channel, inputs, where, both)
    return (found, ()) if isinstance(found, ThreadFailure) else found


def _sweep(bench: Bench, recommended: Config) -> tuple[SweepPoint, ...]:
    k = bench.cost.consumers_per_producer()
    groups = default_max_groups(bench.shape)
    configs = [Config(n, n * k) for n in range(1, groups + 1)]
    if recommended not in configs:
        configs.append(recommended)
    measured = bench.measure(configs, SWEEP_ROUNDS)
    return tuple(
        SweepPoint(c.producers, c.consumers, c.pinned, c == recommended, _rate(measured[c]))
        for c in configs
    )


def _rate(samples: Sequence[ThreadSample]) -> Figure:
    rates = [s.sample.events_per_second for s in samples]
    if not rates:
        return Figure(math.nan, math.nan, math.nan, 0)
    values = np.array(rates, dtype=float)
    low, high = stats.bootstrap_interval(values, stats.median)
    return Figure(float(np.median(values)), low, high, len(rates))


def default_max_groups(shape: TopologyShape) -> int:
    """Groups of one producer and its consumers up to one per usable CPU (twice the CPUs in
    threads: oversubscription is part of the curve), and at least three, so even a small host
    shows a point past its peak."""
    return max(3, len(shape.cpus))
