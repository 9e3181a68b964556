"""The thread advice as JSON (hspc-result.json's `recommendation`, hspc-threads.json) and the
Markdown of `hspc-gen threads`, from the model's typed values; with threads.consumers: adaptive,
the pool's parameters too (both documents' `pool`), in the summary's words."""

from __future__ import annotations

import math
from typing import Any

from hspc_gen.model.pool import PoolTuning
from hspc_gen.model.threads import (
    FIXED,
    SHOWN_ROUNDS,
    Capacity,
    CurvePoint,
    PlacementTrial,
    ThreadAdvice,
    ThreadEvidence,
    ThreadFailure,
    ThreadsReport,
)
from hspc_gen.reports.wording import pool_markdown

FOR_THE_ADVICE = "kPoolTuning for this recommendation"
"""Where `hspc-gen threads` says its pool's parameters are: it writes no header, and the
recommendation it made is what they follow."""


def _n(x: float) -> float | None:
    return None if math.isnan(x) else float(f"{x:.4g}")


def _capacity(c: Capacity) -> dict[str, Any]:
    return {
        "cpus": c.cpus,
        "cores": c.cores,
        "threads_per_core": c.threads_per_core,
        "packages": c.packages,
        "llc_groups": c.llc_groups,
        "cpu_quota": c.cpu_quota,
        "core_equivalents": round(c.core_equivalents, 3),
        "virtual": c.virtual,
    }


def _point(p: CurvePoint) -> dict[str, Any]:
    return {
        "producers": p.producers,
        "consumers": p.consumers,
        "threads": p.threads,
        "placement": p.placement,
        "events_per_s": _n(p.events_per_s),
        "ci95": [_n(p.ci95_low), _n(p.ci95_high)],
        "samples": p.samples,
        "cpu_utilisation": _n(p.cpu_utilisation),
        "voluntary_switches_per_s": _n(p.voluntary_switches_per_s),
        "migrations_per_s": _n(p.migrations_per_s),
        "wait_fraction": _n(p.wait_fraction),
        "vs_best": None
        if p.vs_best is None
        else {
            "gain": round(p.vs_best.gain, 4),
            "ci95": [round(p.vs_best.low, 4), round(p.vs_best.high, 4)],
            "rounds": p.vs_best.rounds,
        },
    }


def _trial(t: PlacementTrial) -> dict[str, Any]:
    return {
        "placement": t.placement,
        "cpus": {"producers": list(t.producer_cpus), "consumers": list(t.consumer_cpus)},
        "gain_over_unpinned": round(t.gain, 4),
        "ci95": [round(t.low, 4), round(t.high, 4)],
    }


def _evidence(e: ThreadEvidence, equally_good: tuple[tuple[int, int], ...]) -> dict[str, Any]:
    return {
        "capacity": _capacity(e.capacity),
        "estimate": {
            "producers": e.estimate.producers,
            "consumers_per_producer": e.estimate.consumers_per_producer,
            "threads": e.estimate.threads,
        },
        "tolerance": e.tolerance,
        "margin": e.margin,
        "termination": e.termination,
        "curve": [_point(p) for p in e.curve],
        "equally_good": [{"producers": p, "consumers": c} for p, c in equally_good],
        "placements": [_trial(t) for t in e.placements],
        "rounds": e.rounds,
        "oversubscription": e.oversubscription,
        "resolution": None if e.resolution is None else round(e.resolution, 4),
    }


def advice_json(advice: ThreadAdvice) -> dict[str, Any]:
    out: dict[str, Any] = {
        "producers": advice.producers,
        "consumers": advice.consumers,
        "consumers_per_producer": advice.consumers_per_producer,
        "cpus": {"producers": list(advice.producer_cpus), "consumers": list(advice.consumer_cpus)},
        "pinned": advice.pinned,
        "placement": advice.placement,
        "taskset": advice.taskset,
        "omp_places": advice.omp_places,
        "evidence": (
            None if advice.evidence is None else _evidence(advice.evidence, advice.equally_good)
        ),
    }
    if advice.work_ns is not None:
        producer, consumer = advice.work_ns
        out["work_ns_per_event"] = {"producer": producer, "consumer": consumer}
    return out


def pool_json(pool: PoolTuning) -> dict[str, Any]:
    """kPoolTuning's fields, each with its value and reason, and what they rest on."""
    return {
        "basis": pool.basis,
        "options": {name: {"value": c.value, "why": c.why} for name, c in pool.choices()},
    }


