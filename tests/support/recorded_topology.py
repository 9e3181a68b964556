"""The recorded sysfs trees and CPU-pair matrices (tests/data/sysfs/<tree>/), as the topology
code reads them: a Host, and a Topology classified from one of the tree's matrices."""

from __future__ import annotations

from pathlib import Path

from hspc_gen.host.machine import Host, read_host
from hspc_gen.model.topology import Topology
from hspc_gen.topology.classes import classify
from hspc_gen.topology.text import read_matrix

SYSFS = Path(__file__).resolve().parents[1] / "data" / "sysfs"


def host_of(tree: str) -> Host:
    return read_host(SYSFS / tree / "sys")


def recorded(tree: str, file: str = "matrix.json") -> Topology:
    return classify(host_of(tree), read_matrix(SYSFS / tree / file))
