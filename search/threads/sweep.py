"""The ground truth a recommendation is checked against (`hspc-gen threads --sweep`).

Every count from one producer group (each with the cost's consumers per producer) to one group per
usable CPU, and the recommendation, in the same shuffled rounds, as the guide's "Checking a
recommendation" asks. Sized to the seconds it is given: SWEEP_ROUNDS when they fit, else fewer
rounds (down to MIN_ROUNDS), else fewer counts, spaced geometrically from one to the most (the
recommendation kept). It is measured a few rounds per call, so the budget stops it between calls,
with the rounds it has.
"""

from __future__ import annotations

import math

import numpy as np

from hspc_gen.model import Figure
from hspc_gen.model.shape import TopologyShape
from hspc_gen.model.threads import SweepPoint
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.stats import MIN_ROUNDS
from hspc_gen.search.threads.capacity import WorkCost
from hspc_gen.search.threads.measure import BudgetSpentError, Config, Lab
from hspc_gen.search.threads.plan import PLAN_SHARE
from hspc_gen.search.threads.recorded import RecordedMeasure

SWEEP_ROUNDS = 10
SWEEP_CALL_ROUNDS = 2
"""Rounds per call: the budget can stop the sweep this often."""


def default_max_groups(shape: TopologyShape) -> int:
    """Groups of one producer and its consumers up to one per usable CPU (twice the CPUs in
    threads: oversubscription is part of the curve), and at least three, so even a small host
    shows a point past its peak."""
    return max(3, len(shape.cpus))


def sweep(
    measure: RecordedMeasure,
    shape: TopologyShape,
    cost: WorkCost,
    recommended: Config,
    seconds: float = math.inf,
) -> tuple[SweepPoint, ...]:
    """The sweep's points, measured on `measure` within `seconds`."""
    k = cost.consumers_per_producer()
    configs = [Config(n, n * k) for n in range(1, default_max_groups(shape) + 1)]
    rounds, configs = _fit(measure, configs, recommended, seconds * PLAN_SHARE)
    lab = Lab(measure)
    try:
        while lab.rounds < rounds:
            lab.run(configs, min(SWEEP_CALL_ROUNDS, rounds - lab.rounds))
    except BudgetSpentError:
        pass  # the rounds measured stand
    return tuple(
        SweepPoint(c.producers, c.consumers, c.pinned, c == recommended, _rate(lab, c))
        for c in configs
        if lab.samples(c)
    )


def _fit(
    measure: RecordedMeasure, configs: list[Config], recommended: Config, room: float
) -> tuple[int, list[Config]]:
    """The rounds and counts that fit `room` seconds."""
    wanted = [*configs, recommended] if recommended not in configs else configs
    per_round = measure.pace.call_seconds(wanted, 1)
    if per_round * SWEEP_ROUNDS <= room:
        return SWEEP_ROUNDS, wanted
    if per_round * MIN_ROUNDS <= room:
        return int(room // per_round), wanted
    fits = max(2, int(room / MIN_ROUNDS / (per_round / len(wanted))) - 1)
    spaced = {round(float(n)) for n in np.geomspace(1, len(configs), min(fits, len(configs)))}
    kept = [c for c in configs if c.producers in spaced]
    return MIN_ROUNDS, [*kept, recommended] if recommended not in kept else kept


def _rate(lab: Lab, config: Config) -> Figure:
    values = np.array([s.events_per_second for s in lab.samples(config)], dtype=float)
    low, high = stats.bootstrap_interval(values, stats.median)
    return Figure(float(np.median(values)), low, high, int(values.size))
