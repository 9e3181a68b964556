"""What each figure of the report shows, as plain typed data: the series, intervals and labels,
taken from the typed result as the documents a run leaves hold it (hspc-result.json, and
hspc-bench.json when `hspc-gen bench` has run, read by the model's loaders). Drawing
(reports/figures.py) only turns these into pictures, so the numbers a figure shows are checked
here, against a golden file, and not in pixels.

The documents, not the in-memory result, are the source: `hspc-gen bench` runs later than the
tuning and redraws the report from the files it finds, and a report redrawn from the same files is
the same bytes. Every figure with nothing to show says why in `empty`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hspc_gen.model import ChannelParams, Figure
from hspc_gen.model.result import CandidateResult, SearchResult, Step, TuneResult
from hspc_gen.reports.wording import param_value

LINE_NAMES = {
    "producer_alone": "producer alone",
    "consumer_alone": "consumer alone",
    "p0_parallel": "both alone in parallel (p0)",
    "optimal": "Optimal: the producer's work alone",
    "achievable": "Achievable: producer into an empty buffer",
    "upper_bound": "Upper bound: all work on one thread",
}
REPORT_FILE = "hspc-report.html"
FIGURES = {
    "hspc-roadmap.png": "Roadmap",
    "hspc-buffers.png": "Buffer size and primitive",
    "hspc-decisions.png": "The decision trail",
    "hspc-threads.png": "Thread count",
    "hspc-peers.png": "Peer queues",
    "hspc-topology.png": "How the CPUs talk",
}
"""The report's page and its figures' files (the summary shows them too), with their headings."""
MAX_SERIES = 8  # lines in one chart before it stops being readable
MAX_ROWS_PER_STEP = 12  # forest rows per step: the winner and the nearest others


@dataclass(frozen=True)
class Interval:
    median: float
    low: float
    high: float


@dataclass(frozen=True)
class Bar:
    label: str
    value: Interval
    kind: str  # "line" (a limit line), "step" (a step's winner), "tuned", "peer"


@dataclass(frozen=True)
class Bars:
    title: str
    axis: str
    bars: tuple[Bar, ...]
    empty: str = ""


@dataclass(frozen=True)
class Series:
    label: str
    x: tuple[float, ...]
    y: tuple[Interval, ...]


@dataclass(frozen=True)
class Level:
    label: str
    value: float


@dataclass(frozen=True)
class Curves:
    title: str
    x_axis: str
    y_axis: str
    series: tuple[Series, ...]
    levels: tuple[Level, ...] = ()
    marked: tuple[float, ...] = ()  # x values to point out (the recommendation)
    note: str = ""
    empty: str = ""
    lines_are: str = ""  # what one line is, for the caption: "primitive", "buffer count"


@dataclass(frozen=True)
class ForestRow:
    step: str
    label: str
    ratio: Interval
    winner: bool
    tied: bool


@dataclass(frozen=True)
class Forest:
    title: str
    rows: tuple[ForestRow, ...]
    margins: tuple[tuple[str, float], ...]  # each step's δ, in the rows' step order
    note: str = ""
    empty: str = ""


def interval(figure: Figure | None, scale: float = 1.0) -> Interval | None:
    """A figure as an Interval (scaled), or None where it has no number."""
    if figure is None or math.isnan(figure.median):
        return None
    low, high = figure.ci95_low, figure.ci95_high
    median = figure.median / scale
    # Rounded to 6 digits in the documents, a median can sit a hair outside its interval.
    return Interval(
        median,
        median if math.isnan(low) else min(median, low / scale),
        median if math.isnan(high) else max(median, high / scale),
    )


def _rate(figure: Figure | None) -> Interval | None:
    return interval(figure, 1e6)


def _line_bars(lines: Mapping[str, Figure]) -> list[Bar]:
    return [
        Bar(LINE_NAMES[name], value, "line")
        for name in LINE_NAMES
        if (value := _rate(lines.get(name))) is not None
    ]


def _trail(result: TuneResult) -> tuple[Step, ...]:
    return result.search.trail if result.search is not None else ()


def roadmap(result: TuneResult) -> tuple[Bars, ...]:
    """After the paper's Figure 1, a panel per stage (Stage One moves bare events, Stage Two the
    app's work: their rates differ by orders): the limit lines of the stage's first step, each
    step's winner in its own rounds, and after the last the confirmed winner."""
    search = result.search
    if search is None or not search.trail:
        return (Bars("Roadmap", "", (), "nothing was measured (--effort estimate, or no budget)"),)
    rates: dict[tuple[str, str, str | None], Interval | None] = {
        (c.stage, c.step, c.id): _rate(c.rate) for c in search.candidates
    }
    stages: dict[str, list[Bar]] = {}
    last, confirmed = search.trail[-1].stage, search.confirmed
    for d in search.trail:
        bars = stages.get(d.stage)
        if bars is None:
            # The last stage's lines are the confirmation's: timed beside the reported winner.
            lines = (confirmed.baselines if confirmed and d.stage == last else None) or d.baselines
            bars = stages[d.stage] = _line_bars(lines)
        value = rates.get((d.stage, d.step, d.winner))
        if value is not None:
            bars.append(Bar(f"winner of step {d.step}", value, "step"))
    rate = _rate(confirmed.rate) if confirmed is not None else None
    if rate is not None:
        stages[last].append(Bar("confirmed winner", rate, "tuned"))
    axis = "million events/s (median, 95% interval)"
    return tuple(
        Bars(f"Roadmap, stage {stage}: limit lines, then each step's winner", axis, tuple(bars))
        for stage, bars in stages.items()
    )


