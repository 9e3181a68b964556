"""One batch through the search, and the budget that bounds it.

A batch is answered in one of two explicit ways. `replay` answers it from the record store alone
(a re-run with the same inputs measures nothing and decides the same). Otherwise the pipeline
builds the batch and `measure` runs it: plans already recorded are replayed, the rest are run on
the binary and appended to the store, so an interrupted run resumes where it stopped. Either way
the batch is raced (`racing`) and decided (`decide`) from its samples.

Budget cuts are recorded too (`records.Cut`): the cold run decides by the clock, and the same
command replayed from the records stops at the same place, however much faster it gets there.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from hspc_gen.model import ChannelParams, Effort, Objective, Status
from hspc_gen.model.workload import Workload
from hspc_gen.search import schedule
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.decide import distance
from hspc_gen.search.measure.build import JOBS
from hspc_gen.search.measure.plan import (
    SAMPLE_SECONDS,
    Plan,
    Runner,
    RunResult,
    make_plan,
    records_from_run,
)
from hspc_gen.search.measure.toolchain import Prepared
from hspc_gen.search.racing import Evaluation, PlanCounts, RaceSettings, race_and_decide
from hspc_gen.search.records.samples import Cut, Sample
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import Batch, StepResult, make_batch

STAGE_ONE_BASELINES = ("producer_alone", "consumer_alone")
STAGE_TWO_BASELINES = (*STAGE_ONE_BASELINES, "optimal", "achievable", "upper_bound")
CONFIRM_LINES = ("p0_parallel",)
"""Timed in the confirmation only, beside the reported figures: both loops alone at once (the
roadmap's line), which the search's decisions do not need and its time plan cannot spare."""
CALIBRATION_ROUND = 1_000_000  # probe rounds are numbered apart from the search's rounds
PROBE_EVENTS = 200_000
MOVE_NS_PER_BYTE = 0.25  # writing then reading an event's bytes, pessimistically (~8 GB/s)
PROBE_SECONDS = 0.01  # a probe sample, sized from the work's guessed cost, lasts about this
# At 1 ms of work per event (app.yaml's most), MIN_SAMPLE_EVENTS still keeps a sample near a
# second, well inside the harness's per-sample deadline.
MIN_SAMPLE_EVENTS, MAX_SAMPLE_EVENTS = 1_000, 50_000_000
CONFIRM_ROUNDS = {Effort.quick: 12, Effort.measure: 20, Effort.patient: 30, Effort.exhaustive: 30}
CONFIRM_TOP = 3
NOT_RECORDED = "not in the record store"
BUDGET_SPENT = "the budget ran out before this plan"


@dataclass(frozen=True)
class StageSpec:
    strategy: str
    workload: Workload
    baselines: tuple[str, ...]
    measured_ns: float | None = None  # the work's cost per event, measured (the user's code)
    event_bytes: int = 8
    extra_ns: float = 0.0  # time per event beyond the work: pacing (the latency objective), or
    # a hand-off per event when a tight latency bound publishes buffers nearly empty

    @property
    def expected_ns(self) -> float:
        """What an event should cost before measuring: its work (measured, else the workload's
        own guess), at least the time to write and read its bytes, and any extra."""
        work = self.measured_ns or self.workload.expected_ns_per_event
        return max(work, MOVE_NS_PER_BYTE * self.event_bytes) + self.extra_ns


@dataclass(frozen=True)
class Settings:
    objective: Objective
    effort: Effort
    seed: int
    search_deadline: float  # time.monotonic() at which the search must stop (the confirmation
    # follows); while the confirmation runs, the confirmation's own end
    oversubscribed: bool
    stages: tuple[StageSpec, ...]
    confirm_deadline: float = math.inf  # the end of the confirmation's share of the budget
    end: float = math.inf  # the end of the whole budget: nothing may start that ends after it
    run: str = ""  # what a budget cut belongs to (budget and effort): a cut of a 30 s run must
    # not stop a 10 min one, while the same command replays its own cuts exactly
    quiet: bool = False  # nothing else runs now: records measured beside other load are not
    # replayed but measured again
    max_latency_ns: float | None = None  # constraints.max_latency_us, in ns
    check_latency: bool = False  # the confirmation checks the bound (a paced arm each)
    step_deadline: float | None = None  # one step's share of the search's time, while it runs

    def current_deadline(self) -> float:
        """When what runs now must stop: the step's share while a step runs, else the search's."""
        return self.search_deadline if self.step_deadline is None else self.step_deadline


def recorded_answer(
    store: RecordStore, prepared: Prepared, plan: Plan, *, quiet: bool = False
) -> RunResult | None:
    """The plan's answer from the store, when every (arm, round) of it is there (or the arm's
    failure in this very chunk); None when something was never measured. A `quiet` run does not
    take records measured while the machine was busy."""
    samples: list[Sample] = []
    statuses: dict[str, Status] = {}
    causes: dict[str, str] = {}
    for arm in sorted({a for rnd in plan.order for a in rnd}):
        records = [
            r
            for r in store.lookup(prepared.key, arm)
            if r.seed == plan.seed
            and r.events_per_sample == plan.events_per_sample
            and not (quiet and r.busy)
        ]
        found = {s.round: s for r in records for s in r.samples if s.round in plan.round_numbers()}
        failed = [
            r for r in records if r.status is not Status.ok and r.first_round == plan.first_round
        ]
        if failed:
            statuses[arm] = failed[-1].status
            causes[arm] = failed[-1].log
        elif any(
            arm in rnd and (plan.first_round + i) not in found for i, rnd in enumerate(plan.order)
        ):
            return None
        samples.extend(found.values())
    ordered = tuple(sorted(samples, key=lambda s: (s.round, s.arm)))
    return RunResult(Status.ok, ordered, "", statuses, replayed=True, causes=causes)


class ReplayRunner:
    """Answers plans from the record store only (a recorded cut answers `skipped`, as it did
    when it was recorded); `missed` turns true at the first plan never measured."""

    def __init__(self, store: RecordStore, prepared: Prepared, settings: Settings) -> None:
        self.store, self.prepared, self.settings = store, prepared, settings
        self.missed = False

    def __call__(self, plan: Plan) -> RunResult:
        found = recorded_answer(self.store, self.prepared, plan, quiet=self.settings.quiet)
        if found is not None:
            return found
        if self.store.was_cut(Cut.of_plan(self.prepared.key, self.settings.run, plan)):
            return RunResult(Status.skipped, (), BUDGET_SPENT, replayed=True)
        self.missed = True
        return RunResult(Status.skipped, (), NOT_RECORDED, replayed=True)


class RecordingRunner:
    """Answers recorded plans from the store and runs the rest with `run_plan`, appending what
    it measured. Past the deadline it runs nothing, records the cut and answers `skipped`."""

    def __init__(
        self,
        store: RecordStore,
        prepared: Prepared,
        run_plan: Runner,
        *,
        deadline: float = math.inf,
        first_until: float = -math.inf,
        run: str = "",
        quiet: bool = False,
    ) -> None:
        self.store, self.prepared, self.run_plan = store, prepared, run_plan
        self.deadline, self.run, self.quiet = deadline, run, quiet
        self.first_until = first_until  # the first plan to run may end as late as this
        self.ran = False

    def __call__(self, plan: Plan) -> RunResult:
        found = recorded_answer(self.store, self.prepared, plan, quiet=self.quiet)
        if found is not None:  # what is recorded is used, whatever cut a shorter run
            return found
        cut = Cut.of_plan(self.prepared.key, self.run, plan)
        if self.store.was_cut(cut):
            return RunResult(Status.skipped, (), BUDGET_SPENT, replayed=True)
        deadline = self.deadline if self.ran else max(self.deadline, self.first_until)
        if time.monotonic() + plan_seconds(plan) > deadline:
            self.store.append(cut)
            return RunResult(Status.skipped, (), BUDGET_SPENT)
        self.ran = True
        # Recorded, but beside other load: a quiet run measures it again, and says so.
        busy_record = self.quiet and recorded_answer(self.store, self.prepared, plan) is not None
        result = self.run_plan(plan)
        if result.status in (Status.ok, Status.wrong_answer) or result.arm_status:
            self.store.extend(records_from_run(self.prepared.key, plan, result))
        return dataclasses.replace(result, remeasured=True) if busy_record else result


def probe_events(expected_ns: float) -> int:
    events = PROBE_SECONDS * 1e9 / expected_ns
    return int(min(PROBE_EVENTS, max(MIN_SAMPLE_EVENTS, events)))


def probe_plan(batch: Batch, stage: StageSpec, seed: int) -> Plan:
    """A few samples of the incumbent alone, numbered apart from the search's rounds."""
    events = probe_events(stage.expected_ns)
    return make_plan(
        batch.candidates,
        incumbent=batch.incumbent.id,
        baselines=(),
        rounds=3,
        events_per_sample=events,
        seed=seed,
        first_round=CALIBRATION_ROUND,
        live=(),
        sample_seconds=events * stage.expected_ns * 1e-9,
    )


