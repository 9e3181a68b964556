"""The thread recommendation: counts from the ramp, CPUs from the placement search, evidence.

`recommend` respects counts the target fixes (threads.producers / threads.consumers integers) and
searches the `auto` ones; `advice.advice` turns a Recommendation into the model's ThreadAdvice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from hspc_gen.errors import UserError
from hspc_gen.model import MAX_THREADS, PinThreads
from hspc_gen.model.threads import Capacity
from hspc_gen.search.stats import MARGIN_FLOOR, MIN_ROUNDS
from hspc_gen.search.threads import placement
from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.capacity import (
    KEEP_UP_SLACK,
    Estimate,
    TopologyShape,
    WorkCost,
    estimate,
)
from hspc_gen.search.threads.measure import (
    BudgetSpentError,
    Config,
    Lab,
    Measure,
    Point,
    Relative,
)
from hspc_gen.search.threads.reinforcer import BUDGET, CountResult, search_count

Count = int | Literal["auto"]
MIN_CONSUMER_SPAN = 4
"""With producers fixed, consumers are searched up to this many (or twice the estimate) each."""


@dataclass(frozen=True)
class Evidence:
    capacity: Capacity
    estimate: Estimate
    tolerance: float
    margin: float
    termination: str
    curve: tuple[Point, ...]  # every unpinned count measured, in count order
    placements: tuple[placement.PlacementTrial, ...]
    rounds: int


@dataclass(frozen=True)
class Recommendation:
    producers: int
    consumers: int
    consumers_per_producer: int
    producer_cpus: tuple[int, ...]  # pinned: one per producer; unpinned: the affinity mask
    consumer_cpus: tuple[int, ...]
    pinned: bool
    placement: str
    termination: str
    evidence: Evidence
    taskset: str
    omp_places: str

    @property
    def threads(self) -> int:
        return self.producers + self.consumers

    def config(self) -> Config:
        if not self.pinned:
            return Config(self.producers, self.consumers)
        return Config(
            self.producers, self.consumers, self.placement, self.producer_cpus, self.consumer_cpus
        )


def axes_for(producers: Count, consumers: Count, cost: WorkCost, est: Estimate) -> list[Axis]:
    """The counts to search: producer groups when both are auto (at the consumer ratio rounded
    up, and down too when the ratio lies between), else the auto one."""
    k = est.consumers_per_producer
    if producers == "auto" and consumers == "auto":
        ratios = (
            [k, k - 1] if k > 1 and cost.consumer_ns / cost.producer_ns < k - KEEP_UP_SLACK else [k]
        )
        return [_groups(est, r) for r in ratios]
    if producers == "auto":
        assert consumers != "auto"
        start = min(consumers, max(1, round(consumers / k)))
        return [Axis("producers", 1, consumers, start, consumers)]
    if consumers == "auto":
        span = max(2 * k, MIN_CONSUMER_SPAN)
        high = max(producers, min(est.max_threads - producers, producers * span))
        return [Axis("consumers", producers, high, min(producers * k, high), producers)]
    if consumers < producers:
        raise UserError(
            f"threads.consumers ({consumers}) is less than threads.producers ({producers}): "
            "every producer hands its buffers to consumers of its own"
        )
    return [Axis("consumers", consumers, consumers, consumers, producers)]


def _groups(est: Estimate, k: int) -> Axis:
    high = max(1, est.max_threads // (1 + k))
    start = max(1, est.producers * (1 + est.consumers_per_producer) // (1 + k) // 2)
    return Axis("groups", 1, high, min(start, high), k)


def recommend(
    shape: TopologyShape,
    cost: WorkCost,
    measure: Measure,
    *,
    producers: Count = "auto",
    consumers: Count = "auto",
    pin: PinThreads = PinThreads.auto,
    max_threads: int = MAX_THREADS,
) -> Recommendation:
    """Search the auto counts on `measure`, then where to run them; `cost` is one pair's
    measured per-event work (the first estimate)."""
    est = estimate(shape, cost, max_threads)
    lab = Lab(measure)
    counts = search_count(
        lab, axes_for(producers, consumers, cost, est), shape.cores, shape.virtual
    )
    margin = max(MARGIN_FLOOR, counts.tolerance)
    try:
        choice = placement.choose(lab, shape, counts.chosen, pin, margin)
    except BudgetSpentError:  # the counts stand; where to run them was not measured
        choice = placement.unmeasured(shape, counts.chosen, pin)
        counts = dataclasses.replace(counts, termination=BUDGET)
    chosen = choice.chosen
    mask = placement.affinity_mask(shape, chosen)
    return Recommendation(
        producers=chosen.producers,
        consumers=chosen.consumers,
        consumers_per_producer=chosen.consumers_per_producer,
        producer_cpus=chosen.producer_cpus if chosen.pinned else mask,
        consumer_cpus=chosen.consumer_cpus if chosen.pinned else mask,
        pinned=chosen.pinned,
        placement=placement.placement_name(chosen),
        termination=counts.termination,
        evidence=_evidence(lab, shape=shape, est=est, counts=counts, choice=choice, margin=margin),
        taskset=placement.taskset_list(shape, chosen),
        omp_places=placement.omp_places(shape, chosen),
    )


def _evidence(
    lab: Lab,
    *,
    shape: TopologyShape,
    est: Estimate,
    counts: CountResult,
    choice: placement.PlacementChoice,
    margin: float,
) -> Evidence:
    curve = [
        dataclasses.replace(lab.point(c), vs_best=_versus(lab, c, counts.best))
        for c in lab.measured()
        if not (c.pinned or c.replica)
    ]
    return Evidence(
        capacity=shape.capacity(),
        estimate=est,
        tolerance=counts.tolerance,
        margin=margin,
        termination=counts.termination,
        curve=tuple(sorted(curve, key=lambda p: (p.config.threads, p.config.producers))),
        placements=choice.trials,
        rounds=lab.rounds,
    )


def _versus(lab: Lab, config: Config, best: Config) -> Relative | None:
    """The count over the best, paired by round; None when they shared too few rounds."""
    if config == best:
        return Relative(1.0, 1.0, 1.0, len(lab.samples(best)))
    rel = lab.compare(config, best)
    return rel if rel.n >= MIN_ROUNDS else None
