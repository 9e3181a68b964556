"""The measured topology as the host document carries it (`hspc-gen host --json`, and the result's
`host.topology`: written by generator/topology/text.py's `topology_json`), read back into the
model's TopologyOutcome: the one reader of that part of the documents."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hspc_gen.model.topology import (
    Disagreement,
    DisagreementKind,
    LatencyClass,
    Matrix,
    Topology,
    TopologyOutcome,
    TopologyStatus,
)

Doc = Mapping[str, Any]


def measured_topology(host: Mapping[str, object]) -> TopologyOutcome | None:
    """The topology a host document carries; None where it has none (written before the CPU
    pairs were measured). ValueError, KeyError or TypeError when it is not one."""
    data = host.get("topology")
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise TypeError(f"the host's topology is not a JSON object: {data!r}")
    return topology_outcome(data)


def topology_outcome(data: Doc) -> TopologyOutcome:
    status, note = TopologyStatus(data["status"]), str(data.get("note") or "")
    if data.get("matrix") is None:
        return TopologyOutcome(status, None, note)
    topology = Topology(
        matrix=Matrix.from_dict(data["matrix"]),
        classes=tuple(_class(c) for c in data["classes"]),
        disagreements=tuple(_disagreement(d) for d in data.get("disagreements") or ()),
        kind=tuple(str(k) for k in data["kind"]),
        sysfs_kind=tuple(str(k) for k in data["sysfs_kind"]),
    )
    return TopologyOutcome(status, topology, note)


def _pairs(data: list[list[int]]) -> tuple[tuple[int, int], ...]:
    return tuple((int(a), int(b)) for a, b in data)


def _class(data: Doc) -> LatencyClass:
    low, high = data["round_trip_range"]
    producer, consumer = data["representative"]
    gbps = data.get("transfer_gbps")
    return LatencyClass(
        name=str(data["name"]),
        round_trip_ns=float(data["round_trip_ns"]),
        round_trip_range=(float(low), float(high)),
        transfer_gbps=math.nan if gbps is None else float(gbps),
        pairs=_pairs(data["pairs"]),
        representative=(int(producer), int(consumer)),
        sysfs=tuple((str(k), int(v)) for k, v in data["sysfs"].items()),
        checked=int(data.get("checked") or 0),
        confirmed=int(data.get("confirmed") or 0),
    )


def _disagreement(data: Doc) -> Disagreement:
    return Disagreement(
        kind=DisagreementKind(data["kind"]),
        relation=str(data["relation"]),
        measured=str(data["measured"]),
        pairs=_pairs(data["pairs"]),
        count=int(data["count"]),
        text=str(data["text"]),
    )
