"""The orchestrator's search loop without a compiler: a simulated toolchain stands in for render,
build and run, and the real record store, racing and decisions do the rest."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import fake_runner as fr
from fake_runner import machinery, run_search, settings
from hspc_gen.model import ChannelParams, Effort, Objective, Primitive
from hspc_gen.model.result import RunInfo, SearchResult, TuneResult
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.reports.outcome import _in_their_code
from hspc_gen.reports.result import document as result_document
from hspc_gen.reports.summary import render as render_summary
from hspc_gen.search.batch import Machinery, evaluate_every_round
from hspc_gen.search.channel import Searched, _build_holding, measure_confirmation, search
from hspc_gen.search.decisions.findings import REMEASURED_TOO
from hspc_gen.search.measure.build import BuildResult
from hspc_gen.search.measure.plan import Plan, RunResult
from hspc_gen.search.measure.toolchain import Prepared
from hspc_gen.search.racing import PlanCounts
from hspc_gen.search.records.store import RecordStore
from hspc_gen.search.strategies.base import make_batch
from hspc_gen.search.tune import (
    STAGE_TWO_BASELINES,
    confirmation_batch,
)
from hspc_gen.wiring import store_notes
from slow_baselines import SlowBaselines, confirmed_with


def counts(searched: Searched) -> PlanCounts:
    return sum((e.counts for e in searched.evaluations), PlanCounts())


def test_the_search_finds_the_planted_point_and_skips_what_does_not_build(tmp_path: Path) -> None:
    searched = run_search(tmp_path, fr.SimulatedToolchain())
    assert searched.winner.padding_bytes == 128
    assert searched.winner.primitive is Primitive.futex
    assert counts(searched).measured > 0 and counts(searched).replayed == 0
    failed = {s for e in searched.evaluations for s in e.race.arm_status.values()}
    assert {str(s) for s in failed} == {"compile_error"}
    winners = {e.step.decision.winner for e in searched.evaluations}
    assert not winners & {a for e in searched.evaluations for a in e.race.arm_status}


def test_every_step_measures_on_one_pair_of_cpus_until_the_placement_step(tmp_path: Path) -> None:
    """Candidates of a step run on the same two CPUs, and their baselines with them, while
    placement is not the question; the placement step races unpinned against the pinned."""
    searched = run_search(tmp_path, fr.SimulatedToolchain())
    for evaluation in searched.evaluations:
        batch = evaluation.step.batch
        where = {(c.params.producer_cpu, c.params.consumer_cpu) for c in batch.candidates}
        home = (batch.incumbent.params.producer_cpu, batch.incumbent.params.consumer_cpu)
        assert home == (0, 1)  # the baselines' CPUs: the incumbent's (harness.plan_text)
        assert where == ({(-1, -1), (0, 1)} if batch.step == "placement" else {(0, 1)})


def test_a_rerun_with_the_same_records_builds_and_measures_nothing(tmp_path: Path) -> None:
    cold = run_search(tmp_path, fr.SimulatedToolchain())
    toolchain = fr.SimulatedToolchain()
    warm = run_search(tmp_path, toolchain)
    assert toolchain.runs == 0 and toolchain.builds == 0
    assert counts(warm).measured == 0 and counts(warm).replayed == counts(cold).measured
    assert warm.winner == cold.winner
    steps = [e.step.decision.winner for e in warm.evaluations]
    assert steps == [e.step.decision.winner for e in cold.evaluations]


def test_an_interrupted_run_resumes_from_what_it_recorded(tmp_path: Path) -> None:
    whole = run_search(tmp_path / "whole", fr.SimulatedToolchain())
    with pytest.raises(KeyboardInterrupt):
        run_search(tmp_path / "cut", fr.SimulatedToolchain(interrupt_after=4))
    resumed = fr.SimulatedToolchain()
    searched = run_search(tmp_path / "cut", resumed)
    assert counts(searched).replayed == 4
    assert resumed.runs == counts(whole).measured - 4
    assert searched.winner == whole.winner


def test_a_spent_budget_measures_nothing_and_keeps_the_start(tmp_path: Path) -> None:
    toolchain = fr.SimulatedToolchain()
    searched = run_search(tmp_path, toolchain, settings(deadline=time.monotonic() - 1))
    assert toolchain.runs == 0 and toolchain.builds == 0
    assert searched.budget_exhausted
    assert searched.winner == fr.stage_two_space().start()


def test_the_confirmation_remeasures_the_best_in_a_fresh_plan(tmp_path: Path) -> None:
    toolchain = fr.SimulatedToolchain()
    s = settings()
    searched = run_search(tmp_path, toolchain, s)
    evaluation = measure_confirmation(searched, s, machinery(tmp_path, toolchain))
    assert evaluation is not None
    assert evaluation.step.batch.stage == "confirm"
    assert evaluation.step.decision.winner is not None
    assert evaluation.race.rounds == 12  # every round of the quick effort's confirmation
    assert {p.seed for p in evaluation.race.plans} == {s.seed + 1}
    arms = {sample.arm for sample in evaluation.race.samples}
    assert set(STAGE_TWO_BASELINES) <= arms


def test_the_confirmation_meets_real_alternatives_and_reuses_the_build_holding_them(
    tmp_path: Path,
) -> None:
    """A placement step ranks only the winner's own placements: the runners-up come from the
    last step that ranked several points, and that step's build runs the confirmation."""
    toolchain = fr.SimulatedToolchain()
    s = settings()
    searched = run_search(tmp_path, toolchain, s)
    assert searched.evaluations[-1].step.batch.step == "placement"
    history = [e.step for e in searched.evaluations]
    batch = confirmation_batch(history, searched.winner, s.effort)
    unpinned = {c.params.replace(producer_cpu=-1, consumer_cpu=-1) for c in batch.candidates}
    assert len(batch.candidates) == 3 and len(unpinned) == 3  # not copies of the winner
    winner_placements = [c for c in batch.candidates if c.params.replace(producer_cpu=-1,
        consumer_cpu=-1) == searched.winner.replace(producer_cpu=-1, consumer_cpu=-1)]  # fmt: skip
    assert len(winner_placements) == 1  # the winner itself, not a copy of it in another place
    pinned = searched.winner.replace(producer_cpu=0, consumer_cpu=1)
    again = confirmation_batch(history, pinned, s.effort)  # a pinned winner, not its own copy
    code = searched.winner.replace(producer_cpu=-1, consumer_cpu=-1)
    assert sum(c.params.replace(producer_cpu=-1, consumer_cpu=-1) == code
               for c in again.candidates) == 1  # fmt: skip
    held = _build_holding(searched, batch, s.stages[-1].workload)
    assert held is not None and held.batch.step == "primitive"  # its build holds all three
    assert measure_confirmation(searched, s, machinery(tmp_path, toolchain)) is not None


