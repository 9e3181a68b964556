"""threadsim.physics: the simulated host's physics behave as the seeds say real
hosts do (cores then SMT yield, blocking work wanting more threads, the quota, USL peaks,
hand-off distances, CPU 0 and the OS's shuffling), and as the 16-CPU host did (throughput rising
past the CPUs when threads sleep), with placement noise and a guest's hidden siblings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hspc_gen.model.shape import SMT_YIELD, CpuPlace, TopologyShape
from hspc_gen.search.threads.measure import Config
from threadsim.physics import (
    SimWorkload,
    operating_point,
    placement_spread,
    usl_factor,
)

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
    """Goetz's count fills the CPUs on average; threads that sleep at random leave them idle at
    moments, so it reaches most (not all) of the 1 + wait ratio it promises."""
    w = SimWorkload("io", 200.0, 200.0, wait_ratio=wait_ratio, sigma=0.0, kappa=0.0)
    shape = TopologyShape.uniform(cores_per_package=4)
    at_cores = rate(shape, w, Config(2, 2))
    goetz = round(2 * (1 + wait_ratio))
    gain = rate(shape, w, Config(goetz, goetz)) / at_cores
    assert 0.85 * (1 + wait_ratio) <= gain < 1 + wait_ratio


def test_throughput_rises_past_the_cpus_only_when_the_waiting_side_sleeps() -> None:
    """examples/app.yaml on the 16-CPU host: a 15 ns consumer sleeps in the channel while its
    40 ns producer works, and more groups than fit the CPUs filled them (to 68 threads there);
    the same consumer spinning while it waits keeps its CPU busy, and more threads only share."""
    guest = TopologyShape.uniform(cores_per_package=16, virtual=True)
    sleeping = SimWorkload("sleeps", 40.0, 15.0, handoff_ns=2.0)
    spinning = SimWorkload("spins", 40.0, 15.0, handoff_ns=2.0, spin=1.0)
    counts = range(4, 49, 2)
    for w, rises in ((sleeping, True), (spinning, False)):
        curve = {2 * g: rate(guest, w, Config(g, g)) for g in counts}
        best = max(curve, key=curve.__getitem__)
        assert (best > 16) is rises
    past = rate(guest, sleeping, Config(16, 16)) / rate(guest, sleeping, Config(8, 8))
    assert past > 1.3
    busy = operating_point(guest, sleeping, Config(8, 8))
    assert busy.producer_cpus + busy.consumer_cpus < 0.8 * 16  # the idle time more threads fill


def test_two_sockets_spread_unpinned_partners_and_their_draw_varies() -> None:
    w = SimWorkload("chatty", 20.0, 20.0, sigma=0.0, kappa=0.0, handoff_ns=10.0)
    one = TopologyShape.uniform(cores_per_package=16, threads_per_core=2)
    op = operating_point(TWO_SOCKETS, w, Config(1, 1))
    assert placement_spread(TWO_SOCKETS, w, Config(1, 1), op) > 0.1
    many = Config(8, 8)
    spread = placement_spread(TWO_SOCKETS, w, many, operating_point(TWO_SOCKETS, w, many))
    assert spread < placement_spread(TWO_SOCKETS, w, Config(1, 1), op) / 2  # groups average out
    assert placement_spread(one, w, Config(1, 1), operating_point(one, w, Config(1, 1))) == 0.0


def test_a_guest_that_hides_its_siblings_shares_cores_by_chance() -> None:
    """Eight busy threads on a 16-vCPU guest whose vCPUs are pairs of eight cores: the OS,
    blind to the pairs, puts some on one core; told the truth, it puts each on its own."""
    physical = TopologyShape(
        tuple(CpuPlace(cpu=v, core=v // 2, package=0, llc=0) for v in range(16))
    )
    blind = rate(physical, CPU_BOUND, Config(4, 4))
    told = operating_point(physical, CPU_BOUND, Config(4, 4), hidden_smt=False).events_per_s
    hidden = operating_point(physical, CPU_BOUND, Config(4, 4), hidden_smt=True).events_per_s
    assert blind == told and hidden < 0.95 * told


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
