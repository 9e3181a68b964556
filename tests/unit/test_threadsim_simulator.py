"""threadsim.simulator: the workload matrix, noise as the docstring promises, OS
metrics, ground truth, determinism for a seed, events per producer and the simulated clock."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hspc_gen.model.shape import TopologyShape
from hspc_gen.search.threads.measure import Config, Lab
from threadsim.hosts import MACHINES
from threadsim.physics import SimWorkload
from threadsim.simulator import (
    MANY_CORE_WORKLOADS,
    WORKLOADS,
    SimulatedHost,
    count_grid,
)

CPU_BOUND = SimWorkload("flat", 200.0, 200.0, sigma=0.0, kappa=0.0, handoff_ns=0.0)
SMT_8 = TopologyShape.uniform(cores_per_package=4, threads_per_core=2)
TWO_SOCKETS = TopologyShape.uniform(packages=2, cores_per_package=8, threads_per_core=2)


def test_the_workload_matrix_is_the_issues() -> None:
    names = [w.name for w in WORKLOADS]
    assert names == [
        "cpu_bound",
        "blocking_1",
        "blocking_3",
        "blocking_9",
        "lock_limited",
        "producer_heavy",
        "consumer_heavy",
    ]


def test_the_many_core_matrix_adds_the_two_ways_a_waiting_side_waits() -> None:
    extra = {w.name: w for w in MANY_CORE_WORKLOADS[len(WORKLOADS) :]}
    assert set(extra) == {"sleeping_consumer", "spinning_consumer"}
    assert extra["sleeping_consumer"].spin == 0.0 and extra["spinning_consumer"].spin == 1.0


def test_count_grid_lists_whole_groups_up_to_the_limit() -> None:
    grid = count_grid(12, 2)
    assert Config(6, 6) in grid and Config(4, 8) in grid
    assert all(c.threads <= 12 and c.consumers % c.producers == 0 for c in grid)


def test_measure_is_deterministic_for_a_seed_and_differs_across_seeds() -> None:
    configs = [Config(1, 1), Config(2, 2)]

    def walls(seed: int) -> list[float]:
        sim = SimulatedHost(SMT_8, WORKLOADS[0], seed=seed)
        first = sim.measure(configs, 3)
        second = sim.measure(configs, 3)
        return [s.sample.wall_ns for out in (first, second) for c in configs for s in out[c]]

    assert walls(1) == walls(1)
    assert walls(1) != walls(2)
    assert walls(1)[:3] != walls(1)[6:9]  # a second call draws fresh noise


def test_a_run_moves_its_events_per_producer_and_the_clock_counts_what_it_took() -> None:
    """The harness's Run: a sample of P producers moves P x its events, and lasts as long as
    its throughput says; the clock adds each sample, its set-up and the call's start."""
    sim = SimulatedHost(SMT_8, WORKLOADS[0], noise=0.0, seed=1)
    one, four = Config(1, 1), Config(4, 4)
    out = sim.run([one, four], 2, 0, {one: 10_000, four: 10_000})
    assert [s.sample.events for s in out[four]] == [40_000, 40_000]
    walls = {c: out[c][0].sample.wall_ns for c in (one, four)}
    for c in (one, four):
        assert walls[c] == pytest.approx(c.producers * 10_000 / sim.true_throughput(c) * 1e9)
    timed = 2 * (walls[one] + walls[four]) / 1e9
    assert timed < sim.clock() < timed + 0.2  # set-up and the call's start
    before = sim.clock()
    sim.measure([one], 1)
    assert sim.clock() > before


def test_unpinned_samples_on_two_sockets_vary_with_where_the_partners_sat() -> None:
    """Pairing cancels the round's shared noise but not the draw of where the OS put each
    sample's threads: a chatty pair on two sockets varies more than on one."""
    chatty = SimWorkload("chatty", 20.0, 20.0, sigma=0.0, kappa=0.0, handoff_ns=10.0)
    one_socket = TopologyShape.uniform(cores_per_package=16, threads_per_core=2)

    def spread(shape: TopologyShape) -> float:
        lab = Lab(SimulatedHost(shape, chatty, noise=0.02, seed=4).measure)
        a, b = Config(1, 1), Config(1, 1).copy(1)
        lab.run([a, b], 60)
        rel = lab.compare(b, a)
        return rel.high / rel.low - 1.0  # the interval's width

    assert spread(TWO_SOCKETS) > 5 * spread(one_socket)


