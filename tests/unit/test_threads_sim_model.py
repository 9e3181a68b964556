"""hspc_gen.search.threads.sim_model: the simulated host's physics behave as the seeds say real
hosts do (cores then SMT yield, blocking work wanting more threads, the quota, USL peaks,
hand-off distances, CPU 0 and the OS's shuffling)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hspc_gen.search.threads.capacity import SMT_YIELD, TopologyShape
from hspc_gen.search.threads.measure import Config
from hspc_gen.search.threads.sim_model import SimWorkload, operating_point, usl_factor

CPU_BOUND = SimWorkload("flat", 200.0, 200.0, sigma=0.0, kappa=0.0, handoff_ns=0.0)
SMT_8 = TopologyShape.uniform(cores_per_package=4, threads_per_core=2)
TWO_SOCKETS = TopologyShape.uniform(packages=2, cores_per_package=8, threads_per_core=2)


def rate(shape: TopologyShape, w: SimWorkload, config: Config) -> float:
    return operating_point(shape, w, config).events_per_s


def pinned(name: str, producers: tuple[int, ...], consumers: tuple[int, ...]) -> Config:
    return Config(len(producers), len(consumers), name, producers, consumers)


def test_cpu_bound_pairs_scale_to_the_cores_then_smt_adds_its_yield() -> None:
    one = rate(SMT_8, CPU_BOUND, Config(1, 1))
    assert one == pytest.approx(1e9 / 200, rel=0.03)
    cores = rate(SMT_8, CPU_BOUND, Config(2, 2))
    assert cores == pytest.approx(2 * one, rel=0.03)
    siblings = rate(SMT_8, CPU_BOUND, Config(4, 4))
    assert siblings / cores == pytest.approx(1 + SMT_YIELD, rel=0.02)
    oversubscribed = rate(SMT_8, CPU_BOUND, Config(8, 8))
    assert oversubscribed < siblings


@pytest.mark.parametrize("wait_ratio", [1.0, 3.0, 9.0])
def test_blocking_work_wants_more_threads_than_cpus(wait_ratio: float) -> None:
    w = SimWorkload("io", 200.0, 200.0, wait_ratio=wait_ratio, sigma=0.0, kappa=0.0)
    shape = TopologyShape.uniform(cores_per_package=4)
    at_cores = rate(shape, w, Config(2, 2))
    at_goetz = rate(shape, w, Config(round(2 * (1 + wait_ratio)), round(2 * (1 + wait_ratio))))
    assert at_goetz / at_cores == pytest.approx(1 + wait_ratio, rel=0.05)


def test_the_quota_caps_cpu_time_however_many_cpus_are_allowed() -> None:
    quota = TopologyShape.uniform(cores_per_package=16, cpu_quota=3.0)
    free = TopologyShape.uniform(cores_per_package=16)
    pairs = Config(8, 8)
    assert rate(free, CPU_BOUND, pairs) > 4 * rate(quota, CPU_BOUND, pairs)
    assert operating_point(quota, CPU_BOUND, pairs).producer_cpus <= 3.0


def test_usl_contention_makes_a_peak() -> None:
    w = SimWorkload("lock", 200.0, 200.0, sigma=0.15, kappa=0.005)
    assert usl_factor(w, 1) == 1.0
    big = TopologyShape.uniform(cores_per_package=64)
    curve = [rate(big, w, Config(p, p)) for p in range(1, 32)]
    peak = int(np.argmax(curve)) + 1
    assert peak == round(math.sqrt((1 - w.sigma) / w.kappa))
    assert curve[-1] < 0.9 * max(curve)


def test_handoff_cost_grows_with_the_distance_between_partners() -> None:
    w = SimWorkload("chatty", 20.0, 20.0, sigma=0.0, kappa=0.0, handoff_ns=10.0)
    same_llc = rate(TWO_SOCKETS, w, pinned("a", (1,), (2,)))
    other_socket = rate(TWO_SOCKETS, w, pinned("b", (1,), (9,)))
    siblings = rate(TWO_SOCKETS, w, pinned("c", (1,), (17,)))
    assert other_socket < same_llc
    # CPU-bound siblings share one core: the cheap hand-off does not pay for the lost speed.
    assert siblings < same_llc


def test_cpu_zero_is_slower_and_unpinned_pairs_get_shuffled() -> None:
    shape = TopologyShape.uniform(cores_per_package=8)
    on_zero = rate(shape, CPU_BOUND, pinned("z", (0,), (1,)))
    off_zero = rate(shape, CPU_BOUND, pinned("n", (2,), (1,)))
    assert on_zero < off_zero
    assert rate(shape, CPU_BOUND, Config(1, 1)) < off_zero
