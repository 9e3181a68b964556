"""What `hspc-gen compare` prints: each distinct winner's rate and its paired speed relative to
the first, with the results that share a winner named together, and the A/A check (the first's
copy against it); or, when every result names the same winner and --aa did not ask to measure
it, that there was nothing to measure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hspc_gen.model import ChannelParams, Figure, Status
from hspc_gen.model.result import Comparison


def to_json(comparison: Comparison) -> dict[str, Any]:
    rows = [
        {
            "results": list(row.labels),
            "params": row.params.as_dict(),
            "events_per_second": None if row.rate is None else interval(row.rate, with_n=True),
            # The first result's cost over this one's: above 1, this one is faster.
            "speed_vs_first": None if row.speed_vs_first is None else interval(row.speed_vs_first),
            "status": str(row.status),
        }
        for row in comparison.results
    ]
    return {
        "rounds": comparison.rounds,
        "measured": comparison.measured,
        "same_winner": comparison.same_winner,
        "results": rows,
        # The first's independent copy, timed in the same rounds: its speed vs the first.
        "aa": None if comparison.aa is None else interval(comparison.aa),
    }


def interval(figure: Figure, *, with_n: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"median": figure.median, "ci95": [figure.ci95_low, figure.ci95_high]}
    if with_n:
        out["n"] = figure.n
    return out


def render(comparison: Comparison) -> str:
    if not comparison.measured:
        (only,) = comparison.results
        return (
            f"all {len(only.labels)} results name the same winner: nothing to measure\n"
            f"  {params_text(only.params)}\n"
        )
    lines = ["| results | events/s (median, 95% CI) | speed vs the first (paired, 95% CI) |"]
    lines.append("|---|---|---|")
    for row in comparison.results:
        rate = "—" if row.rate is None else figure_text(row.rate, "{:.4g}")
        rate = rate if row.status is Status.ok else f"— ({row.status})"
        speed = "—" if row.speed_vs_first is None else figure_text(row.speed_vs_first, "{:.3f}")
        lines.append(f"| {', '.join(row.labels)} | {rate} | {speed} |")
    shared = [row.labels for row in comparison.results if len(row.labels) > 1]
    lines += ["", aa_text(comparison)]
    if shared:
        lines += [f"{_listed(labels)} name the same winner: measured once" for labels in shared]
    return "\n".join(lines) + "\n"


def aa_text(comparison: Comparison) -> str:
    """The A/A line: what the host allows two copies of one program to differ by."""
    aa = comparison.aa
    if comparison.results[0].status is not Status.ok:
        return "A/A: the first winner has no rounds"
    if aa is None:
        return "A/A: the first winner's copy has no paired rounds: the host's spread is unknown"
    return (
        f"A/A: a copy of the first winner in the same rounds, {figure_text(aa, '{:.3f}')}: "
        "a speed inside that spread is this host's own noise"
    )


def params_text(params: ChannelParams) -> str:
    """The parameters as --set would take them."""
    return " ".join(f"{name}={value}" for name, value in params.as_dict().items())


def _listed(labels: Sequence[str]) -> str:
    return f"{', '.join(labels[:-1])} and {labels[-1]}"


def figure_text(figure: Figure, form: str) -> str:
    low, high = form.format(figure.ci95_low), form.format(figure.ci95_high)
    return f"{form.format(figure.median)} [{low}, {high}]"
