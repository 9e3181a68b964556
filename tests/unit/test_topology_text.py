"""hspc_gen.topology.text: the measured topology as `hspc-gen host` prints it and as its JSON
carries it (the command line itself is test_cli's)."""

from __future__ import annotations

import json
from pathlib import Path

from hspc_gen.host.machine import read_host
from hspc_gen.model.topology import (
    Matrix,
    PairTiming,
    Topology,
    TopologyOutcome,
    TopologyStatus,
)
from hspc_gen.topology.classes import classify
from hspc_gen.topology.text import MAX_TABLE_CPUS, describe_topology, read_matrix, topology_json

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


def outcome(tree: str, file: str = "matrix.json") -> TopologyOutcome:
    host = read_host(SYSFS / tree / "sys")
    topology = classify(host, read_matrix(SYSFS / tree / file))
    return TopologyOutcome(TopologyStatus.recorded, topology, file)


def test_the_classes_the_disagreements_and_the_matrix_for_a_person() -> None:
    text = describe_topology(outcome("vm-16c", "matrix-hidden-smt.json"))
    lines = text.splitlines()
    assert lines[0] == "  Measured   CPU pairs: a recorded matrix (matrix-hidden-smt.json)"
    assert lines[1] == "  Kind       CMP SMT (measured; sysfs: CMP)"
    assert lines[2].startswith("  Pairs      120 of 120 among 16 CPUs; 21 samples each")
    siblings = next(line for line in lines if line.startswith("    smt_sibling"))
    assert siblings.split()[1] == "17" and "shared_l3 8; e.g. CPUs 0,8" in siblings
    assert "  sysfs      disagrees:" in lines
    header = lines.index("  Matrix     round trip, ns ('.' the CPU itself, '?' not measured)")
    rows = lines[header + 2 :]
    assert len(rows) == 16 and rows[0].split()[:3] == ["0", ".", rows[1].split()[1]]
    assert rows[0].split()[1 + 8] == "17"  # CPU 0's sibling, CPU 8


def test_beyond_32_cpus_the_matrix_is_summarised_and_gaps_are_marked() -> None:
    cpus = tuple(range(MAX_TABLE_CPUS + 8))
    pairs = tuple(PairTiming(0, b, 90.0, 89.0, 91.0, 4000.0, 3990.0, 4010.0) for b in cpus[1:])
    host = read_host(SYSFS / "2s-8c-2t" / "sys")  # only its 32 CPUs are classified
    wide = TopologyOutcome(TopologyStatus.measured, classify(host, Matrix(cpus, pairs, 65536)))
    assert wide.topology is not None and len(wide.topology.matrix.cpus) == 32
    assert "?" in describe_topology(wide)  # pairs not measured
    summarised = Topology(Matrix(cpus, pairs, 65536), wide.topology.classes, (), ("CMP",), ("CMP",))
    text = describe_topology(TopologyOutcome(TopologyStatus.measured, summarised))
    assert f"  Matrix     {len(cpus)} CPUs: too wide to print; --json holds every pair" in text
    assert f"  Pairs      {len(pairs)} of {len(cpus) * (len(cpus) - 1) // 2}" in text


def test_without_a_topology_the_reason_is_all() -> None:
    failed = TopologyOutcome(TopologyStatus.failed, None, "its program failed to build")
    assert describe_topology(failed) == (
        "  Measured   CPU pairs: could not be measured (its program failed to build)"
    )
    assert topology_json(failed) == {"status": "failed", "note": "its program failed to build"}


def test_the_json_carries_the_table_whole() -> None:
    document = topology_json(outcome("2s-8c-2t"))
    assert json.loads(json.dumps(document)) == document  # plain JSON, no NaN
    assert document["status"] == "recorded" and document["disagreements"] == []
    assert [c["name"] for c in document["classes"]] == ["smt_sibling", "shared_l3", "other_socket"]
    assert sum(len(c["pairs"]) for c in document["classes"]) == 496
    assert document["classes"][0]["sysfs"] == {"smt_sibling": 16}
    assert Matrix.from_dict(document["matrix"]) == read_matrix(SYSFS / "2s-8c-2t" / "matrix.json")
