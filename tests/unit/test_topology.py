"""hspc_gen.topology.classes: CPU-pair matrices recorded beside the sysfs trees (tests/data/sysfs,
see make_matrices.py; epyc-2c-vm's measured on the development VM), clustered into classes, named
after sysfs where the two agree, and the disagreements where they do not."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from hspc_gen import wiring
from hspc_gen.errors import UserError
from hspc_gen.model.topology import (
    Disagreement,
    DisagreementKind,
    Matrix,
    PairTiming,
    Topology,
    TopologyOutcome,
    TopologyStatus,
)
from hspc_gen.target.app import Target
from hspc_gen.topology.classes import (
    GAP_RATIO,
    SIBLING_ROUND_TRIP_NS,
    Predictor,
    Relations,
    classify,
    cluster,
    lasting_classes,
    measured_kind,
    moved_pairs,
    representative_pairs,
    typical_class,
)
from hspc_gen.topology.text import matrix_text, read_matrix
from recorded_topology import SYSFS, host_of, recorded


def names(topology: Topology) -> list[str]:
    return [c.name for c in topology.classes]


def pair(a: int, b: int, trip: float, *, check: bool = False) -> PairTiming:
    return PairTiming(a, b, trip, trip, trip, 4000.0, 4000.0, 4000.0, check)


def test_gaps_of_a_multiple_split_classes_and_percents_do_not() -> None:
    assert cluster([]) == []
    assert cluster([90.0]) == [0]
    # A mesh's spread (90..125 ns, steps of a few percent) stays one class.
    assert cluster([90.0, 95.0, 101.0, 108.0, 116.0, 125.0]) == [0] * 6
    assert cluster([300.0, 16.0, 95.0, 17.0, 330.0, 90.0]) == [2, 0, 1, 0, 2, 1]
    just = 100.0 * GAP_RATIO
    assert cluster([100.0, just * 0.99, just * 1.01 * 0.99]) == [0, 0, 0]
    assert cluster([100.0, just * 1.01]) == [0, 1]


def test_relations_follow_sysfs_nearest_first() -> None:
    relation = Relations(host_of("2s-8c-2t"))
    assert relation(3, 19) == "smt_sibling"  # one core's two threads
    assert relation(0, 1) == "shared_l3"  # cores of one socket: private L2, one L3
    assert relation(0, 8) == "other_socket"
    split = Relations(host_of("1s-8c-split-l3"))  # Zen: two L3 groups in one package
    assert split(0, 1) == "smt_sibling" and split(0, 2) == "shared_l3"
    assert split(0, 8) == "other_l3"


def test_a_host_whose_matrix_agrees_with_sysfs_is_named_after_it() -> None:
    topology = recorded("2s-8c-2t")
    assert names(topology) == ["smt_sibling", "shared_l3", "other_socket"]
    assert [len(c.pairs) for c in topology.classes] == [16, 224, 256]
    assert all(c.agrees for c in topology.classes)
    assert topology.disagreements == ()
    assert topology.kind == topology.sysfs_kind == ("CMP", "SMP", "SMT")
    trips = [c.round_trip_ns for c in topology.classes]
    assert trips == sorted(trips) and trips[0] < SIBLING_ROUND_TRIP_NS
    rates = [c.transfer_gbps for c in topology.classes]
    assert rates == sorted(rates, reverse=True)  # a nearer pair moves a block faster


def test_the_16_cpu_guest_as_declared_is_one_class() -> None:
    topology = recorded("vm-16c")
    assert names(topology) == ["shared_l3"]
    (only,) = topology.classes
    assert len(only.pairs) == 120 and only.agrees
    low, high = only.round_trip_range
    assert low <= only.round_trip_ns <= high and high / low < GAP_RATIO * 1.2
    assert topology.kind == ("CMP",) and topology.disagreements == ()


def test_siblings_a_guest_hides_are_found_and_said() -> None:
    topology = recorded("vm-16c", "matrix-hidden-smt.json")
    assert names(topology) == ["smt_sibling", "shared_l3"]
    siblings = topology.classes[0]
    assert siblings.pairs == tuple((cpu, cpu + 8) for cpu in range(8))
    assert siblings.sysfs == (("shared_l3", 8),) and not siblings.agrees
    (said,) = topology.disagreements
    assert said.kind is DisagreementKind.sibling_latency
    assert (said.relation, said.measured, said.count) == ("shared_l3", "smt_sibling", 8)
    assert said.pairs == ((0, 8), (1, 9), (2, 10), (3, 11))
    assert "SMT siblings" in said.text and "CPUs 0 and 8" in said.text
    # HSPC's classification rests on what the pairs do: SMT, though sysfs says 1 thread a core.
    assert topology.sysfs_kind == ("CMP",) and topology.kind == ("CMP", "SMT")


def test_one_l3_in_sysfs_that_measures_as_two_is_said() -> None:
    topology = recorded("vm-16c", "matrix-split-l3.json")
    assert names(topology) == ["shared_l3", "other_l3"]
    near, far = topology.classes
    assert len(near.pairs) == 2 * 28 and len(far.pairs) == 8 * 8
    assert all((a < 8) == (b < 8) for a, b in near.pairs)
    (said,) = topology.disagreements
    assert said.kind is DisagreementKind.split_level
    assert (said.relation, said.measured, said.count) == ("shared_l3", "other_l3", 64)
    assert "one level is two" in said.text
    assert topology.kind == ("CMP",)


def test_the_development_vm_measured_here() -> None:
    """Two vCPUs, one pair: one class, named as sysfs calls it (measured under the exclusive
    lock with `make_trees.py --record epyc-genoa-2c-vm`)."""
    topology = recorded("epyc-genoa-2c-vm")
    (only,) = topology.classes
    assert only.pairs == ((0, 1),) and only.representative == (0, 1)
    assert only.name == "shared_l3" and only.round_trip_ns > SIBLING_ROUND_TRIP_NS
    assert math.isfinite(only.transfer_gbps) and only.transfer_gbps > 0
    assert topology.kind == ("CMP",)


def test_two_relations_that_measure_alike_are_merged_and_said() -> None:
    """A guest declaring two sockets whose vCPUs all sit on one: every pair measures alike."""
    host = host_of("2s-4c-nosmt")
    cpus = host.logical_cpus
    pairs = tuple(pair(a, b, 90.0 + a + b) for i, a in enumerate(cpus) for b in cpus[i + 1 :])
    topology = classify(host, Matrix(cpus, pairs, 65536))
    assert names(topology) == ["other_socket"]  # 16 pairs across, 12 within a socket
    (said,) = topology.disagreements
    assert said.kind is DisagreementKind.merged and said.relation == "shared_l3"
    assert said.count == 12 and "measure alike" in said.text
    assert topology.kind == ("SMP",) and topology.sysfs_kind == ("CMP", "SMP")


def test_a_nearer_relation_measuring_slower_is_said() -> None:
    host = host_of("2s-4c-nosmt")
    relation = Relations(host)
    cpus = host.logical_cpus
    trip = {"shared_l3": 400.0, "other_socket": 90.0}  # swapped: sysfs numbered them wrong
    pairs = tuple(
        pair(a, b, trip[relation(a, b)]) for i, a in enumerate(cpus) for b in cpus[i + 1 :]
    )
    topology = classify(host, Matrix(cpus, pairs, 65536))
    assert names(topology) == ["other_socket", "shared_l3"]
    assert [d.kind for d in topology.disagreements] == [DisagreementKind.order]


def test_one_representative_pair_per_class_nearest_its_median() -> None:
    topology = recorded("2s-8c-2t")
    chosen = representative_pairs(topology)
    assert [r.name for r in chosen] == names(topology)
    relation = Relations(host_of("2s-8c-2t"))
    for rep, cls in zip(chosen, topology.classes, strict=True):
        assert (rep.producer_cpu, rep.consumer_cpu) == cls.representative
        assert relation(rep.producer_cpu, rep.consumer_cpu) == cls.name
        assert rep.producer_cpu < rep.consumer_cpu and rep.round_trip_ns == cls.round_trip_ns
        nearest = min(
            abs(topology.matrix.pair(*p).round_trip_ns - cls.round_trip_ns)  # type: ignore[union-attr]
            for p in cls.pairs
        )
        own = topology.matrix.pair(rep.producer_cpu, rep.consumer_cpu)
        assert own is not None and abs(own.round_trip_ns - cls.round_trip_ns) == nearest
    hidden = representative_pairs(recorded("vm-16c", "matrix-hidden-smt.json"))
    assert [(r.name, abs(r.producer_cpu - r.consumer_cpu) == 8) for r in hidden] == [
        ("smt_sibling", True),
        ("shared_l3", False),
    ]


def test_a_matrix_without_pairs_keeps_sysfs_kind() -> None:
    host = host_of("1s-4c-8t")
    topology = classify(host, Matrix((0,), (), 65536))
    assert topology.classes == () and topology.disagreements == ()
    assert topology.kind == topology.sysfs_kind == host.kind
    assert measured_kind((), ("CMP",)) == ("CMP",)


def test_a_matrix_is_restricted_to_the_cpus_a_process_may_use() -> None:
    matrix = read_matrix(SYSFS / "2s-8c-2t" / "matrix.json")
    fewer = matrix.restricted([0, 1, 16, 40])
    assert fewer.cpus == (0, 1, 16)
    assert [p.cpus for p in fewer.pairs] == [(0, 1), (0, 16), (1, 16)]


def test_check_pairs_are_predicted_from_the_others_and_counted() -> None:
    # Siblings (0,4) (1,5), one L3 of 0-3: (4,5) is predicted in the L3's class through 0 and 1.
    known = [((0, 4), 0), ((1, 5), 0), ((0, 1), 1), ((0, 2), 1), ((2, 3), 1)]
    predict = Predictor(known)
    assert predict((4, 5)) == 1 and predict((1, 3)) == 1 and predict((0, 7)) is None
    assert predict((0, 4)) == 0
    host = host_of("1s-4c-8t")  # siblings (c, c + 4)
    trips = {0: 16.0, 1: 90.0}
    pairs = [pair(a, b, trips[label]) for (a, b), label in known]
    pairs += [pair(4, 5, 92.0, check=True), pair(1, 3, 300.0, check=True)]
    topology = classify(
        host, Matrix(tuple(range(8)), tuple(sorted(pairs, key=lambda p: p.cpus)), 1)
    )
    l3 = topology.classes[1]
    assert (l3.checked, l3.confirmed) == (2, 1)  # (1, 3) measured in a class of its own


def test_a_matrix_file_round_trips_and_bad_ones_are_named() -> None:
    matrix = read_matrix(SYSFS / "2s-8c-2t" / "matrix.json")
    assert Matrix.from_dict(json.loads(matrix_text(matrix))) == matrix
    assert matrix_text(matrix) == (SYSFS / "2s-8c-2t" / "matrix.json").read_text()
    assert matrix.transfer_gbps(matrix.pairs[0]) == pytest.approx(65536 / matrix.pairs[0].block_ns)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: {**d, "format": "other"}, "not a hspc-gen topology matrix"),
        (lambda d: {**d, "columns": d["columns"][:-1]}, "pair columns"),
        (lambda d: {**d, "pairs": [[1, 0, *d["pairs"][0][2:]]]}, "the lower first"),
        (lambda d: {**d, "pairs": [[0, 1, -5, *d["pairs"][0][3:]]]}, "not a positive number"),
        (lambda d: {k: v for k, v in d.items() if k != "cpus"}, "'cpus'"),
    ],
)
def test_a_damaged_matrix_file_is_one_clear_error(
    tmp_path: Path, change: object, said: str
) -> None:
    document = json.loads((SYSFS / "2s-8c-2t" / "matrix.json").read_text())
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(change(document)))  # type: ignore[operator]
    with pytest.raises(UserError, match="is not a recorded topology matrix") as raised:
        read_matrix(bad)
    assert said in str(raised.value)
    with pytest.raises(UserError, match="cannot read the matrix"):
        read_matrix(tmp_path / "missing.json")


def test_classifying_is_deterministic() -> None:
    first = recorded("vm-16c", "matrix-hidden-smt.json")
    again = recorded("vm-16c", "matrix-hidden-smt.json")
    assert first == again
    shuffled = dataclasses.replace(first.matrix, pairs=tuple(reversed(first.matrix.pairs)))
    assert names(classify(host_of("vm-16c"), shuffled)) == names(first)


def test_the_16_cpu_guest_measured_four_times_moves_its_pairs() -> None:
    """The 16-CPU KVM guest (Xeon, family 6 model 207), recorded with make_trees.py --record and
    measured three times more a few seconds apart: round trips of 120-380 ns in one class as
    sysfs declares, and in three of the four runs 1-4 pairs at 63-65 ns, different ones each
    time (the vCPUs move on the physical host between runs)."""
    runs = [
        recorded("xeon-16c-vm", f)
        for f in ("matrix.json", *(f"matrix-run{i}.json" for i in (1, 2, 3)))
    ]
    assert all(t.sysfs_kind == ("CMP",) and len(t.matrix.pairs) == 120 for t in runs)
    assert [names(t) for t in runs] == [["shared_l3"], *[["shared_l2", "shared_l3"]] * 3]
    fast = [set(t.classes[0].pairs) for t in runs[1:]]
    assert all(60 < t.classes[0].round_trip_ns < 70 for t in runs[1:])
    assert (
        fast[0].isdisjoint(fast[1]) and fast[1].isdisjoint(fast[2]) and fast[0].isdisjoint(fast[2])
    )
    assert all(d.kind is DisagreementKind.split_level for t in runs[1:] for d in t.disagreements)


def test_stage_two_races_one_placement_per_measured_class() -> None:
    """The space of a host measured with hidden siblings: unpinned, the siblings and the shared
    L3, with the search measuring on the shared L3 until placement is the question; unmeasured,
    sysfs's two cores sharing a cache (it declares no siblings)."""
    host = host_of("vm-16c")
    outcome = TopologyOutcome(TopologyStatus.recorded, recorded("vm-16c", "matrix-hidden-smt.json"))
    target = Target.model_validate({"name": "t", "event": {"size": 8}})
    measured = wiring.space_for(target, host, {}, topology=outcome)
    siblings, shared = representative_pairs(outcome.topology)  # type: ignore[arg-type]
    assert measured.placements == (
        (-1, -1),
        (siblings.producer_cpu, siblings.consumer_cpu),
        (shared.producer_cpu, shared.consumer_cpu),
    )
    assert measured.measurement_pair() == (shared.producer_cpu, shared.consumer_cpu)
    sysfs_only = wiring.space_for(target, host, {})
    assert len(sysfs_only.placements) == 2 and sysfs_only.placements[0] == (-1, -1)


