"""The thread-count search on this host, for real: the tuned channel's benchmark binary measures
one pair's per-event costs, then thread configurations, and the search (`recommend`, on a plan
sized by the CPUs and the time left) or a sweep of every count reads the measurements.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from hspc_gen import __version__
from hspc_gen.model import ChannelParams, PinThreads, Status
from hspc_gen.model.shape import TopologyShape
from hspc_gen.model.threads import SweepPoint, ThreadAdvice, ThreadFailure
from hspc_gen.model.workload import Workload
from hspc_gen.search import schedule
from hspc_gen.search.measure.build import JOBS
from hspc_gen.search.measure.toolchain import THREAD_KINDS, Prepared, Toolchain
from hspc_gen.search.records.samples import Cut, RecordKey, candidate_id
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.threads import advice
from hspc_gen.search.threads.capacity import WorkCost, estimate
from hspc_gen.search.threads.harness import HarnessMeasure, MeasureFailedError
from hspc_gen.search.threads.measure import BudgetSpentError, Config, ThreadSample
from hspc_gen.search.threads.pace import Pace
from hspc_gen.search.threads.plan import FULL, Plan, Planner
from hspc_gen.search.threads.recommend import Count, Recommendation, recommend
from hspc_gen.search.threads.recorded import (
    Budget,
    NotRecordedError,
    RecordedMeasure,
    Run,
)
from hspc_gen.search.threads.sweep import sweep

THREAD_SEED = 5  # apart from the channel search's seeds
THREAD_SAMPLE_SECONDS = 0.02
COST_ROUNDS = 5
THREAD_MIN_EVENTS, THREAD_MAX_EVENTS = 20_000, 20_000_000
BUDGET_SPENT = "the budget ran out before the thread counts were measured"
SWEEP_SHARE = 0.5
"""Of `threads --sweep`'s budget, what the sweep gets; the recommendation, the rest."""


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
    """The tuned channel's measured per-event cost and the Measure sized from it; the budget,
    the plan rung this command's earlier run was held to (a replay keeps it), and `hold`, which
    records the rung a plan was held to."""

    measure: RecordedMeasure
    cost: WorkCost
    shape: TopologyShape
    budget: Budget = dataclasses.field(default_factory=Budget)
    ceiling: int | None = None
    hold: Callable[[Plan], None] = lambda _plan: None


