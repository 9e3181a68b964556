"""The search loop: strategy -> render -> build -> (cached) run -> race -> decide, batch by batch.

`tune` is wired by the pipeline. Its collaborators come in as values so tests can swap the build
and the run for replays: a `Toolchain` turns a batch into a runner (the real one renders, builds
and runs the benchmark binary), and every plan goes through the record store first, so a re-run
with the same inputs measures nothing and an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hspc_gen.model import ChannelParams, Effort, Objective, Status
from hspc_gen.search import stats
from hspc_gen.search.racing import Evaluation, RaceSettings, evaluate_batch
from hspc_gen.search.records import (
    Plan,
    Record,
    RecordKey,
    Runner,
    RunResult,
    Sample,
    make_plan,
    records_from_run,
)
from hspc_gen.search.space import Space
from hspc_gen.search.store import RecordStore
from hspc_gen.search.strategies import registry
from hspc_gen.search.strategies.base import Batch, StepResult, make_batch
from hspc_gen.target import Workload

STAGE_ONE_BASELINES = ("producer_alone", "consumer_alone")
STAGE_TWO_BASELINES = (*STAGE_ONE_BASELINES, "optimal", "achievable", "upper_bound")
CALIBRATION_ROUND = 1_000_000  # probe rounds are numbered apart from the search's rounds
PROBE_EVENTS = 200_000
PROBE_SECONDS = 0.01  # a probe sample, sized from the work's guessed cost, lasts about this
SAMPLE_SECONDS = 0.015  # equal work per sample, sized to last about this long
# At 1 ms of work per event (app.yaml's most), MIN_SAMPLE_EVENTS still keeps a sample near a second,
# well inside the harness's per-sample deadline.
MIN_SAMPLE_EVENTS, MAX_SAMPLE_EVENTS = 1_000, 50_000_000
CONFIRM_ROUNDS = {Effort.quick: 12, Effort.measure: 20, Effort.patient: 30, Effort.exhaustive: 30}
CONFIRM_TOP = 3
# Time model of a batch, from builds on a 2-core VM: Meson's set-up and link, then ~0.8 s per
# variant unit per core; a sample costs ~1.5x its timed part (set-up, pinning, the JSON line).
BUILD_SETUP_SECONDS = 4.0
UNIT_SECONDS = 0.8
SAMPLE_OVERHEAD = 1.5
MIN_CONFIRM_SECONDS = 10.0


@dataclass(frozen=True)
class Prepared:
    """A batch made ready to run: the record key of its sources and a lazy real runner."""

    key: RecordKey
    run: Runner  # builds on first use; a failed build answers every plan with compile_error
    build_units: int = 0  # translation units a build would compile (for the time estimate)


Toolchain = Callable[[Batch, Workload, tuple[str, ...]], Prepared]


@dataclass(frozen=True)
class StageSpec:
    strategy: str
    workload: Workload
    baselines: tuple[str, ...]
    share: float = 1.0  # of the search's time, relative to the other stages' shares


@dataclass(frozen=True)
class Settings:
    objective: Objective
    effort: Effort
    seed: int
    deadline: float  # time.monotonic() at which the search must stop (the confirmation follows)
    oversubscribed: bool
    stages: tuple[StageSpec, ...]
    confirm_deadline: float = float("inf")  # the end of the whole budget
    run: str = ""  # what a budget cut belongs to (budget and effort): a cut of a 30 s run must
    # not stop a 10 min one, while the same command replays its own cuts exactly


@dataclass
class Progress:
    """What a progress line shows; `show` is called between chunks only, never during one."""

    show: Callable[[str], None] = lambda _line: None
    measured_plans: int = 0
    cached_plans: int = 0
    cut_short: bool = False  # the budget cut a plan (recorded, so a replay says so too)


@dataclass(frozen=True)
class Machinery:
    """The search's ties to the world: where records go, how batches build, who is watching."""

    store: RecordStore
    toolchain: Toolchain
    progress: Progress


@dataclass(frozen=True)
class Outcome:
    winner: ChannelParams
    history: tuple[StepResult, ...]
    evaluations: tuple[Evaluation, ...]
    budget_exhausted: bool
    measured_plans: int
    cached_plans: int
    failures: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (candidate id, status)


def batch_cut(run: str) -> str:
    return f"budget:{run}:batch"


def plan_cut(run: str, plan: Plan) -> str:
    return f"budget:{run}:{plan.seed}:{plan.first_round}"


def record_cut(store: RecordStore, key: RecordKey, marker: str) -> None:
    """Remember where the budget cut the search, so a re-run from the records stops at the same
    place and decides (and writes) the same, however much faster it gets there."""
    store.append(Record(key=key, arm=marker, status=Status.skipped, samples=()))