def test_a_confirmation_replays_every_round_it_measured(tmp_path: Path) -> None:
    best = ChannelParams(128, 0, 4, 8192, Primitive.futex)
    slower = [best.replace(padding_bytes=0), best.replace(buffers=16)]  # racing would drop them
    batch = make_batch("confirm", "confirm", [best, *slower], best, 12)
    s, stage = settings(), settings().stages[-1]
    cold = evaluate_every_round(batch, stage, s, machinery(tmp_path, fr.SimulatedToolchain()))
    again = fr.SimulatedToolchain()
    warm = evaluate_every_round(batch, stage, s, machinery(tmp_path, again))
    assert again.runs == 0 and again.builds == 0
    assert warm.race.rounds == cold.race.rounds == 12  # never raced short on a replay
    assert not warm.race.dropped and warm.step.decision.winner == cold.step.decision.winner


def test_nothing_searched_means_nothing_to_confirm(tmp_path: Path) -> None:
    empty = Searched(fr.stage_two_space().start(), (), budget_exhausted=True)
    assert (
        measure_confirmation(empty, settings(), machinery(tmp_path, fr.SimulatedToolchain()))
        is None
    )


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

    class Timed(fr.SimulatedToolchain):
        def run(self, built: BuildResult, prepared: Prepared, plan: Plan) -> RunResult:
            clock.now += 4.0  # every measured plan takes four "seconds"
            return super().run(built, prepared, plan)

    cold = run_search(tmp_path, Timed(), settings(deadline=clock.now + 30.0))
    assert cold.budget_exhausted or counts(cold).cut
    toolchain = Timed()
    warm = run_search(tmp_path, toolchain, settings(deadline=clock.now + 30.0))
    assert toolchain.runs == 0
    assert warm.budget_exhausted or counts(warm).cut
    assert warm.winner == cold.winner
    assert [e.step.batch.step for e in warm.evaluations] == [
        e.step.batch.step for e in cold.evaluations
    ]


def test_a_longer_budget_is_not_held_to_a_shorter_runs_cuts(tmp_path: Path) -> None:
    short = run_search(
        tmp_path, fr.SimulatedToolchain(), settings(time.monotonic() + 0.5, "quick:1s")
    )
    assert short.budget_exhausted or counts(short).cut
    toolchain = fr.SimulatedToolchain()
    longer = run_search(tmp_path, toolchain, settings(run="quick:10m"))
    assert not longer.budget_exhausted and not counts(longer).cut
    assert len(longer.evaluations) > len(short.evaluations) and toolchain.runs > 0
    assert counts(longer).replayed == counts(short).measured  # what the short run measured


