"""The report's picture of the host's CPU pairs, as plain data (see figure_data.py): the round
trip of every measured pair as a heat map, from the `topology` of the result's host (the host
as `hspc-gen host --json` prints it, which the model keeps as that document)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hspc_gen.model.result import TuneResult

TITLE = "How the CPUs talk: one cache line's round trip between each pair, ns"


@dataclass(frozen=True)
class Heatmap:
    title: str
    cpus: tuple[int, ...]
    values: tuple[tuple[float | None, ...], ...]  # row a, column b; None: itself, unmeasured
    classes: tuple[tuple[str, float], ...]  # each measured class and its median, fastest first
    note: str = ""
    empty: str = ""


def topology(result: TuneResult) -> Heatmap:
    found = result.run.host.get("topology")
    measured: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    matrix = measured.get("matrix") or {}
    rows: Sequence[Sequence[object]] = matrix.get("pairs") or ()
    if not rows:
        why = measured.get("note") or "the CPU pairs were not measured in this run"
        return Heatmap(TITLE, (), (), (), empty=why)
    cpus = tuple(int(c) for c in matrix["cpus"])
    index = {cpu: i for i, cpu in enumerate(cpus)}
    columns = list(matrix["columns"])
    a_at, b_at, trip_at = columns.index("a"), columns.index("b"), columns.index("round_trip_ns")
    grid: list[list[float | None]] = [[None] * len(cpus) for _ in cpus]
    for row in rows:
        i, j = index[int(str(row[a_at]))], index[int(str(row[b_at]))]
        grid[i][j] = grid[j][i] = float(str(row[trip_at]))
    classes = tuple((str(c["name"]), float(c["round_trip_ns"])) for c in measured["classes"])
    every = len(cpus) * (len(cpus) - 1) // 2
    disagreements = len(measured.get("disagreements") or ())
    said = f"{disagreements} disagreement(s) with sysfs" if disagreements else "sysfs agrees"
    note = f"{measured.get('status')}: {len(rows)} of {every} pairs measured; {said}"
    return Heatmap(TITLE, cpus, tuple(tuple(r) for r in grid), classes, note)
