"""Whether the host moves its CPUs about, and the run's note that says so.

A guest's vCPUs run on the physical machine's CPUs wherever its scheduler puts them, and move: a
class of a few pairs that sysfs does not explain (fast pairs, other ones each run), or a pair
that measured otherwise when measured again, is one moment of it (classes.lasting_classes). The
search then places by the largest class (wiring.host_shape), and the run says what that means
for its answer: on the 16-CPU guest where this was found, four cold runs chose four winners,
and the same two of them measured 1.08, 1.18 and 1.57 times apart in three `compare` runs
within fifteen minutes, while a copy of one stayed within 2% of it each time
(benchmarks/results/many-core-2026-11-27).
"""

from __future__ import annotations

from hspc_gen.model.topology import Topology, TopologyOutcome
from hspc_gen.topology.classes import lasting_classes, moved_pairs


def moves(topology: Topology) -> bool:
    """Whether the measured classes are one moment's: some do not last, or a pair moved."""
    return lasting_classes(topology) != topology.classes or bool(moved_pairs(topology))


def moving_note(topology: Topology) -> str | None:
    """The run's note when the host moves its CPUs about; None when it does not."""
    if not moves(topology):
        return None
    return (
        f"This host moves its CPUs about ({_seen(topology)}: a guest's vCPUs moving on the"
        " physical machine, or other load): what a pinned channel runs at moves with them, so"
        " the parameters and CPUs chosen here are this moment's best, and another run may"
        " choose others. `hspc-gen compare` of two runs' results measures them side by side,"
        " with an A/A line for the host's own spread."
    )


def _seen(topology: Topology) -> str:
    """What showed it: the first class of a moment and why it does not last, or a move."""
    lasting, moved = lasting_classes(topology), moved_pairs(topology)
    passing = [c for c in topology.classes if c not in lasting]
    if not passing:
        return "pairs measured again had moved"
    c = passing[0]
    why = (
        "a pair of it moved when measured again"
        if moved & set(c.pairs)
        else "sysfs does not explain them, and they do not reach every CPU"
    )
    a, b = c.representative
    held = f"{c.name} at {c.round_trip_ns:.0f} ns held {len(c.pairs)} pair(s), e.g. CPUs {a},{b}"
    return f"{held}: {why}"


def topology_notes(outcome: TopologyOutcome | None, *, measured: bool) -> tuple[str, ...]:
    """The run's notes from the host's measured topology: why it has none, or that it moves
    (only for a run that measured: an estimate chose nothing by measuring)."""
    if outcome is None:
        return ()
    found = [outcome.note] if outcome.note else []
    if measured and outcome.topology is not None and (note := moving_note(outcome.topology)):
        found.append(note)
    return tuple(found)
