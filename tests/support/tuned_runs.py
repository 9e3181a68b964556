"""A run's result from the channel's search and confirmation over fake_runner's simulated
toolchain, with the budget cut where a real run's would be (`tuned`), and the command line and
thread advice the tests write its header with (`COMMAND`, `ADVICE`)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import fake_runner as fr
from fake_runner import machinery, settings
from hspc_gen.model import ChannelParams, Effort, Objective
from hspc_gen.model.result import RunInfo, TuneResult
from hspc_gen.model.threads import ThreadAdvice
from hspc_gen.search.channel import measure_confirmation, search, search_result

RUN = RunInfo(
    target="t",
    event_bytes=64,
    objective=Objective.throughput,
    effort=Effort.quick,
    budget_seconds=60.0,
    elapsed_seconds=30.0,
    host={},
    host_model="Test CPU",
    fingerprint="abc",
    tool_version="0",
)
ADVICE = ThreadAdvice(1, 1, 1, (-1,), (-1,), pinned=False)
COMMAND = ("hspc-gen", "--target", "t")


def tuned(tmp_path: Path, cut: str) -> tuple[ChannelParams, TuneResult]:
    """The estimate the search starts from, and the run's result with the budget cut `cut`:
    "never", "before_confirmation" or "before_search" (as pipeline.tune_channel picks)."""
    space = fr.stage_two_space()
    start = space.start()
    machines = machinery(tmp_path / "store", fr.SimulatedToolchain())
    past = time.monotonic() - 1
    spent = dataclasses.replace(settings(deadline=past), confirm_deadline=past, end=past)
    s = spent if cut == "before_search" else settings()
    searched = search(space, start, s, machines)
    confirmation = measure_confirmation(searched, spent if cut != "never" else s, machines)
    winner = searched.winner
    if confirmation is not None and (confirmed := confirmation.step.winner()) is not None:
        winner = confirmed
    found = search_result(searched, (confirmation, None), winner, s)
    return start, TuneResult(RUN, winner, found, ADVICE)