def thread_key(prepared: Prepared, inputs: ThreadInputs) -> RecordKey:
    """The key of the thread search's records: the channel's build and everything else the
    search depends on (the counts asked, pinning, the CPU mask and quota, the tool's version)."""
    base = prepared.key
    depends = json.dumps(
        [
            base.source_hash,
            inputs.workload.to_json(),
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


def _pace(samples: Sequence[ThreadSample], sample_seconds: float, saturation: float) -> Pace:
    """Samples sized to last `sample_seconds` of wall time (waits included: a channel that hands
    buffers over often spends its time there), from the pair's own rate and the threads that
    saturate the CPUs."""
    per_event_ns = max(_per_event(samples, lambda s: s.sample.wall_ns), 1.0)
    events = sample_seconds * 1e9 / per_event_ns
    return Pace(
        int(min(THREAD_MAX_EVENTS, max(THREAD_MIN_EVENTS, events))),
        sample_seconds,
        pair_rate=1e9 / per_event_ns,
        saturation=saturation,
        min_events=THREAD_MIN_EVENTS,
        max_events=THREAD_MAX_EVENTS,
    )


def _cost(samples: Sequence[ThreadSample]) -> WorkCost:
    """Per-event CPU time of each side, from the pair's own samples (work plus the channel), and
    the time the slower side slept beyond it (blocking work of its own), read from the sample
    where it was least (a slow or preempted sample stretches the wall time, not the CPU time)."""
    producer = _per_event(samples, lambda s: s.sample.cpu_ns_producer)
    consumer = _per_event(samples, lambda s: s.sample.cpu_ns_consumer)
    stretch = [
        s.sample.wall_ns / slower
        for s in samples
        if (slower := max(s.sample.cpu_ns_producer, s.sample.cpu_ns_consumer)) > 0
    ]
    wall = max(producer, consumer) * min(stretch, default=1.0)
    return WorkCost.from_pair(wall, producer, consumer)


T = TypeVar("T")


def harness(executable: Path, variant: str, workload: Workload) -> Run:
    """The built binary's `fanout` samples (harness.py)."""
    return HarnessMeasure(executable, variant, workload, THREAD_SEED).measure


@dataclass(frozen=True)
class ThreadRun:
    """Where and until when the thread search measures: the toolchain and the records (it
    builds the channel alone, with the fan-out kind), the budget, and what runs the built
    binary's samples (a simulated host in tests, as a fake toolchain builds nothing)."""

    toolchain: Toolchain
    store: RecordStore
    budget: Budget = dataclasses.field(
        default_factory=lambda: Budget(sample_seconds=THREAD_SAMPLE_SECONDS)
    )
    harness: Callable[[Path, str, Workload], Run] = harness


class Recording:
    """Makes the record-backed Measures of one thread search under `key`: replay-only, or
    running on `run` (the harness of a built binary; a simulated host in tests)."""

    def __init__(self, store: RecordStore, budget: Budget, key: RecordKey, run: Run | None) -> None:
        self.store, self.budget, self.key, self.run = store, budget, key, run

    def measure(self, name: str, pace: Pace) -> RecordedMeasure:
        return RecordedMeasure(
            self.store, self.key, name, pace, seed=THREAD_SEED, run=self.run, budget=self.budget
        )

    def bench(self, shape: TopologyShape) -> Bench:
        """One pair's cost measured, and the Measure its pace sizes."""
        sample_seconds = self.budget.sample_seconds
        probe = self.measure("cost", Pace(THREAD_MIN_EVENTS, sample_seconds))
        pair = probe([Config(1, 1)], COST_ROUNDS)[Config(1, 1)]
        cost = _cost(pair)
        saturation = estimate(shape, cost).threads
        measure = self.measure("threads", _pace(pair, sample_seconds, saturation))
        ceiling = self.store.trimmed(self.key, self.budget.run)
        return Bench(measure, cost, shape, self.budget, ceiling, self._hold)

    def _hold(self, plan: Plan) -> None:
        """A plan held below the full one is recorded, so the same command replays it."""
        run = self.budget.run
        if plan.level < FULL.level and self.store.trimmed(self.key, run) != plan.level:
            self.store.append(Cut(self.key, run, keep=plan.level))


def recommend_on(inputs: ThreadInputs, bench: Bench, reserve: float = 0.0) -> Recommendation:
    """The recommendation on a plan that fits the budget left, less `reserve` seconds."""
    pace = bench.measure.pace
    planner = Planner(bench.budget.left() - reserve, pace.call_seconds, bench.ceiling, bench.hold)
    return recommend(
        bench.shape,
        bench.cost,
        bench.measure,
        producers=inputs.producers,
        consumers=inputs.consumers,
        pin=inputs.pin,
        planner=planner,
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
        return search(Recording(where.store, where.budget, key, None).bench(inputs.shape))
    except NotRecordedError:
        pass
    if schedule.build_seconds(1, JOBS) > where.budget.left():
        # Not even its build fits: the estimated advice stays. Recorded as its first call's cut,
        # so that the same command replayed (quicker, with time to spare) stops here too.
        where.store.append(Cut(key, where.budget.run, (THREAD_SEED, 0)))
        raise BudgetSpentError
    built = where.toolchain.build(prepared)
    if built.executable is None or candidate_id(channel) in built.failed:
        return ThreadFailure(Status.compile_error, built.log[-2000:])
    harness = where.harness(built.executable, candidate_id(channel), inputs.workload)
    return search(Recording(where.store, where.budget, key, harness).bench(inputs.shape))


def recommend_threads(
    channel: ChannelParams, inputs: ThreadInputs, where: ThreadRun
) -> ThreadAdvice | ThreadFailure:
    """The measured recommendation for the tuned channel, or why it could not be measured."""
    found = _search(channel, inputs, where, lambda b: (recommend_on(inputs, b), b.cost))
    if isinstance(found, ThreadFailure):
        return found
    rec, cost = found
    return advice.advice(rec, cost)


def sweep_threads(
    channel: ChannelParams, inputs: ThreadInputs, where: ThreadRun, budget: float = math.inf
) -> tuple[ThreadAdvice | ThreadFailure, tuple[SweepPoint, ...]]:
    """The recommendation, then the counts of one producer to one group per usable CPU (each
    with the cost's consumers per producer) and the recommendation in the same interleaved
    rounds: the ground truth to check it against. Of the command's `budget` seconds, the sweep
    is sized to SWEEP_SHARE (kept from the recommendation) and stops at the budget's end with
    what it measured."""
    seconds = budget * SWEEP_SHARE

    def both(bench: Bench) -> tuple[ThreadAdvice, tuple[SweepPoint, ...]]:
        rec = recommend_on(inputs, bench, reserve=seconds if math.isfinite(seconds) else 0.0)
        points = sweep(bench.measure, bench.shape, bench.cost, rec.config(), seconds)
        return advice.advice(rec, bench.cost), points

    found = _search(channel, inputs, where, both)
    return (found, ()) if isinstance(found, ThreadFailure) else found
