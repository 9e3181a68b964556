"""The run's note on a host that moves its CPUs about: the 16-vCPU guest's recorded matrices
(a few fast pairs sysfs does not explain, other ones each time) get it, in the summary a user
reads; steady hosts, hidden SMT siblings included, do not; a pair that moved when measured
again gets it too."""

from __future__ import annotations

import dataclasses

from hspc_gen import wiring
from hspc_gen.model import Effort
from hspc_gen.model.result import TuneResult
from hspc_gen.model.topology import (
    Disagreement,
    DisagreementKind,
    TopologyOutcome,
    TopologyStatus,
)
from hspc_gen.reports.summary import render
from hspc_gen.target.app import Target
from hspc_gen.topology.moving import moves, moving_note, topology_notes
from hspc_gen.topology.text import describe_topology
from recorded_topology import host_of, recorded
from search_results import ESTIMATED, WINNER, searched

TARGET = Target.model_validate({"name": "t", "event": {"size": 8}})


def test_the_guest_that_moves_its_cpus_is_said_to_in_the_summary() -> None:
    host = host_of("xeon-16c-vm")
    for run in ("matrix-run1.json", "matrix-run2.json", "matrix-run3.json"):
        topology = recorded("xeon-16c-vm", run)
        fast = topology.classes[0]
        note = moving_note(topology)
        assert moves(topology) and note is not None
        a, b = fast.representative
        assert f"{fast.name} at {fast.round_trip_ns:.0f} ns held {len(fast.pairs)} pair(s)" in note
        assert f"e.g. CPUs {a},{b}: sysfs does not explain them" in note
        assert "hspc-gen compare" in note
        outcome = TopologyOutcome(TopologyStatus.measured, topology)
        info = wiring.run_info(TARGET, host, Effort.measure, 1.0, topology=outcome)
        assert info.notes == (note,)
        text = render(TuneResult(info, WINNER, searched(), ESTIMATED))
        assert "This host moves its CPUs about" in text
        assert f"  Moves      {note}" in describe_topology(outcome)  # `hspc-gen host`
        estimate = wiring.run_info(TARGET, host, Effort.estimate, 1.0, topology=outcome)
        assert estimate.notes == ()  # an estimate chose nothing by measuring


def test_steady_hosts_get_no_note_and_a_pair_that_moved_does() -> None:
    hidden = recorded("vm-16c", "matrix-hidden-smt.json")
    for steady in (hidden, recorded("vm-16c", "matrix-split-l3.json"), recorded("2s-8c-2t")):
        assert not moves(steady) and moving_note(steady) is None
    siblings = hidden.classes[0]
    move = Disagreement(
        DisagreementKind.moved, "shared_l3", "smt_sibling", siblings.pairs[:1], 1, "moved"
    )
    shaken = dataclasses.replace(hidden, disagreements=(*hidden.disagreements, move))
    note = moving_note(shaken)  # no longer lasting: one moment's
    assert note is not None and "smt_sibling" in note and "moved when measured again" in note
    largest = hidden.classes[1]
    move = dataclasses.replace(move, measured=largest.name, pairs=largest.pairs[:1])
    shaken = dataclasses.replace(hidden, disagreements=(*hidden.disagreements, move))
    note = moving_note(shaken)  # the largest class lasts whatever moved: the move is named
    assert note is not None and "pairs measured again had moved" in note


def test_the_notes_keep_why_a_topology_is_missing() -> None:
    assert topology_notes(None, measured=True) == ()
    failed = TopologyOutcome(TopologyStatus.failed, None, "the probe timed out")
    assert topology_notes(failed, measured=True) == ("the probe timed out",)
    steady = TopologyOutcome(TopologyStatus.stored, recorded("2s-8c-2t"))
    assert topology_notes(steady, measured=True) == ()
    assert "  Moves" not in describe_topology(steady)