def test_a_moment_of_a_guest_that_moves_its_cpus_is_not_a_placement() -> None:
    """The 16-vCPU guest, measured four times: its few 64 ns pairs are other pairs each time
    (sysfs does not explain them, they reach few CPUs), so only the class most pairs measure in
    is placed on, and the search measures on its typical pair; a class sysfs does not explain
    but that reaches every CPU (hidden siblings, a split L3) lasts, unless a pair of it moved."""
    target = Target.model_validate({"name": "t", "event": {"size": 8}})
    host = host_of("xeon-16c-vm")
    fast = set()
    for run in ("matrix-run1.json", "matrix-run2.json", "matrix-run3.json"):
        topology = recorded("xeon-16c-vm", run)
        assert names(topology) == ["shared_l2", "shared_l3"]
        fast |= set(topology.classes[0].pairs)
        assert [c.name for c in lasting_classes(topology)] == ["shared_l3"]
        outcome = TopologyOutcome(TopologyStatus.recorded, topology)
        space = wiring.space_for(target, host, {}, topology=outcome)
        typical = typical_class(topology).representative
        assert space.placements == ((-1, -1), typical)
        assert space.measurement_pair() == typical
    assert len(fast) >= 5  # a different fast pair or two each time
    hidden = recorded("vm-16c", "matrix-hidden-smt.json")
    assert lasting_classes(hidden) == hidden.classes
    assert lasting_classes(recorded("vm-16c", "matrix-split-l3.json"))[1].name == "other_l3"
    siblings = hidden.classes[0]
    move = Disagreement(
        DisagreementKind.moved, "shared_l3", "smt_sibling", siblings.pairs[:1], 1, "moved"
    )
    shaken = dataclasses.replace(hidden, disagreements=(*hidden.disagreements, move))
    assert [c.name for c in lasting_classes(shaken)] == ["shared_l3"]
    assert moved_pairs(shaken) == {siblings.pairs[0]}
    steady = wiring.space_for(target, host_of("vm-16c"), {}, topology=TopologyOutcome(
        TopologyStatus.recorded, hidden))  # fmt: skip
    assert steady.measurement_pair() == hidden.classes[1].representative  # not siblings
