"""The search loop without a compiler: a simulated toolchain stands in for render, build and run,
and the real record store, racing and decisions do the rest."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import fake_runner as fr
import pytest

from hspc_gen.model import ChannelParams, Effort, Objective, Primitive, Status
from hspc_gen.search.records import Plan, RecordKey, RunResult, Sample
from hspc_gen.search.run import SAMPLE_DEADLINE_SECONDS
from hspc_gen.search.store import RecordStore
from hspc_gen.search.strategies.base import Batch, make_batch
from hspc_gen.search.tune import (
    CALIBRATION_ROUND,
    PROBE_EVENTS,
    STAGE_ONE_BASELINES,
    STAGE_TWO_BASELINES,
    Machinery,
    Outcome,
    Prepared,
    Progress,
    Settings,
    StageSpec,
    confirm,
    evaluate,
    probe_events,
    tune,
)
from hspc_gen.target import Workload

APP_WORK = Path(__file__).resolve().parents[1] / "data" / "app_work" / "count.cpp"
BROKEN = Primitive.mutex  # this primitive "does not compile" in the simulated toolchain


def model_ns(params: ChannelParams) -> float:
    """A host where padding 128, 4 buffers of 4 KiB and a futex win clearly."""
    ns = 10.0
    ns *= 1.0 if params.padding_bytes >= 128 else 1.35
    ns *= 1.0 + abs(params.buffers - 4) * 0.08
    ns *= 1.0 + abs(params.buffer_bytes.bit_length() - 13) * 0.1
    ns *= 1.0 if params.primitive is Primitive.futex else 1.2
    return ns


class SimulatedToolchain:
    def __init__(self, interrupt_after: int | None = None) -> None:
        self.sim = fr.Simulated(seed=5)
        self.runs = 0
        self.builds = 0
        self.interrupt_after = interrupt_after

    def __call__(self, batch: Batch, workload: Workload, baselines: tuple[str, ...]) -> Prepared:
        ids = ",".join(sorted(c.id for c in batch.candidates))
        key = RecordKey("fp", hashlib.sha1(ids.encode()).hexdigest()[:12], "c++ 12", "-O3")
        return Prepared(key, lambda plan: self.run(batch, plan))

    def run(self, batch: Batch, plan: Plan) -> RunResult:
        self.runs += 1
        if self.interrupt_after is not None and self.runs > self.interrupt_after:
            raise KeyboardInterrupt
        params = {c.id: c.params for c in batch.candidates}
        broken = {i for i, p in params.items() if p.primitive is BROKEN}
        samples: list[Sample] = []
        for number, order in zip(plan.round_numbers(), plan.order, strict=True):
            for arm in order:
                base = arm.removeprefix("aa:")
                if base in broken:
                    continue
                ns = model_ns(params[base]) if base in params else 9.0
                samples.append(self.sim.sample(arm, ns, number, fr.Cost()))
        return RunResult(Status.ok, tuple(samples), "", dict.fromkeys(broken, Status.compile_error))


def settings(deadline: float = float("inf"), run: str = "quick:60s") -> Settings:
    bare = Workload()
    return Settings(
        objective=Objective.throughput,
        effort=Effort.quick,
        seed=7,
        deadline=deadline,
        oversubscribed=True,
        stages=(
            StageSpec("stage_one", bare, STAGE_ONE_BASELINES, 0.5),
            StageSpec("stage_two", bare, STAGE_TWO_BASELINES, 0.5),
        ),
        run=run,
    )


def search(store_dir: Path, toolchain: SimulatedToolchain, s: Settings | None = None) -> Outcome:
    space = fr.stage_two_space()
    machinery = Machinery(RecordStore(store_dir, "fp"), toolchain, Progress())
    return tune(space, space.start(), s or settings(), machinery)


def test_the_search_finds_the_planted_point_and_skips_what_does_not_build(tmp_path: Path) -> None:
    outcome = search(tmp_path, SimulatedToolchain())
    assert outcome.winner.padding_bytes == 128
    assert outcome.winner.primitive is Primitive.futex
    assert outcome.measured_plans > 0 and outcome.cached_plans == 0
    failed = {status for _, status in outcome.failures}
    assert failed == {"compile_error"}
    assert all(s.decision.winner not in {i for i, _ in outcome.failures} for s in outcome.history)


def test_a_rerun_with_the_same_records_measures_nothing_and_decides_the_same(
    tmp_path: Path,
) -> None:
    cold = search(tmp_path, SimulatedToolchain())
    toolchain = SimulatedToolchain()
    warm = search(tmp_path, toolchain)
    assert toolchain.runs == 0
    assert warm.measured_plans == 0 and warm.cached_plans == cold.measured_plans
    assert warm.winner == cold.winner
    assert [s.decision.winner for s in warm.history] == [s.decision.winner for s in cold.history]


def test_an_interrupted_run_resumes_from_what_it_recorded(tmp_path: Path) -> None:
    whole = search(tmp_path / "whole", SimulatedToolchain())
    with pytest.raises(KeyboardInterrupt):
        search(tmp_path / "cut", SimulatedToolchain(interrupt_after=4))
    resumed = SimulatedToolchain()
    outcome = search(tmp_path / "cut", resumed)
    assert outcome.cached_plans == 4
    assert resumed.runs == whole.measured_plans - 4
    assert outcome.winner == whole.winner


def test_a_spent_budget_measures_nothing_and_keeps_the_start(tmp_path: Path) -> None:
    toolchain = SimulatedToolchain()
    outcome = search(tmp_path, toolchain, settings(deadline=time.monotonic() - 1))
    assert toolchain.runs == 0
    assert outcome.budget_exhausted
    assert outcome.winner == fr.stage_two_space().start()


def test_the_confirmation_remeasures_the_best_in_a_fresh_plan(tmp_path: Path) -> None:
    toolchain = SimulatedToolchain()
    s = settings()
    machinery = Machinery(RecordStore(tmp_path, "fp"), toolchain, Progress())
    space = fr.stage_two_space()
    outcome = tune(space, space.start(), s, machinery)
    evaluation = confirm(outcome, s.stages[-1], s, machinery)
    assert evaluation.step.batch.stage == "confirm"
    assert evaluation.step.decision.winner is not None
    assert evaluation.race.rounds == 12  # every round of the quick effort's confirmation
    assert {p.seed for p in evaluation.race.plans} == {s.seed + 1}
    arms = {sample.arm for sample in evaluation.race.samples}
    assert set(STAGE_TWO_BASELINES) <= arms


class Clock:
    """Time for the search loop: advances only when a plan is measured (by its simulated cost)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_run_cut_by_the_budget_replays_to_the_same_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr("hspc_gen.search.tune.time.monotonic", clock)

    class Timed(SimulatedToolchain):
        def run(self, batch: Batch, plan: Plan) -> RunResult:
            clock.now += 4.0  # every measured plan takes four "seconds"
            return super().run(batch, plan)

    cold = search(tmp_path, Timed(), settings(deadline=clock.now + 30.0))
    assert cold.budget_exhausted
    toolchain = Timed()
    warm = search(tmp_path, toolchain, settings(deadline=clock.now + 30.0))
    assert toolchain.runs == 0
    assert warm.budget_exhausted
    assert warm.winner == cold.winner
    assert [s.batch.step for s in warm.history] == [s.batch.step for s in cold.history]