Candidates = list[CandidateResult]


def _sweep_step(candidates: Sequence[CandidateResult]) -> tuple[tuple[str, str], Candidates]:
    """The step that measured the most (primitive, buffer size) points: one batch, paired rounds."""
    steps: dict[tuple[str, str], Candidates] = {}
    for c in candidates:
        if c.rate is not None:
            steps.setdefault((c.stage, c.step), []).append(c)

    def points(item: tuple[tuple[str, str], Candidates]) -> int:
        return len({(c.params.primitive, c.params.buffer_bytes) for c in item[1]})

    return max(steps.items(), key=points, default=(("", ""), []))


def _series_key(params: ChannelParams, by_primitive: bool) -> str:
    if by_primitive:
        return str(params.primitive)
    return f"{params.primitive}, {params.buffers} buffers"


def curves(result: TuneResult) -> Curves:
    """After the paper's Figures 3-8: events/s against buffer size, a line per primitive (per
    buffer count where one primitive was measured), best point at each size."""
    search = result.search
    (stage, step), rows = _sweep_step(search.candidates if search is not None else ())
    sizes = {c.params.buffer_bytes for c in rows}
    if len(sizes) < 2:
        return Curves("Buffer size", "", "", (), empty="no step measured more than one buffer size")
    by_primitive = len({c.params.primitive for c in rows}) > 1
    best: dict[str, dict[int, Interval]] = {}
    for c in rows:
        value = _rate(c.rate)
        line = best.setdefault(_series_key(c.params, by_primitive), {})
        size = c.params.buffer_bytes
        if value is not None and (size not in line or value.median > line[size].median):
            line[size] = value
    ranked = sorted(best.items(), key=lambda kv: -max(v.median for v in kv[1].values()))
    series = tuple(
        Series(label, tuple(float(s) for s in sorted(line)), tuple(line[s] for s in sorted(line)))
        for label, line in ranked[:MAX_SERIES]
    )
    left = len(ranked) - len(series)
    decided = [d for d in _trail(result) if (d.stage, d.step) == (stage, step)]
    return Curves(
        title=f"Events/s by buffer size (stage {stage}: {step})",
        x_axis="bytes per buffer (log scale)",
        y_axis="million events/s (median, 95% interval)",
        series=series,
        levels=_levels(decided[0].baselines if decided else {}),
        note=f"{left} more lines not drawn" if left else "",
        lines_are="primitive" if by_primitive else "buffer count (of the one primitive measured)",
    )


def _levels(lines: Mapping[str, Figure]) -> tuple[Level, ...]:
    return tuple(
        Level(LINE_NAMES[name], value.median)
        for name in ("optimal", "achievable", "upper_bound")
        if (value := _rate(lines.get(name))) is not None
    )


def _difference(params: ChannelParams, winner: ChannelParams) -> str:
    theirs, ours = params.as_dict(), winner.as_dict()
    changed = [f"{k}={param_value(k, v)}" for k, v in sorted(theirs.items()) if ours.get(k) != v]
    return ", ".join(changed) or "(same point)"


def _step_rows(decision: Step, candidates: Sequence[CandidateResult]) -> list[ForestRow]:
    label = f"{decision.stage}: {decision.step}"
    winner = next((c for c in candidates if c.id == decision.winner), None)
    if winner is None:
        return []
    ties = set(decision.ties)
    rows = [ForestRow(label, "winner", Interval(1.0, 1.0, 1.0), True, True)]
    others = [
        (c, ratio)
        for c in candidates
        if c is not winner and (ratio := interval(c.cost_vs_winner)) is not None
    ]
    others.sort(key=lambda item: (item[1].median, item[0].id))
    rows += [
        ForestRow(label, _difference(c.params, winner.params), r, False, c.id in ties)
        for c, r in others[: MAX_ROWS_PER_STEP - 1]
    ]
    return rows


def _margin(step: Step) -> float:
    """The step's δ as drawn: none where it is not a finite number."""
    return step.margin if math.isfinite(step.margin) else 0.0


def forest(result: TuneResult) -> Forest:
    """The decision trail: each step's candidates as paired cost ratios to its winner."""
    search: SearchResult | None = result.search
    by_step: dict[tuple[str, str], Candidates] = {}
    for c in search.candidates if search is not None else ():
        by_step.setdefault((c.stage, c.step), []).append(c)
    rows: list[ForestRow] = []
    margins: list[tuple[str, float]] = []
    for d in _trail(result):
        step_rows = _step_rows(d, by_step.get((d.stage, d.step), []))
        if step_rows:
            rows += step_rows
            margins.append((step_rows[0].step, _margin(d)))
    if not rows:
        return Forest("Decisions", (), (), empty="no step was decided by measurement")
    shown = sum(len(v) for v in by_step.values())
    return Forest(
        "Decisions: each candidate's cost over its step's winner, paired by round",
        tuple(rows),
        tuple(margins),
        note=f"{len(rows)} of {shown} candidates shown (the nearest per step)",
    )
