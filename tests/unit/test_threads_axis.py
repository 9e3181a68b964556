"""hspc_gen.search.threads.axis: which count moves, and its geometric grid."""

from __future__ import annotations

import itertools
import math

from hspc_gen.search.threads.axis import Axis
from hspc_gen.search.threads.measure import Config

STEP = math.sqrt(2.0)


def test_each_kind_of_axis_maps_a_count_to_a_configuration() -> None:
    groups = Axis("groups", 1, 64, 8, 3)
    assert groups.config(5) == Config(5, 15) and groups.count(Config(5, 15)) == 5
    producers = Axis("producers", 1, 6, 2, 6)
    assert producers.config(2) == Config(2, 6) and producers.count(Config(2, 6)) == 2
    consumers = Axis("consumers", 2, 16, 4, 2)
    assert consumers.config(7) == Config(2, 7) and consumers.count(Config(2, 7)) == 7


def test_the_grid_steps_geometrically_from_the_start_and_holds_both_ends() -> None:
    axis = Axis("groups", 1, 512, 37, 1)
    grid = axis.grid(STEP)
    assert grid[0] == 1 and grid[-1] == 512 and 37 in grid
    assert list(grid) == sorted(set(grid))
    inner = [(a, b) for a, b in itertools.pairwise(grid) if a >= 8 and b < 512]
    assert all(abs(math.log(b / a / STEP)) < 0.05 for a, b in inner)
    start = grid.index(37)
    assert grid[start + 1] == round(37 * STEP) and grid[start - 1] == round(37 / STEP)


def test_the_start_is_clamped_into_the_range() -> None:
    assert Axis("groups", 1, 4, 9, 1).first() == 4
    assert Axis("consumers", 3, 12, 1, 3).first() == 3
    assert Axis("groups", 2, 2, 2, 1).grid(2.0) == (2,)
