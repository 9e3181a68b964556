"""The thread recommendation: counts from the count search, CPUs from the placement race, evidence.

`recommend` respects counts the target fixes (threads.producers / threads.consumers integers) and
searches the `auto` ones; `advice.advice` turns a Recommendation into the model's ThreadAdvice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from hspc_gen.errors import UserError
from hspc_gen.model import MAX_THREADS, PinThreads
from hspc_gen.model.shape import TopologyShape
from hspc_gen.model.threads import Capacity
from hspc_gen.search.decisions.stats import MARGIN_FLOOR, MIN_ROUNDS
from hspc_gen.search.threads import placement
from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.capacity import (
    KEEP_UP_SLACK,
    MAX_SAMPLE_THREADS,
    Estimate,
    WorkCost,
    estimate,
)
from hspc_gen.search.threads.counts import BUDGET, CountResult, Host, search_count
from hspc_gen.search.threads.measure import (
    BudgetSpentError,
    Config,
    Lab,
    Measure,
    Point,
    Relative,
)
from hspc_gen.search.threads.plan import Planner

Count = int | Literal["auto"]
UNBOUNDED = Planner()
"""The full plan, whatever it takes."""
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
    oversubscription: str | None = None  # why counts past the CPUs were searched; None: not
    resolution: float | None = None  # the knee's step between counts (0.044: 4.4%)


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
    """Groups of one producer and k consumers, from one to the estimate's limit, the coarse grid
    laid out from the groups that saturate the CPUs."""
    high = max(1, est.max_threads // (1 + k))
    start = max(1, est.producers * (1 + est.consumers_per_producer) // (1 + k))
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
    planner: Planner = UNBOUNDED,
) -> Recommendation:
    """Search the auto counts on `measure` on the plan `planner` picks, then where to run them;
    `cost` is one pair's measured per-event work (the first estimate)."""
    est = estimate(shape, cost, min(max_threads, MAX_SAMPLE_THREADS))
    lab = Lab(measure)
    host = Host(len(shape.places), shape.usable_cpus(), shape.virtual)
    counts = search_count(lab, axes_for(producers, consumers, cost, est), planner, host)
    choice, counts = _place(lab, shape, counts, pin)
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
        evidence=_evidence(lab, shape=shape, est=est, counts=counts, choice=choice),
        taskset=placement.taskset_list(shape, chosen),
        omp_places=placement.omp_places(shape, chosen),
    )


def _place(
    lab: Lab, shape: TopologyShape, counts: CountResult, pin: PinThreads
) -> tuple[placement.PlacementChoice, CountResult]:
    """Where to run the counts, raced as the plan allows; when the plan leaves no time for it or
    the budget ends the race, the counts stand and where to run them is not measured."""
    rounds = counts.plan.placement_rounds
    if not rounds or counts.termination == BUDGET:
        return placement.unmeasured(shape, counts.chosen, pin), counts
    margin = max(MARGIN_FLOOR, counts.tolerance)
    try:
        return placement.choose(lab, shape, counts.chosen, pin, margin, max_rounds=rounds), counts
    except BudgetSpentError:
        stopped = dataclasses.replace(counts, termination=BUDGET)
        return placement.unmeasured(shape, counts.chosen, pin), stopped


def _evidence(
    lab: Lab,
    *,
    shape: TopologyShape,
    est: Estimate,
    counts: CountResult,
    choice: placement.PlacementChoice,
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
        margin=max(MARGIN_FLOOR, counts.tolerance),
        termination=counts.termination,
        curve=tuple(sorted(curve, key=lambda p: (p.config.threads, p.config.producers))),
        placements=choice.trials,
        rounds=lab.rounds,
        oversubscription=counts.oversubscription,
        resolution=counts.plan.resolution,
    )


def _versus(lab: Lab, config: Config, best: Config) -> Relative | None:
    """The count over the best, paired by round; None when they shared too few rounds."""
    if config == best:
        return Relative(1.0, 1.0, 1.0, len(lab.samples(best)))
    rel = lab.compare(config, best)
    return rel if rel.n >= MIN_ROUNDS else None