def was_cut(store: RecordStore, key: RecordKey, marker: str) -> bool:
    return bool(store.lookup(key, marker))


class CachedRunner:
    """Answers a plan from the store when every (arm, round) of it is there; else runs it and
    appends what it measured. Past the deadline it runs nothing, records the cut and answers
    `skipped` (as it does on a re-run that meets the recorded cut)."""

    def __init__(
        self,
        store: RecordStore,
        prepared: Prepared,
        deadline: float,
        progress: Progress,
        run: str = "",
    ) -> None:
        self.store, self.prepared, self.deadline, self.progress = (
            store,
            prepared,
            deadline,
            progress,
        )
        self.run = run

    def _cached(self, plan: Plan) -> RunResult | None:
        samples: list[Sample] = []
        statuses: dict[str, Status] = {}
        for arm in {a for rnd in plan.order for a in rnd}:
            records = [
                r
                for r in self.store.lookup(self.prepared.key, arm)
                if r.seed == plan.seed and r.events_per_sample == plan.events_per_sample
            ]
            found = {
                s.round: s for r in records for s in r.samples if s.round in plan.round_numbers()
            }
            failed = [
                r.status
                for r in records
                if r.status is not Status.ok and r.first_round == plan.first_round
            ]
            if failed:
                statuses[arm] = failed[-1]
            elif any(
                arm in rnd and (plan.first_round + i) not in found
                for i, rnd in enumerate(plan.order)
            ):
                return None
            samples.extend(found.values())
        return RunResult(
            Status.ok, tuple(sorted(samples, key=lambda s: (s.round, s.arm))), "", statuses
        )

    def __call__(self, plan: Plan) -> RunResult:
        cut = RunResult(Status.skipped, (), "the budget ran out before this plan")
        cached = self._cached(plan)  # what is recorded is used, whatever cut a shorter run
        if cached is not None:
            self.progress.cached_plans += 1
            return cached
        marker = plan_cut(self.run, plan)
        if not was_cut(self.store, self.prepared.key, marker) and time.monotonic() < self.deadline:
            return self._measure(plan)
        if not was_cut(self.store, self.prepared.key, marker):
            record_cut(self.store, self.prepared.key, marker)
        self.progress.cut_short = True
        return cut

    def _measure(self, plan: Plan) -> RunResult:
        result = self.prepared.run(plan)
        self.progress.measured_plans += 1
        if result.status in (Status.ok, Status.wrong_answer) or result.arm_status:
            self.store.extend(records_from_run(self.prepared.key, plan, result))
        return result


def probe_events(workload: Workload) -> int:
    return int(
        min(
            PROBE_EVENTS,
            max(MIN_SAMPLE_EVENTS, PROBE_SECONDS * 1e9 / workload.expected_ns_per_event),
        )
    )


