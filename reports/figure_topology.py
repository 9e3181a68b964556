"""The report's picture of the host's CPU pairs, as plain data (see figure_data.py): the round
trip of every measured pair as a heat map, from the topology the result's host carries (read by
the model's reader of the host document)."""

from __future__ import annotations

from dataclasses import dataclass

from hspc_gen.model.result import TuneResult
from hspc_gen.model.topology_file import measured_topology

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
    outcome = measured_topology(result.run.host)
    found = outcome.topology if outcome is not None else None
    if outcome is None or found is None or not found.matrix.pairs:
        why = (outcome.note if outcome else "") or "the CPU pairs were not measured in this run"
        return Heatmap(TITLE, (), (), (), empty=why)
    matrix = found.matrix
    index = {cpu: i for i, cpu in enumerate(matrix.cpus)}
    grid: list[list[float | None]] = [[None] * len(matrix.cpus) for _ in matrix.cpus]
    for pair in matrix.pairs:
        i, j = index[pair.a], index[pair.b]
        grid[i][j] = grid[j][i] = pair.round_trip_ns
    classes = tuple((c.name, c.round_trip_ns) for c in found.classes)
    every = len(matrix.cpus) * (len(matrix.cpus) - 1) // 2
    disagreements = len(found.disagreements)
    said = f"{disagreements} disagreement(s) with sysfs" if disagreements else "sysfs agrees"
    note = f"{outcome.status}: {len(matrix.pairs)} of {every} pairs measured; {said}"
    return Heatmap(TITLE, matrix.cpus, tuple(tuple(r) for r in grid), classes, note)
