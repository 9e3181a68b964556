"""A run's result made by hand, as the search would have written it, for the tests of what reads
one (the summary, the report, the thread search's outputs): the run (`RUN`), its winner, the
estimated thread advice, a search's result (`searched`) and its steps (`step`)."""

from __future__ import annotations

import dataclasses
import math

from hspc_gen.model import ChannelParams, Effort, Figure, Objective, Primitive, Status, Summary
from hspc_gen.model.result import Confirmed, Failure, RunInfo, SearchResult, Step
from hspc_gen.model.threads import ThreadAdvice

WINNER = ChannelParams(64, 0, 4, 4096, Primitive.futex)
ESTIMATED = ThreadAdvice(1, 1, 1, (0, 1), (0, 1), pinned=False)
RUN = RunInfo(
    target="demo",
    event_bytes=8,
    objective=Objective.throughput,
    effort=Effort.measure,
    budget_seconds=120.0,
    elapsed_seconds=60.0,
    host={},
    host_model="Test CPU",
    fingerprint="abc",
    tool_version="0",
)
RATE = Summary(5.0e8, 4.8e8, 5.2e8, 20, q1=4.9e8, q3=5.1e8, preempted_fraction=0.0)


def step(stage: str, name: str, rounds: int, margin: float, winner: str | None) -> Step:
    return Step(
        stage, name, winner, (), 0.02, margin, margin, rounds,
        proposed=5, screened=4, seconds=2.5, disturbed=0.25,
    )  # fmt: skip


def searched(**changes: object) -> SearchResult:
    confirmed = Confirmed(
        winner_id="c1",
        rate=RATE,
        latency_ns=None,
        efficiency=Figure(0.97, 0.95, 0.99, 20),
        baselines={"producer_alone": RATE},
        decision=step("confirm", "confirm", 20, 0.03, "c1"),
    )
    found = SearchResult(
        winner=WINNER,
        confirmed=confirmed,
        trail=(
            step("one", "padding", 12, 0.05, "c1"),
            step("two", "primitive", 6, math.inf, None),
        ),
        candidates=(),
        failures=(Failure("c9", Status.compile_error, "v_c9.cpp:3: error: nope"),),
        budget_exhausted=True,
        measured_plans=0,
        cached_plans=3,
        seed=1,
        oversubscribed=True,
    )
    return dataclasses.replace(found, **changes)  # type: ignore[arg-type]
