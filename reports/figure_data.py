"""What each figure of the report shows, as plain typed data: the series, intervals and labels,
taken from the documents a run leaves (hspc-result.json, and hspc-bench.json when `hspc-gen bench`
has run). Drawing (reports/figures.py) only turns these into pictures, so the numbers a figure
shows are checked here, against a golden file, and not in pixels.

The documents, not the in-memory result, are the source: `hspc-gen bench` runs later than the
tuning and redraws the report from the files it finds, and a report redrawn from the same files is
the same bytes. Every figure with nothing to show says why in `empty`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hspc_gen.reports.wording import param_value

Doc = Mapping[str, Any]

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


def interval(figure: Doc | None, scale: float = 1.0) -> Interval | None:
    """A document's {median, ci95} as an Interval (scaled), or None where it has no number."""
    if not figure or figure.get("median") is None:
        return None
    low, high = figure.get("ci95") or (None, None)
    median = float(figure["median"]) / scale
    # Rounded to 6 digits in the documents, a median can sit a hair outside its interval.
    return Interval(
        median,
        median if low is None else min(median, float(low) / scale),
        median if high is None else max(median, float(high) / scale),
    )


def _rate(entry: Doc | None) -> Interval | None:
    return interval((entry or {}).get("events_per_second"), 1e6)


def _line_bars(lines: Doc) -> list[Bar]:
    return [
        Bar(LINE_NAMES[name], value, "line")
        for name in LINE_NAMES
        if (value := _rate(lines.get(name))) is not None
    ]


def roadmap(result: Doc) -> tuple[Bars, ...]:
    """After the paper's Figure 1, a panel per stage (Stage One moves bare events, Stage Two the
    app's work: their rates differ by orders): the limit lines of the stage's first step, each
    step's winner in its own rounds, and after the last the confirmed winner."""
    decisions: Sequence[Doc] = result.get("decisions") or ()
    if not decisions:
        return (Bars("Roadmap", "", (), "nothing was measured (--effort estimate, or no budget)"),)
    rates = {(c["stage"], c["step"], c["id"]): _rate(c) for c in result.get("candidates", ())}
    stages: dict[str, list[Bar]] = {}
    last = decisions[-1]["stage"]
    for d in decisions:
        bars = stages.get(d["stage"])
        if bars is None:
            # The last stage's lines are the confirmation's: timed beside the reported winner.
            lines = (result.get("baselines") if d["stage"] == last else None) or d.get("baselines")
            bars = stages[d["stage"]] = _line_bars(lines or {})
        value = rates.get((d["stage"], d["step"], d.get("winner")))
        if value is not None:
            bars.append(Bar(f"winner of step {d['step']}", value, "step"))
    confirmed = _rate(result.get("winner"))
    if confirmed is not None:
        stages[last].append(Bar("confirmed winner", confirmed, "tuned"))
    axis = "million events/s (median, 95% interval)"
    return tuple(
        Bars(f"Roadmap, stage {stage}: limit lines, then each step's winner", axis, tuple(bars))
        for stage, bars in stages.items()
    )


def _sweep_step(candidates: Sequence[Doc]) -> tuple[tuple[str, str], list[Doc]]:
    """The step that measured the most (primitive, buffer size) points: one batch, paired rounds."""
    steps: dict[tuple[str, str], list[Doc]] = {}
    for c in candidates:
        if c.get("events_per_second"):
            steps.setdefault((c["stage"], c["step"]), []).append(c)

    def points(item: tuple[tuple[str, str], list[Doc]]) -> int:
        return len({(c["params"]["primitive"], c["params"]["buffer_bytes"]) for c in item[1]})

    return max(steps.items(), key=points, default=(("", ""), []))


def _series_key(params: Doc, by_primitive: bool) -> str:
    if by_primitive:
        return str(params["primitive"])
    return f"{params['primitive']}, {params['buffers']} buffers"


