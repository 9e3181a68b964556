"""hspc_gen.search.threads.placement: candidates from the topology obey the rules (partners on
distinct cores, CPU 0 left out when the rest suffice), the measured choice pins only when it pays,
and the strings a user pastes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hspc_gen.cpulist import parse_cpu_list
from hspc_gen.host.machine import read_host
from hspc_gen.model import PinThreads
from hspc_gen.model.shape import TopologyShape
from hspc_gen.search.threads.measure import Config, Lab
from hspc_gen.search.threads.placement import (
    COMPACT,
    SIBLINGS,
    SPREAD,
    affinity_mask,
    candidates,
    choose,
    omp_places,
    pairs_on_siblings,
    pool,
    taskset_list,
)
from threadsim.physics import SimWorkload
from threadsim.simulator import SimulatedHost

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"
SHAPES = {
    "2cpu": TopologyShape.uniform(cores_per_package=2),
    "4c8t": TopologyShape.uniform(cores_per_package=4, threads_per_core=2),
    "split-l3": read_host(SYSFS / "1s-8c-split-l3" / "sys").topology_shape(),
    "2s8c2t": TopologyShape.uniform(packages=2, cores_per_package=8, threads_per_core=2),
    "64c128t": TopologyShape.uniform(cores_per_package=64, threads_per_core=2, llc_per_package=8),
    "offline": read_host(SYSFS / "1s-4c-8t-offline" / "sys").topology_shape(),
}
COUNTS = [(1, 1), (1, 2), (2, 2), (1, 3), (3, 3), (4, 8), (6, 6), (8, 8), (12, 12), (20, 40)]


def by_name(options: tuple[Config, ...]) -> dict[str, Config]:
    return {c.placement: c for c in options}


def test_cpu_zero_is_left_out_when_the_other_cpus_suffice() -> None:
    shape = SHAPES["4c8t"]
    assert pool(shape, 7) == (1, 2, 3, 4, 5, 6, 7)
    assert pool(shape, 8) == shape.cpus
    assert affinity_mask(shape, Config(2, 2)) == (1, 2, 3, 4, 5, 6, 7)


@pytest.mark.parametrize("shape_name", sorted(SHAPES))
@pytest.mark.parametrize(("producers", "consumers"), COUNTS)
def test_every_candidate_obeys_the_rules(shape_name: str, producers: int, consumers: int) -> None:
    shape = SHAPES[shape_name]
    config = Config(producers, consumers)
    options = candidates(shape, config)
    if config.threads > len(shape.cpus):
        assert options == ()
    for option in options:
        cpus = option.producer_cpus + option.consumer_cpus
        assert len(set(cpus)) == config.threads and set(cpus) <= set(shape.cpus)
        assert option.counts() == config
        if config.threads < len(shape.cpus):
            assert 0 not in cpus
        assert pairs_on_siblings(shape, option) == (option.placement == SIBLINGS)


def test_compact_stays_in_one_cache_and_spread_deals_groups_over_the_caches() -> None:
    shape = SHAPES["split-l3"]
    groups = [set(g) for g in shape.llc_groups()]
    without_zero = next(g for g in groups if 0 not in g)
    few = by_name(candidates(shape, Config(2, 2)))
    assert SPREAD not in few
    cpus = set(few[COMPACT].producer_cpus + few[COMPACT].consumer_cpus)
    assert cpus <= without_zero  # the cache without CPU 0 first
    many = by_name(candidates(shape, Config(5, 5)))  # 10 threads, 4 cores per cache
    assert COMPACT not in many
    spread = many[SPREAD]
    for g in range(5):
        members = {spread.producer_cpus[g]} | {
            spread.consumer_cpus[j] for j in range(5) if spread.group_of(j) == g
        }
        assert any(members <= group for group in groups)  # a group never straddles caches


def test_siblings_put_each_producer_beside_its_consumer() -> None:
    shape = SHAPES["4c8t"]
    siblings = by_name(candidates(shape, Config(2, 2)))[SIBLINGS]
    for p, c in zip(siblings.producer_cpus, siblings.consumer_cpus, strict=True):
        assert shape.siblings(p) == shape.siblings(c) and p != c
    assert SIBLINGS not in by_name(candidates(SHAPES["2cpu"], Config(1, 1)))
    assert SIBLINGS not in by_name(candidates(shape, Config(1, 3)))  # 4 threads, 2 per core


def test_the_strings_a_user_pastes() -> None:
    shape = SHAPES["4c8t"]
    pinned = Config(2, 2, COMPACT, (1, 3), (2, 5))
    assert taskset_list(shape, pinned) == "1-3,5"
    assert omp_places(shape, pinned) == "{1},{3},{2},{5}"
    assert taskset_list(shape, Config(2, 2)) == "1-7"
    assert omp_places(shape, Config(2, 2)) == "{1:7}"
    assert omp_places(shape, Config(4, 4)) == "{0:8}"
    odd = TopologyShape(tuple(p for p in shape.places if p.cpu != 4))
    assert omp_places(odd, Config(3, 4)) == "{0:4,5:3}"
    assert parse_cpu_list(taskset_list(odd, Config(3, 4)), Path("-")) == odd.cpus


def chosen(
    shape: TopologyShape, w: SimWorkload, config: Config, pin: PinThreads, seed: int = 5
) -> Config:
    sim = SimulatedHost(shape, w, noise=0.10, seed=seed)
    return choose(Lab(sim.measure), shape, config, pin, 0.03).chosen


PLAIN = SimWorkload("plain", 200.0, 200.0)
CHATTY = SimWorkload("chatty", 20.0, 20.0, handoff_ns=8.0)  # the hand-off dominates
TALKATIVE_IO = SimWorkload("talkative_io", 10.0, 10.0, wait_ratio=3.0, handoff_ns=20.0)


def test_pinning_is_recommended_only_when_it_beats_unpinned_beyond_the_noise() -> None:
    shape = SHAPES["4c8t"]
    for seed in range(6, 11):  # compact is 1% faster here: within the noise margin
        assert not chosen(shape, PLAIN, Config(1, 1), PinThreads.auto, seed).pinned
    # Unpinned, the OS spreads partners over both caches; pinned, they share one.
    split = SHAPES["split-l3"]
    pinned = chosen(split, CHATTY, Config(2, 2), PinThreads.auto)
    assert pinned.pinned and pinned.placement != SIBLINGS


def test_siblings_win_only_when_measured_better_than_the_other_placements() -> None:
    shape = SHAPES["4c8t"]
    sim = SimulatedHost(shape, TALKATIVE_IO, noise=0.10, seed=5)
    lab = Lab(sim.measure)
    choice = choose(lab, shape, Config(2, 2), PinThreads.auto, 0.03)
    assert choice.chosen.placement == SIBLINGS
    others = [c for c in candidates(shape, Config(2, 2)) if c.placement != SIBLINGS]
    for other in others:
        beats = lab.compare(choice.chosen, other)
        assert beats.low > 1.0 and beats.gain > 1.03
    # CPU-bound work loses a core's worth on siblings: they are never chosen then.
    assert chosen(shape, PLAIN, Config(2, 2), PinThreads.always).placement != SIBLINGS


def test_pin_threads_never_and_always() -> None:
    shape = SHAPES["split-l3"]
    sim = SimulatedHost(shape, CHATTY, seed=1)
    never = choose(Lab(sim.measure), shape, Config(2, 2), PinThreads.never, 0.03)
    assert not never.chosen.pinned and never.trials == ()
    always = chosen(SHAPES["4c8t"], PLAIN, Config(1, 1), PinThreads.always)
    assert always.pinned
    oversubscribed = chosen(SHAPES["2cpu"], PLAIN, Config(2, 2), PinThreads.always)
    assert not oversubscribed.pinned  # no pinned candidate fits
