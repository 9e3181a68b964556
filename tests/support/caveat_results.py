"""Typed results that carry every kind of caveat between them, for the summary and the HTML
page to be checked against each other: searches replayed from the recorded samples
(fake_runner's simulated toolchain, then a second run from the record store it filled), and
results that the search cannot easily be made to give (a latency bound not kept, a host noisier
than the channel) built as the search would have written them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import fake_runner as fr
from fake_runner import run_search, settings
from hspc_gen.model import Effort, Figure, Status, Summary
from hspc_gen.model.result import TuneResult
from hspc_gen.model.threads import ThreadFailure
from hspc_gen.reports.summary import render
from hspc_gen.search.channel import search_result
from hspc_gen.search.decisions.findings import past_bound
from search_results import ESTIMATED, RUN, WINNER, searched, step
from slow_baselines import SlowBaselines, confirmed_with


def replayed_unconfirmed(tmp_path: Path) -> TuneResult:
    """A search answered wholly from the record store, its budget gone before the confirmation,
    on a busy machine, the thread search crashed."""
    run_search(tmp_path, fr.SimulatedToolchain())
    s = settings()
    again = run_search(tmp_path, fr.SimulatedToolchain(), s)
    found = search_result(again, (None, None), again.winner, s)
    found = dataclasses.replace(found, budget_exhausted=True)
    run = dataclasses.replace(RUN, elapsed_seconds=0.993, busy=True, other_cpus=1.25)
    failed = ThreadFailure(Status.crashed, "consumer 3 died")
    return TuneResult(run, again.winner, found, failed)


def unresolved(tmp_path: Path) -> TuneResult:
    """Baselines slower than the channel twice: the efficiency cannot be given."""
    found, _ = confirmed_with(tmp_path, SlowBaselines({settings().seed + 1, settings().seed + 2}))
    return TuneResult(RUN, found.winner, found, ESTIMATED)


def remeasured(tmp_path: Path) -> TuneResult:
    """The confirmation's figures could not be true; a second measurement's are reported."""
    found, _ = confirmed_with(tmp_path, SlowBaselines({settings().seed + 1}))
    return TuneResult(RUN, found.winner, found, ESTIMATED)


def at_bound(tmp_path: Path) -> TuneResult:
    """A channel as fast as its slower side within the noise: the efficiency at 1.0."""
    ratios = (0.97, 1.02, 1.04, 0.99, 1.03, 1.01)
    seeds = {settings().seed + 1, settings().seed + 2}
    found, _ = confirmed_with(tmp_path, SlowBaselines(seeds, ratios))
    return TuneResult(RUN, found.winner, found, ESTIMATED)


def rate(median_m: float, spread: float = 0.015) -> Summary:
    """A rate of `median_m` M events/s, its interval `spread` of it either side."""
    m = median_m * 1e6
    low, high = m * (1 - spread), m * (1 + spread)
    return Summary(m, low, high, 20, q1=low, q3=high, preempted_fraction=0.0)


def beside_the_sides(
    channel: Summary, producer: Summary, consumer: Summary, efficiency: Figure
) -> TuneResult:
    """A confirmation with these figures, past the bound as the search writes it (the
    efficiency's interval above 1: unresolved; else at the bound)."""
    base = searched()
    assert base.confirmed is not None
    sides = {"producer_alone": producer, "consumer_alone": consumer}
    past = past_bound(efficiency, channel, sides)
    sure = efficiency.ci95_low > 1.0
    confirmed = dataclasses.replace(
        base.confirmed,
        rate=channel,
        efficiency=None if sure else Figure(1.0, efficiency.ci95_low, 1.0, efficiency.n),
        baselines=sides,
        unresolved=past if sure else "",
        at_bound="" if sure else past,
    )
    return TuneResult(RUN, WINNER, dataclasses.replace(base, confirmed=confirmed), ESTIMATED)


def noisy_over_budget() -> TuneResult:
    """A noisy host, a latency bound not kept, a failed candidate, notes, and a run past its
    budget whose races were cut short."""
    base = searched()
    assert base.confirmed is not None
    noisy = dataclasses.replace(step("one", "padding", 30, 0.2, "c1"), noise_floor=0.2)
    noisy = dataclasses.replace(noisy, host_noise=0.21)
    confirmed = dataclasses.replace(
        base.confirmed, latency_bound_ns=2000.0, latency_p99_ns=Figure(9000.0, 8000.0, 9900.0, 9)
    )
    found = dataclasses.replace(
        base, confirmed=confirmed, trail=(noisy, *base.trail[1:]), measured_plans=4
    )
    run = dataclasses.replace(
        RUN, elapsed_seconds=131.5, notes=("record store line not read: x.jsonl:3: ...",)
    )
    return TuneResult(run, WINNER, found, ESTIMATED)


def estimate() -> TuneResult:
    return TuneResult(dataclasses.replace(RUN, effort=Effort.estimate), WINNER, None, ESTIMATED)


def every_result(tmp_path: Path) -> dict[str, TuneResult]:
    return {
        "replayed": replayed_unconfirmed(tmp_path / "replayed"),
        "unresolved": unresolved(tmp_path / "unresolved"),
        "remeasured": remeasured(tmp_path / "remeasured"),
        "at_bound": at_bound(tmp_path / "at_bound"),
        "noisy": noisy_over_budget(),
        "estimate": estimate(),
    }


def summary_notes(result: TuneResult) -> list[str]:
    """The summary's last block of bullets: its notes, as a person reads them."""
    blocks = render(result).strip().split("\n\n")
    last = blocks[-1].splitlines()
    return [line[2:] for line in last if line.startswith("- ")]