def events_per_sample(
    machinery: Machinery, prepared: Prepared, batch: Batch, stage: StageSpec, seed: int
) -> int:
    """Events for one sample to last about SAMPLE_SECONDS: the median of a few probes of the
    incumbent. The probe is recorded like any plan, so a re-run sizes samples identically."""
    probe = probe_events(stage.workload)
    plan = make_plan(
        batch.candidates,
        incumbent=batch.incumbent.id,
        baselines=(),
        rounds=3,
        events_per_sample=probe,
        seed=seed,
        first_round=CALIBRATION_ROUND,
        live=(),
    )
    runner = CachedRunner(machinery.store, prepared, float("inf"), machinery.progress)
    result = runner(plan)
    walls = sorted(s.wall_ns for s in result.samples if s.arm == batch.incumbent.id)
    if not walls:
        return MIN_SAMPLE_EVENTS  # the probe failed: the smallest samples, so nothing runs long
    ns_per_event = walls[len(walls) // 2] / probe
    return int(min(MAX_SAMPLE_EVENTS, max(MIN_SAMPLE_EVENTS, SAMPLE_SECONDS * 1e9 / ns_per_event)))


def batch_seconds(batch: Batch, stage: StageSpec, prepared: Prepared) -> float:
    """A pessimistic guess of building the batch and running its first chunk of rounds."""
    build = BUILD_SETUP_SECONDS + prepared.build_units * UNIT_SECONDS / (os.cpu_count() or 1)
    arms = len(batch.candidates) + len(stage.baselines) + 1
    return build + stats.MIN_ROUNDS * arms * SAMPLE_SECONDS * SAMPLE_OVERHEAD


def _out_of_time(store: RecordStore, key: RecordKey, settings: Settings, needed: float) -> bool:
    """Whether the batch must be left out: the cold run decides by the clock and records the cut
    for its budget and effort, so the same command from the records leaves out the same batches
    (and a longer budget is not held to a shorter one's cuts)."""
    marker = batch_cut(settings.run)
    if was_cut(store, key, marker):
        return True
    if time.monotonic() + needed < settings.deadline:
        return False
    record_cut(store, key, marker)
    return True


def evaluate(
    batch: Batch,
    stage: StageSpec,
    settings: Settings,
    machinery: Machinery,
    prepared: Prepared,
    *,
    drop: bool = True,
) -> Evaluation:
    events = events_per_sample(machinery, prepared, batch, stage, settings.seed)
    race = RaceSettings(
        rounds=batch.rounds,
        events_per_sample=events,
        seed=settings.seed,
        objective=settings.objective,
        baselines=stage.baselines,
        drop=drop,
    )
    runner = CachedRunner(
        machinery.store, prepared, settings.deadline, machinery.progress, settings.run
    )
    return evaluate_batch(batch, runner, settings=race, oversubscribed=settings.oversubscribed)


def _announce(progress: Progress, batch: Batch, best: ChannelParams, deadline: float) -> None:
    left = max(0.0, deadline - time.monotonic())
    progress.show(
        f"stage {batch.stage} · {batch.step} · {len(batch.candidates)} candidates · "
        f"best {best.primitive} {best.buffers}x{best.buffer_bytes} B pad {best.padding_bytes} · "
        f"{left:.0f} s left"
    )


def tune(
    space: Space,
    start: ChannelParams,
    settings: Settings,
    machinery: Machinery,
    on_improve: Callable[[ChannelParams], None] = lambda _p: None,
) -> Outcome:
    """Run every stage's strategy from the best point so far, within the deadline."""
    best = start
    history: list[StepResult] = []
    evaluations: list[Evaluation] = []
    exhausted = False
    for index, stage in enumerate(settings.stages):
        staged = dataclasses.replace(settings, deadline=_stage_deadline(settings, index))
        strategy = registry.create(stage.strategy, space, best, settings.effort)
        stage_history: list[StepResult] = []
        while (batch := strategy.propose(stage_history)) is not None:
            prepared = machinery.toolchain(batch, stage.workload, stage.baselines)
            needed = batch_seconds(batch, stage, prepared)
            if _out_of_time(machinery.store, prepared.key, staged, needed):
                exhausted = True
                break
            _announce(machinery.progress, batch, best, staged.deadline)
            evaluation = evaluate(batch, stage, staged, machinery, prepared)
            stage_history.append(evaluation.step)
            evaluations.append(evaluation)
            winner = evaluation.step.winner()
            if winner is not None and winner != best:
                best = winner
                on_improve(best)
        history.extend(stage_history)
    return Outcome(
        winner=best,
        history=tuple(history),
        evaluations=tuple(evaluations),
        budget_exhausted=exhausted or machinery.progress.cut_short,
        measured_plans=machinery.progress.measured_plans,
        cached_plans=machinery.progress.cached_plans,
        failures=_failures(evaluations),
    )


def _stage_deadline(settings: Settings, index: int) -> float:
    """Stage `index` may run until its share of the search time left when it starts is spent."""
    shares = [stage.share for stage in settings.stages[index:]]
    left = max(0.0, settings.deadline - time.monotonic())
    return time.monotonic() + left * shares[0] / sum(shares)


def _failures(evaluations: Sequence[Evaluation]) -> tuple[tuple[str, str], ...]:
    found = {
        (arm, str(status))
        for e in evaluations
        for arm, status in e.race.arm_status.items()
        if status is not Status.ok
    }
    return tuple(sorted(found))


def confirmation_batch(outcome: Outcome, effort: Effort) -> Batch:
    """The winner and the runners-up of the last decision, for a fresh process to re-measure:
    selection used screening data, so the reported numbers must not (the winner's curse)."""
    decided = [step for step in outcome.history if step.decision.winner is not None]
    final = decided[-1] if decided else None
    contenders = [outcome.winner]
    if final is not None:
        for arm in final.decision.ranking:
            params = final.batch.params_of(arm)
            if params not in contenders and len(contenders) < CONFIRM_TOP:
                contenders.append(params)
    return make_batch("confirm", "confirm", contenders, outcome.winner, CONFIRM_ROUNDS[effort])


def confirm(
    outcome: Outcome, stage: StageSpec, settings: Settings, machinery: Machinery
) -> Evaluation:
    batch = confirmation_batch(outcome, settings.effort)
    machinery.progress.show(f"confirming {len(batch.candidates)} candidates in a fresh process")
    # The budget's last share; past it, still enough for one chunk, so numbers are reported.
    deadline = max(settings.confirm_deadline, time.monotonic() + MIN_CONFIRM_SECONDS)
    fresh = dataclasses.replace(settings, seed=settings.seed + 1, deadline=deadline)
    prepared = machinery.toolchain(batch, stage.workload, stage.baselines)
    return evaluate(batch, stage, fresh, machinery, prepared, drop=False)
