"""hspc_gen.search.racing: plans in chunks, dropping clear losers, and race-then-
decide."""

from __future__ import annotations

import dataclasses

import fake_runner as fr
from hspc_gen.model import ChannelParams, Objective, Primitive, Status
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.findings import least_latency
from hspc_gen.search.measure.plan import Plan, RunResult, make_plan
from hspc_gen.search.racing import RaceSettings, losers, race, race_and_decide
from hspc_gen.search.records.samples import Candidate, Sample, aa_arm
from hspc_gen.search.strategies.base import make_batch

BASE = ChannelParams(128, 0, 4, 4096, Primitive.condvar)
BASELINES = ("producer_alone", "consumer_alone")


def batch_of(*points: ChannelParams) -> list[Candidate]:
    return [Candidate(p, "one", "padding") for p in points]


def settings(rounds: int = 30, seed: int = 5) -> RaceSettings:
    return RaceSettings(rounds, fr.EVENTS_PER_SAMPLE, seed, Objective.throughput, BASELINES)


def test_plan_rounds_are_seeded_permutations_of_every_arm() -> None:
    cands = batch_of(BASE, BASE.replace(padding_bytes=0), BASE.replace(padding_bytes=64))
    plan = make_plan(
        cands, incumbent=cands[0].id, baselines=BASELINES, rounds=8, events_per_sample=10, seed=3
    )
    expected = {c.id for c in cands} | set(BASELINES) | {aa_arm(cands[0].id)}
    assert all(set(order) == expected and len(order) == len(expected) for order in plan.order)
    assert len(set(plan.order)) > 1  # the order changes from round to round
    # A round's order depends on (seed, round) only: a plan cut into chunks orders it the same.
    tail = make_plan(
        cands,
        incumbent=cands[0].id,
        baselines=BASELINES,
        rounds=3,
        events_per_sample=10,
        seed=3,
        first_round=5,
    )
    assert tail.order == plan.order[5:]
    assert list(tail.round_numbers()) == [5, 6, 7]


def test_racing_drops_a_candidate_30_percent_worse_within_a_few_chunks() -> None:
    worse = BASE.replace(padding_bytes=0)
    equal = BASE.replace(padding_bytes=256)
    cands = batch_of(BASE, worse, equal)
    runner = fr.SimulatedRunner({c.id: ns for c, ns in zip(cands, (30.0, 39.0, 30.0), strict=True)})
    result = race(cands, cands[0].id, settings(), runner.run)
    assert result.status is Status.ok
    assert set(result.dropped) == {cands[1].id}
    assert result.dropped[cands[1].id] < 2 * stats.MIN_ROUNDS
    later = runner.plans[-1]
    assert all(cands[1].id not in order for order in later.order)
    assert all(cands[2].id in order for order in later.order)  # the equal one runs on
    assert result.rounds <= 30


def test_racing_stops_early_once_the_rest_is_shown_equivalent() -> None:
    equal = BASE.replace(padding_bytes=256)
    cands = batch_of(BASE, equal)
    runner = fr.SimulatedRunner({c.id: 30.0 for c in cands})
    result = race(cands, cands[0].id, settings(), runner.run)
    assert result.status is Status.ok
    assert not result.dropped
    assert stats.MIN_ROUNDS <= result.rounds < 30


def test_a_confirmation_runs_every_round_even_for_a_lone_arm() -> None:
    cands = batch_of(BASE)
    runner = fr.SimulatedRunner({cands[0].id: 30.0})
    result = race(cands, cands[0].id, dataclasses.replace(settings(), drop=False), runner.run)
    assert result.rounds == 30
    assert {s.arm for s in result.samples} >= {cands[0].id}


def test_racing_saves_samples_against_the_full_plan() -> None:
    cands = batch_of(*(BASE.replace(buffer_bytes=s) for s in (256, 512, 1024, 2048, 4096)))
    ns = dict(zip((c.id for c in cands), (60.0, 45.0, 33.0, 30.0, 31.0), strict=True))
    runner = fr.SimulatedRunner(ns)
    result = race(cands, cands[3].id, settings(), runner.run)
    assert {cands[0].id, cands[1].id} <= set(result.dropped)  # 100% and 50% worse
    full = 30 * (len(cands) + len(BASELINES) + 1)
    saved = sum(30 - (last + 1) for last in result.dropped.values())
    run = sum(len(o) for p in runner.plans for o in p.order)
    assert run == len(result.samples) == full - saved
    assert run < 0.85 * full


def test_the_incumbent_is_never_dropped() -> None:
    cands = batch_of(BASE, BASE.replace(padding_bytes=0))
    runner = fr.SimulatedRunner({cands[0].id: 50.0, cands[1].id: 30.0})
    result = race(cands, cands[0].id, settings(rounds=18), runner.run)
    assert result.dropped == {}
    assert all(cands[0].id in order for p in runner.plans for order in p.order)


def test_nothing_is_dropped_before_min_rounds() -> None:
    sim = fr.Simulated(seed=2)
    arms = {"a": 30.0, "b": 60.0, aa_arm("a"): 30.0}
    by_arm = {arm: sim.samples(arm, ns, stats.MIN_ROUNDS - 1) for arm, ns in arms.items()}
    kw = {"objective": Objective.throughput, "incumbent": "a", "delta": 0.03}
    assert losers(by_arm, ["a", "b"], **kw) == ()  # type: ignore[arg-type]
    more = {arm: sim.samples(arm, ns, stats.MIN_ROUNDS + 2) for arm, ns in arms.items()}
    assert losers(more, ["a", "b"], **kw) == ("b",)  # type: ignore[arg-type]


