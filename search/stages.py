"""The search's stages for a workload: Stage One with the idealised producer and consumer (events
only), Stage Two with the app's real work; `exhaustive` one stage over the grid, with the work."""

from __future__ import annotations

from hspc_gen.model import Effort, Objective
from hspc_gen.model.workload import Workload
from hspc_gen.search.measure.harness import PACED_EVENT_NS
from hspc_gen.search.measure.preflight import UserCode
from hspc_gen.search.tune import STAGE_ONE_BASELINES, STAGE_TWO_BASELINES, StageSpec

HANDOFF_NS = 5000.0
"""A buffer hand-off with a wake-up, pessimistically: what an event may cost when a latency
bound hands buffers over nearly empty (only the first sizing probe assumes it)."""


def stages(
    work: Workload,
    event_bytes: int,
    objective: Objective,
    effort: Effort,
    *,
    bounded: bool,
    user: UserCode | None = None,
) -> tuple[StageSpec, ...]:
    """Stage One with the idealised producer and consumer (events only), Stage Two with the app's
    real work (its cost per event measured when it is the user's own code); `exhaustive` is one
    stage over the grid, with the work. `bounded`: the channel has a latency bound."""
    # The paper's optimal, achievable and upper-bound lines compare the work with and without
    # the channel: with no work they would be rates of empty loops, so they are not run.
    worked = work != Workload()
    producer_works = bool(work.producer_ns or work.producer_source)
    baselines = tuple(
        b
        for b in (STAGE_TWO_BASELINES if worked else STAGE_ONE_BASELINES)
        if b != "optimal" or producer_works  # the producer's own work, alone: none to time
    )
    measured = None if user is None else work_ns(work, user)
    paced = PACED_EVENT_NS if objective is Objective.latency else 0.0
    paced += HANDOFF_NS if bounded else 0.0  # sized pessimistically: probes
    if effort is Effort.exhaustive:
        return (StageSpec("exhaustive", work, baselines, measured, event_bytes, paced),)
    return (
        StageSpec("stage_one", Workload(), STAGE_ONE_BASELINES, None, event_bytes, paced),
        StageSpec("stage_two", work, baselines, measured, event_bytes, paced),
    )


def work_ns(workload: Workload, user: UserCode) -> float:
    """The slower side's cost per event: its synthetic work and its own code, measured."""
    producer = workload.producer_ns + user.producer_ns
    consumer = workload.consumer_ns + user.consumer_ns
    return max(producer, consumer, 2.0)
