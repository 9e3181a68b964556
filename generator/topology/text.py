"""The measured topology for a person (`hspc-gen host`) and as JSON (`hspc-gen host --json`, and
the `topology` of the result's host): the classes, where they disagree with sysfs, the matrix."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hspc_gen.errors import UserError
from hspc_gen.model.topology import Matrix, Topology, TopologyOutcome, TopologyStatus
from hspc_gen.topology.moving import moving_note

MAX_TABLE_CPUS = 32  # beyond, a matrix row does not fit a terminal: the classes summarise it
_STATUS_WORDS = {
    TopologyStatus.measured: "measured now",
    TopologyStatus.stored: "measured by an earlier run (the record store)",
    TopologyStatus.recorded: "a recorded matrix",
    TopologyStatus.not_measured: "not measured",
    TopologyStatus.failed: "could not be measured",
}


def describe_topology(outcome: TopologyOutcome) -> str:
    """The lines `hspc-gen host` prints below the sysfs description."""
    topology = outcome.topology
    head = f"  Measured   CPU pairs: {_STATUS_WORDS[outcome.status]}"
    lines = [head + (f" ({outcome.note})" if outcome.note else "")]
    if topology is None:
        return "\n".join(lines)
    matrix = topology.matrix
    lines += [
        f"  Kind       {_kind(topology.kind)} (measured; sysfs: {_kind(topology.sysfs_kind)})",
        f"  Pairs      {_pairs_line(matrix)}",
        *_class_table(topology),
        *_disagreement_lines(topology),
        *_matrix_lines(matrix),
    ]
    return "\n".join(lines)


def _kind(kind: tuple[str, ...]) -> str:
    return " ".join(kind) or "uniprocessor"


def _pairs_line(matrix: Matrix) -> str:
    n = len(matrix.cpus)
    every = n * (n - 1) // 2
    checks = sum(p.check for p in matrix.pairs)
    line = f"{len(matrix.pairs)} of {every} among {n} CPUs"
    if checks:
        line += f" ({checks} of them checks)"
    if matrix.skipped:
        line += f"; {len(matrix.skipped)} skipped ({matrix.skipped[0][2]}, ...)"
    line += f"; {matrix.samples} samples each, {matrix.seconds:g} s"
    return line + (", beside other load" if matrix.busy else "")


def _class_table(topology: Topology) -> list[str]:
    if not topology.classes:
        return ["  Classes    none: fewer than two CPUs to pair"]
    block = _size(topology.matrix.block_bytes)
    rows = [f"    {'class':<16} {'round trip ns':<18} {block + ' block':<14} {'pairs':>5}  sysfs"]
    for c in topology.classes:
        low, high = c.round_trip_range
        trip = f"{c.round_trip_ns:.0f} ({low:.0f}-{high:.0f})"
        sysfs = ", ".join(f"{name} {count}" for name, count in c.sysfs)
        checked = f"; checked {c.confirmed}/{c.checked}" if c.checked else ""
        a, b = c.representative
        rows.append(
            f"    {c.name:<16} {trip:<18} {c.transfer_gbps:>6.1f} GB/s    {len(c.pairs):>5}  "
            f"{sysfs}{checked}; e.g. CPUs {a},{b}"
        )
    return ["  Classes", *rows]


def _disagreement_lines(topology: Topology) -> list[str]:
    note = moving_note(topology)
    moving = [f"  Moves      {note}"] if note else []
    if not topology.disagreements:
        return ["  sysfs      the measured classes agree with it", *moving]
    said = [f"    - {d.text}" for d in topology.disagreements]
    return ["  sysfs      disagrees:", *said, *moving]


def _matrix_lines(matrix: Matrix) -> list[str]:
    cpus = matrix.cpus
    if len(cpus) < 2:
        return []
    if len(cpus) > MAX_TABLE_CPUS:
        return [f"  Matrix     {len(cpus)} CPUs: too wide to print; --json holds every pair"]
    values = {p.cpus: p.round_trip_ns for p in matrix.pairs}
    width = max(4, *(len(str(c)) + 1 for c in cpus))
    header = " " * 6 + "".join(f"{c:>{width}}" for c in cpus)
    rows = [f"    {a:>2}" + "".join(f"{_cell(a, b, values):>{width}}" for b in cpus) for a in cpus]
    return ["  Matrix     round trip, ns ('.' the CPU itself, '?' not measured)", header, *rows]


def _cell(a: int, b: int, values: dict[tuple[int, int], float]) -> str:
    if a == b:
        return "."
    value = values.get((min(a, b), max(a, b)))
    return "?" if value is None else f"{value:.0f}"


def _size(size_bytes: int) -> str:
    return f"{size_bytes >> 10} KiB" if size_bytes % 1024 == 0 else f"{size_bytes} B"


def topology_json(outcome: TopologyOutcome) -> dict[str, Any]:
    """The outcome as `hspc-gen host --json` and the result's host carry it."""
    topology = outcome.topology
    document: dict[str, Any] = {"status": str(outcome.status), "note": outcome.note}
    if topology is None:
        return document
    document.update(
        kind=list(topology.kind),
        sysfs_kind=list(topology.sysfs_kind),
        classes=[_class_json(topology, i) for i in range(len(topology.classes))],
        disagreements=[
            {
                "kind": str(d.kind),
                "relation": d.relation,
                "measured": d.measured,
                "count": d.count,
                "pairs": [list(p) for p in d.pairs],
                "text": d.text,
            }
            for d in topology.disagreements
        ],
        matrix=topology.matrix.to_dict(),
    )
    return document


def _class_json(topology: Topology, index: int) -> dict[str, Any]:
    c = topology.classes[index]
    return {
        "name": c.name,
        "round_trip_ns": c.round_trip_ns,
        "round_trip_range": list(c.round_trip_range),
        "transfer_gbps": None if math.isnan(c.transfer_gbps) else c.transfer_gbps,
        "representative": list(c.representative),
        "sysfs": dict(c.sysfs),
        "checked": c.checked,
        "confirmed": c.confirmed,
        "pairs": [list(p) for p in c.pairs],
    }


def matrix_text(matrix: Matrix) -> str:
    """A matrix document as a recorded file holds it: one pair to a line, keys sorted."""
    document = matrix.to_dict()
    rows = document.pop("pairs")
    lines = [f" {json.dumps(key)}: {json.dumps(document[key])}," for key in sorted(document)]
    pairs = ",\n".join(f"  {json.dumps(row)}" for row in rows)
    return "{\n" + "\n".join(lines) + f'\n "pairs": [\n{pairs}\n ]\n}}\n'


def read_matrix(path: Path) -> Matrix:
    """A recorded matrix file (what `hspc-gen host --save-matrix` writes)."""
    try:
        return Matrix.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except OSError as err:
        raise UserError(f"cannot read the matrix {path}: {err.strerror or err}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise UserError(f"{path} is not a recorded topology matrix: {err}") from None
