"""The search's time plan: every step of the effort planned before measuring, each step's share
in proportion to its need, time a step did not use handed to the steps after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hspc_gen import wiring
from hspc_gen.host.machine import read_host
from hspc_gen.model import Effort
from hspc_gen.search import schedule
from hspc_gen.search.schedule import Schedule, StepOutline
from hspc_gen.target.app import load_target

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "app.yaml"


def test_points_sharing_units_build_faster_than_a_unit_each() -> None:
    one_each = schedule.BUILD_SETUP_SECONDS + 82 / 2 * (
        schedule.UNIT_SECONDS + schedule.POINT_SECONDS
    )
    assert schedule.build_seconds(82, jobs=2) < 0.6 * one_each
    one, eight, grid = (schedule.build_seconds(n, 2) for n in (1, 8, 82))
    assert one < eight < grid
    assert schedule.build_seconds(8, 2, kinds=2) > schedule.build_seconds(8, 2)
    assert schedule.build_seconds(82, 4) < schedule.build_seconds(82, 2)


def test_a_race_costs_its_first_chunk_then_its_survivors() -> None:
    assert schedule.race_seconds(10, 6) == pytest.approx(schedule.sample_seconds(60))
    wide = schedule.race_seconds(100, 30)
    assert wide == pytest.approx(schedule.sample_seconds(600 + 24 * (schedule.SURVIVORS + 3)))


NOW = 1000.0


@pytest.fixture(autouse=True)
def still_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's arithmetic on a clock that stands still: no test here waits on real time."""
    monkeypatch.setattr("hspc_gen.search.schedule.time.monotonic", lambda: NOW)


def outline(step: str, points: int) -> StepOutline:
    return StepOutline(0, step, points, rounds=30, baselines=2)


def test_each_step_gets_its_needs_share_of_the_time_left() -> None:
    small, big = outline("padding", 5), outline("buffers", 82)
    plan = Schedule((small, big), NOW + 100.0, jobs=2)
    first = plan.step_deadline(small, done=())
    share = schedule.need(small, 2) / (schedule.need(small, 2) + schedule.need(big, 2))
    assert first - NOW == pytest.approx(100.0 * share)
    # The first step done (whatever it used): the last step gets all the time left.
    assert plan.step_deadline(big, done=[small.key]) == pytest.approx(plan.deadline)


def test_a_small_step_gets_at_least_what_it_needs_at_the_least() -> None:
    small, big = outline("padding", 2), outline("buffers", 82)
    plan = Schedule((small, big), NOW + 30.0, jobs=2)
    least = schedule.least(small, 2)
    assert plan.step_deadline(small, done=()) - NOW >= least
    # Never past the search's deadline, though.
    short = Schedule((small, big), NOW + 1.0, jobs=2)
    assert short.step_deadline(small, done=()) <= short.deadline


def test_a_step_the_outline_did_not_foresee_is_costed_as_it_came() -> None:
    foreseen = outline("padding", 5)
    plan = Schedule((foreseen,), NOW + 50.0, jobs=2)
    surprise = StepOutline(1, "surprise", 5, 30, 2)
    assert plan.step_deadline(surprise, done=()) < plan.deadline - 10.0  # padding still ahead
    assert plan.stage_keys(0) == (foreseen.key,) and plan.stage_keys(1) == ()


def test_the_default_run_plans_every_step_and_the_whole_grid_within_its_search_time() -> None:
    target, host = load_target(EXAMPLE), read_host()
    space = wiring.space_for(target, host, {})
    settings = wiring.settings_for(target, host, Effort.measure, started=0.0)
    stages = [(stage.strategy, len(stage.baselines)) for stage in settings.stages]
    plan = schedule.plan_steps(
        space, space.start(), stages, Effort.measure, settings.search_deadline
    )
    steps = {(s.stage, s.step): s.points for s in plan.steps}
    assert set(steps) >= {(0, "padding"), (0, "stack_offset"), (0, "buffers"), (1, "primitive")}
    assert steps[(0, "buffers")] >= len(space.grid())  # the full grid of the memory bound
    # The plan fits the search's share of the default budget (120 s): nothing is left out.
    assert plan.planned_seconds() <= settings.search_deadline