def _sweep(report: ThreadsReport) -> dict[str, Any] | None:
    if not report.sweep:
        return None
    best = max(report.sweep, key=lambda p: p.rate.median)
    picked = next((p for p in report.sweep if p.recommended), None)
    share = None if picked is None else picked.rate.median / best.rate.median
    return {
        "points": [
            {
                "producers": p.producers,
                "consumers": p.consumers,
                "pinned": p.pinned,
                "recommended": p.recommended,
                "events_per_second": {
                    "median": _n6(p.rate.median),
                    "ci95": [_n6(p.rate.ci95_low), _n6(p.rate.ci95_high)],
                    "n": p.rate.n,
                },
            }
            for p in report.sweep
        ],
        "best": {"producers": best.producers, "consumers": best.consumers},
        "recommended_share_of_best": None if share is None else _n6(share),
    }


def _n6(x: float) -> float | None:
    return None if math.isnan(x) else float(f"{x:.6g}")


def document(report: ThreadsReport) -> dict[str, Any]:
    """hspc-threads.json."""
    advice = report.advice
    out: dict[str, Any] = {
        "target": report.target,
        "fingerprint": report.fingerprint,
        "channel": report.channel.as_dict(),
        "recommendation": {"status": str(advice.status), "error": advice.error}
        if isinstance(advice, ThreadFailure)
        else advice_json(advice),
        "sweep": _sweep(report),
    }
    if report.pool is not None:  # absent without the switch, as in hspc-result.json
        out["pool"] = pool_json(report.pool)
    return out


def flat_range(advice: ThreadAdvice) -> str:
    """The counts the recommendation was chosen from, in words: several when the curve is flat
    there (any of them will do), the best alone when no other count was shown as good, the
    target's own when it fixes them."""
    assert advice.evidence is not None
    tolerance = advice.evidence.tolerance
    good = advice.equally_good
    counts = ", ".join(f"{p}+{c}" for p, c in good)
    if advice.evidence.termination == FIXED:
        return (
            "equally good (the target fixes the counts: no other was searched), "
            f"producers+consumers: {counts}"
        )
    flat = "the curve is flat there" if len(good) > 1 else "no other count was shown as good"
    return (
        f"equally good within {tolerance:.0%} (each one's paired 95% interval against "
        f"the best lies above {1 - tolerance:.0%} of it, over {SHOWN_ROUNDS} rounds at "
        f"least: {flat}), producers+consumers: {counts}"
    )


def oversubscribed(advice: ThreadAdvice) -> str | None:
    """Why the advice has more threads than CPUs, in words; None when it has not."""
    evidence = advice.evidence
    if evidence is None or advice.producers + advice.consumers <= evidence.capacity.cpus:
        return None
    why = evidence.oversubscription or (
        f"one producer and its {advice.consumers_per_producer} consumer(s), the fewest threads "
        f"searched, are already more than the {evidence.capacity.cpus} CPUs"
    )
    return f"more threads than CPUs: {why}"


def render(report: ThreadsReport) -> str:
    advice = report.advice
    lines = [f"# hspc-gen threads: {report.target}", ""]
    if isinstance(advice, ThreadFailure):
        return "\n".join([*lines, f"Not measured ({advice.status}): {advice.error}", ""])
    termination = advice.evidence.termination if advice.evidence else "?"
    lines += [
        f"- producers: {advice.producers}, consumers: {advice.consumers} "
        f"({advice.consumers_per_producer} per producer)",
        f"- placement: {advice.placement}{' (pinned)' if advice.pinned else ''}; "
        f"taskset -c {advice.taskset}; OMP_PLACES={advice.omp_places}",
        f"- search stopped by: {termination}",
    ]
    if advice.evidence is not None:
        lines.append(f"- {flat_range(advice)}")
    if (why := oversubscribed(advice)) is not None:
        lines.append(f"- {why}")
    lines += _sweep_lines(report)
    lines += pool_markdown(report.pool, FOR_THE_ADVICE)
    return "\n".join(lines) + "\n"


def _sweep_lines(report: ThreadsReport) -> list[str]:
    if not report.sweep:
        return []
    lines = [
        "",
        "| producers | consumers | events/s (median, 95% CI) | |",
        "|---|---|---|---|",
    ]
    for p in report.sweep:
        mark = "recommended" if p.recommended else ""
        lines.append(
            f"| {p.producers} | {p.consumers} | {p.rate.median:.4g} "
            f"[{p.rate.ci95_low:.4g}, {p.rate.ci95_high:.4g}] | {mark} |"
        )
    best = max(p.rate.median for p in report.sweep)
    picked = next((p for p in report.sweep if p.recommended), None)
    if picked is not None:
        share = picked.rate.median / best
        lines.append(f"\nThe recommendation reaches {share:.1%} of the best measured point.")
    return lines