def curves(result: Doc) -> Curves:
    """After the paper's Figures 3-8: events/s against buffer size, a line per primitive (per
    buffer count where one primitive was measured), best point at each size."""
    (stage, step), rows = _sweep_step(result.get("candidates", ()))
    sizes = {c["params"]["buffer_bytes"] for c in rows}
    if len(sizes) < 2:
        return Curves("Buffer size", "", "", (), empty="no step measured more than one buffer size")
    by_primitive = len({c["params"]["primitive"] for c in rows}) > 1
    best: dict[str, dict[int, Interval]] = {}
    for c in rows:
        value = _rate(c)
        line = best.setdefault(_series_key(c["params"], by_primitive), {})
        size = int(c["params"]["buffer_bytes"])
        if value is not None and (size not in line or value.median > line[size].median):
            line[size] = value
    ranked = sorted(best.items(), key=lambda kv: -max(v.median for v in kv[1].values()))
    series = tuple(
        Series(label, tuple(float(s) for s in sorted(line)), tuple(line[s] for s in sorted(line)))
        for label, line in ranked[:MAX_SERIES]
    )
    left = len(ranked) - len(series)
    decided = [d for d in result.get("decisions") or () if (d["stage"], d["step"]) == (stage, step)]
    return Curves(
        title=f"Events/s by buffer size (stage {stage}: {step})",
        x_axis="bytes per buffer (log scale)",
        y_axis="million events/s (median, 95% interval)",
        series=series,
        levels=_levels(decided[0].get("baselines") or {} if decided else {}),
        note=f"{left} more lines not drawn" if left else "",
        lines_are="primitive" if by_primitive else "buffer count (of the one primitive measured)",
    )


def _levels(lines: Doc) -> tuple[Level, ...]:
    return tuple(
        Level(LINE_NAMES[name], value.median)
        for name in ("optimal", "achievable", "upper_bound")
        if (value := _rate(lines.get(name))) is not None
    )


def _difference(params: Doc, winner: Doc) -> str:
    changed = [f"{k}={param_value(k, v)}" for k, v in sorted(params.items()) if winner.get(k) != v]
    return ", ".join(changed) or "(same point)"


def _step_rows(decision: Doc, candidates: Sequence[Doc]) -> list[ForestRow]:
    label = f"{decision['stage']}: {decision['step']}"
    winner = next((c for c in candidates if c["id"] == decision.get("winner")), None)
    if winner is None:
        return []
    ties = set(decision.get("ties") or ())
    rows = [ForestRow(label, "winner", Interval(1.0, 1.0, 1.0), True, True)]
    others = [
        (c, ratio)
        for c in candidates
        if c is not winner and (ratio := interval(c.get("cost_vs_winner"))) is not None
    ]
    others.sort(key=lambda item: (item[1].median, item[0]["id"]))
    rows += [
        ForestRow(label, _difference(c["params"], winner["params"]), r, False, c["id"] in ties)
        for c, r in others[: MAX_ROWS_PER_STEP - 1]
    ]
    return rows


def forest(result: Doc) -> Forest:
    """The decision trail: each step's candidates as paired cost ratios to its winner."""
    decisions: Sequence[Doc] = result.get("decisions") or ()
    by_step: dict[tuple[str, str], list[Doc]] = {}
    for c in result.get("candidates", ()):
        by_step.setdefault((c["stage"], c["step"]), []).append(c)
    rows: list[ForestRow] = []
    margins: list[tuple[str, float]] = []
    for d in decisions:
        step_rows = _step_rows(d, by_step.get((d["stage"], d["step"]), []))
        if step_rows:
            rows += step_rows
            margins.append((step_rows[0].step, float(d.get("margin") or 0.0)))
    if not rows:
        return Forest("Decisions", (), (), empty="no step was decided by measurement")
    shown = sum(len(v) for v in by_step.values())
    return Forest(
        "Decisions: each candidate's cost over its step's winner, paired by round",
        tuple(rows),
        tuple(margins),
        note=f"{len(rows)} of {shown} candidates shown (the nearest per step)",
    )
