"""hspc_gen.search.threads.plan: a coarse grid that grows with log(CPUs), a ladder of plans,
and the planner that picks the fullest that fits the time left after the pilot round."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.measure import Config
from hspc_gen.search.threads.plan import (
    FULL,
    LADDER,
    PLAN_SHARE,
    Plan,
    Planner,
    Seconds,
    coarse_counts,
    level_samples,
)


def test_the_coarse_grid_doubles_from_the_saturation_point_and_holds_the_cpus_fill() -> None:
    axis = Axis("groups", 1, 64, 12, 1)  # 12 groups saturate a 32-CPU host
    counts = coarse_counts(axis, 32)
    assert counts == (1, 2, 3, 6, 12, 16, 24, 48, 64)  # 16 groups fill its 32 CPUs
    assert coarse_counts(Axis("consumers", 2, 2, 2, 2), 16) == (2,)


def test_the_grid_grows_with_log_cpus_and_the_levels_not_at_all() -> None:
    sizes = {
        cpus: len(coarse_counts(Axis("groups", 1, cpus, cpus // 4, 1), cpus))
        for cpus in (16, 128, 1024)
    }
    assert sizes[128] - sizes[16] <= 4 and sizes[1024] - sizes[128] <= 4
    assert all(size <= 2 + math.log2(cpus) + 1 for cpus, size in sizes.items())
    assert level_samples(FULL, 1) < 400  # whatever the host: it does not know the CPUs


def test_the_ladder_costs_less_at_every_rung_down_and_its_resolution_coarsens() -> None:
    costs = [level_samples(p, 2) + 10 * p.coarse_rounds for p in LADDER]
    assert costs == sorted(costs)
    assert [p.level for p in LADDER] == list(range(1, len(LADDER) + 1))
    assert FULL.resolution == pytest.approx(2 ** (1 / 16) - 1)
    assert LADDER[0].resolution == 1.0  # the coarse grid alone: a factor of two


class Held:
    def __init__(self) -> None:
        self.plans: list[Plan] = []

    def __call__(self, plan: Plan) -> None:
        self.plans.append(plan)


def per_sample(seconds: float) -> Seconds:
    def call_seconds(configs: Sequence[Config], rounds: int) -> float:
        return len(configs) * rounds * seconds

    return call_seconds


COARSE = [Config(n, n) for n in (1, 2, 4, 8, 16)]


def test_the_planner_picks_the_fullest_rung_that_fits_and_holds_it() -> None:
    held = Held()
    unbounded = Planner(math.inf, per_sample(0.03), None, held)
    assert unbounded.plan(COARSE, Config(8, 8), 1, 0.0) == FULL
    tight = Planner(4.0, per_sample(0.03), None, held)
    chosen = tight.plan(COARSE, Config(8, 8), 1, 0.5)
    assert chosen.level < FULL.level
    need = (chosen.coarse_rounds - 1) * 5 * 0.03 + level_samples(chosen, 1) * 0.03
    assert need <= (4.0 - 0.5) * PLAN_SHARE
    assert held.plans == [FULL, chosen]


def test_a_replay_keeps_the_rung_the_first_run_was_held_to() -> None:
    replay = Planner(math.inf, per_sample(0.03), 3)
    assert replay.plan(COARSE, Config(8, 8), 1, 0.0).level == 3


def test_nothing_fits_the_coarse_grid_alone_is_planned() -> None:
    starved = Planner(0.5, per_sample(0.03))
    assert starved.plan(COARSE, Config(8, 8), 2, 0.4) == LADDER[0]
