"""The short Markdown summary printed at the end of a run and saved beside the result."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hspc_gen.model import ChannelParams, Figure, HostTimings
from hspc_gen.model.result import Confirmed, SearchResult, TuneResult
from hspc_gen.model.threads import ThreadAdvice, ThreadFailure
from hspc_gen.reports import threads as threads_report
from hspc_gen.reports.caveats import caveats
from hspc_gen.reports.figure_data import FIGURES, REPORT_FILE
from hspc_gen.reports.wording import (
    AT_THE_BOUND,
    TRAIL_COLUMNS,
    markdown_table,
    param_value,
    placement,
    placement_raced,
    pool_markdown,
    trail_row,
)


def _si(value: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}"
    return f"{value:.3g}"


BASELINE_LABELS = {
    "producer_alone": "producer_alone (the producer's loop, no channel)",
    "consumer_alone": "consumer_alone (the consumer's loop, no channel)",
    "optimal": "optimal (the producer's work alone, nothing handed over)",
    "achievable": "achievable (the producer filling an empty buffer of the same memory)",
    "upper_bound": "upper_bound (one thread doing both sides' work: the rate a channel must beat)",
}
"""What each baseline measures, after the paper's limit lines (its Upper bound is a time: the
slowest a channel may be, so as a rate it is the floor the channel must beat)."""


def _rate(figure: Figure | None) -> str:
    if figure is None:
        return "not measured"
    low, high = _si(figure.ci95_low), _si(figure.ci95_high)
    return f"{_si(figure.median)} events/s (95% CI {low} to {high}, n={figure.n})"


def _timings(timings: HostTimings | None) -> list[str]:
    if timings is None:
        return []
    wake, switch, budgets = timings.wake_ns, timings.switch_ns, timings.budgets()
    busy = ", measured beside other load" if timings.busy else ""
    return [
        "",
        f"Waiting here costs a futex wake-up of {_us(wake)} and a context switch of"
        f" {_us(switch)}{busy}: spin budgets start at {budgets.sleep_ns} ns before the hybrid"
        f" sleeps and {budgets.yield_ns} ns before a spinning primitive yields.",
    ]


def _pairs(measured: Any) -> list[str]:
    """The host's measured classes of CPU pairs, in a sentence (the heat map has the pairs)."""
    if not isinstance(measured, Mapping) or not measured.get("classes"):
        return []
    classes = "; ".join(
        f"{c['name']} {c['round_trip_ns']:.0f} ns ({_count(len(c['pairs']), 'pair')},"
        f" e.g. CPUs {c['representative'][0]},{c['representative'][1]})"
        for c in measured["classes"]
    )
    said = len(measured.get("disagreements") or ())
    agrees = f"{said} disagreement(s) with sysfs" if said else "sysfs agrees"
    kind = " ".join(measured.get("kind") or ()) or "uniprocessor"
    return [
        "",
        f"CPU pairs ({measured['status']}, a cache line's round trip): {classes}; {agrees}"
        f" ({kind} as measured).",
    ]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _us(figure: Figure) -> str:
    if not math.isfinite(figure.median):
        return "— (not measured)"
    low, high = figure.ci95_low / 1e3, figure.ci95_high / 1e3
    return f"{figure.median / 1e3:.3g} us (95% CI {low:.3g} to {high:.3g}, n={figure.n})"


def _placement(winner: ChannelParams, search: SearchResult) -> list[str]:
    """Where the winner's threads run, when the search placed them (one line, then a blank)."""
    if not search.placement:
        return []
    cpus = (winner.producer_cpu, winner.consumer_cpu)
    measured = ((c.params.producer_cpu, c.params.consumer_cpu) for c in search.candidates)
    where = placement(search.placement, *cpus, raced=placement_raced(cpus, measured))
    return [f"Placement: {where}.", ""]


def _params(result: TuneResult) -> list[str]:
    return [
        "| parameter | value |",
        "|---|---|",
        *(f"| {k} | {param_value(k, v)} |" for k, v in result.winner.as_dict().items()),
    ]


