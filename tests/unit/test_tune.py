"""hspc_gen.search.tune: one batch answered from the records (`replay`) or measured and recorded
(`measure`), the sample sizing probe, and budget cuts as records of their own."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import fake_runner as fr
from hspc_gen.model import ChannelParams, Effort, Objective, Primitive, Status
from hspc_gen.model.workload import Workload
from hspc_gen.search.decisions.stats import MIN_ROUNDS
from hspc_gen.search.measure.harness import SAMPLE_DEADLINE_SECONDS
from hspc_gen.search.measure.plan import Plan, RunResult
from hspc_gen.search.measure.toolchain import Prepared
from hspc_gen.search.records.samples import Cut, RecordKey, Sample
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import Batch, make_batch
from hspc_gen.search.tune import (
    CALIBRATION_ROUND,
    PROBE_EVENTS,
    STAGE_ONE_BASELINES,
    Settings,
    StageSpec,
    measure_and_record,
    probe_events,
    replay,
)

APP_WORK = Path(__file__).resolve().parents[1] / "data" / "app_work" / "count.cpp"
BASE = ChannelParams(64, 0, 2, 4096, Primitive.futex)
STAGE = StageSpec("stage_one", Workload(), STAGE_ONE_BASELINES)
KEY = RecordKey("fp", "h", "c++", "-O3")


def settings(deadline: float = math.inf, run: str = "quick:60s") -> Settings:
    return Settings(Objective.throughput, Effort.quick, 7, deadline, True, (STAGE,), run=run)


class CrashingLater:
    """A run stage where the fastest candidate crashes from round 6 on; it counts its plans."""

    def __init__(self, batch_ids: list[str]) -> None:
        self.ns = dict(zip(batch_ids, (10.0, 5.0, 9.0, 20.0), strict=True))
        self.fastest = batch_ids[1]
        self.sim = fr.Simulated(seed=3)
        self.plans: list[Plan] = []

    def __call__(self, plan: Plan) -> RunResult:
        self.plans.append(plan)
        samples: list[Sample] = []
        failed: dict[str, Status] = {}
        for number, order in zip(plan.round_numbers(), plan.order, strict=True):
            for arm in order:
                base = arm.removeprefix("aa:")
                if base == self.fastest and 6 <= number < CALIBRATION_ROUND:
                    failed[self.fastest] = Status.crashed
                    continue
                samples.append(self.sim.sample(arm, self.ns.get(base, 9.0), number, fr.Cost()))
        return RunResult(Status.ok, tuple(samples), "", failed)


def test_a_failure_in_a_later_chunk_replays_in_that_chunk_only(tmp_path: Path) -> None:
    points = [BASE, *(BASE.replace(buffers=b) for b in (4, 8, 16))]
    batch = make_batch("one", "buffers", points, BASE, 18)
    run = CrashingLater([c.id for c in batch.candidates])
    prepared = Prepared(batch, Workload(), KEY)
    store = RecordStore(tmp_path, "fp")
    assert replay(batch, STAGE, settings(), store, prepared) is None  # nothing recorded yet
    cold = measure_and_record(batch, STAGE, settings(), store, prepared=prepared, run_plan=run)
    measured = len(run.plans)
    warm = replay(batch, STAGE, settings(), RecordStore(tmp_path, "fp"), prepared)
    assert warm is not None and len(run.plans) == measured  # the replay measured nothing
    assert warm.race.rounds == cold.race.rounds and warm.race.dropped == cold.race.dropped
    assert warm.step.decision.winner == cold.step.decision.winner
    assert warm.race.arm_status == cold.race.arm_status == {run.fastest: Status.crashed}
    assert warm.counts.measured == 0 and warm.counts.replayed == cold.counts.measured


def two_points() -> tuple[Batch, CrashingLater, Prepared]:
    """A batch of two points, a run stage for it and its build."""
    batch = make_batch("one", "buffers", [BASE, BASE.replace(buffers=4)], BASE, 12)
    run = CrashingLater([*(c.id for c in batch.candidates), "x", "y"])
    return batch, run, Prepared(batch, Workload(), KEY)


def test_past_the_deadline_a_plan_is_cut_and_the_cut_is_a_record_of_its_own(
    tmp_path: Path,
) -> None:
    batch, run, prepared = two_points()
    store = RecordStore(tmp_path, "fp")
    late = measure_and_record(
        batch, STAGE, settings(deadline=0.0), store, prepared=prepared, run_plan=run
    )
    assert late.counts.cut and late.counts.measured == 1  # only the sizing probe ran
    reopened = RecordStore(tmp_path, "fp")
    first_chunk = late.race.plans[0]
    assert reopened.was_cut(Cut.of_plan(KEY, "quick:60s", first_chunk))
    assert not reopened.was_cut(Cut.of_plan(KEY, "quick:10m", first_chunk))
    again = replay(batch, STAGE, settings(deadline=0.0), reopened, prepared)
    assert again is not None and again.counts.cut  # the same command stops at the same place


def test_probes_are_sized_from_the_work_so_heavy_work_stays_inside_the_sample_deadline() -> None:
    assert probe_events(Workload().expected_ns_per_event) == PROBE_EVENTS  # a bare channel
    heavy = probe_events(Workload(consumer_ns=1_000_000.0).expected_ns_per_event)  # 1 ms
    assert heavy * 1e-3 <= SAMPLE_DEADLINE_SECONDS / 2
    own_code = probe_events(Workload(consumer_source=APP_WORK).expected_ns_per_event)
    assert own_code < PROBE_EVENTS  # unknown cost: sized as if 1 µs per event


def test_records_measured_beside_other_load_are_measured_again_by_a_quiet_run(
    tmp_path: Path,
) -> None:
    batch = make_batch("one", "buffers", [BASE, BASE.replace(buffers=4)], BASE, 6)
    crowded = CrashingLater([*(c.id for c in batch.candidates), "x", "y"])

    def busy_run(plan: Plan) -> RunResult:
        return dataclasses.replace(crowded(plan), busy=True)

    prepared = Prepared(batch, Workload(), KEY)
    store = RecordStore(tmp_path, "fp")
    first = measure_and_record(
        batch, STAGE, settings(), store, prepared=prepared, run_plan=busy_run
    )
    assert all(r.busy for r in RecordStore(tmp_path, "fp").records())
    assert first.counts.remeasured == 0
    busy_again = settings()  # a run on a busy machine takes what a busy machine measured
    assert replay(batch, STAGE, busy_again, RecordStore(tmp_path, "fp"), prepared) is not None
    quiet = dataclasses.replace(settings(), quiet=True)
    assert replay(batch, STAGE, quiet, RecordStore(tmp_path, "fp"), prepared) is None
    # The quiet run measures the race again, but keeps the recorded sizing probe: the plans it
    # measures are sized as the busy ones were, so a later replay finds them all.
    asked: list[Plan] = []

    def quiet_run(plan: Plan) -> RunResult:
        asked.append(plan)
        return crowded(plan)

    store = RecordStore(tmp_path, "fp")
    again = measure_and_record(batch, STAGE, quiet, store, prepared=prepared, run_plan=quiet_run)
    assert asked and all(plan.first_round != CALIBRATION_ROUND for plan in asked)
    assert again.counts.remeasured == again.counts.measured == len(asked)  # said in the caveats
    sizes = {r.events_per_sample for r in RecordStore(tmp_path, "fp").records()}
    assert len(sizes) == 2  # the probe's own size, and the one size every race plan uses
    assert replay(batch, STAGE, quiet, RecordStore(tmp_path, "fp"), prepared) is not None


def test_a_built_batch_runs_its_first_chunk_past_its_step_share_while_the_search_has_time(
    tmp_path: Path,
) -> None:
    batch, run, prepared = two_points()
    share_over = dataclasses.replace(settings(deadline=math.inf), step_deadline=0.0)
    evaluation = measure_and_record(
        batch, STAGE, share_over, RecordStore(tmp_path, "fp"), prepared=prepared, run_plan=run
    )
    assert evaluation.race.rounds == MIN_ROUNDS  # its first chunk, then the share's end
    assert evaluation.counts.cut
    search_over = dataclasses.replace(share_over, search_deadline=0.0)
    none = measure_and_record(
        batch, STAGE, search_over, RecordStore(tmp_path / "b", "fp"), prepared=prepared,
        run_plan=run,
    )  # fmt: skip
    assert none.race.rounds == 0