def test_a_store_written_by_the_previous_version_is_reported_and_measured_again(
    tmp_path: Path,
) -> None:
    cold = run_search(tmp_path, fr.SimulatedToolchain())
    store_file = next(tmp_path.glob("*.jsonl"))
    older = [json.loads(line) for line in store_file.read_text().splitlines()]
    for line in older:  # as 0.1 wrote them: no format version, no kind
        line.pop("schema")
        line.pop("kind")
    store_file.write_text("".join(json.dumps(line) + "\n" for line in older))
    toolchain = fr.SimulatedToolchain()
    store = RecordStore(tmp_path, "fp")
    space = fr.stage_two_space()
    again = search(space, space.start(), settings(), Machinery(store, toolchain))
    assert toolchain.runs == counts(cold).measured  # nothing old was trusted
    assert again.winner == cold.winner
    (note,) = store_notes(store)  # one note, however many lines
    assert len(store.skipped) == len(older)
    assert note.startswith(f"{len(older)} record(s) could not be read")
    assert f"{store.path}:1: ValueError: record format 1, this hspc-gen reads 2" in note


@pytest.mark.parametrize(
    ("cause", "theirs"),
    [
        ("fatal signal SIGSEGV in the user's consumer code (hspc_consume)", True),
        ("hung: exceeded the 1.000 s deadline; the producer was in the user's hspc_produce", True),
        ("exit() called from the user's producer code (hspc_produce)", True),
        ("hung: exceeded the 1.000 s deadline; no thread was in the user's code", False),
        ("fatal signal SIGSEGV outside the user's code", False),
    ],
)
def test_only_a_death_inside_the_users_code_is_blamed_on_it(cause: str, theirs: bool) -> None:
    assert _in_their_code(cause) is theirs


def test_figures_that_cannot_be_true_are_measured_again_and_then_reported_unresolved(
    tmp_path: Path,
) -> None:
    """A channel faster than a side alone is not a result: the winner and its baselines are
    measured again in a fresh process; when that agrees with the physics its figures are
    reported (and said to be a second measurement's), else the efficiency is unresolved."""
    seed = settings().seed
    result, plans = confirmed_with(tmp_path / "sound", SlowBaselines(set()))
    sound = result.confirmed
    assert sound is not None and not sound.unresolved and not sound.remeasured
    assert plans == {seed + 1}
    assert sound.efficiency is not None and sound.efficiency.ci95_high <= 1.0

    result, plans = confirmed_with(tmp_path / "once", SlowBaselines({seed + 1}))
    once = result.confirmed
    assert once is not None and plans == {seed + 1, seed + 2} and not once.unresolved
    assert once.remeasured.startswith("efficiency ") and "faster than" in once.remeasured
    assert once.efficiency is not None and once.efficiency.median <= 1.0
    assert "from a second measurement of the winner" in summary_of(result)

    result, plans = confirmed_with(tmp_path / "twice", SlowBaselines({seed + 1, seed + 2}))
    twice = result.confirmed
    assert twice is not None and plans == {seed + 1, seed + 2} and twice.efficiency is None
    assert "faster than" in twice.unresolved and twice.unresolved.endswith(REMEASURED_TOO)
    text = summary_of(result)
    assert "- efficiency: unresolved (why: in the notes below)" in text
    assert "- The efficiency is unresolved: efficiency " in text
    assert text.count("which cannot be") == 1
    assert "- efficiency: 1." not in text and "(unresolved: see efficiency)" in text
    assert result_document(TuneResult(RUN, result.winner, result, ESTIMATED))["efficiency"] is None


def test_an_efficiency_past_the_bound_within_the_noise_is_reported_at_the_bound(
    tmp_path: Path,
) -> None:
    """A median above 1 whose interval still holds 1 (a balanced channel on a noisy host): the
    channel is as fast as its slower side within the noise, reported at 1.0, never above; it
    is measured again first, and the fresher of two equally doubtful measurements is kept."""
    seed = settings().seed
    ratios = (0.97, 1.02, 1.04, 0.99, 1.03, 1.01)  # the slower side alone over the pair
    result, plans = confirmed_with(tmp_path, SlowBaselines({seed + 1, seed + 2}, ratios))
    bounded = result.confirmed
    assert bounded is not None and plans == {seed + 1, seed + 2}
    assert bounded.at_bound.startswith("efficiency 1.") and not bounded.unresolved
    efficiency = bounded.efficiency
    assert efficiency is not None and efficiency.ci95_low <= 1.0
    assert efficiency.median == efficiency.ci95_high == 1.0
    text = summary_of(result)
    assert "- efficiency: 1.000, at the bound (95% CI " in text
    assert "within the noise of each other: see efficiency" in text


RUN = RunInfo("t", 64, Objective.throughput, Effort.quick, 60.0, 30.0, {}, "CPU", "fp", "0")
ESTIMATED = ThreadAdvice(1, 1, 1, (0, 1), (0, 1), pinned=False)


def summary_of(result: SearchResult) -> str:
    return render_summary(TuneResult(RUN, result.winner, result, ESTIMATED))
