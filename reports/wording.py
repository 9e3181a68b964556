"""Words the summary, the HTML page, `hspc-gen threads` and the figures share, so that they say
a thing alike: a parameter's value (a CPU of -1 is "unpinned", not a number), the per-step
table's columns and cells (from a step, its figures as hspc-result.json rounds them), what the
run's duration was, the adaptive pool's parameters (kPoolTuning) with why each, and a figure
past the bound (faster than the slower side alone: unresolved, or at the bound)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from hspc_gen.model.pool import PoolTuning
from hspc_gen.model.result import Step, TuneResult

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


def number(x: float | None) -> float | None:
    """A figure as the documents hold it: 6 significant digits, None where it is not finite."""
    if x is None or math.isnan(x) or math.isinf(x):
        return None
    return float(f"{x:.6g}")


def _share(value: float) -> str:
    shown = number(value)
    return "—" if shown is None else f"{shown:.1%}"


def trail_row(step: Step) -> tuple[str, ...]:
    """One row of the per-step table, its figures rounded as in hspc-result.json's `decisions`
    (so the summary, from the run's result, and the page, from the file, say the same)."""
    disturbed = number(step.disturbed)
    return (
        step.stage,
        step.step,
        f"{step.screened} of {step.proposed}",
        f"{step.rounds} of {step.planned_rounds}" if step.cut else f"{step.rounds}",
        _share(step.margin),
        _share(step.host_noise),
        "—" if disturbed is None else f"{disturbed:.0%}",
        str(step.winner or "none"),
    )


def duration(result: TuneResult) -> str:
    """What the run's elapsed time was: a search's, or a replay's of recorded measurements (a
    replay measures nothing, so its seconds say nothing of what the search took)."""
    run, search = result.run, result.search
    took = f"{round(run.elapsed_seconds, 3):.3g} s"
    of = f" of a {run.budget_seconds:g} s budget"
    if search is None or not search.trail:
        return f"took {took}{of}, measuring nothing"
    cached, measured = search.cached_plans, search.measured_plans
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


def unresolved(measured: str) -> str:
    """A figure not given because it was measured past the bound, surely (`measured`: what)."""
    return f"unresolved: {measured}, which cannot be"


AT_THE_BOUND = "at the bound"
"""A figure past the bound within the noise: as fast as the slower side alone, not faster."""


POOL_COLUMNS = ("PoolOptions", "value", "why")
IN_THE_HEADER = "the header's kPoolTuning"
"""Where the pool's parameters are, as a run's summary and page say: the header it wrote."""


def pool_heading(pool: PoolTuning, where: str = IN_THE_HEADER) -> str:
    """The sentence above the pool's table: what the values rest on (measured, partly measured,
    or estimated: the estimate's stand-ins) and what they are (`where`: the header's kPoolTuning,
    or `hspc-gen threads`' for its recommendation)."""
    return (
        f"Pool (threads.consumers: adaptive; {pool.basis}): {where}, which ConsumerPool runs"
        " with unless given other PoolOptions (the fields not listed keep their defaults):"
    )


def pool_rows(pool: PoolTuning) -> tuple[tuple[str, str, str], ...]:
    """The pool's table, a row a PoolOptions field in declaration order: name, value, why."""
    return tuple((name, str(choice.value), choice.why) for name, choice in pool.choices())


def pool_markdown(pool: PoolTuning | None, where: str = IN_THE_HEADER) -> list[str]:
    """threads.consumers: adaptive: the pool's parameters as Markdown, a blank line first (the
    summary's and `hspc-gen threads`'); nothing without the switch."""
    if pool is None:
        return []
    return ["", pool_heading(pool, where), "", *markdown_table(POOL_COLUMNS, pool_rows(pool))]


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table's lines: the heading row, the rule, a line a row."""
    return [
        f"| {' | '.join(columns)} |",
        f"|{'---|' * len(columns)}",
        *(f"| {' | '.join(row)} |" for row in rows),
    ]
