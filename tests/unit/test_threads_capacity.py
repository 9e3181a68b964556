"""hspc_gen.search.threads.capacity: topology shapes from hosts and by hand, the capacity they
offer, and Goetz's first estimate."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hspc_gen.host.machine import read_host
from hspc_gen.model import MAX_THREADS
from hspc_gen.model.shape import SMT_YIELD, TopologyShape
from hspc_gen.search.threads.capacity import WorkCost, estimate

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


def recorded(name: str) -> TopologyShape:
    return read_host(SYSFS / name / "sys").topology_shape()


@pytest.mark.parametrize(
    ("tree", "uniform"),
    [
        ("1s-4c-8t", {"cores_per_package": 4, "threads_per_core": 2}),
        ("2s-8c-2t", {"packages": 2, "cores_per_package": 8, "threads_per_core": 2}),
        ("2s-4c-nosmt", {"packages": 2, "cores_per_package": 4}),
        ("epyc-2c-vm", {"cores_per_package": 2, "virtual": True}),
    ],
)
def test_uniform_shapes_number_cpus_as_linux_does(tree: str, uniform: dict[str, int]) -> None:
    by_hand = TopologyShape.uniform(**uniform)  # type: ignore[arg-type]
    assert by_hand == recorded(tree)


def test_a_split_cache_part_has_two_llc_groups_of_whole_cores() -> None:
    shape = recorded("1s-8c-split-l3")
    groups = shape.llc_groups()
    assert len(groups) == 2 and shape.cores == 8 and shape.threads_per_core == 2
    for group in groups:
        assert all(set(shape.siblings(cpu)) <= set(group) for cpu in group)


def test_an_offline_sibling_leaves_its_core_with_one_thread() -> None:
    shape = recorded("1s-4c-8t-offline")
    assert 5 not in shape.cpus
    assert shape.siblings(1) == (1,)
    assert shape.threads_per_core == 2
    assert shape.core_equivalents() == pytest.approx(4 + SMT_YIELD * 3)


def test_siblings_and_places() -> None:
    shape = TopologyShape.uniform(packages=2, cores_per_package=8, threads_per_core=2)
    assert shape.siblings(3) == (3, 19)
    assert shape.place(19).core == 3 and shape.place(19).package == 0
    assert shape.place(8).package == 1
    assert shape.llc_groups() == (
        (*range(8), *range(16, 24)),
        (*range(8, 16), *range(24, 32)),
    )
    with pytest.raises(KeyError):
        shape.place(32)


def test_smt_adds_a_fraction_of_a_core_and_the_quota_caps_everything() -> None:
    smt = TopologyShape.uniform(cores_per_package=64, threads_per_core=2, llc_per_package=8)
    assert smt.core_equivalents() == pytest.approx(64 * (1 + SMT_YIELD))
    assert smt.usable_cpus() == 128
    quota = TopologyShape.uniform(cores_per_package=16, cpu_quota=3.0)
    assert quota.usable_cpus() == 3.0 and quota.core_equivalents() == 3.0
    assert quota.capacity().cpu_quota == 3.0


def test_an_empty_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        TopologyShape(())


@pytest.mark.parametrize(
    ("producer", "consumer", "expected"),
    [(100, 100, 1), (100, 105, 1), (100, 50, 1), (150, 400, 3), (100, 200, 2), (100, 230, 3)],
)
def test_consumers_per_producer_keep_up_with_the_producer(
    producer: float, consumer: float, expected: int
) -> None:
    assert WorkCost(producer, consumer).consumers_per_producer() == expected


def test_work_costs_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        WorkCost(0.0, 10.0)
    with pytest.raises(ValueError, match="positive"):
        WorkCost(10.0, 10.0, wait_ratio=-1.0)


def test_a_group_keeps_as_many_cpus_busy_as_its_work_allows() -> None:
    assert WorkCost(100, 100).group_cpus(1) == pytest.approx(2.0)
    assert WorkCost(100, 100, wait_ratio=9).group_cpus(1) == pytest.approx(0.2)
    # The producer is the slow side: the consumer idles two thirds of the time.
    assert WorkCost(300, 100).group_cpus(1) == pytest.approx(4 / 3)
    assert WorkCost(150, 450).group_cpus(3) == pytest.approx(4.0)


@pytest.mark.parametrize(("wait_ratio", "threads"), [(0, 16), (1, 32), (3, 64), (9, 160)])
def test_goetz_estimate_is_cores_times_one_plus_wait_over_compute(
    wait_ratio: float, threads: int
) -> None:
    shape = TopologyShape.uniform(packages=2, cores_per_package=8, threads_per_core=2)
    est = estimate(shape, WorkCost(200, 200, wait_ratio))
    assert est.threads == threads
    assert threads < est.max_threads <= MAX_THREADS


def test_the_estimate_respects_the_quota_and_the_thread_limit() -> None:
    quota = TopologyShape.uniform(cores_per_package=16, cpu_quota=3.0)
    assert estimate(quota, WorkCost(200, 200)).producers == 2  # 3 CPUs: 1.5 pairs, rounded
    big = TopologyShape.uniform(cores_per_package=64, threads_per_core=2)
    capped = estimate(big, WorkCost(200, 200, wait_ratio=9), max_threads=100)
    assert capped.threads <= 100 and capped.max_threads == 100


def test_consumer_heavy_work_gets_groups_of_several_consumers() -> None:
    shape = TopologyShape.uniform(cores_per_package=8)
    est = estimate(shape, WorkCost(150, 400))
    assert est.consumers_per_producer == 3
    assert est.producers == math.floor(8 / WorkCost(150, 400).group_cpus(3) + 0.5)
