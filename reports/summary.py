"""The short Markdown summary printed at the end of a run and saved beside the result."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hspc_gen.model import ChannelParams, Figure, HostTimings
from hspc_gen.model.result import Confirmed, SearchResult, Step, TuneResult
from hspc_gen.model.threads import ThreadAdvice, ThreadFailure
from hspc_gen.reports import threads as threads_report
from hspc_gen.reports.figure_data import FIGURES, REPORT_FILE


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


def _placement(winner: ChannelParams, placement: str) -> list[str]:
    """Where the winner's threads run, when the search placed them (one line, then a blank)."""
    if not placement or placement == "unpinned":
        return ["Placement: unpinned (the scheduler places the threads).", ""] if placement else []
    where = f"producer on CPU {winner.producer_cpu}, consumer on CPU {winner.consumer_cpu}"
    kind = "a pinned pair" if placement == "pinned" else f"the measured class {placement}"
    return [f"Placement: {where} ({kind}).", ""]


def _params(result: TuneResult) -> list[str]:
    return [
        "| parameter | value |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in result.winner.as_dict().items()),
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
        side = doubt if name in ("producer_alone", "consumer_alone") else ""
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
        return [f"- efficiency: unresolved: {confirmed.unresolved}, which cannot be"]
    if efficiency is None:
        return []
    interval = f"95% CI {efficiency.ci95_low:.3f} to {efficiency.ci95_high:.3f}"
    if confirmed.at_bound:
        return [
            f"- efficiency: 1.000, at the bound ({interval}): as fast as the slower of producer"
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
    lines = [
        "| stage | step | screened | rounds | margin | host noise | disturbed | winner |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for step in search.trail:
        screened = f"{step.screened} of {step.proposed}"
        rounds = f"{step.rounds} of {step.planned_rounds}" if step.cut else f"{step.rounds}"
        lines.append(
            f"| {step.stage} | {step.step} | {screened} | {rounds} | {_share(step.margin)}"
            f" | {_share(step.host_noise)} | {step.disturbed:.0%} | {step.winner or 'none'} |"
        )
    return lines


def _share(value: float) -> str:
    return f"{value:.1%}" if math.isfinite(value) else "—"


def _threads(advice: ThreadAdvice | ThreadFailure) -> list[str]:
    if isinstance(advice, ThreadFailure):
        return ["", f"Threads: not measured ({advice.status}); the header's advice is estimated."]
    if advice.evidence is None:
        return []
    return [
        "",
        f"Threads: {advice.producers} producer(s), {advice.consumers} consumer(s) "
        f"({advice.consumers_per_producer} per producer), placement {advice.placement}"
        f"{', pinned' if advice.pinned else ', not pinned'}; taskset -c {advice.taskset}; "
        f"the search stopped at: {advice.evidence.termination}.",
        *([f"Threads {flat}."] if (flat := threads_report.flat_range(advice.evidence)) else []),
        *([f"Threads: {why}."] if (why := threads_report.oversubscribed(advice)) else []),
    ]


WIDE_FLOOR = 0.05
"""An A/A floor above this is wide enough to ask whether the host or the channel made it."""


def _host_was_noisy(step: Step) -> bool:
    """A wide A/A floor that the channel-free baselines' own noise explains (at least half)."""
    wide = math.isfinite(step.noise_floor) and step.noise_floor > WIDE_FLOOR
    return wide and step.host_noise >= step.noise_floor / 2


def _budget_note(search: SearchResult) -> str:
    """Which races the budget cut short, when every step ran; else that the budget ran out."""
    cut = [s for s in search.trail if s.cut]
    left_out = search.step_left_out or any(s.screened < s.proposed for s in search.trail)
    if cut and not left_out:
        steps = ", ".join(f"{s.step} ({s.rounds} of {s.planned_rounds} rounds)" for s in cut)
        return (
            f"The budget cut short the race of {steps}: every step ran, and each decided on the"
            " rounds it had, as precisely as its margin says."
        )
    return "The budget ran out: the result is the best finished so far."


def _notes(result: TuneResult, search: SearchResult) -> list[str]:
    notes = []
    if search.budget_exhausted:
        notes.append(_budget_note(search))
    if noisy := [s for s in search.trail if _host_was_noisy(s)]:
        steps = ", ".join(
            f"{s.step} (A/A floor {s.noise_floor:.1%}, host noise {s.host_noise:.1%})"
            for s in noisy
        )
        notes.append(
            f"The host itself was noisy during {steps}: two single-threaded programs without a"
            " channel varied about as much as the channel did."
        )
    if result.run.busy:
        notes.append(
            f"The machine was busy (other processes used {result.run.other_cpus:.2f} CPUs):"
            " comparisons were less precise than on a quiet machine; what it measured is"
            " measured again by a run on a quiet machine."
        )
    notes.extend(_failures(search))
    if search.cached_plans:
        notes.append(
            f"{search.cached_plans} plan(s) replayed from the record store, "
            f"{search.measured_plans} measured."
        )
    run = result.run
    if run.elapsed_seconds > run.budget_seconds:
        over = run.elapsed_seconds - run.budget_seconds
        notes.append(
            f"It took {run.elapsed_seconds:.1f} s of a {run.budget_seconds:g} s budget"
            f" ({over:.1f} s over: the last step's estimate was short)."
        )
    return notes


def _failures(search: SearchResult) -> list[str]:
    """One line per kind of failure (the same cause in many candidates is one line)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for failure in search.failures:
        grouped.setdefault((str(failure.status), failure.cause), []).append(failure.id)
    lines = []
    for (status, cause), arms in grouped.items():
        who = f"Candidate {arms[0]}" if len(arms) == 1 else f"{len(arms)} candidates"
        because = f": {cause}" if cause else ""
        lines.append(f"{who}: {status}{because} (recorded, left out).")
    return lines


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
    if search is None:
        lines.append("Not measured: parameters come from the host heuristics (--effort estimate).")
    elif search.confirmed is None and not search.trail:
        lines.append(
            "Not measured: the budget ran out before a batch could be measured; parameters "
            "come from the host heuristics."
        )
    else:
        lines += [*_placement(result.winner, search.placement)]
        lines += ["Measured in a fresh process (medians, 95% bootstrap intervals):", ""]
        lines += [*_measured(search), "", *_trail(search)]
    lines += _threads(result.threads)
    notes = [*(_notes(result, search) if search is not None else []), *result.run.notes]
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    if figures:
        lines += ["", "## Figures", "", f"Each explained in [{REPORT_FILE}]({REPORT_FILE}).", ""]
        lines += [f"![{heading}]({name})" for name, heading in FIGURES.items()]
    lines.append("")
    return "\n".join(lines)
