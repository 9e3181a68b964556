"""hspc_gen.model.topology_file: the measured topology read back from the host document the
result carries, whole (writing it again gives the same document)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hspc_gen.host.machine import read_host
from hspc_gen.model.topology import TopologyOutcome, TopologyStatus
from hspc_gen.model.topology_file import measured_topology, topology_outcome
from hspc_gen.topology.classes import classify
from hspc_gen.topology.text import read_matrix, topology_json

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


@pytest.mark.parametrize(
    ("tree", "file"),
    [
        ("2s-8c-2t", "matrix.json"),
        ("vm-16c", "matrix-hidden-smt.json"),
        ("xeon-16c-vm", "matrix.json"),
    ],
)
def test_a_measured_topology_comes_back_whole(tree: str, file: str) -> None:
    host = read_host(SYSFS / tree / "sys")
    outcome = TopologyOutcome(
        TopologyStatus.measured, classify(host, read_matrix(SYSFS / tree / file))
    )
    written = json.loads(json.dumps(topology_json(outcome)))
    loaded = topology_outcome(written)
    assert json.loads(json.dumps(topology_json(loaded))) == written
    assert loaded.topology is not None and loaded.topology.classes


def test_a_host_without_pairs_has_none_and_a_failed_one_its_note() -> None:
    assert measured_topology({"model_name": "x"}) is None
    failed = {"status": "failed", "note": "no compiler"}
    assert measured_topology({"topology": failed}) == TopologyOutcome(
        TopologyStatus.failed, None, "no compiler"
    )
    with pytest.raises(TypeError):
        measured_topology({"topology": [1]})