def test_a_guest_s_probe_sees_the_cost_its_cpus_give() -> None:
    """The probe reads a pair's costs as the harness does (CPU time per event per side, the
    sleep beyond it), so a blocking pair shows its wait ratio and a spinning consumer its CPU."""
    guest = next(m for m in MACHINES if m.hidden_smt)
    by_name = {w.name: w for w in MANY_CORE_WORKLOADS}
    blocking = SimulatedHost(guest.shape, by_name["blocking_3"], seed=2, machine=guest).probe()
    assert blocking.wait_ratio == pytest.approx(3.0, rel=0.15)
    spins = SimulatedHost(guest.shape, by_name["spinning_consumer"], seed=2, machine=guest)
    sleeps = SimulatedHost(guest.shape, by_name["sleeping_consumer"], seed=2, machine=guest)
    assert spins.probe().consumer_ns > 2 * sleeps.probe().consumer_ns


def test_noise_is_mostly_shared_within_a_round_with_a_heavy_tail() -> None:
    sim = SimulatedHost(SMT_8, WORKLOADS[0], noise=0.10, seed=3)
    a, b = Config(1, 1), Config(2, 2)
    lab = Lab(sim.measure)
    lab.run([a, b], 120)
    truth = sim.true_throughput(a)
    rates = np.array([s.events_per_second for s in lab.samples(a)]) / truth
    spread = float(np.std(np.log(rates)))
    assert 0.05 <= spread <= 0.15
    assert float(np.quantile(rates, 0.02)) < math.exp(-2.5 * 0.10)  # slow tail
    rel = lab.compare(b, a)
    assert rel.gain == pytest.approx(sim.true_throughput(b) / truth, rel=0.01)
    assert rel.high / rel.low < 1.02  # pairing cancels the shared part


def test_os_metrics_are_plausible_functions_of_the_count() -> None:
    lock = next(w for w in WORKLOADS if w.name == "lock_limited")
    sim = SimulatedHost(TWO_SOCKETS, lock, seed=0)
    few, many = Config(2, 2), Config(12, 12)
    for c in (few, many):
        assert sim.os_rates(c).voluntary_switches > 0
    vcx_per_event = [
        sim.os_rates(c).voluntary_switches / sim.true_throughput(c) for c in (few, many)
    ]
    assert vcx_per_event[1] > 3 * vcx_per_event[0]  # contended lock sleeps rise with the groups
    cpu = SimulatedHost(TWO_SOCKETS, WORKLOADS[0], seed=0)
    over = Config(40, 40)
    assert cpu.os_rates(over).migrations > cpu.os_rates(Config(16, 16)).migrations
    assert cpu.os_rates(over).involuntary_switches > 0
    pinned_pair = Config(1, 1, "p", (1,), (2,))
    assert cpu.os_rates(pinned_pair).migrations == 0


def test_samples_carry_the_roles_cpu_time_and_the_channel_waits() -> None:
    heavy = next(w for w in WORKLOADS if w.name == "producer_heavy")
    sim = SimulatedHost(SMT_8, heavy, noise=0.05, seed=0)
    lab = Lab(sim.measure)
    lab.run([Config(1, 1)], 6)
    point = lab.point(Config(1, 1))
    # The consumer does a quarter of the producer's work and waits the rest of the time.
    assert point.wait_fraction == pytest.approx(0.5 * (1 - 165 / 615), rel=0.1)
    assert point.cpu_utilisation == pytest.approx(1 + 165 / 615, rel=0.15)


def test_ground_truth_finds_the_best_and_the_threads_each_share_needs() -> None:
    sim = SimulatedHost(SMT_8, CPU_BOUND)
    truth = sim.ground_truth(count_grid(16, 1), (0.5, 0.95))
    assert truth.best.threads == 8
    assert truth.threads_for[0.5] < truth.threads_for[0.95] <= 8
    assert sim.probe() == sim.probe()  # the calibration run is seeded too