def _measured(search: SearchResult) -> list[str]:
    confirmed = search.confirmed
    if confirmed is None:
        return ["- channel: not measured"]
    doubt = (
        " (unresolved: see efficiency)"
        if confirmed.unresolved
        else " (within the noise of each other: see efficiency)"
        if confirmed.at_bound
        else ""
    )
    lines = [f"- channel: {_rate(confirmed.rate)}{doubt}"]
    latency = confirmed.latency_ns
    if latency is not None:
        lines.append(
            f"- latency, push to pop (paced): {latency.median:.0f} ns "
            f"(95% CI {latency.ci95_low:.0f} to {latency.ci95_high:.0f}, n={latency.n})"
        )
    for name, summary in sorted(confirmed.baselines.items()):
        side = doubt if name in confirmed.doubted_sides else ""
        lines.append(f"- {BASELINE_LABELS.get(name, name)}: {_rate(summary)}{side}")
    if confirmed.latency_bound_ns is not None:
        lines.append(_latency_line(confirmed.latency_bound_ns, confirmed.latency_p99_ns))
    lines += _efficiency(confirmed)
    if confirmed.remeasured:
        lines.append(
            "- these figures are from a second measurement of the winner: the confirmation's"
            f" were past the bound ({confirmed.remeasured})"
        )
    return lines


def _efficiency(confirmed: Confirmed) -> list[str]:
    efficiency = confirmed.efficiency
    if confirmed.unresolved:
        return ["- efficiency: unresolved (why: in the notes below)"]
    if efficiency is None:
        return []
    interval = f"95% CI {efficiency.ci95_low:.3f} to {efficiency.ci95_high:.3f}"
    if confirmed.at_bound:
        return [
            f"- efficiency: 1.000, {AT_THE_BOUND} ({interval}): as fast as the slower of producer"
            f" and consumer alone within the noise (measured {confirmed.at_bound})"
        ]
    return [
        f"- efficiency: {efficiency.median:.3f} ({interval}); "
        "1.0 = as fast as the slower of producer and consumer alone"
    ]


def _latency_line(bound_ns: float, p99: Figure | None) -> str:
    bound = f"constraints.max_latency_us ({bound_ns / 1e3:g} us)"
    if p99 is None:
        return f"- {bound}: not measured"
    kept = "kept" if p99.median <= bound_ns else "NOT kept"
    low, high = p99.ci95_low / 1e3, p99.ci95_high / 1e3
    return (
        f"- {bound} {kept}: 99% of events waited at most {p99.median / 1e3:.3g} us (paced load,"
        f" median over {p99.n} rounds, 95% CI {low:.3g} to {high:.3g})"
    )


def _trail(search: SearchResult) -> list[str]:
    """The per-step table, cell for cell the HTML page's (both from the result's steps)."""
    return markdown_table(TRAIL_COLUMNS, (trail_row(s) for s in search.trail))


def _threads(advice: ThreadAdvice | ThreadFailure) -> list[str]:
    if isinstance(advice, ThreadFailure) or advice.evidence is None:  # a caveat says why
        return []
    return [
        "",
        f"Threads: {advice.producers} producer(s), {advice.consumers} consumer(s) "
        f"({advice.consumers_per_producer} per producer), placement {advice.placement}"
        f"{', pinned' if advice.pinned else ', not pinned'}; taskset -c {advice.taskset}; "
        f"the search stopped at: {advice.evidence.termination}.",
        f"Threads {threads_report.flat_range(advice)}.",
        *([f"Threads: {why}."] if (why := threads_report.oversubscribed(advice)) else []),
    ]


def render(result: TuneResult, figures: bool = False) -> str:
    """The summary; with `figures`, as hspc-summary.md beside them, showing them."""
    run = result.run
    lines = [
        f"# hspc-gen: {run.target} ({run.effort}, objective {run.objective})",
        "",
        f"Host: {run.host_model}, fingerprint `{run.fingerprint}`",
        *_timings(run.timings),
        *_pairs(run.host.get("topology")),
        "",
        *_params(result),
        "",
    ]
    search = result.search
    if search is not None and (search.confirmed is not None or search.trail):
        lines += [*_placement(result.winner, search)]
        lines += ["Measured in a fresh process (medians, 95% bootstrap intervals):", ""]
        lines += [*_measured(search), "", *_trail(search)]
    lines += _threads(result.threads)
    lines += pool_markdown(result.pool)
    if said := caveats(result):
        lines += ["", *(f"- {caveat.text}" for caveat in said)]
    if figures:
        lines += ["", "## Figures", "", f"Each explained in [{REPORT_FILE}]({REPORT_FILE}).", ""]
        lines += [f"![{heading}]({name})" for name, heading in FIGURES.items()]
    lines.append("")
    return "\n".join(lines)
