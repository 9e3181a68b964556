"""Words the summary, the HTML page and the figures share, so that they say a thing alike: a
parameter's value (a CPU of -1 is "unpinned", not a number), the per-step table's columns and
cells (from a step as hspc-result.json holds it), and what the run's duration was."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

UNPINNED = -1  # ChannelParams' CPU when the scheduler places the thread
CPU_PARAMS = ("producer_cpu", "consumer_cpu")


def param_value(name: str, value: object) -> str:
    """A parameter's value for a person: a CPU of -1 is unpinned (the scheduler's choice)."""
    if name in CPU_PARAMS and value == UNPINNED:
        return "unpinned"
    return str(value)


TRAIL_COLUMNS = (
    "stage",
    "step",
    "screened",
    "rounds",
    "margin",
    "host noise",
    "disturbed",
    "winner",
)


def _share(value: Any) -> str:
    return f"{value:.1%}" if isinstance(value, int | float) and math.isfinite(value) else "—"


def trail_row(step: Mapping[str, Any]) -> tuple[str, ...]:
    """One row of the per-step table, from a step of hspc-result.json's `decisions`."""
    rounds = step.get("rounds", "?")
    planned, disturbed = step.get("planned_rounds", rounds), step.get("disturbed_samples")
    return (
        str(step.get("stage", "?")),
        str(step.get("step", "?")),
        f"{step.get('screened', '?')} of {step.get('proposed', '?')}",
        f"{rounds} of {planned}" if step.get("cut") else f"{rounds}",
        _share(step.get("margin")),
        _share(step.get("host_noise")),
        f"{disturbed:.0%}" if isinstance(disturbed, int | float) else "—",
        str(step.get("winner") or "none"),
    )


def duration(result: Mapping[str, Any]) -> str:
    """What the run's elapsed time was: a search's, or a replay's of recorded measurements (a
    replay measures nothing, so its seconds say nothing of what the search took)."""
    elapsed, budget = result.get("elapsed_seconds"), result.get("budget_seconds")
    took = f"{elapsed:.3g} s" if isinstance(elapsed, int | float) else "? s"
    of = f" of a {budget:g} s budget" if isinstance(budget, int | float) else ""
    if not result.get("decisions"):
        return f"took {took}{of}, measuring nothing"
    cached, measured = result.get("cached_plans") or 0, result.get("measured_plans") or 0
    if cached and not measured:
        return f"replayed from the record store in {took} (nothing measured by this run)"
    if cached:
        return f"took {took}{of} ({measured} plan(s) measured, {cached} replayed from records)"
    return f"took {took}{of}"


def placement(where: str, producer_cpu: object, consumer_cpu: object, raced: bool = True) -> str:
    """Where the winner's threads run, from the search's placement (unpinned, pinned, or the
    measured class of CPU pairs its CPUs represent) and its CPUs; `raced` False: no candidate
    was measured anywhere else (the run ended before placements were raced, or pin_threads and
    --set left one), so pinning there was not shown better than another placement."""
    if where == "unpinned" or UNPINNED in (producer_cpu, consumer_cpu):
        return "unpinned (the scheduler places the threads)"
    cpus = f"producer on CPU {producer_cpu}, consumer on CPU {consumer_cpu}"
    kind = "a pinned pair" if where in ("pinned", "") else f"the measured class {where}"
    alone = "" if raced else "; no other placement was measured"
    return f"{cpus} ({kind}{alone})"


def placement_raced(
    winner_cpus: tuple[object, object], measured: Iterable[tuple[object, object]]
) -> bool:
    """Whether any candidate was measured on CPUs other than the winner's."""
    return any(cpus != winner_cpus for cpus in measured)
