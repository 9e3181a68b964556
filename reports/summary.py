"""The short Markdown summary printed at the end of a run and saved beside the result."""

from __future__ import annotations

from typing import Any


def _si(value: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}"
    return f"{value:.3g} "


def _interval(figure: dict[str, Any], unit: str) -> str:
    low, high = figure["ci95"]
    return f"{_si(figure['median'])}{unit} (95% CI {_si(low)}{unit} to {_si(high)}{unit})"


def render(document: dict[str, Any]) -> str:
    target = document["target"]
    lines = [
        f"# hspc-gen: {target['name']} ({document['effort']})",
        "",
        f"Host: {document['host']['model_name']} — fingerprint `{document['fingerprint']}`",
        "",
        "| parameter | value |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in document["winner"]["params"].items()),
        "",
    ]
    eps = document["winner"]["events_per_second"]
    if eps is None:
        lines.append("Not measured: parameters come from the host heuristics (--effort estimate).")
    else:
        lines.append(f"Throughput: {_interval(eps, 'events/s')}")
        if document.get("efficiency"):
            lines.append(f"Efficiency: {_interval(document['efficiency'], '')} (1.0 = baseline)")
    lines.append("")
    return "\n".join(lines)
