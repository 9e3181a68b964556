"""The short Markdown summary printed at the end of a run and saved beside the result."""

from __future__ import annotations

from typing import Any


def _si(value: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}"
    return f"{value:.3g}"


def _rate(figure: dict[str, Any] | None) -> str:
    if not figure or figure.get("median") is None:
        return "not measured"
    low, high = figure["ci95"]
    median = _si(figure["median"])
    return f"{median} events/s (95% CI {_si(low)} to {_si(high)}, n={figure['n']})"


def _params(document: dict[str, Any]) -> list[str]:
    return [
        "| parameter | value |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in document["winner"]["params"].items()),
    ]


def _measured(document: dict[str, Any]) -> list[str]:
    lines = [f"- channel: {_rate(document['winner']['events_per_second'])}"]
    latency = document["winner"].get("latency_ns")
    if latency:
        low, high = latency["ci95"]
        lines.append(
            f"- latency, push to pop (paced): {latency['median']:.0f} ns "
            f"(95% CI {low:.0f} to {high:.0f}, n={latency['n']})"
        )
    for name, figure in sorted((document.get("baselines") or {}).items()):
        lines.append(f"- {name}: {_rate(figure['events_per_second'])}")
    efficiency = document.get("efficiency")
    if efficiency:
        low, high = efficiency["ci95"]
        lines.append(
            f"- efficiency: {efficiency['median']:.3f} (95% CI {low:.3f} to {high:.3f}); "
            "1.0 = as fast as the slower of producer and consumer alone"
        )
    return lines


def _trail(document: dict[str, Any]) -> list[str]:
    lines = ["| stage | step | rounds | margin | winner |", "|---|---|---|---|---|"]
    for step in document.get("decisions", []):
        margin = "—" if step["margin"] is None else f"{step['margin']:.1%}"
        lines.append(
            f"| {step['stage']} | {step['step']} | {step['rounds']} | {margin} | "
            f"{step['winner'] or 'none'} |"
        )
    return lines


def _threads(document: dict[str, Any]) -> list[str]:
    rec = document.get("recommendation")
    if not rec:
        return []
    if "producers" not in rec:
        why = rec.get("error", "failed")
        return ["", f"Threads: not measured ({why}); the header's advice is estimated."]
    evidence = rec.get("evidence") or {}
    return [
        "",
        f"Threads: {rec['producers']} producer(s), {rec['consumers']} consumer(s) "
        f"({rec['consumers_per_producer']} per producer), placement {rec['placement']}"
        f"{', pinned' if rec['pinned'] else ', not pinned'}; taskset -c {rec['taskset']}; "
        f"the search stopped at: {evidence.get('termination', 'unknown')}.",
    ]


def _notes(document: dict[str, Any]) -> list[str]:
    notes = []
    if document.get("budget_exhausted"):
        notes.append("The budget ran out: the result is the best finished so far.")
    if document.get("busy"):
        notes.append(
            f"The machine was busy (load {document['load_before']:.2f}): comparisons were "
            "less precise than on a quiet machine."
        )
    for failure in document.get("failures", []):
        notes.append(f"Candidate {failure['id']}: {failure['status']} (recorded, skipped).")
    cached = document.get("cached_plans", 0)
    if cached:
        notes.append(
            f"{cached} plan(s) replayed from the record store, "
            f"{document['measured_plans']} measured."
        )
    return notes


def render(document: dict[str, Any]) -> str:
    target = document["target"]
    lines = [
        f"# hspc-gen: {target['name']} ({document['effort']}, objective {target['objective']})",
        "",
        f"Host: {document['host']['model_name']}, fingerprint `{document['fingerprint']}`",
        "",
        *_params(document),
        "",
    ]
    if document["winner"]["events_per_second"] is None and not document.get("decisions"):
        lines.append("Not measured: parameters come from the host heuristics (--effort estimate).")
    else:
        lines += ["Measured in a fresh process (medians, 95% bootstrap intervals):", ""]
        lines += [*_measured(document), "", *_trail(document)]
    lines += _threads(document)
    notes = _notes(document)
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    lines.append("")
    return "\n".join(lines)
