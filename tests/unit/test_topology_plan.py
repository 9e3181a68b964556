"""hspc_gen.topology.plan: which CPU pairs the probe measures. Every pair up to 32 CPUs; beyond, a
sample that grows with the CPUs and covers every sysfs relation, then check pairs for each class.
Hosts of 64 and 128 CPUs are generated sysfs trees (tests/data/sysfs/make_trees.py) whose probe
is the synthetic one of make_matrices.py: the whole plan runs without the hardware."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest

import sysfs_scripts
from hspc_gen.host.machine import Host, read_host
from hspc_gen.model.topology import DisagreementKind, Matrix, Topology
from hspc_gen.search.measure.topology import merged
from hspc_gen.topology.classes import Relations, classify
from hspc_gen.topology.plan import (
    ALL_PAIRS_UP_TO,
    CHECKS_PER_CLASS,
    PER_RELATION,
    STABILITY_PAIRS,
    all_pairs,
    first_round,
    second_round,
)

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"
Truth = Callable[[int, int], str]


@pytest.fixture
def make(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType]:
    return sysfs_scripts.load("make_trees", monkeypatch), sysfs_scripts.load(
        "make_matrices", monkeypatch
    )


def big_host(make_trees: ModuleType, root: Path, **shape: object) -> Host:
    base = make_trees.SHAPES[2]  # 2s-8c-2t, a Xeon: CPUs numbered thread by thread
    make_trees.write_shape(dataclasses.replace(base, name="big", **shape), root)
    return read_host(root / "sys")


def measure(
    make_matrices: ModuleType, host: Host, truth: Truth, seed: int
) -> tuple[Matrix, Topology]:
    """Both rounds on the synthetic probe, as search.measure.topology.measured runs them."""
    rng = random.Random(seed)
    cpus = host.allowed_cpus

    def probe(pairs: Sequence[tuple[int, int]]) -> Matrix:
        matrix: Matrix = make_matrices.probed(host, truth, pairs, rng, "test")
        return matrix

    first = probe(first_round(host, cpus))
    second = second_round(cpus, first.pairs)
    matrix = merged(first, probe(second.pairs), second) if second.pairs else first
    return matrix, classify(host, matrix)


def test_up_to_32_cpus_every_pair_is_measured() -> None:
    host = read_host(SYSFS / "2s-8c-2t" / "sys")
    pairs = first_round(host, host.allowed_cpus)
    assert len(host.allowed_cpus) == ALL_PAIRS_UP_TO and len(pairs) == 32 * 31 // 2
    assert pairs == all_pairs(host.allowed_cpus)
    assert first_round(host, [3, 17, 5]) == ((3, 5), (3, 17), (5, 17))  # the allowed ones only


def test_beyond_32_cpus_a_sample_covers_every_relation(
    make: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    make_trees, _ = make
    host = big_host(make_trees, tmp_path, cores_per_package=32, l3_per_package=2)
    cpus = host.allowed_cpus
    assert len(cpus) == 128
    pairs = first_round(host, cpus)
    assert pairs == first_round(host, cpus)  # seeded: the same host, the same pairs
    assert len(pairs) < len(all_pairs(cpus)) // 15  # 8128 pairs in all
    relation = Relations(host)
    counts = Counter(relation(a, b) for a, b in pairs)
    assert set(counts) == {"smt_sibling", "shared_l3", "other_l3", "other_socket"}
    assert min(counts.values()) >= PER_RELATION
    assert all(a < b and a in cpus and b in cpus for a, b in pairs)


@pytest.mark.parametrize("cpus", [64, 128])
def test_a_declared_many_core_host_is_classed_and_checked(
    make: tuple[ModuleType, ModuleType], tmp_path: Path, cpus: int
) -> None:
    make_trees, make_matrices = make
    host = big_host(make_trees, tmp_path, cores_per_package=cpus // 4, l3_per_package=2)
    matrix, topology = measure(make_matrices, host, Relations(host), seed=cpus)
    assert [c.name for c in topology.classes] == [
        "smt_sibling",
        "shared_l3",
        "other_l3",
        "other_socket",
    ]
    assert topology.disagreements == () and topology.kind == ("CMP", "SMP", "SMT")
    checks = [p for p in matrix.pairs if p.check]
    assert 0 < len(checks) <= CHECKS_PER_CLASS * len(topology.classes)
    for cls in topology.classes[1:]:  # siblings are all measured: none left to predict
        assert cls.checked > 0 and cls.confirmed == cls.checked, cls.name
    assert len(matrix.pairs) < 5 * cpus  # grows with the CPUs, not their square


def test_siblings_a_64_cpu_guest_hides_are_found_in_the_sample(
    make: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    make_trees, make_matrices = make
    host = big_host(make_trees, tmp_path, packages=1, cores_per_package=64, threads_per_core=1)
    declared = Relations(host)

    def truth(a: int, b: int) -> str:
        return "smt_sibling" if abs(a - b) == 32 else declared(a, b)

    _, topology = measure(make_matrices, host, truth, seed=7)
    assert [c.name for c in topology.classes] == ["smt_sibling", "shared_l3"]
    assert topology.classes[0].pairs == tuple((cpu, cpu + 32) for cpu in range(32))
    assert topology.kind == ("CMP", "SMT") and topology.sysfs_kind == ("CMP",)


def test_a_pair_alone_in_its_class_is_measured_again_and_the_lower_stands(
    make: tuple[ModuleType, ModuleType],
) -> None:
    _, make_matrices = make
    host = read_host(SYSFS / "vm-16c" / "sys")
    relation = Relations(host)
    rng = random.Random(1)
    first = make_matrices.probed(host, relation, all_pairs(host.allowed_cpus), rng, "test")
    slow = first.pairs[5]
    taken = dataclasses.replace(slow, round_trip_ns=900.0, round_trip_q1=850.0, round_trip_q3=950.0)
    first = dataclasses.replace(first, pairs=tuple(taken if p == slow else p for p in first.pairs))
    second = second_round(host.allowed_cpus, first.pairs)
    assert second.again == (slow.cpus,) and second.checks == ()
    # Each class's median pair (the lone one is measured again anyway) and a few others.
    assert 1 < len(second.stability) <= 1 + STABILITY_PAIRS and slow.cpus not in second.stability
    fixed = merged(first, make_matrices.probed(host, relation, second.pairs, rng, "test"), second)
    topology = classify(host, fixed)
    assert [c.name for c in topology.classes] == ["shared_l3"]
    assert topology.disagreements == ()  # the host kept its pairs: nothing moved
    assert not any(p.check for p in fixed.pairs)
    assert sorted((a, b) for a, b, _ in fixed.repeats) == list(second.stability)
    alone = second_round([0, 1], first.pairs[:1])  # one pair: nothing to stand apart from
    assert alone.again == () and alone.stability == (first.pairs[0].cpus,)


def test_a_host_that_moves_its_cpus_while_measured_is_said(
    make: tuple[ModuleType, ModuleType],
) -> None:
    """A guest whose hidden siblings are CPUs i and i+8 in the first round, i and i+4 in the
    second: the vCPUs moved on the physical host meanwhile."""
    _, make_matrices = make
    host = read_host(SYSFS / "vm-16c" / "sys")
    declared = Relations(host)

    def siblings_at(distance: int) -> Truth:
        return lambda a, b: "smt_sibling" if abs(a - b) == distance else declared(a, b)

    rng = random.Random(2)
    first = make_matrices.probed(host, siblings_at(8), all_pairs(range(16)), rng, "test")
    second = second_round(host.allowed_cpus, first.pairs)
    moved = make_matrices.probed(host, siblings_at(4), second.pairs, rng, "test")
    topology = classify(host, merged(first, moved, second))
    said = [d for d in topology.disagreements if d.kind is DisagreementKind.moved]
    assert len(said) == 1 and said[0].count >= 1
    assert "the host moves these CPUs about" in said[0].text
