"""What `hspc-gen compare` prints: each winner's rate and its paired speed relative to the first."""

from __future__ import annotations

from typing import Any

from hspc_gen.model import Figure
from hspc_gen.model.result import Comparison


def to_json(comparison: Comparison) -> dict[str, Any]:
    rows = [
        {
            "result": row.label,
            "params": row.params.as_dict(),
            "events_per_second": None if row.rate is None else interval(row.rate, with_n=True),
            # The first result's cost over this one's: above 1, this one is faster.
            "speed_vs_first": None if row.speed_vs_first is None else interval(row.speed_vs_first),
        }
        for row in comparison.results
    ]
    return {"rounds": comparison.rounds, "results": rows}


def interval(figure: Figure, *, with_n: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"median": figure.median, "ci95": [figure.ci95_low, figure.ci95_high]}
    if with_n:
        out["n"] = figure.n
    return out


def render(comparison: Comparison) -> str:
    lines = ["| result | events/s (median, 95% CI) | speed vs the first (paired, 95% CI) |"]
    lines.append("|---|---|---|")
    for row in comparison.results:
        rate = "—" if row.rate is None else figure_text(row.rate, "{:.4g}")
        speed = "—" if row.speed_vs_first is None else figure_text(row.speed_vs_first, "{:.3f}")
        lines.append(f"| {row.label} | {rate} | {speed} |")
    return "\n".join(lines) + "\n"


def figure_text(figure: Figure, form: str) -> str:
    low, high = form.format(figure.ci95_low), form.format(figure.ci95_high)
    return f"{form.format(figure.median)} [{low}, {high}]"
