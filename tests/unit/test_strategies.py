"""hspc_gen.search.strategies: the proposals of each strategy, options, the registry, and whole
searches replayed from the recorded noise model."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import pytest

import fake_runner as fr
from hspc_gen.errors import UserError
from hspc_gen.model import DEFAULT_SPIN_NS, ChannelParams, Effort, Objective, Primitive, SpinBudgets
from hspc_gen.search.decisions import stats
from hspc_gen.search.decisions.decide import Decision
from hspc_gen.search.racing import RaceSettings, race_and_decide
from hspc_gen.search.records.samples import Candidate, RecordKey
from hspc_gen.search.strategies import exhaustive, registry, stage_one, stage_two
from hspc_gen.search.strategies.base import Batch, StepResult, Strategy, option_table
from hspc_gen.search.strategies.space import PREFETCH_GRID, PREFETCH_SHORT, Space

KiB = 1024


def decided(batch: Batch, winner: ChannelParams | None) -> StepResult:
    """A history entry whose decision picked `winner` (as a real decision would name it)."""
    win = None if winner is None else Candidate(winner, batch.stage, batch.step).id
    ranking = () if win is None else (win,)
    decision = Decision(Objective.throughput, win, ranking, ranking, {}, 0.02, 0.03, 0.03)
    return StepResult(batch, decision)


Pick = ChannelParams | None | Callable[[Batch], ChannelParams]


def steps_of(strategy: Strategy, winners: Sequence[Pick]) -> list[Batch]:
    """The batches proposed when each is decided for the given winner in turn."""
    history: list[StepResult] = []
    batches = []
    for w in winners:
        batch = strategy.propose(history)
        assert batch is not None
        batches.append(batch)
        history.append(decided(batch, w(batch) if callable(w) else w))
    assert strategy.propose(history) is None
    return batches


def params(batch: Batch) -> list[ChannelParams]:
    return [c.params for c in batch.candidates]


def test_stage_one_follows_figure_2() -> None:
    space = fr.stage_one_space()
    start = space.start()
    strategy = registry.create("stage_one", space, start, Effort.patient)
    pad = start.replace(padding_bytes=128)
    stack = pad.replace(stack_offset_bytes=32 * KiB)
    padding, offsets, grid = steps_of(strategy, [pad, stack, stack.replace(buffers=4)])
    # Loop 1: padding only, everything else at the start point.
    assert padding.step == "padding" and padding.incumbent.params == start
    assert {p.padding_bytes for p in params(padding)} == set(space.padding_values())
    assert {p.replace(padding_bytes=start.padding_bytes) for p in params(padding)} == {start}
    # Loop 2: stack offsets with the best padding.
    assert offsets.step == "stack_offset" and offsets.incumbent.params == pad
    assert {p.stack_offset_bytes for p in params(offsets)} == set(space.stack_offset_values())
    assert all(p.padding_bytes == 128 for p in params(offsets))
    # Loop 3: every buffers x buffer_bytes pair under the memory bound, with both bests.
    assert grid.step == "buffers" and grid.incumbent.params == stack
    pairs = {(p.buffers, p.buffer_bytes) for p in params(grid)}
    assert pairs == set(space.grid())
    assert all(p.buffers * p.buffer_bytes <= space.max_buffer_memory for p in params(grid))
    assert all(
        p.replace(buffers=4, buffer_bytes=4096) == stack.replace(buffers=4, buffer_bytes=4096)
        for p in params(grid)
    )
    assert {b.rounds for b in (padding, offsets, grid)} == {60}


def test_stage_one_thins_the_grid_at_quick_effort() -> None:
    space = fr.stage_one_space()
    start = space.start()
    quick = registry.create("stage_one", space, start, Effort.quick)
    measure = registry.create("stage_one", space, start, Effort.patient)
    history: list[StepResult] = []
    for _ in range(2):  # padding, then stack offset: both decided for the start point
        batch = quick.propose(history)
        assert batch is not None
        history.append(decided(batch, start))
    coarse, full = quick.propose(history), measure.propose(history)
    assert coarse is not None and full is not None
    assert coarse.rounds < full.rounds
    assert len(coarse.candidates) < len(full.candidates) / 2
    assert set(params(coarse)) <= set(params(full)) | {start}
    assert start in params(coarse)  # the incumbent is always in its batch


def test_a_batch_without_a_winner_keeps_the_best_so_far() -> None:
    space = fr.stage_one_space()
    start = space.start()
    strategy = registry.create("stage_one", space, start, Effort.measure)
    _, offsets, _ = steps_of(strategy, [None, None, None])
    assert offsets.incumbent.params == start


def test_estimate_effort_measures_nothing() -> None:
    space = fr.stage_two_space()
    for name in registry.STRATEGIES:
        assert registry.create(name, space, space.start(), Effort.estimate).propose([]) is None


def test_options_are_checked_against_the_declared_table() -> None:
    space = fr.stage_one_space()
    with pytest.raises(UserError, match=r"no option 'round'.*rounds"):
        registry.create("stage_one", space, space.start(), Effort.measure, {"round": 3})
    with pytest.raises(UserError, match="rounds"):
        registry.create("stage_one", space, space.start(), Effort.measure, {"rounds": "many"})
    with pytest.raises(UserError, match="rounds"):
        registry.create("stage_one", space, space.start(), Effort.measure, {"rounds": True})
    with pytest.raises(UserError, match="buffer_counts"):
        registry.create(
            "stage_one", space, space.start(), Effort.measure, {"buffer_counts": (2, "x")}
        )
    s = registry.create("stage_one", space, space.start(), Effort.measure, {"rounds": 7})
    batch = s.propose([])
    assert batch is not None and batch.rounds == 7


def test_the_registry_is_explicit() -> None:
    assert set(registry.STRATEGIES) == {"stage_one", "stage_two", "exhaustive"}
    assert set(option_table(stage_two.Options)) == {"rounds", "radius", "joint"}
    for module in (stage_one, stage_two, exhaustive):
        assert all(option_table(module.Options).values())  # every option is documented
    space = fr.stage_one_space()
    with pytest.raises(UserError, match="no strategy 'annealing'"):
        registry.create("annealing", space, space.start(), Effort.measure)
    for module in (stage_one, stage_two, exhaustive):
        assert set(module.EFFORT) == set(Effort)


STAGE_ONE_BEST = ChannelParams(128, 32 * KiB, 4, 1024, Primitive.condvar)


def test_stage_two_tries_primitives_and_sizes_then_spin_budgets_then_placements() -> None:
    space = fr.stage_two_space()
    strategy = registry.create("stage_two", space, STAGE_ONE_BEST, Effort.measure)
    spin = STAGE_ONE_BEST.replace(primitive=Primitive.pause_spin, buffer_bytes=512, spin_ns=1000)
    prims, budgets, places = steps_of(strategy, [spin.replace(spin_ns=2000), spin, spin])
    assert prims.stage == "two" and prims.step == "primitive"
    assert {p.primitive for p in params(prims)} == set(Primitive)
    # Radius 3 at measure effort (128 B to 8 KiB), within the 16 KiB bound and the grid's sizes.
    assert {p.buffer_bytes for p in params(prims)} == {256, 512, 1024, 2048, 4096}
    assert {(p.producer_cpu, p.consumer_cpu) for p in params(prims)} == {(-1, -1)}
    # Uncalibrated: every primitive at the default budget (2 us), whose ids the records keep.
    assert {p.spin_ns for p in params(prims)} == {2000}
    assert budgets.step == "spin"
    assert [p.spin_ns for p in params(budgets)] == [0, 500, 1000, 2000, 4000, 8000]
    assert places.step == "placement" and places.incumbent.params == spin
    assert {(p.producer_cpu, p.consumer_cpu) for p in params(places)} == {(-1, -1), (0, 1)}
    assert {p.replace(producer_cpu=-1, consumer_cpu=-1) for p in params(places)} == {spin}


def test_stage_two_starts_each_primitive_at_its_calibrated_budget() -> None:
    budgets = SpinBudgets(sleep_ns=24_000, yield_ns=1_500)
    space = dataclasses.replace(fr.stage_two_space(), spin=budgets)
    strategy = registry.create("stage_two", space, STAGE_ONE_BEST, Effort.measure)
    hybrid = STAGE_ONE_BEST.replace(primitive=Primitive.hybrid, spin_ns=24_000)
    prims, budgets_step, places = steps_of(strategy, [hybrid] * 3)
    spins = {p.primitive: p.spin_ns for p in params(prims)}
    assert spins[Primitive.hybrid] == 24_000 and spins[Primitive.pause_spin] == 1_500
    assert spins[Primitive.futex] == spins[Primitive.condvar] == DEFAULT_SPIN_NS  # never spin
    # The hybrid at 0 would be the futex: its budgets go from a quarter to four times.
    assert [p.spin_ns for p in params(budgets_step)] == [6000, 12000, 24000, 48000, 96000]
    # Each placement with the short list of prefetch depths (up to its buffer); its blocks are
    # too small for huge pages, which decline.
    depths = {p.prefetch_bytes for p in params(places)}
    assert depths == {d for d in PREFETCH_SHORT if d <= hybrid.buffer_bytes}
    assert len(places.candidates) == len(depths) * len(space.placements)
    assert {p.huge_pages for p in params(places)} == {0}


def test_stage_two_leaves_the_spin_budget_of_a_primitive_that_never_spins() -> None:
    space = fr.stage_two_space()
    strategy = registry.create("stage_two", space, STAGE_ONE_BEST, Effort.measure)
    prims, places = steps_of(strategy, [STAGE_ONE_BEST] * 2)
    assert (prims.step, places.step) == ("primitive", "placement")


def test_stage_two_keeps_a_spin_budget_set_on_the_command_line() -> None:
    space = fr.stage_two_space().narrowed({"spin_ns": 700})
    start = STAGE_ONE_BEST.replace(spin_ns=700)
    strategy = registry.create("stage_two", space, start, Effort.measure)
    spin = start.replace(primitive=Primitive.backoff_spin)
    prims, places = steps_of(strategy, [spin] * 2)
    assert {p.spin_ns for p in params(prims)} == {700}
    assert places.step == "placement"


def test_stage_two_goes_joint_at_exhaustive_effort() -> None:
    space = fr.stage_two_space()
    strategy = registry.create("stage_two", space, STAGE_ONE_BEST, Effort.exhaustive)
    joint, shape = steps_of(strategy, [STAGE_ONE_BEST] * 2)
    assert (joint.step, shape.step) == ("primitive_placement", "code_shape")
    depths = [p.prefetch_bytes for p in params(shape)]  # the whole grid, up to its buffer
    assert depths == [d for d in PREFETCH_GRID if d <= STAGE_ONE_BEST.buffer_bytes]
    assert len(joint.candidates) == len(Primitive) * 5 * 2


def test_exhaustive_covers_the_grid_once_then_races_the_winners() -> None:
    space = fr.stage_one_space()
    start = space.start()
    strategy = registry.create("exhaustive", space, start, Effort.measure, {"max_batch": 40})
    every = exhaustive.grid(space, start, ("padding", "stack_offset", "buffers"))
    assert len(every) == 3 * 3 * len(space.grid())
    n_sweeps = math.ceil((len(every) - 1) / 39)
    first: Pick = lambda b: b.candidates[0].params  # noqa: E731
    winners = [first] * n_sweeps + [first]
    batches = steps_of(strategy, winners)
    sweeps, final = batches[:-1], batches[-1]
    assert all(len(b.candidates) <= 40 and b.incumbent.params == start for b in sweeps)
    seen = [p for b in sweeps for p in params(b) if p != start]
    assert sorted(seen, key=repr) == sorted(set(every) - {start}, key=repr)
    assert final.step == exhaustive.FINAL_STEP
    assert set(params(final)) == {start} | {b.candidates[0].params for b in sweeps}


def test_exhaustive_sweeps_code_shapes_at_every_point_when_asked() -> None:
    space = fr.stage_one_space()
    start = space.start()
    plain = exhaustive.grid(space, start, ("buffers",))
    shaped = exhaustive.grid(space, start, ("buffers", "code_shape"))
    assert set(plain) < set(shaped)
    for point in plain:  # each point in every shape its own buffers allow, and no other
        variants = {p for p in shaped if p.replace(prefetch_bytes=0, huge_pages=0) == point}
        assert variants == set(space.code_shapes(point))


def test_exhaustive_refuses_a_sweep_it_does_not_know() -> None:
    space = fr.stage_one_space()
    with pytest.raises(UserError, match="sweep"):
        registry.create("exhaustive", space, space.start(), Effort.measure, {"sweep": ("colour",)})


# Whole searches on the recorded model: strategy -> plan -> replayed run -> racing -> decision.
Run = tuple[tuple[StepResult, ...], fr.ReplayRunner]


def search(
    name: str,
    space: Space,
    start: ChannelParams,
    effort: Effort,
    key: RecordKey,
    *,
    objective: Objective = Objective.throughput,
    options: dict[str, object] | None = None,
) -> Run:
    runner = fr.ReplayRunner(key)
    settings = RaceSettings(
        0, fr.EVENTS_PER_SAMPLE, 11, objective, ("producer_alone", "consumer_alone")
    )
    strategy = registry.create(name, space, start, effort, options)
    history: list[StepResult] = []
    while (batch := strategy.propose(history)) is not None:
        history.append(
            race_and_decide(batch, runner.run, settings=settings, oversubscribed=False).step
        )
    return tuple(history), runner


@pytest.fixture(scope="module")
def stage_one_runs() -> dict[str, Run]:
    space = fr.stage_one_space()
    return {
        effort: search(name, space, space.start(), Effort.measure, fr.STAGE_ONE_KEY)
        for effort, name in (("measure", "stage_one"), ("exhaustive", "exhaustive"))
    }


def test_stage_one_finds_the_planted_optimum(stage_one_runs: dict[str, Run]) -> None:
    history, _ = stage_one_runs["measure"]
    assert [h.batch.step for h in history] == ["padding", "stack_offset", "buffers"]
    assert history[-1].decision.winner == fr.planted("stage_one")["throughput"]
    assert history[-1].winner() == ChannelParams(128, 32 * KiB, 4, 1024, Primitive.condvar)


def test_measure_is_within_5_percent_of_exhaustive_for_far_fewer_samples(
    stage_one_runs: dict[str, Run],
) -> None:
    truth = fr.truth("stage_one")
    staged, staged_runner = stage_one_runs["measure"]
    full, full_runner = stage_one_runs["exhaustive"]
    staged_pick, full_pick = staged[-1].decision.winner, full[-1].decision.winner
    assert staged_pick is not None and full_pick is not None
    assert truth[staged_pick]["ns"] <= 1.05 * truth[full_pick]["ns"]
    assert full_pick == fr.planted("stage_one")["throughput"]
    assert staged_runner.samples_run < full_runner.samples_run / 2


def test_a_replayed_search_is_deterministic(stage_one_runs: dict[str, Run]) -> None:
    space = fr.stage_one_space()
    again, _ = search("stage_one", space, space.start(), Effort.measure, fr.STAGE_ONE_KEY)
    first, _ = stage_one_runs["measure"]
    assert [h.decision for h in again] == [h.decision for h in first]


def test_stage_two_throughput_spins_efficiency_blocks_and_the_broken_variant_never_wins() -> None:
    space = fr.stage_two_space()
    planted = fr.planted("stage_two")
    broken = set(planted["broken"].split(","))
    fast, _ = search(
        "stage_two",
        space,
        STAGE_ONE_BEST,
        Effort.measure,
        fr.STAGE_TWO_KEY,
        objective=Objective.throughput,
        options={"radius": 2},  # wide enough to reach the planted broken variants
    )
    assert fast[-1].decision.winner == planted["throughput"]
    assert fast[-1].winner() == ChannelParams(128, 32 * KiB, 4, 512, Primitive.pause_spin, 0, 1)
    assert broken & set(fast[0].decision.excluded)
    frugal, _ = search(
        "stage_two",
        space,
        STAGE_ONE_BEST,
        Effort.measure,
        fr.STAGE_TWO_KEY,
        objective=Objective.efficiency,
        options={"radius": 2},
    )
    winner = frugal[-1].winner()
    assert winner is not None and winner.primitive.blocks
    truth = fr.truth("stage_two")
    pick = frugal[-1].decision.winner
    assert pick is not None
    assert truth[pick]["cpu_ns"] <= 1.05 * truth[planted["efficiency"]]["cpu_ns"]
    assert not broken & {h.decision.winner for h in (*fast, *frugal)}


def test_option_ranges_are_declared_and_enforced() -> None:
    space = fr.stage_one_space()
    too_many = {"rounds": stats.MAX_ROUNDS + 1}
    with pytest.raises(UserError, match=r"rounds: 61 is outside 0\.\.60"):
        registry.create("stage_one", space, space.start(), Effort.measure, too_many)
    with pytest.raises(UserError, match="max_batch"):
        registry.create("exhaustive", space, space.start(), Effort.measure, {"max_batch": 1})
    with pytest.raises(UserError, match="radius"):
        registry.create("stage_two", space, space.start(), Effort.measure, {"radius": -1})


def test_huge_pages_are_tried_only_where_the_host_offers_them_and_a_block_fills_one() -> None:
    space = fr.stage_two_space()
    big = STAGE_ONE_BEST.replace(buffers=4, buffer_bytes=1 << 20)  # 4 MiB of buffers
    offered = dataclasses.replace(space, host=dataclasses.replace(space.host, huge_pages=True))
    assert space.huge_pages_values(big) == (0,)  # the host does not offer them: declined
    assert offered.huge_pages_values(big) == (0, 1)
    assert offered.huge_pages_values(big.replace(buffer_bytes=1 << 18)) == (0,)  # 1 MiB: too small
    fixed = offered.narrowed({"huge_pages": 0, "prefetch_bytes": 4096})
    assert fixed.huge_pages_values(big) == (0,) and fixed.prefetch_values(big) == (4096,)
    assert "prefetch_bytes" in fixed.violations(big.replace(prefetch_bytes=1024))
    assert "prefetch_bytes" not in fixed.violations(big.replace(prefetch_bytes=4096))
    shapes = offered.code_shapes(big)
    assert len(shapes) == len(PREFETCH_GRID) * 2 and big in shapes
