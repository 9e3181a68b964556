"""What `hspc-gen bench` prints and writes (hspc-bench.json): one row per contender, its rate and
its speed paired against the tuned channel's per-event push + consume. A row measured surely faster
than the slower side alone, which cannot be, is unresolved: its figures are not given; one faster
within the noise is at the bound, as fast as that side."""

from __future__ import annotations

from typing import Any

from hspc_gen.model import Figure
from hspc_gen.model.bench import BenchReport, BenchRow
from hspc_gen.reports.comparison import figure_text, interval
from hspc_gen.reports.wording import AT_THE_BOUND, unresolved

BENCH_FILE = "hspc-bench.json"


def document(report: BenchReport) -> dict[str, Any]:
    return {
        "target": report.target,
        "fingerprint": report.fingerprint,
        "event_bytes": report.event_bytes,
        "channel": report.channel.as_dict(),
        "header": report.header,
        "cxxflags": report.cxxflags,
        "compiler": report.compiler,
        "rounds": report.rounds,
        "reference": report.reference,
        "rows": [_row(r) for r in report.rows],
        "missing": list(report.missing),
        "remeasured": list(report.remeasured),
    }


def _row(row: BenchRow) -> dict[str, Any]:
    c = row.contender
    return {
        "id": c.id,
        "role": str(c.role),
        "what": c.label,
        "status": str(row.status),
        "cause": row.cause or None,
        "events_per_second": None if row.rate is None else interval(row.rate, with_n=True),
        "speed_vs_reference": None if row.vs_reference is None else interval(row.vs_reference),
        "unresolved": row.unresolved or None,
        "at_bound": row.at_bound or None,
    }


def render(report: BenchReport) -> str:
    lines = [
        f"# hspc-gen bench: {report.target}, {report.event_bytes}-byte events",
        "",
        f"{report.rounds} interleaved rounds, {report.cxxflags} ({report.compiler}); the tuned "
        f"channel is {report.header}. Speed: events/s over `{report.reference}`'s, paired by "
        "round (above 1: faster). No row can be faster than the slower of producer and consumer "
        "alone (paired by round).",
        *_remeasured(report),
        "",
        "| contender | what | M events/s (median, 95% CI) | speed vs tuned (paired, 95% CI) |",
        "|---|---|---|---|",
    ]
    lines += [_line(row, report.reference) for row in report.rows]
    if report.missing:
        lines += ["", f"Not on this host (their headers are missing): {', '.join(report.missing)}."]
    return "\n".join(lines) + "\n"


def _remeasured(report: BenchReport) -> list[str]:
    if not report.remeasured:
        return []
    asked = report.rounds // 2
    return [
        "",
        f"{', '.join(report.remeasured)} measured faster than a side alone in the {asked} rounds "
        f"asked for, which cannot be: {asked} more rounds were run, and the table is of all "
        f"{report.rounds}.",
    ]


def _line(row: BenchRow, reference: str) -> str:
    c = row.contender
    if row.unresolved:
        return f"| {c.id} | {c.label} | {unresolved(row.unresolved)} | — |"
    if row.rate is None:
        return f"| {c.id} | {c.label} | {row.status}: {row.cause or '?'} | — |"
    speed = "1 (the reference)" if c.id == reference else _speed(row.vs_reference)
    rate = figure_text(_millions(row.rate), "{:.4g}")
    if row.at_bound:
        rate += f"; {AT_THE_BOUND}: {row.at_bound}"
    return f"| {c.id} | {c.label} | {rate} | {speed} |"


def _speed(figure: Figure | None) -> str:
    return "—" if figure is None else figure_text(figure, "{:.3f}")


def _millions(figure: Figure) -> Figure:
    return Figure(figure.median / 1e6, figure.ci95_low / 1e6, figure.ci95_high / 1e6, figure.n)