def events_per_sample(probe: Plan, result: RunResult) -> int:
    """Events for one sample to last about SAMPLE_SECONDS: the median of the probe's samples.
    The probe is recorded like any plan, so a re-run sizes samples identically."""
    costs = sorted(s.ns_per_event for s in result.samples if s.arm == probe.incumbent)
    if not costs:
        return MIN_SAMPLE_EVENTS  # the probe failed: the smallest samples, so nothing runs long
    ns_per_event = costs[len(costs) // 2]  # per event moved: a capped probe moves fewer
    return int(min(MAX_SAMPLE_EVENTS, max(MIN_SAMPLE_EVENTS, SAMPLE_SECONDS * 1e9 / ns_per_event)))


def size_and_race(
    batch: Batch,
    stage: StageSpec,
    settings: Settings,
    runners: tuple[Runner, Runner],
    *,
    drop: bool = True,
) -> Evaluation:
    """Size the samples with a probe (the first runner), then race and decide the batch (the
    second): `drop` False keeps every arm to the last round, as a confirmation must."""
    probe = probe_plan(batch, stage, settings.seed)
    sized = runners[0](probe)
    race = RaceSettings(
        rounds=batch.rounds,
        events_per_sample=events_per_sample(probe, sized),
        seed=settings.seed,
        objective=settings.objective,
        baselines=stage.baselines,
        drop=drop,
        latency_bound_ns=settings.max_latency_ns if settings.check_latency else None,
    )
    failed = sized if sized.status not in (Status.ok, Status.skipped) else None
    evaluation = race_and_decide(
        batch, runners[1], settings=race, oversubscribed=settings.oversubscribed, failed=failed
    )
    return dataclasses.replace(evaluation, counts=evaluation.counts + PlanCounts.of(sized))


def replay(
    batch: Batch,
    stage: StageSpec,
    settings: Settings,
    store: RecordStore,
    prepared: Prepared,
    *,
    drop: bool = True,
) -> Evaluation | None:
    """The batch's evaluation from the records alone, or None when a plan it needs was never
    measured (then the batch must be built and measured). `drop` must be what the measuring
    run used: racing on the replay drops and stops exactly where it did then."""
    # The sizing probe is taken as recorded even if it ran beside other load (it only sizes the
    # samples): measuring it again would resize every plan after it, and none would replay.
    probe = ReplayRunner(store, prepared, dataclasses.replace(settings, quiet=False))
    recorded_only = ReplayRunner(store, prepared, settings)
    evaluation = size_and_race(batch, stage, settings, (probe, recorded_only), drop=drop)
    return None if probe.missed or recorded_only.missed else evaluation


def measure_and_record(
    batch: Batch,
    stage: StageSpec,
    settings: Settings,
    store: RecordStore,
    *,
    prepared: Prepared,
    run_plan: Runner,
    drop: bool = True,
) -> Evaluation:
    """The batch's evaluation with the built binary: recorded plans replayed, the rest measured
    and recorded; the probe always runs (a recorded one is taken even if it ran beside other
    load: it only sizes the samples), the race stops at the deadline; its first chunk may run
    past a step's deadline until the search's, so that no build goes unmeasured (a build slower
    than the plan's guess used to leave its step at 0 rounds)."""
    probe = RecordingRunner(store, prepared, run_plan)
    race = RecordingRunner(
        store,
        prepared,
        run_plan,
        deadline=settings.current_deadline(),
        first_until=settings.search_deadline,
        run=settings.run,
        quiet=settings.quiet,
    )
    return size_and_race(batch, stage, settings, (probe, race), drop=drop)


def plan_seconds(plan: Plan) -> float:
    """What a plan should take: its samples, each sized to SAMPLE_SECONDS, with their overhead."""
    return schedule.sample_seconds(sum(len(order) for order in plan.order))


def batch_seconds(batch: Batch, stage: StageSpec, prepared: Prepared) -> float:
    """A pessimistic guess of building the batch and running its first chunk of rounds."""
    arms = len(batch.candidates) + len(stage.baselines) + 1
    build = schedule.build_seconds(prepared.build_points, JOBS, max(1, len(prepared.kinds)))
    return build + schedule.race_seconds(arms, stats.MIN_ROUNDS)


def fits(needed: float, deadline: float) -> bool:
    """Whether a batch that needs `needed` seconds can still start before the deadline."""
    return time.monotonic() + needed < deadline


def confirm_deadline(settings: Settings, batch: Batch, stage: StageSpec) -> float:
    """The confirmation's share of the budget; past it, one chunk still runs if it ends before
    the budget does, so that the reported figures come from a fresh process."""
    latency_arms = len(batch.candidates) if settings.max_latency_ns is not None else 0
    arms = len(batch.candidates) + latency_arms + len(stage.baselines) + 1
    chunk = schedule.race_seconds(arms, stats.MIN_ROUNDS)
    if time.monotonic() + chunk <= settings.end:
        return max(settings.confirm_deadline, time.monotonic() + chunk + 1e-3)
    return settings.confirm_deadline


def nearest_first(batch: Batch) -> list[ChannelParams]:
    """The batch's other points, nearest the incumbent first: fewest parameters changed, then
    the smallest changes in powers of two (in the strategy's order among equals). What a batch
    trimmed to fit the budget keeps."""
    others = [c.params for c in batch.candidates if c.id != batch.incumbent.id]
    return sorted(others, key=lambda params: distance(params, batch.incumbent.params))


def trimmed(batch: Batch, keep: int) -> Batch:
    """The incumbent and the `keep` - 1 points nearest it."""
    kept = nearest_first(batch)[: keep - 1]
    return make_batch(batch.stage, batch.step, kept, batch.incumbent.params, batch.rounds)


def _unpinned(params: ChannelParams) -> ChannelParams:
    return params.replace(producer_cpu=-1, consumer_cpu=-1)


def _codes(step: StepResult) -> set[ChannelParams]:
    """The distinct code a step ranked (its points less their placements)."""
    return {_unpinned(step.batch.params_of(arm)) for arm in step.decision.ranking}


def confirmation_batch(
    history: Sequence[StepResult], winner: ChannelParams, effort: Effort
) -> Batch:
    """The winner and the runners-up, for a fresh process to re-measure: selection used
    screening data, so the reported numbers must not (the winner's curse). The runners-up come
    from the latest decision that ranked at least CONFIRM_TOP distinct codes: a placement step ranks
    the winner's own placements, and a winner that collapses in a fresh process (a spinning
    waiter on a full host does) must meet real alternatives there, not copies of itself."""
    decided = [step for step in history if step.decision.winner is not None]
    ranked = [step for step in decided if len(_codes(step)) >= CONFIRM_TOP]
    source = ranked[-1] if ranked else (decided[-1] if decided else None)
    contenders = [winner]
    seen = {_unpinned(winner)}  # one placement of each code: the winner's own is the winner
    if source is not None:
        for arm in source.decision.ranking:
            params = source.batch.params_of(arm)
            if _unpinned(params) not in seen and len(contenders) < CONFIRM_TOP:
                contenders.append(params)
                seen.add(_unpinned(params))
    return make_batch("confirm", "confirm", contenders, winner, CONFIRM_ROUNDS[effort])