def test_a_longer_budget_is_not_held_to_a_shorter_runs_cuts(tmp_path: Path) -> None:
    short = search(tmp_path, SimulatedToolchain(), settings(time.monotonic() + 0.5, "quick:1s"))
    assert short.budget_exhausted
    toolchain = SimulatedToolchain()
    longer = search(tmp_path, toolchain, settings(run="quick:10m"))
    assert not longer.budget_exhausted
    assert len(longer.history) > len(short.history) and toolchain.runs > 0
    assert longer.cached_plans == short.measured_plans  # what the short run measured is reused


def test_a_failure_in_a_later_chunk_replays_in_that_chunk_only(tmp_path: Path) -> None:
    base = ChannelParams(64, 0, 2, 4096, Primitive.futex)
    points = [base, *(base.replace(buffers=b) for b in (4, 8, 16))]
    batch = make_batch("one", "buffers", points, base, 18)
    ns = dict(zip((c.id for c in batch.candidates), (10.0, 5.0, 9.0, 20.0), strict=True))
    fastest = batch.candidates[1].id  # crashes from round 6 on
    sim, runs = fr.Simulated(seed=3), []

    def run(plan: Plan) -> RunResult:
        runs.append(plan)
        samples, failed = [], {}
        for number, order in zip(plan.round_numbers(), plan.order, strict=True):
            for arm in order:
                if arm.removeprefix("aa:") == fastest and 6 <= number < CALIBRATION_ROUND:
                    failed[fastest] = Status.crashed
                    continue
                samples.append(
                    sim.sample(arm, ns.get(arm.removeprefix("aa:"), 9.0), number, fr.Cost())
                )
        return RunResult(Status.ok, tuple(samples), "", failed)

    stage = settings().stages[0]
    key = RecordKey("fp", "h", "c++", "-O3")

    def once() -> tuple[object, ...]:
        machinery = Machinery(RecordStore(tmp_path, "fp"), SimulatedToolchain(), Progress())
        e = evaluate(batch, stage, settings(), machinery, Prepared(key, run))
        return e.race.rounds, dict(e.race.dropped), e.step.decision.winner

    cold = once()
    measured = len(runs)
    assert once() == cold
    assert len(runs) == measured  # the replay measured nothing


def test_probes_are_sized_from_the_work_so_heavy_work_stays_inside_the_sample_deadline() -> None:
    assert probe_events(Workload()) == PROBE_EVENTS  # a bare channel: the full probe
    heavy = probe_events(Workload(consumer_ns=1_000_000.0))  # app.yaml's most: 1 ms
    assert heavy * 1e-3 <= SAMPLE_DEADLINE_SECONDS / 2
    own_code = probe_events(Workload(consumer_source=APP_WORK))
    assert own_code < PROBE_EVENTS  # unknown cost: sized as if 1 µs per event