def test_losers_are_a_function_of_the_samples() -> None:
    sim = fr.Simulated(seed=4)
    costs = {"a": 30.0, "b": 34.0, "c": 45.0, "d": 30.5}
    by_arm = {arm: sim.samples(arm, ns, 20) for arm, ns in costs.items()}
    live = sorted(costs)
    first = losers(by_arm, live, objective=Objective.throughput, incumbent="a", delta=0.03)
    reversed_input = {arm: list(reversed(s)) for arm, s in reversed(by_arm.items())}
    again = losers(
        reversed_input, live[::-1], objective=Objective.throughput, incumbent="a", delta=0.03
    )
    assert first == again
    assert "c" in first and "d" not in first


def test_an_unverified_candidate_is_dropped_at_once() -> None:
    cands = batch_of(BASE, BASE.replace(padding_bytes=0))
    costs = {cands[1].id: fr.Cost(verified=False)}
    runner = fr.SimulatedRunner({cands[0].id: 30.0, cands[1].id: 20.0}, costs=costs)
    result = race(cands, cands[0].id, settings(), runner.run)
    assert result.dropped == {cands[1].id: stats.MIN_ROUNDS - 1}
    # Only the incumbent is left: there is nothing more to race.
    assert len(runner.plans) == 1


class FailingRunner:
    """A run stage whose build or process fails on the n-th plan."""

    def __init__(self, inner: fr.SimulatedRunner, fail_at: int, status: Status) -> None:
        self.inner, self.fail_at, self.status, self.calls = inner, fail_at, status, 0

    def run(self, plan: Plan) -> RunResult:
        self.calls += 1
        if self.calls == self.fail_at:
            return RunResult(self.status, (), log="benchmark binary killed by signal 11")
        return self.inner.run(plan)


def test_a_failed_run_ends_the_race_and_leaves_no_winner() -> None:
    points = (BASE, BASE.replace(padding_bytes=64))
    batch = make_batch("one", "padding", points, BASE, rounds=30)
    runner = FailingRunner(fr.SimulatedRunner({}), fail_at=1, status=Status.crashed)
    ev = race_and_decide(batch, runner.run, settings=settings(), oversubscribed=False)
    assert ev.race.status is Status.crashed
    assert ev.race.rounds == stats.MIN_ROUNDS
    assert "signal 11" in ev.race.log
    assert ev.step.decision.winner is None
    assert set(ev.step.decision.excluded.values()) == {"crashed"}


def test_evaluate_batch_races_then_decides_on_replayed_samples() -> None:
    one = fr.stage_one_space()
    start = one.start()
    batch = make_batch(
        "one", "padding", [start.replace(padding_bytes=p) for p in (0, 64, 128)], start, 30
    )
    runner = fr.ReplayRunner(fr.STAGE_ONE_KEY)
    ev = race_and_decide(batch, runner.run, settings=settings(), oversubscribed=False)
    padding_zero = start.replace(padding_bytes=0)
    assert ev.step.winner() == start.replace(padding_bytes=128)
    assert Candidate(padding_zero, "one", "padding").id in ev.race.dropped
    assert ev.race.arm_status == {}  # every arm had a recording
    by_arm = stats.group_by_arm(ev.race.samples)
    assert set(BASELINES) <= set(by_arm)
    assert all(isinstance(s, Sample) for s in ev.race.samples)


def test_a_budget_cut_counts_only_the_rounds_that_ran() -> None:
    cands = batch_of(BASE, BASE.replace(padding_bytes=0))
    cut_at_once = FailingRunner(fr.SimulatedRunner({}), fail_at=1, status=Status.skipped)
    nothing = race(cands, cands[0].id, settings(), cut_at_once.run)
    assert (nothing.status, nothing.rounds, nothing.counts.cut) == (Status.skipped, 0, True)
    cut_later = FailingRunner(fr.SimulatedRunner({}), fail_at=2, status=Status.skipped)
    some = race(cands, cands[0].id, settings(), cut_later.run)
    assert (some.status, some.rounds, some.counts.cut) == (Status.ok, stats.MIN_ROUNDS, True)


def test_a_confirmation_with_a_latency_bound_excludes_what_waits_too_long() -> None:
    quick = BASE.replace(buffer_bytes=65536)  # fast, but events wait for big buffers to fill
    prompt = BASE.replace(buffer_bytes=1024)  # slower, keeps the bound
    batch = make_batch("confirm", "confirm", [quick, prompt], quick, rounds=12)
    ids = {c.params: c.id for c in batch.candidates}
    costs = {ids[quick]: fr.Cost(latency_ns=400_000.0), ids[prompt]: fr.Cost(latency_ns=20_000.0)}
    runner = fr.SimulatedRunner({ids[quick]: 20.0, ids[prompt]: 30.0}, costs=costs)
    bound = dataclasses.replace(settings(12), drop=False, latency_bound_ns=100_000.0)
    ev = race_and_decide(batch, runner.run, settings=bound, oversubscribed=False)
    assert ev.step.decision.winner == ids[prompt]  # p99 40 us kept; 800 us not
    assert ev.race.arm_status == {ids[quick]: Status.misses_latency}
    assert "above constraints.max_latency_us (100 us)" in ev.race.causes[ids[quick]]
    assert all(f"lat:{i}" in order for order in runner.plans[0].order for i in ids.values())
    tight = dataclasses.replace(bound, latency_bound_ns=1_000.0)
    none = race_and_decide(batch, runner.run, settings=tight, oversubscribed=False)
    assert none.step.decision.winner is None
    assert least_latency(none) == prompt  # the closest, for the header and the report
