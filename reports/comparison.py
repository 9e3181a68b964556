"""What `hspc-gen compare` prints: each winner's rate and its paired ratio to the first."""

from __future__ import annotations

from typing import Any

from hspc_gen.search.compare import Comparison


def to_json(comparison: Comparison) -> dict[str, Any]:
    summaries = comparison.evaluation.step.decision.summaries
    rows = []
    for label, candidate in zip(
        comparison.labels, comparison.evaluation.step.batch.candidates, strict=True
    ):
        summary = summaries.get(candidate.id)
        ratio = comparison.ratios[label]
        rows.append(
            {
                "result": label,
                "params": candidate.params.as_dict(),
                "events_per_second": None
                if summary is None
                else {
                    "median": summary.median,
                    "ci95": [summary.ci95_low, summary.ci95_high],
                    "n": summary.n,
                },
                # The first result's cost over this one's: above 1, this one is faster.
                "speed_vs_first": None
                if ratio.n == 0
                else {"median": 1 / ratio.ratio, "ci95": [1 / ratio.ci_high, 1 / ratio.ci_low]},
            }
        )
    return {"rounds": comparison.evaluation.race.rounds, "results": rows}


def render(comparison: Comparison) -> str:
    lines = ["| result | events/s (median, 95% CI) | speed vs the first (paired, 95% CI) |"]
    lines.append("|---|---|---|")
    for row in to_json(comparison)["results"]:
        rate, speed = row["events_per_second"], row["speed_vs_first"]
        rate_text = "—" if rate is None else _interval(rate, "{:.4g}")
        speed_text = "—" if speed is None else _interval(speed, "{:.3f}")
        lines.append(f"| {row['result']} | {rate_text} | {speed_text} |")
    return "\n".join(lines) + "\n"


def _interval(figure: dict[str, Any], form: str) -> str:
    low, high = figure["ci95"]
    return f"{form.format(figure['median'])} [{form.format(low)}, {form.format(high)}]"
