"""threadsim.pool: the CPUs shared out to threads that each want one part of
the time, the capacity of a guest that hides its siblings, and issue 5's fluid model."""

from __future__ import annotations

import numpy as np
import pytest

from hspc_gen.model.shape import SMT_YIELD
from threadsim.pool import Pool, _binomial, share

SIXTEEN = Pool(16, 16)


def test_the_binomial_sums_to_one_and_degenerates_at_the_ends() -> None:
    for n, u in ((5, 0.3), (128, 0.9), (256, 0.01)):
        pmf = _binomial(n, u)
        assert pmf.sum() == pytest.approx(1.0)
        assert float(pmf @ np.arange(n + 1)) == pytest.approx(n * u)
    assert _binomial(4, 1.0).tolist() == [0, 0, 0, 0, 1]
    assert _binomial(4, 0.0).tolist() == [1, 0, 0, 0, 0]


def test_threads_that_never_sleep_get_what_a_fluid_pool_gives() -> None:
    for threads in (4, 16, 24, 64):
        got = share(SIXTEEN, threads, float(threads))
        fluid = share(Pool(16, 16, multiplexed=False), threads, float(threads))
        assert got.speed == pytest.approx(fluid.speed)
        assert got.busy_cpus == pytest.approx(min(threads, 16))


def test_a_demand_that_fills_the_cpus_on_average_leaves_them_idle_at_moments() -> None:
    """24 threads each wanting a CPU two thirds of the time want 16 on average: some moments
    find more wanting (they wait), others fewer (CPUs idle). Twice the threads at that duty
    fill the idle moments, and a fluid pool knows of none."""
    fills, more = share(SIXTEEN, 24, 16.0), share(SIXTEEN, 48, 32.0)
    assert fills.busy_cpus < 15.5 < more.busy_cpus < 16.0
    assert share(Pool(16, 16, multiplexed=False), 24, 16.0).busy_cpus == pytest.approx(16.0)


def test_a_guest_that_hides_its_siblings_loses_their_yield_by_chance() -> None:
    known, hidden = Pool(16, 8), Pool(16, 8, hidden_smt=True)
    assert share(known, 8, 8.0).speed == pytest.approx(1.0, abs=0.001)
    blind = share(hidden, 8, 8.0).speed
    # 8 threads on 16 vCPUs chosen blindly: 8 x 7 / (16 x 15) of each of the 8 pairs is busy twice.
    pairs = 8 * 8 * 7 / (16 * 15)
    assert blind == pytest.approx((8 - (1 - SMT_YIELD) * pairs) / 8, rel=0.01)
    full = share(known, 16, 16.0).speed
    assert share(hidden, 16, 16.0).speed == pytest.approx(full)  # all busy: no chance left
